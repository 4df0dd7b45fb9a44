"""The ``Game`` façade: seats that do not exist, pica-pica plays and per-seat views.

The rules themselves are pinned by the scenarios (tests/scenarios); these tests pin what
the scenarios cannot reach: the API around the plays.
"""

from __future__ import annotations

import pytest

from controller.engine import Action, Card, Claims, Game, HouseRules, Kind, RefusalCode


def cards(text: str) -> list[Card]:
    return [Card.from_str(c) for c in text.split()]


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
