"""Engine throughput: seeded random legal games, uniform over the legal actions.

Prints one line per player count and policy, as key=value pairs:

    players=2 mazo=on hands_per_s=... actions_per_s=... us_per_legal=...

``mazo=on`` picks uniformly among all legal actions; ``mazo=off`` leaves going to the
mazo out of the policy (hands then run longer). ``us_per_legal`` is the cost of listing
the legal actions of a fresh position. Run: ``.venv/bin/python bench/engine.py [seconds]``.
"""

from __future__ import annotations

import random
import sys
import time

from controller.engine import CARDS, Game, HouseRules, Kind


def play(players: int, mazo: bool, seconds: float, seed: int = 1) -> tuple[int, int, float]:
    rng = random.Random(seed)
    rules = HouseRules(players=players)
    hands = actions = 0
    n3 = 3 * players
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    game = Game(rules)
    mazo_kind = Kind.MAZO
    while True:
        if game.winner is not None:
            game = Game(rules)
        cards = rng.sample(CARDS, n3)
        game.deal({s: cards[3 * s : 3 * s + 3] for s in range(players)})
        while game.hand_in_progress and game.winner is None:
            legal = game.legal_list()
            if not mazo:
                legal = [a for a in legal if a.kind is not mazo_kind]
            game.push(legal[rng.randrange(len(legal))])
            actions += 1
        hands += 1
        if hands % 64 == 0 and time.perf_counter() > deadline:
            break
    return hands, actions, time.perf_counter() - start


def legal_cost(players: int, samples: int = 50000, seed: int = 2) -> float:
    """Microseconds to list the legal actions of a position reached by random play
    (listed afresh: the cache of the position is dropped before timing)."""
    rng = random.Random(seed)
    rules = HouseRules(players=players)
    game = Game(rules)
    total = 0.0
    timed = 0
    clock = time.perf_counter
    while timed < samples:
        if game.winner is not None:
            game = Game(rules)
        cards = rng.sample(CARDS, 3 * players)
        game.deal({s: cards[3 * s : 3 * s + 3] for s in range(players)})
        while game.hand_in_progress and game.winner is None:
            game._legal = None  # time a fresh listing
            t = clock()
            legal = game.legal_list()
            total += clock() - t
            timed += 1
            game.push(legal[rng.randrange(len(legal))])
    return total / timed * 1e6


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    for players in (2, 4, 6):
        us = legal_cost(players)
        for mazo in (True, False):
            hands, actions, elapsed = play(players, mazo, seconds)
            print(
                f"players={players} mazo={'on' if mazo else 'off'} "
                f"hands_per_s={hands / elapsed:.0f} actions_per_s={actions / elapsed:.0f} "
                f"us_per_legal={us:.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
