"""``bench/instructions.py`` as a developer runs it: the real ``truco-table run --config``
under valgrind's callgrind, cards lifted counted in instructions. No figure is judged
(the benchmark's, not a test's): only that the line is printed and well formed, says what
was asked, and that bad arguments are refused without a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.bench.runs import key_values, run_bench

needs_valgrind = pytest.mark.skipif(
    shutil.which("valgrind") is None,
    reason="valgrind is not installed: the bench counts instructions with its callgrind",
)


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # its state directories: ours
    return run_bench("bench/instructions.py", *args, env=env)


@needs_valgrind
def test_cards_lifted_are_counted_in_instructions(tmp_path: Path) -> None:
    done = _run(tmp_path, "--events", "20", "--base-events", "5")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = key_values(done.stdout, only=True)
    assert line["events"] == "20" and line["base_events"] == "5"
    # a card lifted runs thousands of the interpreter's instructions, not millions
    assert 1_000 < int(line["instructions_per_card_lifted"]) < 1_000_000
    assert line["valgrind"] and line["service_python"]
    assert list(tmp_path.iterdir()) == []  # the service's folders and counts are gone


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    for args in (("--events", "0"), ("--base-events", "0")):
        done = _run(tmp_path, *args)
        assert done.returncode == 2, args
        assert "--events and --base-events must be at least 1" in done.stderr
        assert "Traceback" not in done.stderr


def test_without_valgrind_it_says_what_it_needs(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path), "PATH": str(tmp_path)}
    done = run_bench("bench/instructions.py", env=env)
    assert done.returncode == 2
    assert "needs valgrind on the PATH" in done.stderr
    assert "Traceback" not in done.stderr
