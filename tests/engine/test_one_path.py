"""Legality and refusal are one code path: at any position, the legal list is exactly the
actions whose refusal is ``None``.

``Game.refusal`` (and with it ``push`` and ``is_legal``) asks the phase with the floor to
judge an action; ``legal_actions`` is that phase's own quick listing. Over random
positions (2, 4 and 6 seats, every house-rule mix, hands known, unknown or partly read,
random shows, honest tellings), every action there is (each seat of the six, each card,
each kind, each declared number) is judged, and the set judged legal must be the list,
with no duplicate in it.

The example count is moderate in CI (about 1,500 positions); ``TRUCO_ONE_PATH_POSITIONS``
asks for more (``TRUCO_ONE_PATH_POSITIONS=10000 pytest tests/engine/test_one_path.py``).
"""

from __future__ import annotations

import os
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.engine import CARDS, Action, Game, HouseRules, Kind
from controller.engine.actions import ACTION_TABLE

from .strategies import house_rules
from .test_properties import honest_telling

#: Positions checked along each random game.
PER_GAME = 25
POSITIONS = int(os.environ.get("TRUCO_ONE_PATH_POSITIONS", "1500"))

#: Every action but ``show`` (judged apart, never listed): every seat a table can have.
UNIVERSE = tuple(a for row in ACTION_TABLE for a in row if a is not None)


def check_one_path(game: Game) -> None:
    listed = game.legal_list()
    assert len(set(listed)) == len(listed), "an action listed twice"
    judged = {a for a in UNIVERSE if game.refusal(a) is None}
    assert judged == set(listed), (
        f"legal but not listed: {sorted(map(str, judged - set(listed)))}; "
        f"listed but refused: {[(str(a), game.refusal(a)) for a in set(listed) - judged]}"
    )


def random_positions(rules: HouseRules, rng: random.Random, count: int) -> int:
    """Play a random game, checking ``count`` positions; returns how many were checked."""
    game = Game(rules, score=(rng.randrange(rules.target // 2), rng.randrange(rules.target // 2)))
    checked = 0
    while game.winner is None and checked < count:
        deal = None
        roll = rng.random()
        if roll < 0.75:  # known; partly read; else unknown
            cards = rng.sample(CARDS, 3 * rules.players)
            deal = {
                s: cards[3 * s : 3 * s + 3]
                for s in range(rules.players)
                if roll < 0.5 or rng.random() < 0.5
            }
        game.deal(deal)
        while game.hand_in_progress and game.winner is None and checked < count:
            check_one_path(game)
            checked += 1
            if rng.random() < 0.05:
                show = Action(rng.randrange(rules.players), Kind.SHOW, cards=(rng.choice(CARDS),))
                if game.is_legal(show):
                    game.push(show)
                    continue
            legal = game.legal_list()
            action = legal[rng.randrange(len(legal))]
            if rng.random() < 0.9:
                action = honest_telling(game) or action
            game.push(action)
    return checked


@settings(max_examples=max(1, POSITIONS // PER_GAME), deadline=None, database=None)
@given(rules=house_rules, seed=st.integers(0, 2**32 - 1))
def test_the_legal_list_is_the_actions_refused_with_none(rules: HouseRules, seed: int) -> None:
    assert random_positions(rules, random.Random(seed), PER_GAME) > 0
