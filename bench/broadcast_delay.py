"""The broadcast's delay as the room would see it: the shipped table, measured.

``truco-table run --config`` as a process (two seat nodes simulated on ptys, published
under a by-id folder as udev does; a registered deck), with a ``[broadcast]`` section
(``--delay`` seconds, not a teaching table). A hand is dealt and played by tapping cards
on the nodes; the broadcast's answer (``/api/transmision`` with the key) is polled every
20 ms. Measured, each from the moment the table wrote the statement to its record:

- ``card_shown_after_s``: until the first card played is on the broadcast (the delay);
- ``cards_held_s``: until the cards read at the deal are on it, counted from the hand's
  end (they wait for both the delay and the hand's end; the hand is played here in well
  under the delay, so the delay decides).

(That no card of a hand in play is ever served is the tests' part:
``tests/table/test_broadcast.py``, ``tests/tournament/desk/test_broadcast.py``.)
Prints one key=value line::

    delay_s=10 card_shown_after_s=... cards_held_s=... polls=... load=...

Run: ``.venv/bin/python bench/broadcast_delay.py [--delay 10]``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from controller.engine import Card
from controller.hal.deck import Deck, DeckRegistry, save_registry
from controller.hal.mock import MockDeck, MockNode
from controller.table.store import plain

KEY = "clave-del-banco-de-pruebas-0123"
SERIALS = ["e6614103e7ab1200", "e6614103e7ab1201"]
HANDS = {0: "7C 6C 3E", 1: "2O 1B 4B"}
PLAYS = [(0, "3E"), (1, "2O"), (0, "7C"), (1, "1B"), (1, "4B"), (0, "6C")]


def wait_for(predicate: Callable[[], bool], timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def measure(delay: float) -> str:
    folder = Path(tempfile.mkdtemp(prefix="truco-bench-broadcast-"))
    deck = MockDeck(3)
    cards = {deck.uid(c): c for c in (Card.from_index(i) for i in range(40))}
    save_registry(DeckRegistry((Deck("bar", cards),)), folder / "decks.toml")
    by_id = folder / "by-id"
    by_id.mkdir()
    nodes = [MockNode(seat, serial) for seat, serial in enumerate(SERIALS)]
    for node in nodes:
        (by_id / f"usb-MicroPython_Board_in_FS_mode_{node.serial}-if00").symlink_to(node.path)
        node.start()
    port = free_port()
    (folder / "broadcast.key").write_text(KEY)
    config = folder / "table.toml"
    state = folder / "state"
    config.write_text(
        f'[table]\nplayers = 2\nstate_dir = "{state}"\ndecks = "{folder / "decks.toml"}"\n'
        f'[topology]\nkind = "nodes"\n[nodes]\nby_id_dir = "{by_id}"\n'
        + "".join(f'[[nodes.seat]]\nseat = {i}\nserial = "{s}"\n' for i, s in enumerate(SERIALS))
        + f'[broadcast]\nport = {port}\nkey_file = "broadcast.key"\ndelay_s = {delay}\n'
    )
    record = state / "current.truco"
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "run", "--config", str(config)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    api = f"http://127.0.0.1:{port}/api/transmision?clave={KEY}"

    def text() -> str:
        return plain(record.read_text()) if record.exists() else ""

    def shown() -> dict[str, object]:
        with urllib.request.urlopen(api, timeout=10) as r:
            return dict(json.loads(r.read()))

    def tap(seat: int, name: str) -> None:
        uid = deck.uid(Card.from_str(name))
        nodes[seat].tag_on(uid)
        nodes[seat].tag_off(uid)

    try:
        assert wait_for(lambda: all("HELLO" in n.received for n in nodes)), "no HELLO"

        def up() -> bool:
            try:
                shown()
                return True
            except OSError:
                return False

        assert wait_for(up), "the broadcast did not come up"
        for seat, hand in HANDS.items():
            for name in hand.split():
                tap(seat, name)
        assert wait_for(lambda: "deal 1: 2O 1B 4B" in text())
        polls = 0
        first_at = 0.0
        for seat, name in PLAYS:
            tap(seat, name)
            line = f"{seat} play {name}"
            assert wait_for(lambda line=line: line in text())  # type: ignore[misc]
            if not first_at:
                first_at = time.monotonic()
        ended_at = time.monotonic()
        card_shown: float | None = None
        cards_held: float | None = None
        deadline = time.monotonic() + delay + 30
        while time.monotonic() < deadline and cards_held is None:
            answer = shown()
            polls += 1
            now = time.monotonic()
            seats = answer["seats"]
            assert isinstance(seats, list)
            played = [p["card"] for s in seats for p in s["played"]]
            dealt = [c["card"] for s in seats for c in (s["cards"] or [])]
            if card_shown is None and "3E" in played:
                card_shown = now - first_at
            if dealt and cards_held is None:
                cards_held = now - ended_at
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
        for node in nodes:
            node.close()
    assert card_shown is not None and cards_held is not None
    return (
        f"delay_s={delay:g} card_shown_after_s={card_shown:.2f} cards_held_s={cards_held:.2f} "
        f"polls={polls} load={os.getloadavg()[0]:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delay", type=float, default=10.0)
    args = parser.parse_args()
    print(measure(args.delay), flush=True)


if __name__ == "__main__":
    main()
