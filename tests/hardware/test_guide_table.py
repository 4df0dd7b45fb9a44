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
import time
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

from .unit import unit_command

ROOT = Path(__file__).resolve().parents[2]
GROUP = 4242  # the service's group (truco) on the Pi; here a number nobody else has
PLAIN = 65534  # nobody


def wait_for(predicate: Callable[[], bool], timeout: float = 120.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


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
def guide_table(unplugged: frozenset[int] = frozenset()) -> Iterator[GuideTable]:
    as_plain = plain_user_available()
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
        pinmap = (ROOT / "hardware" / "pinmap.toml").read_text(encoding="utf-8")
        pinmap = replace_once(pinmap, '"/dev/serial/by-id"', f'"{by_id}"')
        (etc / "pinmap.toml").write_text(pinmap, encoding="utf-8")
        shipped = tomllib.loads(pinmap)
        players = tomllib.loads(table)["table"]["players"]
        deck = MockDeck(0)
        save_registry(
            DeckRegistry((Deck("casa", {deck.uid(card): card for card in CARDS}),)),
            state / "decks.toml",
        )
        (state / "decks.toml").chmod(0o640)
        if as_plain:
            for path in (state, state / "decks.toml"):
                os.chown(path, -1, GROUP)
        # the seat boxes, with the pin map's serial numbers and a 2.42" panel each
        serials = {s["seat"]: s["serial"] for s in shipped["nodes"]["seat"]}
        panels = [SSD1309Model() for _ in range(players)]
        for seat in range(players):
            panels[seat].unplugged = seat in unplugged
            node = SimNode(by_id, serial=serials[seat], seat=seat, panel=panels[seat])
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
        sock.settimeout(30)
        proc = subprocess.Popen(
            argv,
            env={**os.environ, **unit_env, "NOTIFY_SOCKET": str(notify)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=state,
        )
        assert sock.recv(1024).startswith(b"READY=1")
        guide = GuideTable(base, etc / "table.toml", nodes, panels, run / "seats.json", as_plain)
        assert wait_for(lambda: all(guide.panel_ok(s) is not None for s in range(players)))
        yield guide
    finally:
        if proc is not None:
            proc.terminate()
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err.decode()
            assert b"Traceback" not in err, err.decode()
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
