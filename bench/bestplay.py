"""The broadcast's best-play line: how long the search takes after each action.

For each table size, ``--games`` seeded random games (every card read at the deal,
random legal actions, calls and all) are played; after every action of a hand still in
play, ``position_of`` and ``best_play`` are run for each play still going on (a
pica-pica hand's picas each), as the broadcast does, and timed in CPU time from the
kernel (``time.thread_time``: a figure of the search, not of the processes sharing the
core), the quickest of three runs. Prints one key=value line per size::

    players=6 actions=... mean_ms=... p99_ms=... max_ms=... pi4_max_ms=... target_ms=50
    load=...

``pi4_max_ms`` is ``max_ms`` times six (a Raspberry Pi 4 runs this Python about six
times slower than the machine the figures in docs/dev/broadcast.md were taken on);
the target is at most 50 ms there.

Run: ``.venv/bin/python bench/bestplay.py [--games 20] [--seed 1]``.
"""

from __future__ import annotations

import argparse
import os
import random
import time

from controller.engine import Game, HouseRules
from controller.engine.bestplay import best_play, position_of
from controller.engine.playout import random_deal, uniform_without_mazo

PI4_FACTOR = 6
TARGET_MS = 50
#: Each action's search is run this many times and the quickest kept: a figure of the
#: search, not of another process that took the core meanwhile.
REPEAT = 3


def measure(players: int, games: int, rng: random.Random) -> str:
    times: list[float] = []
    for _ in range(games):
        game = Game(HouseRules(players=players, pica_pica=players == 6))
        while game.winner is None:
            game.deal(random_deal(rng, players))
            while game.hand_in_progress and game.winner is None:
                for play in game.plays:
                    runs = []
                    for _ in range(REPEAT):
                        start = time.thread_time()
                        position = position_of(play)
                        if position is not None:
                            best_play(position)
                        runs.append(time.thread_time() - start)
                    times.append(min(runs))
                game.push(uniform_without_mazo(game, rng))
    times.sort()
    worst = times[-1] * 1000
    return (
        f"players={players} actions={len(times)} mean_ms={sum(times) / len(times) * 1000:.3f} "
        f"p99_ms={times[int(len(times) * 0.99)] * 1000:.3f} max_ms={worst:.3f} "
        f"pi4_max_ms={worst * PI4_FACTOR:.1f} target_ms={TARGET_MS} "
        f"load={os.getloadavg()[0]:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    for players in (2, 4, 6):
        print(measure(players, args.games, rng), flush=True)


if __name__ == "__main__":
    main()
