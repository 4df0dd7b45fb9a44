"""The ``Game`` façade: seats that do not exist, pica-pica plays and per-seat views.

The rules themselves are pinned by the scenarios (tests/scenarios); these tests pin what
the scenarios cannot reach: the API around the plays.
"""

from __future__ import annotations

import pytest

from controller.engine import (
    Action,
    Card,
    Claims,
    Game,
    HouseRules,
    Kind,
    PicaPicaHandError,
    RefusalCode,
)
from tests.helpers import cards

SIX_DEAL = {
    0: cards("1E 4C 5O"),
    1: cards("7E 4B 10O"),
    2: cards("1B 6O 12C"),
    3: cards("3B 6E 7C"),
    4: cards("2C 11C 5B"),
    5: cards("3O 2B 4E"),
}


def pica_game() -> Game:
    game = Game(HouseRules(players=6, pica_pica=True), score=(5, 0))
    game.deal(SIX_DEAL)
    return game


@pytest.mark.parametrize("text", ["2 play 1E", "2 show 1E", "3 truco", "2 mazo", "2 quiero"])
def test_a_seat_beyond_the_table_is_not_your_turn(text: str) -> None:
    game = Game(HouseRules(players=2))
    game.deal({0: cards("1E 2E 3E"), 1: cards("4E 5E 6E")})
    action = Action.from_str(text)
    assert game.refusal(action) is RefusalCode.NOT_YOUR_TURN
    with pytest.raises(Exception, match="not_your_turn"):
        game.push(action)


def test_a_seat_beyond_the_table_flor_disabled_first() -> None:
    game = Game(HouseRules(players=2))
    game.deal()
    assert game.refusal(Action.from_str("3 flor")) is RefusalCode.FLOR_DISABLED


def test_pica_pica_plays_and_pairs() -> None:
    game = pica_game()
    assert game.pica_pica
    assert [p.order for p in game.plays] == [(0, 3), (1, 4), (2, 5)]
    assert [p.pica for p in game.plays] == [0, 1, 2]
    assert game.play_of(4) is game.plays[1]
    assert [game.turn_of(s) for s in range(6)] == [0, 1, 2, 0, 1, 2]
    # legal actions of every pica at once: each mano's cards are listed
    legal = {str(a) for a in game.legal_list()}
    assert {"0 play 1E", "1 play 7E", "2 play 1B"} <= legal
    assert "3 play 3B" not in legal


def test_pica_pica_views_are_each_seats_pica() -> None:
    game = pica_game()
    game.push_str("2 truco")
    game.push_str("0 play 1E")
    view = game.view(5)
    assert (view.pica_pica, view.pica, view.opponent) == (True, 2, 2)
    assert view.truco_pending == (1, 0)  # pica 2's truco awaits seat 5's answer
    assert view.challenged
    assert {a.kind for a in view.legal} >= {Kind.QUIERO, Kind.NO_QUIERO, Kind.RETRUCO}
    other = game.view(3)
    assert (other.pica, other.opponent, other.turn) == (0, 0, 3)
    assert other.truco_pending is None and other.table[0][0] == 0
    assert other.my_turn and not other.challenged


def test_pica_pica_ended_pica() -> None:
    game = pica_game()
    game.push_str("0 mazo")
    assert not game.pica_live(3) and game.pica_live(4)
    assert game.turn_of(3) is None and game.view(3).turn is None
    assert game.refusal(Action.from_str("3 play 3B")) is RefusalCode.HAND_OVER
    assert game.refusal(Action.from_str("3 show 3B")) is RefusalCode.HAND_OVER
    assert game.hand_in_progress
    game.push_str("1 mazo")
    game.push_str("2 mazo")
    assert not game.hand_in_progress
    assert game.hands[-1].pica_pica
    assert [a.pica for a in game.hands[-1].awards] == [0, 0, 1, 1, 2, 2]


def test_pica_pica_undo_restores_each_pica() -> None:
    game = pica_game()
    start = game.state_key()
    game.push_str("1 play 7E")
    middle = game.state_key()
    game.push_str("4 play 2C")
    game.push_str("0 mazo")
    game.pop()
    game.pop()
    assert game.state_key() == middle
    game.pop()
    assert game.state_key() == start


def test_normal_hand_has_one_play_over_every_seat() -> None:
    game = Game(HouseRules(players=6, pica_pica=True))  # 0-0: nobody has 5
    game.deal(SIX_DEAL)
    assert not game.pica_pica
    assert [p.order for p in game.plays] == [(0, 1, 2, 3, 4, 5)]
    assert game.plays[0].pica is None
    assert game.view(3).opponent is None and game.view(3).pica is None


