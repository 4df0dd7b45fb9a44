"""Undo: pop after pop goes back step by step through every state passed (across deals,
down to the start), a redo of the same steps comes back to the same states, and
``copy()`` is an independent game in the same state with the same undo history."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.engine import CARDS, Action, Card, Game, HouseRules

from .strategies import house_rules

Hands = dict[int, list[Card]] | None
Step = Action | tuple[int, Hands]  # an action pushed, or (dealer, hands) dealt


def _deal(game: Game, rng: random.Random, rules: HouseRules) -> Hands:
    roll = rng.random()
    if roll < 0.3:
        return None
    cards = rng.sample(CARDS, 3 * rules.players)
    return {
        s: cards[3 * s : 3 * s + 3]
        for s in range(rules.players)
        if roll < 0.8 or rng.random() < 0.5
    }


def _redo(game: Game, step: Step) -> None:
    if isinstance(step, Action):
        game.push(step)
    else:
        dealer, hands = step
        game.deal(hands, dealer=dealer)


@settings(max_examples=60, deadline=None, database=None)
@given(rules=house_rules, seed=st.integers(0, 2**32 - 1))
def test_pop_after_pop_and_redo(rules: HouseRules, seed: int) -> None:
    rng = random.Random(seed)
    game = Game(rules)
    keys = [game.state_key()]
    steps: list[Step] = []
    for _ in range(150):
        if game.winner is not None:
            break
        if not game.hand_in_progress:
            hands = _deal(game, rng, rules)
            step: Step = (game.next_dealer, hands)
        else:
            legal = game.legal_list()
            step = legal[rng.randrange(len(legal))]
        _redo(game, step)
        steps.append(step)
        keys.append(game.state_key())
        if rng.random() < 0.15:
            back = rng.randint(1, min(6, len(steps)))
            for i in range(back):  # undo after undo: each lands on the state before
                game.pop()
                assert game.state_key() == keys[-2 - i]
            for step in steps[-back:]:  # the same steps again: the same states
                _redo(game, step)
            assert game.state_key() == keys[-1]
    # and all the way back to the start
    while game.hand_number:
        game.pop()
    assert game.state_key() == keys[0] and game.score == (0, 0)


@settings(max_examples=40, deadline=None, database=None)
@given(rules=house_rules, seed=st.integers(0, 2**32 - 1))
def test_copy_is_an_independent_game_in_the_same_state(rules: HouseRules, seed: int) -> None:
    rng = random.Random(seed)
    game = Game(rules)
    for _ in range(rng.randrange(1, 80)):
        if game.winner is not None:
            break
        if not game.hand_in_progress:
            game.deal(_deal(game, rng, rules))
        else:
            legal = game.legal_list()
            game.push(legal[rng.randrange(len(legal))])
    twin = game.copy()
    key = game.state_key()
    assert twin.state_key() == key and twin.hands == game.hands
    assert twin.move_stack == game.move_stack and list(twin.history()) == list(game.history())
    if twin.hand_in_progress and twin.winner is None:
        legal = twin.legal_list()
        twin.push(legal[rng.randrange(len(legal))])
        assert game.state_key() == key  # the original does not move
        twin.pop()
    assert twin.state_key() == key
    if twin.hand_number:
        twin.pop()  # the copy has the same undo history
        game.pop()
        assert twin.state_key() == game.state_key()
