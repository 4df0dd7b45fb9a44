"""``Game.view``: kept per state, every seat's view read at once (``seat_views``), and
equal at every state to ``seat_view``, the view read field by field: through deals,
pushes, pops (undo, across deals too) and pica-pica hands, so a view kept past the
state it was read in fails here."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.engine import Card, Game, HouseRules

from .strategies import house_rules, random_deal
from .view_oracle import seat_view


def _check(game: Game) -> bool:
    """The views of every seat are right and kept; whether the hand is pica-pica."""
    for seat in range(game.players):
        view = game.view(seat)
        assert view == seat_view(game, seat), seat
        assert game.view(seat) is view  # kept while the state is unchanged
    return game.pica_pica


def _walk(game: Game, rules: HouseRules, rng: random.Random, steps: int) -> bool:
    """A random walk checking every state; whether a pica-pica hand was passed."""
    pica = _check(game)
    for _ in range(steps):
        if game.winner is not None:
            break
        if not game.hand_in_progress:
            game.deal(random_deal(rng, rules, unread=0.2))
        else:
            legal = game.legal_list()
            game.push(legal[rng.randrange(len(legal))])
        pica |= _check(game)
        if rng.random() < 0.15 and game.hand_number:
            for _ in range(rng.randint(1, 4)):
                if not game.hand_number:
                    break
                game.pop()
                pica |= _check(game)
    return pica


@settings(max_examples=60, deadline=None, database=None)
@given(rules=house_rules, seed=st.integers(0, 2**32 - 1))
def test_views_are_the_seat_views_of_every_state(rules: HouseRules, seed: int) -> None:
    _walk(Game(rules), rules, random.Random(seed), 200)


@pytest.mark.parametrize("seed", range(6))
def test_views_of_pica_pica_hands(seed: int) -> None:
    rules = HouseRules(players=6, pica_pica=True)
    rng = random.Random(seed)
    game = Game(rules, score=(rules.pica_window[0], 0))  # the first hand is pica-pica
    assert _walk(game, rules, rng, 300)


def test_a_view_is_read_again_after_a_push() -> None:
    game = Game()
    cards = [Card.from_str(c) for c in ("7C", "6C", "3E", "2O", "1B", "4B")]
    game.deal({0: cards[:3], 1: cards[3:]})
    before = game.view(1)
    game.push_str("0 envido")
    after = game.view(1)
    assert after is not before and after.envido_pending == 0 and before.envido_pending is None
    game.pop()
    assert game.view(1) == before and game.view(1) is not after
