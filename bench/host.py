"""A profiling aid: how fast this machine's CPU runs the same small piece of Python, from
one moment to the next (a yardstick to read the other benches' figures by, never a
figure of the product).

A virtual machine's CPU is a thread of its host, placed on the host's cores as the host
pleases: the same code can run at one speed for some seconds and at half of it for the
next (a neighbour's work on the same core's other hyperthread, another core's caches),
and the guest sees no stolen time. A benchmark of a few microseconds an event reads
that as its own figure. ``bench/table.py`` therefore measures this yardstick on the CPU
its service's loop runs on at every hand's start (after the service's timer's wait, when
the host has had seconds to move it) and prints its figures split by what the yardstick
found (``host_*``).

The yardstick (``reference_us``): a fixed piece of pure Python (dictionary and list
look-ups over some 10 KB, a few microseconds' work) run ``REPEATS`` times on one CPU,
the median of its thread's CPU time per run as the kernel counts it. A moment is *slow*
when its yardstick is over ``SLOW_FACTOR`` times the tenth percentile of the run's
(``slow_marks``).

This bench alone sleeps ``--sleep-s`` between blocks (the idle the host moves a guest's
CPU in), measures the yardstick after each and prints::

    cpu=1 blocks=60 sleep_s=1 ref_us_p10=... ref_us_median=... ref_us_max=...
        slow_blocks=... slow_factor=1.5 loadavg=...

Run: ``.venv/bin/python bench/host.py [--blocks 60] [--sleep-s 1] [--cpu N]`` (the
CPU: the last one this process may run on, as the service's loop keeps to).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

REPEATS = 15  # the yardstick's runs, of which the median is taken
SLOW_FACTOR = 1.5  # a moment is slow past this many times the run's tenth percentile

_TABLE = {number: str(number) for number in range(256)}
_ROW = list(range(512))


def _work() -> int:
    """The yardstick's fixed work: pure Python, some 10 KB of objects touched."""
    total = 0
    for number in range(0, 256, 3):
        total += len(_TABLE[number]) + _ROW[(number * 7) % 512]
    return total


def reference_us(cpu: int | None = None) -> float:
    """The yardstick's CPU per run on ``cpu`` (None: where this thread is), in µs: the
    median of ``REPEATS`` runs. The calling thread is moved there for it and then off
    it at once (not left to run the caller's next work on that CPU's caches)."""
    allowed = os.sched_getaffinity(0)
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    try:
        runs = []
        for _ in range(REPEATS):
            start = time.thread_time_ns()
            _work()
            runs.append((time.thread_time_ns() - start) / 1e3)
    finally:
        if cpu is not None:
            others = allowed - {cpu}
            if others:
                os.sched_setaffinity(0, others)  # off that CPU now
            os.sched_setaffinity(0, allowed)
    return statistics.median(runs)


def tenth_percentile(refs: Sequence[float]) -> float:
    """The run's fast yardstick: its tenth percentile (the smallest with under ten)."""
    return statistics.quantiles(refs, n=10)[0] if len(refs) >= 10 else min(refs)


def slow_above(refs: Sequence[float]) -> float:
    """The yardstick past which a run's moment was slow (``SLOW_FACTOR``)."""
    return SLOW_FACTOR * tenth_percentile(refs)


def slow_marks(refs: Sequence[float]) -> list[bool]:
    """For each yardstick of a run, whether its moment was slow."""
    if not refs:
        return []
    limit = slow_above(refs)
    return [ref > limit for ref in refs]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--blocks", type=int, default=60, help="yardsticks measured")
    parser.add_argument("--sleep-s", type=float, default=1.0, help="idle before each")
    parser.add_argument("--cpu", type=int, default=None, help="the CPU (default: the last)")
    args = parser.parse_args(argv)
    allowed = sorted(os.sched_getaffinity(0))
    cpu = allowed[-1] if args.cpu is None else args.cpu
    if cpu not in allowed:
        parser.error(f"--cpu {cpu}: this process may run on {allowed} only")
    if args.blocks < 1:
        parser.error("--blocks must be at least 1")
    refs = []
    for _ in range(args.blocks):
        time.sleep(args.sleep_s)
        refs.append(reference_us(cpu))
    slow = sum(slow_marks(refs))
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.rig import load_average

    print(
        f"cpu={cpu} blocks={args.blocks} sleep_s={args.sleep_s:g} "
        f"ref_us_p10={tenth_percentile(refs):.2f} ref_us_median={statistics.median(refs):.2f} "
        f"ref_us_max={max(refs):.2f} slow_blocks={slow} slow_factor={SLOW_FACTOR:g} "
        f"loadavg={load_average()}",
        flush=True,
    )


if __name__ == "__main__":
    main()
