"""Engine work of a fixed size: the same seeded random games as ``bench/engine.py``
(uniform over the legal actions, mazo on and off, 2, 4 and 6 seats), a fixed number of
hands each, so that two engines can be compared by the work they do rather than by a
clock on a shared machine: run it under ``valgrind --tool=callgrind`` (instructions,
deterministic) or ``farm-bench`` (CPU seconds, paired) in each tree, and subtract a run
of 0 hands (start-up and import). Prints ``hands=... actions=...`` (the same games give
the same count in every build).

Run: ``.venv/bin/python bench/engine_fixed.py [hands]`` (default 3000 per configuration;
``PYTHONPATH=build/compiled`` for the compiled build).
"""

from __future__ import annotations

import random
import sys

from controller.engine import CARDS, Card, Game, HouseRules, Kind


def play(players: int, mazo: bool, hands: int) -> int:
    """Actions in ``hands`` hands of seeded random play (the deals and draws drawn first)."""
    rng = random.Random(1)
    rules = HouseRules(players=players)
    deals: list[dict[int, list[Card]]] = []
    for _ in range(1024):
        cards = rng.sample(CARDS, 3 * players)
        deals.append({s: cards[3 * s : 3 * s + 3] for s in range(players)})
    draws = [rng.random() for _ in range(1 << 16)]
    game = Game(rules)
    actions = 0
    for hand in range(hands):
        if game.winner is not None:
            game = Game(rules)
        game.deal(deals[hand % 1024])
        while game.hand_in_progress and game.winner is None:
            legal = game.legal_list()
            if not mazo:
                legal = [a for a in legal if a.kind is not Kind.MAZO]
            game.push(legal[int(draws[actions % (1 << 16)] * len(legal))])
            actions += 1
    return actions


def main() -> None:
    hands = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    actions = sum(play(p, m, hands) for p in (2, 4, 6) for m in (True, False))
    print(f"hands={6 * hands} actions={actions}")


if __name__ == "__main__":
    main()