def test_defaults_and_the_first_dealer() -> None:
    game = Game()
    assert game.score == game.initial_score == (0, 0)
    assert game.first_dealer == 1 and game.next_dealer == 1
    assert Game(HouseRules(players=4), dealer=2).first_dealer == 2
    with pytest.raises(ValueError, match="no seat 4"):
        Game(HouseRules(players=4), dealer=4)
    with pytest.raises(ValueError, match="no seat -1"):
        Game(HouseRules(players=4), dealer=-1)


def test_legal_actions_view_membership() -> None:
    game = Game()
    game.deal({0: cards("1E 2E 3E"), 1: cards("4E 5E 6E")})
    legal = game.legal_actions
    assert Action.from_str("0 play 1E") in legal
    assert Action.from_str("1 play 4E") not in legal
    assert Action.from_str("0 show 1E") not in legal  # shows are never listed
    assert game.is_legal(Action.from_str("0 show 1E"))
    assert "0 play 1E" not in legal


def test_telling_is_a_frozen_value() -> None:
    import dataclasses

    game = Game(HouseRules(claims=Claims.DECLARED))
    game.deal({0: cards("7E 6E 1C"), 1: cards("5C 4C 2O")})
    game.push_str("0 envido")
    game.push_str("1 quiero")
    telling = game.telling
    assert telling is not None and telling.next_seat == 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        telling.kind = "flor"  # type: ignore[misc]
    assert not hasattr(telling, "__dict__")


def test_flor_only_as_the_answer_while_a_truco_awaits() -> None:
    """Hands unknown: the truco's caller may not call a flor while its truco awaits."""
    game = Game(HouseRules(flor=True))
    game.deal()
    game.push_str("0 truco")
    assert Action.from_str("1 flor") in game.legal_actions
    assert Action.from_str("0 flor") not in game.legal_actions
    game.push_str("1 quiero")
    game.push_str("0 play 1E")
    game.push_str("1 play 4E")  # the flor was never called; seat 1 wins baza 1
    assert not any(a.kind is Kind.FLOR for a in game.legal_actions)


def test_flor_raises_and_who_answers_them() -> None:
    game = Game(HouseRules(flor=True))
    game.deal({0: cards("7E 6E 5E"), 1: cards("7C 6C 4C")})
    game.push_str("0 flor")
    game.push_str("1 contraflor")
    assert game.flor_call is Kind.CONTRAFLOR and game.flor_pending == 0
    assert game.play_of(0).flor_call is Kind.CONTRAFLOR
    assert game.view(0).flor_pending == 0 and game.view(0).challenged
    game.push_str("0 contraflor-al-resto")
    play = game.play_of(1)
    assert play.flor_call is Kind.CONTRAFLOR_AL_RESTO and play.flor_pending == 1


def test_the_team_that_accepted_raises() -> None:
    game = Game()
    game.deal({0: cards("1E 2E 3E"), 1: cards("4E 5E 6E")})
    game.push_str("1 truco")
    assert game.raise_team is None
    game.push_str("0 quiero")
    assert game.raise_team == 0 and game.view(1).raise_team == 0
    game.push_str("0 retruco")
    game.push_str("1 quiero")
    assert game.raise_team == 1
    game.push_str("1 vale-cuatro")
    game.push_str("0 quiero")
    assert game.raise_team is None  # nothing above vale cuatro


def test_each_pica_keeps_its_own_awards() -> None:
    game = pica_game()
    game.push_str("0 mazo")  # pica 0: 1 and the mazo_envido point to team 1
    assert [a.points for a in game.play_of(3).awards] == [1, 1]
    assert game.play_of(1).awards == () and game.play_of(2).awards == ()
    assert len(game.awards) == 2


# --- found by the mutation check (tests/engine/mutation.py): what no scenario pinned


def _code(game: Game, text: str) -> RefusalCode | None:
    return game.refusal(Action.from_str(text))


def test_the_starting_score_and_dealer_given() -> None:
    with pytest.raises(ValueError, match="from 0 to 29"):
        Game(HouseRules(), score=(30, 0))
    with pytest.raises(ValueError, match="no seat 2 at a table of 2"):
        Game(HouseRules(), dealer=2)
    game = Game(HouseRules(), score=(3, 7), dealer=0)
    assert game.initial_score == (3, 7)
    game.deal()
    assert (game.dealer, game.mano) == (0, 1)


