"""``bench/host.py``: the host's yardstick (a fixed piece of Python timed on one CPU) that
``bench/table.py`` reads its figures by. No figure is judged (the benchmark's, not a
test's): that the bench prints its line, that the yardstick leaves the caller where it
may run, and which moments the rule calls slow."""

from __future__ import annotations

import os

import pytest

from bench.host import SLOW_FACTOR, reference_us, slow_above, slow_marks, tenth_percentile
from tests.bench.runs import key_values, run_bench


def test_the_host_bench_prints_its_line() -> None:
    done = run_bench("bench/host.py", "--blocks", "4", "--sleep-s", "0")
    assert done.returncode == 0, done.stderr
    (line,) = key_values(done.stdout, only=True)
    assert line["blocks"] == "4" and line["sleep_s"] == "0"
    assert int(line["cpu"]) == max(os.sched_getaffinity(0))
    p10, median, most = (float(line[k]) for k in ("ref_us_p10", "ref_us_median", "ref_us_max"))
    assert 0 < p10 <= median <= most
    assert 0 <= int(line["slow_blocks"]) < 4
    assert float(line["slow_factor"]) == SLOW_FACTOR


def test_a_cpu_this_process_may_not_use_is_refused() -> None:
    done = run_bench("bench/host.py", "--cpu", "4096", "--blocks", "1")
    assert done.returncode == 2 and "--cpu 4096: this process may run on" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_yardstick_gives_the_caller_back_its_cpus() -> None:
    allowed = os.sched_getaffinity(0)
    assert reference_us(max(allowed)) > 0
    assert os.sched_getaffinity(0) == allowed
    assert reference_us() > 0  # where the thread is


def test_a_moment_is_slow_past_the_factor_times_the_fast_tenth() -> None:
    assert slow_marks([]) == []
    few = [10.0, 10.0, 12.0, 15.0, 15.1, 30.0]  # under ten: the fastest is the fast one
    assert tenth_percentile(few) == 10.0 and slow_above(few) == SLOW_FACTOR * 10.0
    assert slow_marks(few) == [False, False, False, False, True, True]
    many = [9.0] * 12 + [22.0] * 8  # a host that ran at two speeds
    assert tenth_percentile(many) == pytest.approx(9.0)
    assert sum(slow_marks(many)) == 8
