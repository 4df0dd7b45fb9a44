"""Invariants over random legal games (hypothesis): every player count, every house rule.

Each example plays a whole seeded random game, uniformly over the legal actions (with the
odd ``show`` mixed in), and checks after every action:

- scores never decrease, and the game ends exactly when a team reaches the target;
- every listed action is accepted, and ``is_legal`` agrees with the list;
- a refused action raises ``IllegalActionError`` with a code and leaves the state unchanged;
- ``pop`` restores the previous state;
- the written transcript of the finished game replays to the same final state.

Random declarations are almost always false claims (a penalty ends the telling), so the
games are steered: most of the time the seat to declare tells its true points, or says
son buenas when they do not beat the best so far, and the tellings run to their end.
"""

from __future__ import annotations

import dataclasses
import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.engine import (
    CARDS,
    Action,
    Game,
    HouseRules,
    IllegalActionError,
    Kind,
    envido_points,
    flor_points,
)
from controller.engine.rules import Claims
from controller.transcript import parse, replay, write

from .strategies import house_rules

PROBE_KINDS = [k for k in Kind if k not in (Kind.PLAY, Kind.DECLARE, Kind.SHOW)]


def random_probe(rng: random.Random, players: int) -> Action:
    """Any action at all, legal or not."""
    seat = rng.randrange(players)
    roll = rng.random()
    if roll < 0.3:
        return Action(seat, Kind.PLAY, card=rng.choice(CARDS))
    if roll < 0.4:
        return Action(seat, Kind.DECLARE, number=rng.randrange(0, 45))
    if roll < 0.5:
        return Action(seat, Kind.SHOW, cards=tuple(rng.sample(CARDS, rng.randint(1, 3))))
    return Action(seat, rng.choice(PROBE_KINDS))


def check_refusal(game: Game, action: Action) -> None:
    before = game.state_key()
    code = game.refusal(action)
    legal = game.is_legal(action)
    assert (code is None) == legal, (action, code)
    if action.kind is not Kind.SHOW:
        assert legal == (action in game.legal_list())
    if not legal:
        if action.kind is not Kind.SHOW:
            assert game._explain(action) is not None, f"no reason found to refuse {action}"
        with pytest.raises(IllegalActionError) as info:
            game.push(action)
        assert info.value.code is code
        assert game.state_key() == before


def honest_telling(game: Game) -> Action | None:
    """The true declaration of the seat to declare (hands known), or son buenas when the
    truth does not beat the best so far; ``None`` when no telling waits on a known hand."""
    for play in game.plays:
        telling = play.telling
        if telling is None or telling.next_seat is None:
            continue
        seat = telling.next_seat
        cards = game.hand_of(seat)
        if cards is None:
            return None
        if telling.kind == "envido":
            points: int | None = envido_points(cards, flor=game.rules.flor)
        else:
            points = flor_points(cards)
        if points is not None:
            declare = Action(seat, Kind.DECLARE, number=points)
            if game.is_legal(declare):
                return declare
        buenas = Action(seat, Kind.SON_BUENAS)
        return buenas if game.is_legal(buenas) else None
    return None


def play_checked(rules: HouseRules, seed: int, known: bool, max_actions: int = 3000) -> Game:
    rng = random.Random(seed)
    game = Game(rules)
    actions = 0
    while game.winner is None and actions < max_actions:
        deal = None
        if known:
            cards = rng.sample(CARDS, 3 * rules.players)
            deal = {s: cards[3 * s : 3 * s + 3] for s in range(rules.players)}
        game.deal(deal)
        while game.hand_in_progress and game.winner is None:
            legal = list(game.legal_actions)
            assert legal, "a hand in progress always has a legal action"
            assert game.legal_actions.count() == len(legal)
            for _ in range(4):
                check_refusal(game, random_probe(rng, rules.players))
            score = game.score
            key = game.state_key()
            if rng.random() < 0.05:
                seat = rng.randrange(rules.players)
                show = Action(seat, Kind.SHOW, cards=(rng.choice(CARDS),))
                if game.is_legal(show):
                    game.push(show)
                    continue
            action = legal[rng.randrange(len(legal))]
            if rng.random() < 0.9:
                action = honest_telling(game) or action
            game.push(action)
            actions += 1
            if rng.random() < 0.2:
                assert game.pop() == action
                assert game.state_key() == key
                game.push(action)
            new = game.score
            assert new[0] >= score[0] and new[1] >= score[1]
            reached = [t for t in (0, 1) if new[t] >= rules.target]
            if game.winner is None:
                assert not reached
            else:
                assert reached and game.winner in reached
                assert game.outcome() is not None and game.is_game_over()
                assert not game.legal_actions
    return game


