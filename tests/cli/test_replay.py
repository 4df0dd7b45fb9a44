"""``truco-table replay`` from the command line: output, exit codes, messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from controller.cli import main

SCENARIOS = Path(__file__).parent.parent / "scenarios"


def test_replay_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(SCENARIOS / "worked-hand-2.truco"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["score"] == [16, 10]
    assert out["hands"][0]["awards"] == [
        {"team": 0, "points": 2, "reason": "envido"},
        {"team": 0, "points": 2, "reason": "truco"},
    ]


def test_replay_readable_spanish(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(SCENARIOS / "four-players.truco")]) == 0
    out = capsys.readouterr().out
    assert "Mano 1: da el asiento 3, es mano el asiento 0" in out
    assert "rechazado: No es tu turno (not_your_turn)" in out
    assert "Tanteador: equipo 0 3, equipo 1 0" in out
    # a refused raise is said as it was tried: nobody said quiero to it (issue 44)
    assert "asiento 3: ¡retruco! -> rechazado: No te toca subir (raise_not_allowed)" in out
    assert "quiero retruco" not in out


def test_malformed_exit_2_names_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.truco"
    bad.write_text("table players=2\nhand\ndeal 0: 8E 1E 2E\n")
    assert main(["replay", str(bad), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"{bad}:3:" in captured.err and "8E" in captured.err
    assert main(["replay", str(bad)]) == 2


def test_missing_file_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "nope.truco")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_console_script_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.truco"
    bad.write_text("hand\n0 dance\n")
    proc = subprocess.run(
        [sys.executable, "-m", "controller.cli", "replay", str(bad), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert ":2: unknown action 'dance'" in proc.stderr
