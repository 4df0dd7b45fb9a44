"""Events through the mock stack: a press or a tap -> seat node frame -> pty -> SeatLink
-> queue -> Table -> engine -> every seat's view ready.

Bots play whole games on the mock table (all seats); the figures are per hardware event
(button press, hold, tag on, tag off). ``cpu_us_per_event`` is the process CPU time (all
threads: mock nodes, links, the table) divided by the events; ``wall_us_per_event`` the
elapsed time. Prints one line per player count::

    players=4 events=... events_per_s=... cpu_us_per_event=... wall_us_per_event=...

Run: ``.venv/bin/python bench/table.py [games]``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from controller.engine import Game, HouseRules
from controller.table.run_mock import MockRun


def _views_ready(game: Game, players: int) -> Callable[[], None]:
    def ready() -> None:
        for seat in range(players):
            game.view(seat)

    return ready


def measure(players: int, games: int) -> tuple[int, float, float]:
    events = 0
    cpu = wall = 0.0
    for seed in range(games):
        run = MockRun(HouseRules(players=players), seed=seed, human=None)
        run.mock.on_change = _views_ready(run.game, players)
        try:
            c0, w0, e0 = time.process_time(), time.perf_counter(), run.mock.handled
            run.play_out()
            cpu += time.process_time() - c0
            wall += time.perf_counter() - w0
            events += run.mock.handled - e0
        finally:
            run.close()
    return events, cpu, wall


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    for players in (2, 4, 6):
        events, cpu, wall = measure(players, games)
        print(
            f"players={players} events={events} events_per_s={events / wall:.0f} "
            f"cpu_us_per_event={cpu / events * 1e6:.0f} "
            f"wall_us_per_event={wall / events * 1e6:.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