def check_transcript_round_trip(game: Game) -> None:
    text = write(game)
    again = replay(parse(text))
    assert not again.rejected, again.rejected
    assert again.game.state_key() == game.state_key()
    assert again.game.hands == game.hands
    assert write(again.game) == text


@settings(max_examples=400, deadline=None)
@given(rules=house_rules, seed=st.integers(0, 2**32 - 1))
def test_random_games_hands_known(rules: HouseRules, seed: int) -> None:
    game = play_checked(rules, seed, known=True)
    check_transcript_round_trip(game)


@settings(max_examples=250, deadline=None)
@given(rules=house_rules, seed=st.integers(0, 2**32 - 1))
def test_random_games_hands_unknown(rules: HouseRules, seed: int) -> None:
    game = play_checked(rules, seed, known=False, max_actions=1500)
    check_transcript_round_trip(game)


@settings(max_examples=150, deadline=None)
@given(rules=house_rules, seed=st.integers(0, 2**32 - 1))
def test_undo_to_the_start(rules: HouseRules, seed: int) -> None:
    """Popping every action of a game, deals included, returns to the initial state."""
    rng = random.Random(seed)
    game = Game(rules)
    start = game.state_key()
    keys = []
    for _ in range(3):
        if game.winner is not None:
            break
        keys.append(game.state_key())
        cards = rng.sample(CARDS, 3 * rules.players)
        game.deal({s: cards[3 * s : 3 * s + 3] for s in range(rules.players)})
        while game.hand_in_progress and game.winner is None:
            keys.append(game.state_key())
            legal = game.legal_list()
            game.push(legal[rng.randrange(len(legal))])
    while keys:
        game.pop()
        assert game.state_key() == keys.pop()
    assert game.state_key() == start


@settings(max_examples=120, deadline=None)
@given(rules=house_rules, seed=st.integers(0, 2**32 - 1), known=st.booleans())
def test_random_six_player_pica_pica_games(rules: HouseRules, seed: int, known: bool) -> None:
    """Six players with pica_pica=on: the checks above hold while picas interleave."""
    rules = dataclasses.replace(rules, players=6, pica_pica=True)
    game = play_checked(rules, seed, known=known, max_actions=2000)
    check_transcript_round_trip(game)


def test_random_games_reach_pica_pica_hands() -> None:
    """The random six-player games do play pica-pica hands, and alternate them."""
    rules = HouseRules(players=6, pica_pica=True)
    picas = 0
    for seed in range(12):
        hands = play_checked(rules, seed, known=True).hands
        flags = [h.pica_pica for h in hands]
        picas += sum(flags)
        assert not any(a and b for a, b in itertools.pairwise(flags))
        for h in hands:
            assert all((a.pica is not None) == h.pica_pica for a in h.awards)
    assert picas >= 12


def test_honest_tellings_run_to_their_end() -> None:
    """Steered games finish most tellings with a winner, not with a false claim (without
    flor and with hands known a penalty can only be a false declaration)."""
    rules = HouseRules(players=4, claims=Claims.DECLARED)
    reasons: list[str] = []
    for seed in range(30):
        game = play_checked(rules, seed, known=True, max_actions=1500)
        reasons += [a.reason.value for h in game.hands for a in h.awards]
    assert reasons.count("envido") > 3 * reasons.count("penalty")
