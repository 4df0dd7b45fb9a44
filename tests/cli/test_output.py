"""Writes that fail and terminals that cannot do everything, as a user meets them: a full
disk under ``--record`` or standard output (/dev/full), a file grown past its limit in
the middle of a game, standard output closed, an output encoding that is not UTF-8, a
terminal whose locale is not UTF-8 (``LC_ALL=C``) or that cannot move the cursor
(``TERM=dumb``): one line on stderr and a documented exit status, never a traceback."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import IO

import pytest

from controller.cli import EXIT_USAGE, EXIT_WRITE_FAILED
from controller.cli.run import EXIT_NOT_RECORDED

from .tmux import TRUCO_TABLE, Terminal

SCRIPT = "0 truco\n1 quiero\n0 envido\n1 no-quiero\n"


def cli(
    *args: str, env: dict[str, str] | None = None, stdout: IO[str] | None = None, input: str = ""
) -> subprocess.CompletedProcess[str]:
    """The command with stderr read back; standard output captured unless given."""
    return subprocess.run(
        [*TRUCO_TABLE, *args],
        stdout=stdout if stdout is not None else subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        input=input,
    )


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "game.truco"
    path.write_text(SCRIPT, encoding="utf-8")
    return path


def test_a_record_on_a_full_disk(script: Path) -> None:
    done = cli("run", "--mock", "--script", str(script), "--record", "/dev/full")
    assert done.returncode == EXIT_USAGE  # said before the game: its first line did not go
    assert "cannot write /dev/full: No space left on device" in one_line(done.stderr)
    done = cli("run", "--mock", "--seed", "2", "--ui", "lines", "--record", "/dev/full",
               input="1\n")  # fmt: skip
    assert done.returncode == EXIT_USAGE and "Tus cartas" not in done.stdout
    one_line(done.stderr)


def test_standard_output_on_a_full_disk(script: Path) -> None:
    with open("/dev/full", "w") as full:
        done = cli("run", "--mock", "--script", str(script), stdout=full)
    assert done.returncode == EXIT_WRITE_FAILED
    assert "cannot write standard output: No space left on device" in one_line(done.stderr)
    record = script.with_suffix(".out")
    cli("run", "--mock", "--script", str(script), "--record", str(record))
    with open("/dev/full", "w") as full:
        done = cli("replay", str(record), stdout=full)
    assert done.returncode == EXIT_WRITE_FAILED
    one_line(done.stderr)


def test_standard_output_closed(script: Path) -> None:
    argv = shlex.join([*TRUCO_TABLE, "replay", str(script)])
    done = subprocess.run(["sh", "-c", f"{argv} >&-"], capture_output=True, text=True, timeout=60)
    assert done.returncode == EXIT_WRITE_FAILED
    assert "standard output is closed" in one_line(done.stderr)


def test_an_ascii_output_gets_spanish_without_accents(script: Path) -> None:
    record = script.with_suffix(".rec")
    cli("run", "--mock", "--script", str(script), "--record", str(record))
    done = cli("replay", str(record), env={"PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.isascii() and "Mano 1" in done.stdout
    done = cli("run", "--mock", "--seed", "2", "--ui", "lines", env={"PYTHONIOENCODING": "ascii"},
               input="1\nx\n")  # fmt: skip
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.isascii() and "vos: jugas" in done.stdout and "Modo de lineas" in done.stdout


def test_state_that_is_no_directory(script: Path) -> None:
    done = cli("run", "--mock", "--state", "/dev/null", "--script", str(script))
    assert done.returncode == EXIT_USAGE
    assert "--state /dev/null: not a directory" in one_line(done.stderr)


def test_the_record_fills_up_in_the_middle_of_a_game(tmp_path: Path) -> None:
    """The record may grow to 512 bytes (ulimit -f 1): the terminal table stops when it can
    no longer write it, gives the screen back and says so in one line (exit 3)."""
    record, err = tmp_path / "game.truco", tmp_path / "err"
    argv = shlex.join([*TRUCO_TABLE, "run", "--mock", "--seed", "3", "--pace", "0.05",
                       "--record", str(record)])  # fmt: skip
    shell = ["sh", "-c", f"ulimit -f 1; trap '' XFSZ; {argv} 2> {shlex.quote(str(err))}"]
    with Terminal(shell, width=100, height=30) as term:
        term.wait_for("turno: vos")
        for _ in range(80):
            if term.exit_status_now() is not None:
                break
            term.type("1q\n", delay=0.05)
        assert term.exit_status() == EXIT_NOT_RECORDED
        screen = term.screen()
    said = one_line(err.read_text())
    assert f"cannot write {record}: File too large; the game's record there is incomplete" in said
    assert "Traceback" not in screen
    assert record.stat().st_size <= 512


def test_a_terminal_whose_locale_is_not_utf8_gets_the_panels_in_ascii() -> None:
    argv = [*TRUCO_TABLE, "run", "--mock", "--seed", "3", "--pace", "5"]
    with Terminal(argv, env={"LC_ALL": "C", "LANG": "C"}) as term:
        screen = term.wait_for("turno: vos")
        assert screen.isascii(), screen
        assert "+" + "-" * 18 + " asiento 0 (vos) - equipo 0 " in screen  # the panel's box
        assert re.search(r"^\|[ .:+#]{64}\|", screen, re.M)  # its pixels in shades
        assert "Nosotros 0 - Ellos 0" in screen and "Tus cartas: [1]" in screen
        term.type("1")
        term.wait_for("vos: jugas")


def test_a_terminal_that_cannot_move_the_cursor_gets_the_line_mode() -> None:
    argv = [*TRUCO_TABLE, "run", "--mock", "--seed", "3", "--pace", "0"]
    with Terminal(argv, env={"TERM": "dumb"}) as term:
        screen = term.wait_for("Tus cartas: [1]")
        assert "la terminal no puede mover el cursor (TERM=dumb): modo de líneas" in screen
        assert "Tus cartas: [1]" in screen and "\x1b" not in screen
        term.type("1")
        term.press("Enter")
        term.wait_for("vos: jugás")
        term.type("x")
        term.press("Enter")
        term.wait_for("¿Dejás el partido? s: sí, salir")  # the game goes on: asked first
        term.type("s")
        term.press("Enter")
        assert term.exit_status() == 0
        assert "Sin --state el partido no se guarda" in term.screen()


def test_state_that_fills_up_is_said_at_the_end(tmp_path: Path) -> None:
    """--state's record may grow to 512 bytes (ulimit -f 1): the game goes on in memory, as
    a real table's does, and its end says in one line that it was not kept (exit 3)."""
    script, state = tmp_path / "s.truco", tmp_path / "state"
    script.write_text("0 truco\n", encoding="utf-8")
    argv = shlex.join([*TRUCO_TABLE, "run", "--mock", "--script", str(script), "--bots",
                       "--state", str(state)])  # fmt: skip
    done = subprocess.run(
        ["sh", "-c", f"ulimit -f 1; trap '' XFSZ; {argv}"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == EXIT_NOT_RECORDED
    said = one_line(done.stderr)
    assert f"cannot write the game's record in {state}: " in said and "is lost" in said
    assert '"winner"' in done.stdout  # the game was played to its end all the same
