"""Claims to prove with hands unknown, the request to show, and why a penalty came."""

from __future__ import annotations

import pytest

from controller.cli.gallery import FLOR_2, table_at
from controller.engine import Action
from controller.render.notices import notice_text
from controller.render.screen import screen_texts
from controller.table.claims import (
    FLOR_NOT_SHOWN,
    FLOR_TAPADA,
    TANTO_MAL_CANTADO,
    TANTO_NOT_SHOWN,
    Claim,
    show_requests,
    unproven_claims,
)
from controller.table.screens import screen_for

CLAIM = ["0 envido", "1 quiero", "0 declare 33", "1 son-buenas"]


def test_an_unproven_claim_is_asked_for_near_the_end_only() -> None:
    table = table_at(CLAIM, hands={})  # the table read no cards
    assert unproven_claims(table.game) == (Claim(0, "envido", 33),)
    assert show_requests(table.game) == frozenset()  # the first baza: not yet
    table.attempt(Action.from_str("0 play 7C"))
    table.attempt(Action.from_str("1 play 2O"))  # seat 1 takes the first baza
    assert show_requests(table.game) == {0}
    assert screen_texts(screen_for(table, 0))[2] == "MOSTRÁ TUS CARTAS"
    assert "MOSTRÁ" not in " ".join(screen_texts(screen_for(table, 1)))


def test_a_truco_awaiting_its_answer_is_near_the_end() -> None:
    table = table_at([*CLAIM, "0 truco"], hands={})
    assert show_requests(table.game) == {0}


def test_showing_the_cards_proves_the_claim() -> None:
    table = table_at([*CLAIM, "0 play 7C", "1 play 2O"], hands={})
    assert table.attempt(Action.from_str("0 show 6C")) is None
    assert unproven_claims(table.game) == ()
    assert show_requests(table.game) == frozenset()


def test_a_claim_never_shown_costs_its_stake_and_says_why() -> None:
    table = table_at([*CLAIM, "0 play 7C", "1 play 2O", "1 play 1E", "0 play 4B"], hands={})
    game = table.game
    assert not game.hand_in_progress
    awards = game.hands[-1].awards
    penalties = [i for i, a in enumerate(awards) if a.reason.value == "penalty"]
    assert penalties and all(awards[i].team == 1 for i in penalties)
    assert [table.award_note(1, i) for i in penalties] == [TANTO_NOT_SHOWN]


def test_a_flor_played_unsung_is_a_flor_tapada() -> None:
    table = table_at(["0 play 3O"], hands=FLOR_2, rules={"flor": "on"})
    assert table.notes == {(1, 0): FLOR_TAPADA}
    message = table.message(1)
    assert message is not None
    assert notice_text(message.notice, 1) == "+3 nosotros: penalidad (flor tapada)"


def test_points_the_known_cards_deny() -> None:
    table = table_at(["0 envido", "1 quiero", "0 declare 30"], rules={"claims": "declared"})
    assert table.notes == {(1, 0): TANTO_MAL_CANTADO}


def test_known_cards_claim_nothing_to_prove() -> None:
    table = table_at(["0 envido", "1 quiero"], rules={"claims": "declared"})
    table.attempt(Action.from_str("0 declare 33"))
    assert unproven_claims(table.game) == ()


def test_a_claim_is_a_value() -> None:
    claim = Claim(0, "envido", 33)
    assert {claim, Claim(0, "envido", 33), Claim(0, "flor")} == {claim, Claim(0, "flor")}
    with pytest.raises(AttributeError):
        claim.points = 20  # type: ignore[misc]


FLOR_ON = {"flor": "on"}


def test_a_flor_sung_and_never_shown_costs_its_stake_and_says_why() -> None:
    table = table_at(["0 flor", "0 play 7C", "1 play 2O", "1 play 1E", "0 play 4B"],
                     hands={}, rules=FLOR_ON)  # fmt: skip
    assert not table.game.hand_in_progress
    assert table.notes == {(1, 0): FLOR_NOT_SHOWN}


def test_a_flor_shown_with_other_points_than_told_is_a_flor_not_shown() -> None:
    told = ["0 flor", "1 flor", "0 declare 33", "1 son-buenas", "0 play 7C", "1 play 2O"]
    table = table_at(told, hands={}, rules=FLOR_ON)
    assert table.attempt(Action.from_str("0 show 7C 1C 2C")) is None  # a flor of 30
    assert show_requests(table.game) == {0}
    table.attempt(Action.from_str("1 play 1E"))
    table.attempt(Action.from_str("0 play 1C"))
    assert not table.game.hand_in_progress
    assert table.notes == {(1, 0): FLOR_NOT_SHOWN}


def test_a_told_flor_never_shown_costs_its_stake_and_says_why() -> None:
    told = ["0 flor", "1 flor", "0 declare 33", "1 son-buenas"]
    table = table_at([*told, "0 play 7C", "1 play 2O", "1 play 1E", "0 play 4B"],
                     hands={}, rules=FLOR_ON)  # fmt: skip
    assert table.notes == {(1, 0): FLOR_NOT_SHOWN}


def test_a_flor_sung_then_the_mazo_is_a_flor_not_shown_not_a_tapada() -> None:
    table = table_at(["0 flor", "0 mazo"], hands={}, rules=FLOR_ON)
    assert not table.game.hand_in_progress
    assert table.notes == {(1, 0): FLOR_NOT_SHOWN}  # the flor was sung: not a tapada


def test_a_flor_of_the_number_declared_does_not_prove_an_envido() -> None:
    table = table_at([*CLAIM, "0 play 7C", "1 play 1E"], hands={})
    assert table.attempt(Action.from_str("0 show 7C 5C 1C")) is None  # envido 32, flor 33
    table.attempt(Action.from_str("1 play 1B"))
    table.attempt(Action.from_str("0 play 5C"))
    assert not table.game.hand_in_progress
    assert table.notes == {(1, 0): TANTO_NOT_SHOWN}


def test_known_cards_claim_no_flor_to_prove() -> None:
    sung = table_at(["0 flor", "0 play 3O"], hands=FLOR_2, rules=FLOR_ON)
    assert sung.game.hand_in_progress and unproven_claims(sung.game) == ()
    hands = {0: "7C 6C 5C", 1: "7O 6O 5O"}
    told = table_at(["0 flor", "1 flor", "0 declare 38", "1 son-buenas"], hands=hands,
                    rules={"flor": "on", "claims": "declared"})  # fmt: skip
    assert told.game.flor_result == (0, 38) and unproven_claims(told.game) == ()
