"""The real service assembly (`truco-table run --config`) end to end, with seat nodes
simulated on ptys published under a by-id folder, as udev does for real Picos."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from controller.engine import Card
from controller.hal.deck import Deck, DeckRegistry, load_registry, save_registry
from controller.hal.mock import MockDeck, MockNode
from controller.table.store import plain
from tests.helpers import wait_until as wait_for

SERIALS = ["e6614103e7ab1200", "e6614103e7ab1201"]


@dataclass
class RunningTable:
    nodes: list[MockNode]
    deck: MockDeck
    record: Path
    proc: subprocess.Popen[bytes]
    stderr: str = ""

    def text(self) -> str:
        return plain(self.record.read_text()) if self.record.exists() else ""

    def tap(self, seat: int, name: str) -> None:
        uid = self.deck.uid(Card.from_str(name))
        self.nodes[seat].tag_on(uid)
        self.nodes[seat].tag_off(uid)

    def deal(self) -> None:
        for seat, hand in ((0, "7C 6C 3E"), (1, "2O 1B 4B")):
            for name in hand.split():
                self.tap(seat, name)
        assert wait_for(lambda: "deal 1: 2O 1B 4B" in self.text())

    def press(self, seat: int, button: str, expect: str) -> None:
        """Press, and wait for the record to show it (each seat has its own link, so there
        is no order between two seats' events)."""
        self.nodes[seat].press(button)
        assert wait_for(lambda: self.text().endswith(expect + "\n")), self.text()


@contextlib.contextmanager
def running_table(
    tmp_path: Path, extra: str = "", *, table_extra: str = "", state: Path | None = None
) -> Iterator[RunningTable]:
    """``truco-table run --config`` on two simulated seat nodes; ``table_extra``: more
    ``[table]`` keys; ``state``: the state folder (``tmp_path/state``)."""
    state = state if state is not None else tmp_path / "state"
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
        f'[table]\nplayers = 2\nstate_dir = "{state}"\n'
        f'decks = "{tmp_path / "decks.toml"}"\nnext_deal_after_s = 0\n{table_extra}'
        f'[topology]\nkind = "nodes"\n[nodes]\nby_id_dir = "{by_id}"\n'
        + "".join(f'[[nodes.seat]]\nseat = {i}\nserial = "{s}"\n' for i, s in enumerate(SERIALS))
        + extra
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
    table = RunningTable(nodes, deck, state / "current.truco", proc)
    try:
        assert sock.recv(1024).startswith(b"READY=1")
        assert wait_for(lambda: all("HELLO" in n.received for n in nodes))
        time.sleep(0.3)
        yield table
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        table.stderr = err.decode()
        sock.close()
        for node in nodes:
            node.close()
    assert proc.returncode == 0, table.stderr


def test_run_with_a_configuration_and_seat_nodes(tmp_path: Path) -> None:
    with running_table(tmp_path) as table:
        table.deal()
        table.press(0, "envido", "0 envido")
        table.press(1, "quiero", "1 quiero")
        table.nodes[0].tag_on(table.deck.uid(Card.from_str("3E")))
        assert wait_for(lambda: table.text().endswith("0 envido\n1 quiero\n0 play 3E\n"))
        table.nodes[1].tag_on(b"\x04\x01\x02\x03\x04\x05\x06")  # unknown: refused, not recorded
        time.sleep(0.3)
        assert table.text().endswith("0 play 3E\n")
        loop_cpus = allowed_cpus(table.proc.pid, table.proc.pid)
    assert "no hay ningún mazo registrado" not in table.stderr
    # the loop kept to the last CPU ([table] loop_cpu's default, what the install writes)
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) > 1:
        assert loop_cpus == {allowed[-1]}, loop_cpus
        assert f"el bucle de la mesa corre en la CPU {allowed[-1]}" in table.stderr
    # started, its heap was frozen out of the collector's full passes (one event paid a
    # full pass over it: 13-37 ms of CPU on the development machine)
    assert re.search(r"memoria del arranque congelada: [1-9][0-9]{3,} objetos", table.stderr), (
        table.stderr
    )
    # and the collector's passes moved to the table's quiet turns (controller.table.collector)
    assert "el recolector de memoria pasa cuando la mesa está quieta" in table.stderr


def allowed_cpus(pid: int, thread: int) -> set[int]:
    """The CPUs a thread of a process may run on, read as the kernel lists them
    (``Cpus_allowed_list: 0-2,5``)."""
    status = Path(f"/proc/{pid}/task/{thread}/status").read_text()
    found = re.search(r"^Cpus_allowed_list:\s*(\S+)$", status, re.M)
    assert found is not None, status
    cpus: set[int] = set()
    for part in found.group(1).split(","):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def test_loop_cpu_none_leaves_the_loop_where_the_system_puts_it(tmp_path: Path) -> None:
    with running_table(tmp_path, table_extra='loop_cpu = "none"\n') as table:
        cpus = allowed_cpus(table.proc.pid, table.proc.pid)
    assert cpus == os.sched_getaffinity(0)
    assert "el bucle de la mesa corre en la CPU" not in table.stderr


def test_a_deck_enrolled_while_the_table_runs_is_used_at_once(tmp_path: Path) -> None:
    with running_table(tmp_path) as table:
        new = MockDeck(9)  # another deck: none of its tags is known yet
        cards = {new.uid(c): c for c in (Card.from_index(i) for i in range(40))}
        registry = tmp_path / "decks.toml"
        save_registry(load_registry(registry).with_deck(Deck("nuevo", cards)), registry)
        table.deck = new  # the players deal the new deck
        table.deal()
        table.press(0, "truco", "0 truco")