def test_pica_pica_is_the_current_hands() -> None:
    game = Game(HouseRules(players=6, pica_pica=True), score=(5, 0))
    game.deal()
    assert game.pica_pica
    for seat in (0, 1, 2):
        game.push_str(f"{seat} mazo")
    game.deal()  # the hand after a pica-pica hand is a normal one
    assert not game.pica_pica and not game.view(3).pica_pica


def test_the_numbers_a_telling_takes() -> None:
    """Section 5: envido 0-7 and 20-33; flor 20-38 (also the first declaration)."""
    game = Game(HouseRules(claims=Claims.DECLARED))
    game.deal({0: cards("4E 2O 3E"), 1: cards("1E 5B 6C")})
    game.push_str("0 envido")
    game.push_str("1 quiero")
    declared = {a.number for a in game.legal_list() if a.kind is Kind.DECLARE}
    assert declared == {*range(8), *range(20, 34)}
    for number in (8, 19, 34):
        assert _code(game, f"0 declare {number}") is RefusalCode.BAD_DECLARATION
    flor = Game(HouseRules(flor=True))
    flor.deal()
    flor.push_str("0 flor")
    flor.push_str("1 flor")
    declared = {a.number for a in flor.legal_list() if a.kind is Kind.DECLARE}
    assert declared == set(range(20, 39))
    for number in (19, 39):
        assert _code(flor, f"0 declare {number}") is RefusalCode.BAD_DECLARATION
    # before the first declaration only seats that have not announced may still do so;
    # a seat that has, saying flor again while the exchange is open, is call_pending
    # (section 6)
    assert _code(flor, "0 flor") is RefusalCode.CALL_PENDING
    assert _code(flor, "1 flor") is RefusalCode.CALL_PENDING
    four = Game(HouseRules(players=4, flor=True))
    four.deal()
    four.push_str("0 flor")
    four.push_str("1 flor")
    assert four.telling is not None and not four.telling.declarations
    assert _code(four, "2 flor") is None and _code(four, "3 flor") is None  # decision 10
    assert _code(four, "0 flor") is RefusalCode.CALL_PENDING


def test_a_flor_with_hands_unknown_needs_cards_of_one_suit() -> None:
    game = Game(HouseRules(flor=True))
    game.deal()
    game.push_str("0 show 1E 1B")
    assert _code(game, "0 flor") is RefusalCode.NO_FLOR
    game = Game(HouseRules(flor=True))
    game.deal()
    game.push_str("0 show 1E 2E")
    assert _code(game, "0 flor") is None


def test_a_flor_against_a_plain_truco_is_refused_by_what_stops_it() -> None:
    """Section 11: while a truco awaits its answer in the first baza, a flor by a seat
    that has played is envido_closed, by one without a flor no_flor."""
    played = Game(HouseRules(flor=True))
    played.deal({0: cards("1E 2O 3E"), 1: cards("4C 5B 6C")})
    played.push_str("0 play 1E")
    played.push_str("1 truco")
    assert _code(played, "0 flor") is RefusalCode.ENVIDO_CLOSED
    fresh = Game(HouseRules(flor=True))
    fresh.deal({0: cards("1E 2O 3E"), 1: cards("4C 5B 6C")})
    fresh.push_str("0 truco")
    assert _code(fresh, "1 flor") is RefusalCode.NO_FLOR


def test_implicit_quiero_cards_are_judged_as_cards() -> None:
    game = Game(HouseRules(implicit_quiero=True))
    game.deal({0: cards("1E 2O 3E"), 1: cards("4C 5B 6C")})
    game.push_str("0 truco")
    assert _code(game, "1 play 4C") is RefusalCode.NOT_YOUR_TURN  # seat 0 leads
    game = Game(HouseRules(implicit_quiero=True))
    game.deal({0: cards("1E 2O 3E"), 1: cards("4C 5B 6C")})
    game.push_str("0 play 1E")
    game.push_str("0 truco")
    assert _code(game, "1 play 7C") is RefusalCode.CARD_NOT_IN_HAND
    assert _code(game, "1 play 1E") is RefusalCode.CARD_ALREADY_PLAYED
    assert _code(game, "1 play 4C") is None  # the card accepts the truco


def test_the_flor_course_and_raises_of_team_1() -> None:
    """Team 1 calls the first flor: team 0 sets the course; against team 1's contraflor
    team 0's contraflor is raise_not_allowed, team 1's own call_pending."""
    game = Game(HouseRules(flor=True))
    game.deal({0: cards("1E 2E 3E"), 1: cards("4C 5C 6C")})
    game.push_str("0 envido")
    game.push_str("1 flor")  # answers the envido
    assert game.flor_course_team == 0 and game.play_of(0).flor_course_team == 0
    game = Game(HouseRules(flor=True))
    game.deal({0: cards("1E 2E 3E"), 1: cards("4C 5C 6C")})
    game.push_str("0 flor")
    game.push_str("1 contraflor")
    assert _code(game, "0 contraflor") is RefusalCode.RAISE_NOT_ALLOWED
    assert _code(game, "1 contraflor") is RefusalCode.CALL_PENDING


