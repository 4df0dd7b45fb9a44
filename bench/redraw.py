"""A profiling aid: the CPU of ``TableService.redraw`` before the panels' writers.

Not a figure the README quotes (``bench/table.py`` measures the service the Pi runs).
Bots play whole games (seeded, the deal read at the seats and not read: see
``bench.rig.READINGS``) on the mock table, six seat nodes on ptys, the record in a real
state folder; the seats' panels are stand-ins that take the pages and do nothing with
them, so every redraw's CPU (the loop's thread's own clock) is the screens' share alone:
the disk alert looked at, every seat's ``SeatScreen`` (``screens_for``), the contents
(``screen_content``), the pages of the seats that changed (``render_pages``), the
comparisons and the first message's end timed. The heap is frozen as ``truco-table run``
freezes it. Prints::

    players=6 redraws=... seats_shown_mean=... us_per_redraw_mean=... us_per_redraw_p50=...
        us_per_redraw_p99=... loadavg=...

``--profile N``: also the N functions that took the most of the redraws' own time
(``cProfile``, on redraws only; its overhead inflates every figure).

Run: ``.venv/bin/python bench/redraw.py [--games 3] [--players 6] [--profile 25]``.
"""

from __future__ import annotations

import argparse
import cProfile
import itertools
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from controller.engine import HouseRules
from controller.table.mock_table import MockTable
from controller.table.run_mock import MockRun
from controller.table.service import freeze_heap

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import rig


class PagesTaken:
    """A seat's panel that takes the pages (the page layout) and does nothing more."""

    def __init__(self) -> None:
        self.shown = 0

    def show_pages(self, pages: bytes) -> None:
        self.shown += 1

    def show(self, image: object) -> None:  # pragma: no cover: pages only
        self.shown += 1


def measure(
    players: int, games: int, profile: cProfile.Profile | None = None
) -> tuple[list[int], int]:
    """The CPU of every redraw (nanoseconds) and the seats shown, over the games."""
    spent: list[int] = []
    panels: list[PagesTaken] = []
    frozen = False
    clock = time.thread_time_ns
    for seed, reading in itertools.product(range(games), rig.READINGS):
        rules = HouseRules(players=players)
        seats = [PagesTaken() for _ in range(players)]
        panels += seats
        with tempfile.TemporaryDirectory(prefix="bench-redraw-") as state:
            table = MockTable(
                rules, seed=seed, deal_reading=reading, displays=seats, state_dir=Path(state)
            )
            if not frozen:  # as ``truco-table run`` does once started
                freeze_heap()
                frozen = True
            service = table.service
            redraw: Callable[..., None] = service.redraw

            def timed(force: bool = False, redraw: Callable[..., None] = redraw) -> None:
                if profile is not None:
                    profile.enable()
                start = clock()
                redraw(force)
                spent.append(clock() - start)
                if profile is not None:
                    profile.disable()

            service.redraw = timed  # type: ignore[method-assign]
            run = MockRun(rules, seed=seed, human=None, mock=table, deal_reading=reading)
            try:
                run.play_out()
            finally:
                run.close()
    return spent, sum(p.shown for p in panels)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--games", type=int, default=3, help="seeds (each played twice)")
    parser.add_argument("--players", type=int, default=6)
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="top N functions")
    args = parser.parse_args(argv)
    profile = cProfile.Profile() if args.profile else None
    spent, shown = measure(args.players, args.games, profile)
    us = [n / 1e3 for n in spent]
    p99 = statistics.quantiles(us, n=100)[98] if len(us) > 1 else us[0]
    print(
        f"players={args.players} redraws={len(us)} seats_shown_mean={shown / len(us):.2f} "
        f"us_per_redraw_mean={statistics.fmean(us):.1f} "
        f"us_per_redraw_p50={statistics.median(us):.1f} us_per_redraw_p99={p99:.1f} "
        f"loadavg={rig.load_average()}",
        flush=True,
    )
    if profile is not None:
        pstats.Stats(profile).sort_stats("tottime").print_stats(args.profile)


if __name__ == "__main__":
    main()
