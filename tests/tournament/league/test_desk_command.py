"""``truco-table league desk`` as an organiser runs it: a subprocess against the real
central Mosquitto (and a venue bridged to it) that ``league add-venue`` configured.

It connects with the league desk's account, counts what a venue's table publishes
through the bridge (read back from its standings page), keeps its journal in the
league's folder and stops cleanly on SIGTERM and on Ctrl-C (SIGINT), a restart coming
back where it was; without a broker, or given a folder that is no league's (or one
whose league.toml is incomplete), it says so in one Spanish line and exits 2."""

from __future__ import annotations

import datetime
import http.client
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from controller.cli import main
from controller.tournament.league.bridge import DESK_ACCOUNT
from controller.tournament.league.fixture import fixture
from controller.tournament.sim.mosquitto import free_port

from .helpers import game_payloads, two_venue_league
from .test_bridge_brokers import (
    CentralProbe,
    League,
    TablePublisher,
    _as_venue,
    _league_secret,
    _wait_bridge_up,
    league,  # noqa: F401  (the fixture: a central broker and venue bar-a, bridged)
)
from .test_web import _Tables

ROOT = Path(__file__).resolve().parents[3]
#: Its matchdays are long past: every match is due at the desk (its date is the machine's).
MODEL = two_venue_league(("bar-a", "bar-b"), datetime.date(2024, 3, 2))

#: The rest of league.toml (add-venue wrote [league] name and central): two_venue_league.
LEAGUE_TOML = """best_of = 3
rules = "players=2 target=15"
first_date = 2024-03-02

[[clubs]]
id = "bar-a"
name = "Sede bar-a"

[[clubs]]
id = "bar-b"
name = "Sede bar-b"
""" + "".join(
    f'\n[[entrants]]\nid = "e0{i}"\nname = "Equipo {i}"\nclub = "{"bar-a" if i % 2 else "bar-b"}"'
    f'\nplayers = ["P{i}"]\n'
    for i in range(1, 5)
)


class Command:
    """``truco-table league desk`` running, its stdout read line by line."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "controller.cli", "league", "desk", *args],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def line(self, starting: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            try:
                got = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                err = self.proc.stderr.read() if self.proc.poll() is not None else ""  # type: ignore[union-attr]
                raise AssertionError(f"no line {starting!r} (stderr: {err!r})") from None
            if got.startswith(starting):
                return got

    def stop(self, sig: int) -> int:
        self.proc.send_signal(sig)
        return self.proc.wait(15)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)


def _standings(port: int) -> list[list[str]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", "/", headers={"Host": f"127.0.0.1:{port}"})
        text = conn.getresponse().read().decode("utf-8")
        assert 'id="link"' not in text  # connected: no banner
        page = _Tables()
        page.feed(text)
        return page.tables["standings"][1:]
    finally:
        conn.close()


def test_the_league_desk_command_counts_through_the_bridge_and_stops_cleanly(
    league: League,  # noqa: F811
) -> None:
    root = league.a.root
    with (root / "league.toml").open("a", encoding="utf-8") as f:
        f.write(LEAGUE_TOML)
    secret = _league_secret(league)
    match = next(m for m in fixture(MODEL) if m.venue == "bar-a")
    probe = CentralProbe(league.a, DESK_ACCOUNT, league.a.desk_password())
    table = TablePublisher(_as_venue(league.a), "mesa01")
    http_port = free_port()
    desk = Command("--dir", str(root), "--http-port", str(http_port),
                   "--hand-s", "0")  # its games are streamed at machine speed  # fmt: skip
    try:
        assert "liga: broker central 127.0.0.1:" in desk.line("mesa de la liga")
        assert desk.line("páginas:").startswith(f"páginas: http://127.0.0.1:{http_port}/")
        _wait_bridge_up(probe, "bar-a")
        probe.close()  # the desk's account is one session (its client id): the desk's alone
        seq = 1
        for n in (1, 2):  # each chico's events, then its record
            for topic, data in game_payloads(MODEL, secret, "bar-a", "mesa01", match.id,
                                             seq=seq, game_number=n, chico=n):  # fmt: skip
                retain = "/records/" in topic
                table.client.publish(topic, data, qos=1, retain=retain).wait_for_publish(10)
                seq += 1
        deadline = time.monotonic() + 15
        while sum(int(r[2]) for r in _standings(http_port)) < 2:  # PJ of both sides
            assert time.monotonic() < deadline, _standings(http_port)
            time.sleep(0.1)
        assert _standings(http_port)[0][2:7] == ["1", "1", "0", "2", "0"]  # won 2-0 in chicos
        assert desk.stop(signal.SIGTERM) == 0
        assert desk.line("mesa de la liga cerrada").startswith(
            "mesa de la liga cerrada: 2 registros contados, 0 sin contar"
        )
        journal = (root / "desk" / "journal.jsonl").read_text(encoding="utf-8")
        assert journal.count('"kind":"record"') + journal.count('"kind": "record"') == 2
        again = Command("--dir", str(root), "--http-port", "0", "--hand-s", "0")
        try:
            assert "2 registros contados hasta ahora" in again.line("mesa de la liga")
            assert again.line("páginas:").startswith("páginas: sin página")
            assert again.stop(signal.SIGINT) == 0
            assert again.line("mesa de la liga cerrada").startswith(
                "mesa de la liga cerrada: 2 registros contados"
            )
        finally:
            again.kill()
    finally:
        desk.kill()
        table.close()
        probe.close()


def test_without_a_broker_or_with_a_wrong_password_one_spanish_line(league: League) -> None:  # noqa: F811
    root = league.a.root
    with (root / "league.toml").open("a", encoding="utf-8") as f:
        f.write(LEAGUE_TOML)
    nobody = f"127.0.0.1:{free_port()}"
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "league", "desk", "--dir", str(root),
         "--central", nobody, "--http-port", "0"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done
    assert done.stderr.splitlines() == [
        f"truco-table league desk: no hay conexión con el broker central {nobody}: "
        "Connection refused"
    ]
    assert done.stdout == ""
    (root / "desk" / "broker.pass").write_text("not-the-password\n", encoding="ascii")
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "league", "desk", "--dir", str(root),
         "--http-port", "0"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "rechazó la cuenta league-desk" in lines[0], done.stderr


def test_a_folder_that_is_no_leagues_is_one_spanish_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    half = tmp_path / "a-medias"
    half.mkdir()
    (half / "league.toml").write_text('[league]\nname = "liga"\ncentral = "127.0.0.1:1"\n')
    for folder, words in (
        (tmp_path, "no hay league.toml"),
        (tmp_path / "no-existe", "No existe la carpeta de la liga"),
        (half, "first_date va como fecha"),
    ):
        assert main(["league", "desk", "--dir", str(folder), "--http-port", "0"]) == 2
        out, err = capsys.readouterr()
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("truco-table league desk: "), err
        assert words in lines[0] and out == ""
