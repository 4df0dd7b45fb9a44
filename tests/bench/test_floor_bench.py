"""``bench/floor.py`` as a developer runs it: the system calls of an event alone, in a
process of their own. No figure is judged (the benchmark's, not a test's): only that
each is printed and well formed, and that an accepted event (a record synced, six ports
written) costs the floor process more than a frame read alone."""

from __future__ import annotations

from tests.bench.runs import key_values, run_bench


def test_the_floor_prints_each_kind_of_event() -> None:
    done = run_bench("bench/floor.py", "--events", "40")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = key_values(done.stdout, only=True)
    assert line["events"] == "40" and line["panel_bytes"] == "60" and line["gap_ms"] == "0"
    noop, accepted = float(line["floor_noop_us_mean"]), float(line["floor_accepted_us_mean"])
    assert 0 < noop < accepted
    assert 0 < float(line["floor_fsync_us_mean"]) < accepted


def test_the_floor_can_wait_between_events() -> None:
    """``--gap-ms``: each event that long after the last (``bench/table.py``'s pace)."""
    done = run_bench("bench/floor.py", "--events", "20", "--gap-ms", "5")
    assert done.returncode == 0, done.stderr
    (line,) = key_values(done.stdout, only=True)
    assert line["gap_ms"] == "5"
    assert 0 < float(line["floor_noop_us_mean"]) < float(line["floor_accepted_us_mean"])
