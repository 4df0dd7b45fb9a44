"""The table hardware/README.md builds, on simulated hardware, checked as its owner does.

The shipped configuration (systemd/table.toml, hardware/pinmap.toml: only the folders
moved into a temporary one), four seat nodes running the firmware's own NodeApp on ptys
under a by-id folder with the pin map's serial numbers, each with a simulated 2.42"
SSD1309 on its I2C; the service started from the installed unit's ExecStart; then
`truco-table doctor` run as a plain user (nobody, in the service's group as install-pi
makes the owner) reads the seats where they are and says `bien` for every one; with one
panel unplugged it names that seat and that panel, and when the panel is back it is
`bien` again.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fake_oled import SSD1309Model

from controller.engine import CARDS
from controller.hal.deck import Deck, DeckRegistry, save_registry
from controller.hal.mock import MockDeck
from tests.hal.simnode import SimNode
from tests.helpers import PATIENCE
from tests.helpers import wait_until as wait_for

from .unit import unit_command

ROOT = Path(__file__).resolve().parents[2]
GROUP = 4242  # the service's group (truco) on the Pi; here a number nobody else has
PLAIN = 65534  # nobody


def replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


@dataclass
class GuideTable:
    base: Path
    config: Path
    nodes: list[SimNode]
    panels: list[SSD1309Model]
    status: Path
    as_plain_user: bool
    by_id: Path = Path()
    state: Path = Path()
    stop: Callable[[], None] = lambda: None  # the service stopped (systemctl stop)
    start: Callable[[], None] = lambda: None  # and started again (systemctl start)
    journal_file: Path | None = None
    proc: subprocess.Popen[bytes] | None = None

    def journal(self) -> str:
        """What the service wrote to standard error so far (the journal, under systemd)."""
        if self.journal_file is None:
            return ""
        return self.journal_file.read_text(encoding="utf-8", errors="replace")

    def seats(self) -> dict[str, dict[str, object]]:
        try:
            seats: dict[str, dict[str, object]] = json.loads(self.status.read_text())["seats"]
        except (OSError, ValueError):
            return {}
        return seats

    def panel_ok(self, seat: int) -> bool | None:
        panel = self.seats().get(str(seat), {}).get("panel")
        return panel.get("ok") if isinstance(panel, dict) else None

    def doctor(self, *, in_group: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(Path(sys.executable).with_name("truco-table")), "doctor"]
        command += ["--config", str(self.config)]
        if self.as_plain_user:
            groups = [f"--groups={GROUP}"] if in_group else ["--clear-groups"]
            command = ["setpriv", f"--reuid={PLAIN}", f"--regid={PLAIN}", *groups, *command]
        env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET",)}
        return subprocess.run(
            command, capture_output=True, text=True, timeout=60, env=env, cwd=self.base
        )


def plain_user_available() -> bool:
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


@contextlib.contextmanager
def guide_table(
    unplugged: frozenset[int] = frozenset(),
    *,
    no_reader: frozenset[int] = frozenset(),
    says_seat: dict[int, int] | None = None,
    stuck_ms: int | None = None,
    pinmap: str = "pinmap.toml",
    as_plain_user: bool | None = None,
    other_deck: bool = False,
) -> Iterator[GuideTable]:
    """``no_reader``: seats whose node has no MFRC522 answering; ``says_seat``: seats
    whose node has another seat stored (the pin map's serial numbers swapped);
    ``stuck_ms``: the nodes' stuck-button time; ``pinmap``: the pin map table.toml names
    (the shipped ``hardware/`` file of that name, copied beside it); ``other_deck``: a
    second deck enrolled (``otro``, ``MockDeck(1)``) beside the house's (``casa``,
    ``MockDeck(0)``)."""
    as_plain = plain_user_available() if as_plain_user is None else as_plain_user
    base = Path(tempfile.mkdtemp(prefix="truco-guide-"))  # nobody must reach it: not tmp_path
    proc: subprocess.Popen[bytes] | None = None
    nodes: list[SimNode] = []
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        base.chmod(0o755)
        etc, state, run, by_id = base / "etc", base / "state", base / "run", base / "by-id"
        for folder in (etc, run, by_id):
            folder.mkdir(mode=0o755)
        state.mkdir(mode=0o750)  # StateDirectoryMode=0750, group truco
        # the shipped files, only the folders moved here
        table = (ROOT / "systemd" / "table.toml").read_text(encoding="utf-8")
        table = replace_once(table, '"/var/lib/truco-table"', f'"{state}"')
        table = replace_once(table, '"/var/lib/truco-table/decks.toml"', f'"{state}/decks.toml"')
        table = replace_once(table, "[table]\n", f'[table]\nstatus_file = "{run}/seats.json"\n')
        (etc / "table.toml").write_text(table, encoding="utf-8")
        if pinmap != "pinmap.toml":
            table = replace_once(table, 'pinmap = "pinmap.toml"', f'pinmap = "{pinmap}"')
            (etc / "table.toml").write_text(table, encoding="utf-8")
        text = (ROOT / "hardware" / pinmap).read_text(encoding="utf-8")
        text = replace_once(text, '"/dev/serial/by-id"', f'"{by_id}"')
        (etc / pinmap).write_text(text, encoding="utf-8")
        shipped = tomllib.loads(text)
        players = tomllib.loads(table)["table"]["players"]
        deck = MockDeck(0)
        decks = [Deck("casa", {deck.uid(card): card for card in CARDS})]
        if other_deck:
            decks.append(Deck("otro", {MockDeck(1).uid(card): card for card in CARDS}))
        save_registry(DeckRegistry(tuple(decks)), state / "decks.toml")
        (state / "decks.toml").chmod(0o640)
        if as_plain:
            for path in (state, state / "decks.toml"):
                os.chown(path, -1, GROUP)
        # the seat boxes, with the pin map's serial numbers and a 2.42" panel each
        serials = {s["seat"]: s["serial"] for s in shipped["nodes"]["seat"]}
        panels = [SSD1309Model() for _ in range(players)]
        for seat in range(players):
            panels[seat].unplugged = seat in unplugged
            stored = (says_seat or {}).get(seat, seat)
            node = SimNode(
                by_id, serial=serials[seat], seat=stored, panel=panels[seat], stuck_ms=stuck_ms
            )
            node.reader_ok = seat not in no_reader
            node.plug()
            nodes.append(node)
            tty = os.path.realpath(node.link)  # root:dialout 0660 on the Pi
            if as_plain:
                os.chown(tty, -1, GROUP)
            os.chmod(tty, 0o660 if as_plain else 0o666)
        # the service, as systemd starts it
        argv, unit_env = unit_command(etc / "table.toml")
        notify = run / "notify"
        sock.bind(str(notify))
        sock.settimeout(PATIENCE)  # the service started on a loaded machine
        journal = base / "journal"
        made: list[GuideTable] = []

        def start() -> None:
            nonlocal proc
            assert proc is None
            with open(journal, "ab") as err_file:
                proc = subprocess.Popen(
                    argv,
                    env={**os.environ, **unit_env, "NOTIFY_SOCKET": str(notify)},
                    stdout=subprocess.DEVNULL,
                    stderr=err_file,
                    cwd=state,
                )
            while not sock.recv(1024).startswith(b"READY=1"):
                pass
            for guide in made:
                guide.proc = proc

        def stop() -> None:
            nonlocal proc
            if proc is None:
                return
            running, proc = proc, None
            for guide in made:
                guide.proc = None
            running.terminate()
            running.wait(timeout=120)
            err = journal.read_text(encoding="utf-8", errors="replace")
            assert running.returncode == 0, err
            assert "Traceback" not in err, err

        start()
        guide = GuideTable(
            base, etc / "table.toml", nodes, panels, run / "seats.json", as_plain,
            by_id=by_id, state=state, stop=stop, start=start, journal_file=journal, proc=proc,
        )  # fmt: skip
        made.append(guide)
        assert wait_for(lambda: all(guide.panel_ok(s) is not None for s in range(players)))
        yield guide
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=120)
            err = (base / "journal").read_text(encoding="utf-8", errors="replace")
            assert proc.returncode == 0, err
            assert "Traceback" not in err, err
        sock.close()
        for node in nodes:
            node.unplug()
        shutil.rmtree(base, ignore_errors=True)


def lines(text: str, start: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(start)]


def test_the_guides_table_is_all_bien_for_its_owner() -> None:
    with guide_table() as table:
        done = table.doctor()
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    for seat in range(4):
        assert f"  bien Asiento {seat}: nodo: " in done.stdout
        assert (
            f"  bien Asiento {seat}: pantalla: ssd1309 128x64 en el nodo, dirección 0x3C: "
            "contesta" in done.stdout
        )
    assert "  bien Registro de mazos:" in done.stdout and "casa (40 cartas)" in done.stdout
    assert "  bien Carpeta de la partida:" in done.stdout
    assert "i2c" not in done.stdout  # node panels are not looked for on the Pi's bus
    assert lines(done.stdout, "  MAL") == [] and lines(done.stdout, "  ojo") == []
    assert done.stdout.rstrip().endswith("Todo en orden: la mesa está lista para jugar.")


def test_one_panel_unplugged_is_named_and_comes_back() -> None:
    with guide_table(unplugged=frozenset({2})) as table:
        assert wait_for(lambda: table.panel_ok(2) is False)
        done = table.doctor()
        assert done.returncode == 1, done.stdout + done.stderr
        bad = lines(done.stdout, "  MAL")
        assert len(bad) == 1 and bad[0].startswith("  MAL  Asiento 2: pantalla: ssd1309"), bad
        assert "no contesta" in bad[0] and "GP1" in bad[0] and "RES" in bad[0]
        assert "Traceback" not in done.stdout + done.stderr
        table.panels[2].unplugged = False  # the cable seated again
        assert wait_for(lambda: table.panel_ok(2) is True)
        again = table.doctor()
    assert again.returncode == 0, again.stdout
    assert "  bien Asiento 2: pantalla: ssd1309 128x64 en el nodo" in again.stdout


@pytest.mark.skipif(not plain_user_available(), reason="needs root to become another user")
def test_a_plain_user_outside_the_group_gets_one_line_to_use_sudo() -> None:
    with guide_table() as table:
        done = table.doctor(in_group=False)
        table.config.chmod(0o600)  # even the configuration: one line, no traceback
        unreadable = table.doctor()
    assert unreadable.returncode == 1 and unreadable.stderr == "", unreadable.stderr
    assert lines(unreadable.stdout, "  MAL") == [
        f"  MAL  Configuración: no puedo leer {table.config} con este usuario: "
        "corré sudo truco-table doctor."
    ]
    out = done.stdout + done.stderr
    assert "Traceback" not in out and done.stderr == ""
    sudo = [line for line in done.stdout.splitlines() if "sudo truco-table doctor" in line]
    assert len(sudo) == 1 and sudo[0].startswith("  ojo "), done.stdout
    assert "no la puede leer" in sudo[0]
    # what it may read, it still checks: every seat's panel (the status file is public);
    # the nodes' ports are the dialout group's (here the same group as the state folder)
    assert len(lines(done.stdout, "  bien Asiento")) == 4
    assert all("pantalla" in line for line in lines(done.stdout, "  bien Asiento"))
    assert [line for line in lines(done.stdout, "  MAL") if "grupo dialout" in line] == (
        lines(done.stdout, "  MAL")
    )
