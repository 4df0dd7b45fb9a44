"""Pica-pica at the table (RULES.md section 8b): the pad, the bots, the claims and the
seat screens act in the seat's own pica."""

from __future__ import annotations

import random
from pathlib import Path

from controller.engine import Action, Card, Game, HouseRules, Kind
from controller.engine.playout import random_game
from controller.table.bots import Bot
from controller.table.claims import near_the_end, unproven_claims
from controller.table.controls import Button, short_press_kind
from controller.table.run_mock import MockRun
from controller.table.screens import seat_screen

from .crash_trials import run_trials

SIX_DEAL = {
    0: "1E 4C 5O",
    1: "7E 4B 10O",
    2: "1B 6O 12C",
    3: "3B 6E 7C",
    4: "2C 11C 5B",
    5: "3O 2B 4E",
}


def pica_game(*, flor: bool = False, known: bool = True) -> Game:
    game = Game(HouseRules(players=6, pica_pica=True, flor=flor), score=(5, 0))
    deal = {s: [Card.from_str(c) for c in t.split()] for s, t in SIX_DEAL.items()}
    game.deal(deal if known else None)
    assert game.pica_pica
    return game


def test_the_truco_button_climbs_the_seats_own_ladder() -> None:
    game = pica_game()
    game.push_str("0 truco")
    game.push_str("3 quiero")  # pica 0 at truco; picas 1 and 2 at nothing
    assert short_press_kind(game, 1, Button.TRUCO) is Kind.TRUCO
    assert short_press_kind(game, 3, Button.TRUCO) is Kind.RETRUCO
    game.push_str("1 truco")
    assert short_press_kind(game, 4, Button.TRUCO) is Kind.RETRUCO
    assert short_press_kind(game, 5, Button.TRUCO) is Kind.TRUCO


def test_the_no_quiero_button_backs_down_only_in_the_flor_pica() -> None:
    game = Game(HouseRules(players=6, pica_pica=True, flor=True), score=(5, 0))
    game.deal()  # hands unknown: anyone may hold a flor
    game.push_str("0 flor")
    assert short_press_kind(game, 3, Button.NO_QUIERO) is Kind.CON_FLOR_ME_ACHICO
    assert short_press_kind(game, 4, Button.NO_QUIERO) is Kind.NO_QUIERO


def test_screens_show_each_seats_pica() -> None:
    game = pica_game()
    game.push_str("2 truco")
    five, three = seat_screen(game, 5).view, seat_screen(game, 3).view
    assert five.truco_pending == (1, 0) and five.opponent == 2 and five.challenged
    assert three.truco_pending is None and three.opponent == 0 and not three.challenged
    assert (five.ours, five.theirs) == (0, 5)  # the score stays the teams'


def test_claims_are_asked_for_in_their_pica() -> None:
    game = pica_game(known=False)
    for text in ("1 envido", "4 quiero", "1 declare 27", "4 son-buenas"):
        game.push_str(text)
    [claim] = unproven_claims(game)
    assert (claim.seat, claim.kind, claim.points) == (1, "envido", 27)
    assert not near_the_end(game)
    game.push_str("0 truco")  # another pica's truco: that pica may end at once
    assert near_the_end(game)


def test_bots_play_a_whole_pica_pica_hand() -> None:
    rng = random.Random(14)
    for seed in range(20):
        game = pica_game(flor=seed % 2 == 1)
        bots = [Bot(s, random.Random(seed * 6 + s)) for s in range(6)]
        steps = 0
        while game.hand_in_progress and game.winner is None:
            moved = False
            for bot in sorted(bots, key=lambda _: rng.random()):
                action = bot.choose(game)
                if action is not None:
                    assert game.play_of(action.seat) is game.play_of(bot.seat)
                    game.push(action)
                    moved = True
                    break
            assert moved, "the bots are stuck"
            steps += 1
            assert steps < 300
        awards = game.hands[-1].awards
        assert {a.pica for a in awards} <= {0, 1, 2} and awards


def test_a_pushed_action_belongs_to_its_seats_pica() -> None:
    game = pica_game()
    assert game.refusal(Action.from_str("4 play 2C")) is not None  # seat 1 leads pica 1
    game.push_str("1 play 7E")
    assert game.is_legal(Action.from_str("4 play 2C"))
    assert not game.is_legal(Action.from_str("3 play 3B"))  # seat 0 leads pica 0


def test_the_service_recovers_from_power_cuts_in_pica_pica_games(tmp_path: Path) -> None:
    """kill -9 the mock table service during six-player pica-pica games (15 points, so
    most hands are pica-pica ones): each restart finishes the game as an uninterrupted
    run, with the same record and score."""
    rules = (HouseRules(players=6, target=15, pica_pica=True),)
    reference = random_game(Game(rules[0]), random.Random(13))  # the game the trials play
    assert sum(h.pica_pica for h in reference.hands) >= 3
    assert run_trials(6, seed=13, workdir=tmp_path, rules=rules) == []


DEALER_MENU_FIRST = """\
table players=6 pica_pica=on flor=on
score 5 0
hand
2 flor
5 no-quiero
5 con-flor-me-achico
2 play 1E
"""


def test_the_dealers_menu_right_after_the_deal_through_the_pads() -> None:
    """Nothing of the deal read: the mock dealer (seat 5) holds mazo to start play; its
    next gesture, a hold of no quiero (the menu), reaches its pica as a call."""
    from controller.table.mock_table import mock_target
    from controller.transcript import parse, replay, result_json

    statements = parse(DEALER_MENU_FIRST)
    direct = result_json(replay(statements))
    assert direct["rejected"] == [
        {"line": 5, "seat": 5, "action": "no-quiero", "code": "no_pending_call"}
    ]
    assert result_json(replay(statements, target=mock_target)) == direct


def test_a_bot_of_the_players_team_answers_in_its_own_pica() -> None:
    """A bot that leaves its team's answers to the human partner (``answers=False``)
    still answers a call in its own pica: the partner plays another pica."""
    game = pica_game()
    game.push_str("1 envido")  # pica 1: seat 4 (team 0, the human's team) must answer
    bot = Bot(4, random.Random(1), answers=False)
    action = bot.choose(game)
    assert action is not None and action.kind in (Kind.QUIERO, Kind.NO_QUIERO, Kind.REAL_ENVIDO)
    normal = Game(HouseRules(players=6), score=(5, 0))
    normal.deal({s: [Card.from_str(c) for c in t.split()] for s, t in SIX_DEAL.items()})
    normal.push_str("0 envido")  # a normal hand: the human partner answers for team 1
    assert normal.view(1).challenged
    assert Bot(1, random.Random(1), answers=False).choose(normal) is None


def test_the_mock_tables_bots_play_every_pica_of_a_hand() -> None:
    """Six seats, pica-pica from the first hand (5-0): the mock table's bots look first at
    a seat whose turn it is in some pica (``Game.turns``), play the hand to its end in all
    three picas, and the seats' screens draw each one's pica along the way."""
    run = MockRun(HouseRules(players=6, pica_pica=True), seed=3, human=None, score=(5, 0))
    try:
        run.deal()
        assert run.game.pica_pica and len(run.game.turns) == 3
        steps = 0
        while run.game.hand_in_progress and run.game.winner is None:
            action = run.bot_step()
            assert action is not None, "the bots are stuck"
            lines = run.render(all_seats=True)
            assert lines
            steps += 1
            assert steps < 300
        assert {a.pica for a in run.game.hands[-1].awards} == {0, 1, 2}
    finally:
        run.close()
