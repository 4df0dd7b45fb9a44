"""``bench/noop.py`` as a developer runs it: the real ``truco-table run --config`` fed
cards lifted alone, with or without the loop's CPU filled before each. No figure is
judged (the benchmark's, not a test's): only that the line is printed and well formed,
that it says what was asked, and that bad arguments are refused without a traceback."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.bench.runs import key_values, run_bench


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # its state directories: ours
    return run_bench("bench/noop.py", *args, env=env)


def _line(tmp_path: Path, *args: str) -> dict[str, str]:
    done = _run(tmp_path, "--events", "30", *args)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = key_values(done.stdout, only=True)
    assert line["events"] == "30"
    mean, median, p90 = (float(line[k]) for k in ("noop_us_mean", "noop_us_median", "noop_us_p90"))
    assert mean > 0 and 0 < median <= p90
    assert float(line["idle_cpu_ms_per_s"]) >= 0
    assert line["loop_cpu"] != "-"  # the kernel's list of the loop's CPUs, read back
    return line


def test_cards_lifted_alone(tmp_path: Path) -> None:
    line = _line(tmp_path)
    assert line["evict_kb"] == "0" and line["fsync"] == "0"
    assert line["service_python"]
    assert list(tmp_path.iterdir()) == []  # the service's folders are gone with it


def test_cards_lifted_after_the_loop_s_cpu_was_filled(tmp_path: Path) -> None:
    line = _line(tmp_path, "--evict-kb", "512", "--fsync")
    assert line["evict_kb"] == "512" and line["fsync"] == "1"


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    for args in (("--events", "0"), ("--evict-kb", "-1")):
        done = _run(tmp_path, *args)
        assert done.returncode == 2, args
        assert "--events must be at least 1 and --evict-kb not negative" in done.stderr
        assert "Traceback" not in done.stderr
