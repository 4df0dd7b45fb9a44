"""``truco-table desk --competition`` as a real process: the organiser registers and
starts a knockout through ``truco-table organiser``, the desk is killed (SIGKILL: the
laptop's power, nothing flushed or closed), started again on the same folder, and it
is where it was: the same entrants, round, pairings and tables, its journal intact.
A journal changed while the desk was down keeps it from starting (exit 1, one line)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from controller.tournament.sim.mosquitto import free_port
from controller.tournament.wire.seal import TournamentKey

KEY = TournamentKey(b"d" * 32, "copa-proc")
TABLES = ["mesa01", "mesa02", "mesa03"]


def config(tmp: Path) -> Path:
    path = tmp / "tournament.toml"
    path.write_text(
        '[tournament]\nname = "copa"\nbroker = "127.0.0.1:9"\n'  # no broker: not needed here
        f'key = "{KEY.key.hex()}"\nkey_id = "{KEY.key_id}"\n'
        f"tables = {json.dumps(TABLES)}\n",
        encoding="utf-8",
    )
    path.chmod(0o600)
    return path


def cli(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "controller.cli", *argv], capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    if check:
        assert done.returncode == 0, done.stderr
    return done


def start_desk(tmp: Path, port: int) -> subprocess.Popen[str]:
    desk = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "desk", "--config", str(config(tmp)),
         "--competition", "--http-port", str(port), "--out", str(tmp / "desk"), "--quiet"],
        stdout=open(tmp / "desk.out", "a"), stderr=subprocess.PIPE, text=True,  # noqa: SIM115
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/tournament", timeout=60)
            return desk
        except OSError:
            if desk.poll() is not None:
                why = desk.stderr.read() if desk.stderr else ""
                raise AssertionError(f"the desk exited: {why}") from None
            time.sleep(0.1)
    desk.kill()
    raise AssertionError("the desk's page never answered")


def state(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/tournament", timeout=60) as r:
        data: dict[str, Any] = json.loads(r.read())
    return {"tournament": {k: v for k, v in data["tournament"].items() if k != "round_label"},
            "matches": data["matches"]}  # fmt: skip


def test_the_desk_killed_comes_back_where_it_was(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    desk = start_desk(tmp_path, port)
    key = str(tmp_path / "desk" / "organiser.key")
    try:
        for i, name in enumerate(["Los del Fondo", "La Barra", "Los Pardas", "Vale Cuatro"]):
            cli("organiser", "--desk", url, "--key-file", key, "register", "--name", name,
                "--player", f"Jugador {i}a", "--player", f"Jugador {i}b")  # fmt: skip
        cli("organiser", "--desk", url, "--key-file", key, "start", "--format", "knockout",
            "--best-of", "3")  # fmt: skip
        before = state(port)
        assert before["tournament"]["round"] == 1 and len(before["matches"]) == 2
        assert {m["table"] for m in before["matches"]} == {"mesa01", "mesa02"}
    finally:
        os.kill(desk.pid, signal.SIGKILL)  # the power goes
        desk.wait(timeout=120)
    desk = start_desk(tmp_path, port)
    try:
        assert state(port) == before
        cli("organiser", "--desk", url, "--key-file", key, "walkover", "r1-m01", "--winner",
            before["matches"][0]["home"], "--reason", "no vinieron")  # fmt: skip
    finally:
        desk.terminate()
        desk.wait(timeout=120)
    # the organiser's login link, in Spanish (issue 42: none was printed)
    said = (tmp_path / "desk.out").read_text(encoding="utf-8")
    link = f"La página del organizador (entra sola con tu clave, no la compartas): {url}/#clave="
    assert link + (tmp_path / "desk" / "organiser.key").read_text().strip() in said, said
    audit = cli("desk-audit", str(tmp_path / "desk"), "--config", str(tmp_path / "tournament.toml"))
    assert audit.stdout.startswith("íntegro: ")
    journal = tmp_path / "desk" / "journal.jsonl"
    journal.write_text(journal.read_text(encoding="utf-8").replace("no vinieron", "sí vinieron"),
                       encoding="utf-8")  # fmt: skip
    refused = subprocess.run(
        [sys.executable, "-m", "controller.cli", "desk", "--config",
         str(tmp_path / "tournament.toml"), "--competition", "--http-port", "0", "--out",
         str(tmp_path / "desk"), "--duration", "5"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert refused.returncode == 1
    assert "la mesa de control no arranca con un diario en el que no puede confiar" in (
        refused.stderr
    )
    assert "del diario: " in refused.stderr  # the journal's own words, in Spanish too
    assert "Traceback" not in refused.stderr
