"""The real service assembly (`truco-table run --config`) end to end, with seat nodes
simulated on ptys published under a by-id folder, as udev does for real Picos."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from controller.engine import Card
from controller.hal.deck import Deck, DeckRegistry, save_registry
from controller.hal.mock import MockDeck, MockNode

SERIALS = ["e6614103e7ab1200", "e6614103e7ab1201"]


def wait_for(predicate, timeout: float = 10.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_run_with_a_configuration_and_seat_nodes(tmp_path: Path) -> None:
    deck = MockDeck(3)
    cards = {deck.uid(c): c for c in (Card.from_index(i) for i in range(40))}
    save_registry(DeckRegistry((Deck("bar", cards),)), tmp_path / "decks.toml")
    by_id = tmp_path / "by-id"
    by_id.mkdir()
    nodes = [MockNode(seat, serial) for seat, serial in enumerate(SERIALS)]
    for node in nodes:
        (by_id / f"usb-MicroPython_Board_in_FS_mode_{node.serial}-if00").symlink_to(node.path)
        node.start()
    config = tmp_path / "table.toml"
    config.write_text(
        f'[table]\nplayers = 2\nstate_dir = "{tmp_path / "state"}"\n'
        f'decks = "{tmp_path / "decks.toml"}"\nnext_deal_after_s = 0\n'
        f'[topology]\nkind = "nodes"\n[nodes]\nby_id_dir = "{by_id}"\n'
        + "".join(f'[[nodes.seat]]\nseat = {i}\nserial = "{s}"\n' for i, s in enumerate(SERIALS))
    )
    notify = tmp_path / "notify"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(notify))
    sock.settimeout(15)
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "run", "--config", str(config)],
        env=dict(os.environ, NOTIFY_SOCKET=str(notify)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    record = tmp_path / "state" / "current.truco"
    try:
        assert sock.recv(1024).startswith(b"READY=1")
        assert wait_for(lambda: all("HELLO" in n.received for n in nodes))
        time.sleep(0.3)
        for seat, hand in ((0, "7C 6C 3E"), (1, "2O 1B 4B")):
            for name in hand.split():
                uid = deck.uid(Card.from_str(name))
                nodes[seat].tag_on(uid)
                nodes[seat].tag_off(uid)
        assert wait_for(lambda: "deal 1: 2O 1B 4B" in record.read_text())
        nodes[0].press("envido")
        # each seat has its own link: wait for one seat's call before the other answers
        assert wait_for(lambda: record.read_text().endswith("0 envido\n"))
        nodes[1].press("quiero")
        assert wait_for(lambda: record.read_text().endswith("1 quiero\n"))  # another link
        nodes[0].tag_on(deck.uid(Card.from_str("3E")))
        assert wait_for(lambda: record.read_text().endswith("0 envido\n1 quiero\n0 play 3E\n")), (
            record.read_text()
        )
        nodes[1].tag_on(b"\x04\x01\x02\x03\x04\x05\x06")  # not in the deck: refused, not recorded
        time.sleep(0.3)
        assert record.read_text().endswith("0 play 3E\n")
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=15)
        sock.close()
        for node in nodes:
            node.close()
    assert proc.returncode == 0, err.decode()
    assert "no deck enrolled" not in err.decode()