def test_flores_proven_by_their_cards_at_the_end_of_the_hand() -> None:
    """Hands unknown (decision 9): a flor nobody answered is proven by three cards of
    one suit; a told flor only by the very number told."""
    game = Game(HouseRules(flor=True))
    game.deal()
    game.push_str("0 flor")
    game.push_str("0 show 1E 2E 3E")
    game.push_str("0 mazo")
    assert [(a.team, a.points, a.reason.value) for a in game.hands[-1].awards] == [
        (0, 3, "flor"),
        (1, 1, "mazo"),
    ]
    for told, expected in ((35, (0, 6, "flor")), (33, (1, 6, "penalty"))):
        game = Game(HouseRules(flor=True))
        game.deal()
        for text in ("0 flor", "1 flor", f"0 declare {told}", "1 son-buenas"):
            game.push_str(text)
        game.push_str("0 show 4E 5E 6E")  # a flor of 35
        game.push_str("0 mazo")
        award = game.hands[-1].awards[0]
        assert (award.team, award.points, award.reason.value) == expected


def test_the_bazas_and_the_truco_as_the_hand_ends() -> None:
    game = Game(HouseRules())
    game.deal({0: cards("4E 2O 3E"), 1: cards("1E 5B 6C")})
    game.push_str("0 play 4E")
    game.push_str("1 play 1E")  # team 1 wins the first baza
    assert (game.baza, game.baza_results, game.view(0).bazas) == (1, (1,), (1,))
    game.push_str("1 play 5B")
    game.push_str("0 play 2O")  # team 0 wins the second
    assert (game.baza, game.baza_results, game.view(1).bazas) == (2, (1, 0), (1, 0))
    game.push_str("0 truco")
    game.push_str("1 mazo")  # with the truco pending
    assert game.truco_pending is None and game.view(1).truco_pending is None
    assert not game.view(1).challenged


@pytest.mark.parametrize("players", [2, 4, 6])
def test_seats_beyond_the_table_are_refused_and_its_last_seat_is_not(players: int) -> None:
    cards = [Card.from_str(c) for c in ("1E", "7O", "4C")]
    last = players - 1
    for bad in ({"dealer": players}, {"dealer": -1}):
        with pytest.raises(ValueError, match="no seat"):
            Game(HouseRules(players=players)).deal({}, **bad)
    with pytest.raises(ValueError, match="no seat"):
        Game(HouseRules(players=players)).deal({players: cards})
    with pytest.raises(ValueError, match="no seat"):
        Game(HouseRules(players=players)).view(players)
    game = Game(HouseRules(players=players))
    game.deal({last: cards}, dealer=last)
    assert game.dealer == last and game.view(last).seat == last


@pytest.mark.parametrize("players", [2, 4])
def test_undoing_a_deal_goes_back_to_the_end_of_the_hand_before_it(players: int) -> None:
    """Three hands played; undoing the third deal is the end of the second hand again
    (not the first's), and undoing all of it is the game as it began."""
    import random

    from controller.engine.playout import random_hand, uniform

    def cards_only(g: Game, r: random.Random) -> Action:  # no calls: a point a hand
        plays = [a for a in g.legal_list() if a.kind is Kind.PLAY]
        return r.choice(plays) if plays else uniform(g, r)

    rng = random.Random(players)
    game = Game(HouseRules(players=players, target=30))
    start = game.state_key()
    ends = []
    for _ in range(3):
        random_hand(game, rng, policy=cards_only)
        assert game.winner is None
        ends.append((game.state_key(), game.score, game.dealer))
    while game.hand_actions:  # the third hand's actions
        assert game.pop() is not None
    assert game.pop() is None  # its deal
    assert (game.state_key(), game.score, game.dealer) == ends[1]
    while game.hand_number:
        game.pop()
    assert game.state_key() == start


