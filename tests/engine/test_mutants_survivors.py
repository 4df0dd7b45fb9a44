"""Rules no scenario pinned, found by the mutation check (``tests/engine/mutation.py``):
each test states a rule of docs/RULES.md that a surviving mutant of the engine broke.
Scenario-style: a deal, the actions, and what the rules say must follow."""

from __future__ import annotations

import pytest

from controller.engine import Action, Claims, Game, HouseRules, RefusalCode
from tests.helpers import cards


def _code(game: Game, text: str) -> RefusalCode | None:
    return game.refusal(Action.from_str(text))


def _awards(game: Game) -> list[tuple[int, int, str]]:
    return [(a.team, a.points, a.reason.value) for a in game.awards]


@pytest.mark.parametrize("players", [2, 4])
def test_an_envido_of_zero_all_round_goes_to_the_mano(players: int) -> None:
    """Section 5: three figures are 0 points; on a tie the first tied seat in play order
    from the mano wins. With the mano at seat 0 (team 0), team 0 scores the envido."""
    game = Game(HouseRules(players=players))
    hands = ["10E 11B 12O", "10B 11O 12C", "10O 11C 12E", "10C 11E 12B"]
    game.deal({s: cards(hands[s]) for s in range(players)})
    assert game.mano == 0
    game.push_str("0 envido")
    game.push_str("1 quiero")
    assert game.envido_result == (0, 0)
    assert _awards(game) == [(0, 2, "envido")]
    assert game.score == (2, 0)


def test_a_known_flor_holder_is_awaited_and_may_set_the_course() -> None:
    """Section 6: after a flor is called, every other holder must announce before play
    resumes; the other team's first flor action sets the course (flor, con flor me
    achico, contraflor, contraflor al resto). Hands known: play is suspended until then."""
    game = Game(HouseRules(flor=True))
    game.deal({0: cards("7E 6E 5E"), 1: cards("7C 6C 4C")})
    game.push_str("0 flor")
    listed = {str(a) for a in game.legal_list()}
    assert listed == {
        "1 flor",
        "1 con-flor-me-achico",
        "1 contraflor",
        "1 contraflor-al-resto",
    }
    assert _code(game, "1 play 7C") is RefusalCode.CALL_PENDING


def test_the_telling_shows_seat_0_holding_the_best_declaration() -> None:
    """Section 5 (claims=declared): the mano declares first; the telling shows the best
    declaration so far and who holds it, seat 0 included, and who speaks next."""
    game = Game(HouseRules(claims=Claims.DECLARED))
    game.deal({0: cards("7E 6E 1C"), 1: cards("5C 4C 2O")})
    game.push_str("0 envido")
    game.push_str("1 quiero")
    game.push_str("0 declare 33")
    telling = game.telling
    assert telling is not None
    assert (telling.declarations, telling.best_seat, telling.next_seat) == (((0, 33),), 0, 1)
    assert game.view(1).telling == telling


def test_a_fourth_card_of_a_seat_is_never_seen() -> None:
    """Decision 8: a seat never has more than three distinct cards seen (played plus
    shown) in a hand; a fourth is card_not_in_hand, shown alone or with the others."""
    game = Game(HouseRules())
    game.deal()
    assert _code(game, "0 show 1E 2E 3E 4E") is RefusalCode.CARD_NOT_IN_HAND
    game.push_str("0 show 1E 2E")
    game.push_str("0 play 3E")
    assert _code(game, "0 show 4E") is RefusalCode.CARD_NOT_IN_HAND
    assert _code(game, "0 show 1E 2E 3E") is None  # its own three again: nothing new
    assert _code(game, "1 show 4E 5E 6E") is None


def test_a_copy_is_the_same_game_and_independent() -> None:
    """Game.copy: the same state (the cards read at the deal included) and the same undo
    history; pushing on one leaves the other as it was."""
    game = Game(HouseRules(players=4))
    game.deal({0: cards("1E 2O 3E"), 2: cards("4C 5B 6C")})
    game.push_str("0 play 1E")
    other = game.copy()
    assert other.state_key() == game.state_key()
    assert other.hand_of(0) == game.hand_of(0) == tuple(cards("1E 2O 3E"))
    assert other.hand_of(1) is None
    assert _code(other, "1 play 5B") is RefusalCode.CARD_NOT_IN_HAND  # read in seat 2's
    other.push_str("1 play 7C")
    assert game.hand_actions == (Action.from_str("0 play 1E"),)
    assert other.pop() == Action.from_str("1 play 7C")
    assert other.state_key() == game.state_key()


def test_a_known_flor_not_called_is_tapada_at_its_holders_first_card() -> None:
    """Section 6: a flor not called before its holder's first card is tapada: the other
    team scores 3 at once (hands known: when the card is played), and only once."""
    game = Game(HouseRules(flor=True))
    game.deal({0: cards("7E 6E 5E"), 1: cards("7C 4O 1B")})
    game.push_str("0 play 5E")
    assert _awards(game) == [(1, 3, "penalty")]
    game.push_str("1 play 1B")  # seat 1 wins the baza and leads
    game.push_str("1 play 4O")
    game.push_str("0 play 6E")
    assert _awards(game) == [(1, 3, "penalty")]
    assert _code(game, "0 flor") is RefusalCode.ENVIDO_CLOSED