def test_a_partial_deal_lists_no_card_of_another_seat() -> None:
    """With a partial deal, an unknown seat's legal cards leave out those read at the deal
    in another seat's hand and those shown in another seat's hand (RULES.md section 11)."""
    game = Game(HouseRules(players=4))
    game.deal({0: cards("4C 5C 6O"), 2: cards("12E 11B 10O")})
    game.push_str("1 show 7B")
    game.push_str("0 play 4C")
    listed = {a.card for a in game.legal_actions.for_seat(1) if a.kind is Kind.PLAY}
    assert len(listed) == 40 - 6 and Card.from_str("7B") in listed
    assert not listed & set(cards("4C 5C 6O 12E 11B 10O"))
    assert _code(game, "1 play 6O") is RefusalCode.CARD_NOT_IN_HAND
    assert _code(game, "1 play 4C") is RefusalCode.CARD_ALREADY_PLAYED
    assert _code(game, "3 show 7B") is RefusalCode.CARD_NOT_IN_HAND
    assert _code(game, "3 show 4C") is RefusalCode.CARD_ALREADY_PLAYED


#: The Game properties about the hand's one play (a pica-pica hand has three).
ONE_PLAY = (
    "turn",
    "baza",
    "baza_results",
    "table_cards",
    "played_bazas",
    "truco_level",
    "hand_value",
    "truco_pending",
    "raise_team",
    "envido_chain",
    "envido_pending",
    "envido_result",
    "flor_result",
    "flor_announced",
    "flor_pending",
    "flor_call",
    "flor_course_team",
    "flor_open",
    "telling",
)


def test_pica_pica_hand_questions_name_their_pica() -> None:
    """Six seats, pica-pica: the turn, the table and the calls are asked per seat (its
    pica's) or for every pica (``turns``); the questions about the hand's one play refuse
    to answer for one pica (they answered for the mano's)."""
    game = pica_game()
    assert list(game.turns) == [0, 1, 2]
    game.push_str("0 play 1E")
    game.push_str("1 truco")
    assert list(game.turns) == [3, 1, 2]
    assert [game.turn_of(s) for s in range(6)] == [3, 1, 2, 3, 1, 2]
    assert game.play_of(3).table_cards == ((0, Card.from_str("1E")),)
    assert game.play_of(1).table_cards == () and game.play_of(2).table_cards == ()
    assert game.play_of(4).truco_pending == (1, 1) and game.play_of(0).truco_pending is None
    assert game.play_of(4).hand_value == 1
    game.push_str("4 quiero")
    assert game.play_of(1).hand_value == 2 and game.play_of(0).hand_value == 1
    for name in ONE_PLAY:
        with pytest.raises(PicaPicaHandError, match="play_of"):
            getattr(game, name)
    game.push_str("2 mazo")  # pica 2 ends: its seats have no turn, the others go on
    assert list(game.turns) == [3, 1] and game.turn_of(5) is None
    game.push_str("1 mazo")
    game.push_str("3 mazo")
    assert list(game.turns) == [] and not game.hand_in_progress
    with pytest.raises(PicaPicaHandError):
        _ = game.turn  # still the pica-pica hand's, until the next deal


def test_a_hand_of_one_play_answers_the_hand_questions() -> None:
    """Outside pica-pica the hand has one play: the hand's questions are its play's."""
    game = Game(HouseRules(players=6, pica_pica=True))  # 0-0: no pica-pica yet
    game.deal(SIX_DEAL)
    assert not game.pica_pica and game.turns == (0,) and game.turn == 0
    (play,) = game.plays
    game.push_str("0 truco")
    for name in ONE_PLAY:
        assert getattr(game, name) == getattr(play, name), name
    assert game.truco_pending == (1, 0) and game.hand_value == 1


def test_the_move_stack_is_the_whole_games_and_hand_actions_the_current_hands() -> None:
    """As python-chess's ``move_stack``: every action of the game, hand after hand; the
    current hand's alone are ``hand_actions``. Undo takes from the end of both."""

    def stacks() -> tuple[list[str], list[str]]:
        return [str(a) for a in game.move_stack], [str(a) for a in game.hand_actions]

    game = Game()
    assert stacks() == ([], [])
    game.deal({0: cards("1E 4C 5O"), 1: cards("7E 4B 10O")})
    game.push_str("0 mazo")
    assert not game.hand_in_progress
    game.deal({0: cards("3B 6E 7C"), 1: cards("2C 11C 5B")})
    assert stacks() == (["0 mazo"], [])
    game.push_str("0 truco")
    game.push_str("1 quiero")
    assert stacks() == (["0 mazo", "0 truco", "1 quiero"], ["0 truco", "1 quiero"])
    assert game.move_stack == tuple(a for _, _, acts in game.history() for a in acts)
    assert str(game.pop()) == "1 quiero"
    assert stacks() == (["0 mazo", "0 truco"], ["0 truco"])
    game.pop()
    assert game.pop() is None  # the second deal
    assert stacks() == (["0 mazo"], ["0 mazo"])