def test_the_cards_still_in_hand_leave_out_those_played() -> None:
    game = Game(HouseRules(players=4))
    game.deal({0: cards("1E 2O 3E")})
    assert game.cards_in_hand(0) == tuple(cards("1E 2O 3E"))
    game.push_str("0 play 2O")
    assert game.cards_in_hand(0) == tuple(cards("1E 3E"))
    assert game.hand_of(0) == tuple(cards("1E 2O 3E"))
    assert game.cards_in_hand(1) is None  # not read at the deal


def test_an_envido_against_a_truco_out_of_its_window_or_a_raise() -> None:
    """Section 11: an envido answering a plain truco outside el envido está primero (after
    the first baza) is outside its window (envido_closed); while a retruco awaits the
    answer an envido is no answer to it (call_pending)."""
    game = Game(HouseRules())
    game.deal({0: cards("4E 2O 3E"), 1: cards("1E 5B 6C")})
    game.push_str("0 play 4E")
    game.push_str("1 play 1E")  # seat 1 wins the first baza
    game.push_str("1 truco")
    assert _code(game, "0 envido") is RefusalCode.ENVIDO_CLOSED
    assert _code(game, "0 real-envido") is RefusalCode.ENVIDO_CLOSED
    fresh = Game(HouseRules())
    fresh.deal({0: cards("4E 2O 3E"), 1: cards("1E 5B 6C")})
    fresh.push_str("0 truco")
    assert _code(fresh, "1 envido") is None  # el envido está primero
    fresh.push_str("1 retruco")
    assert _code(fresh, "0 envido") is RefusalCode.CALL_PENDING
    assert _code(fresh, "0 falta-envido") is RefusalCode.CALL_PENDING


def test_a_flor_by_a_seat_known_to_hold_none_while_the_other_team_backed_down() -> None:
    """Decision 14 and section 11: after team 0 backed down (no quiero to a contraflor)
    only team 0 is excused; the flor stays open for team 1 (hands unknown: until play
    resumes), so a flor by a seat of team 1 known to hold none is no_flor, while team 0's
    window is closed, which comes first (envido_closed), flor or not; seat 3, which
    announced with its contraflor, has nothing new to announce (call_pending)."""
    game = Game(HouseRules(players=4, flor=True))
    game.deal()
    game.push_str("1 show 1E 1B")  # two suits: seat 1 holds no flor
    game.push_str("2 show 2E 2B")  # nor seat 2
    game.push_str("0 flor")
    game.push_str("3 contraflor")
    game.push_str("0 no-quiero")
    assert game.flor_open
    assert _code(game, "1 flor") is RefusalCode.NO_FLOR
    assert _code(game, "2 flor") is RefusalCode.ENVIDO_CLOSED
    # announced already, the exchange open: call_pending (section 6)
    assert _code(game, "3 flor") is RefusalCode.CALL_PENDING


def test_the_flor_course_is_awaited_only_while_a_flor_is_open_against_a_team() -> None:
    """Section 6: the other team's first flor action sets the course; it is awaited
    only once a flor was called against that team, and no longer once it is set."""
    game = Game(HouseRules(flor=True))
    game.deal()
    assert game.flor_course_team is None
    game.push_str("0 flor")
    assert game.flor_course_team == 1
    game.push_str("1 flor")  # team 1's course: a plain flor, the telling begins
    assert game.flor_course_team is None
    plain = Game(HouseRules(flor=True))
    plain.deal({0: cards("1E 2O 3E"), 1: cards("4C 5B 6C")})
    plain.push_str("0 envido")
    plain.push_str("1 quiero")  # no flor in the hand
    assert plain.flor_course_team is None


def test_a_flor_answering_a_truco_with_hands_unknown_keeps_the_truco_waiting() -> None:
    """Section 6 and decision 13: a flor may answer a plain truco in the first baza;
    the truco still awaits team 1's answer. With hands unknown the flor stays open for
    announcements: the calling team's contraflor is call_pending, a second flor by the
    seat that sang it call_pending (section 6: nothing new to announce), while the other
    team may still announce and set the course."""
    game = Game(HouseRules(flor=True))
    game.deal()
    game.push_str("0 truco")
    game.push_str("1 flor")
    assert game.truco_pending == (1, 0) and game.flor_open
    assert _code(game, "1 contraflor") is RefusalCode.CALL_PENDING
    assert _code(game, "1 contraflor-al-resto") is RefusalCode.CALL_PENDING
    assert _code(game, "1 flor") is RefusalCode.CALL_PENDING
    assert _code(game, "0 flor") is None
    assert _code(game, "0 contraflor") is None
