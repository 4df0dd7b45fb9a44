"""Actions and house rules: transcript notation both ways."""

from __future__ import annotations

import pytest

from controller.engine import CARDS, Action, Card, HouseRules, InvalidActionError, Kind
from controller.engine.rules import Claims, Falta


class TestActionNotation:
    def test_every_kind_round_trips(self) -> None:
        examples = [f"3 {k.word}" for k in Kind if k not in (Kind.PLAY, Kind.DECLARE, Kind.SHOW)]
        examples += ["0 play 7E", "5 declare 33", "1 declare 0", "2 show 7E 6E", "1 show 12C"]
        examples += [f"1 play {c}" for c in CARDS]
        for text in examples:
            action = Action.from_str(text)
            assert str(action) == text
            assert eval(repr(action)) == action
            assert Action.from_str(text.upper()) == action

    def test_words(self) -> None:
        assert Kind.from_word("Vale-Cuatro") is Kind.VALE_CUATRO
        assert Kind.CON_FLOR_ME_ACHICO.word == "con-flor-me-achico"
        assert Action.from_str("0 play 7e").card == Card.from_str("7E")
        assert Action.from_str("0 play 7E").text == "play 7E"

    @pytest.mark.parametrize(
        "bad",
        [
            "",
            "play 7E",
            "0",
            "0 dance",
            "0 play",
            "0 play 7E 6E",
            "0 play 8E",
            "0 truco now",
            "0 declare",
            "0 declare x",
            "0 show",
            "9 truco",
            "0 show 7E 9C",
        ],
    )
    def test_malformed(self, bad: str) -> None:
        with pytest.raises(InvalidActionError):
            Action.from_str(bad)

    def test_codes_identify_actions(self) -> None:
        seen: dict[int, Action] = {}
        for seat in range(6):
            for k in Kind:
                if k is Kind.PLAY:
                    acts = [Action(seat, k, card=c) for c in CARDS]
                elif k is Kind.DECLARE:
                    acts = [Action(seat, k, number=n) for n in range(39)]
                elif k is Kind.SHOW:
                    continue
                else:
                    acts = [Action(seat, k)]
                for a in acts:
                    assert a.code not in seen, (a, seen.get(a.code))
                    seen[a.code] = a
        assert Action(0, Kind.DECLARE, number=500).code == -1


class TestHouseRules:
    def test_defaults(self) -> None:
        rules = HouseRules()
        assert (rules.players, rules.target, rules.flor) == (2, 30, False)
        assert rules.falta is Falta.TO_WIN and rules.claims is Claims.AUTO
        assert rules.mazo_envido_point and not rules.implicit_quiero
        assert rules.half == 15 and HouseRules(target=15).half == 8

    def test_line_round_trip(self) -> None:
        rules = HouseRules(
            players=6,
            target=15,
            flor=True,
            falta=Falta.GAME_IN_MALAS,
            mazo_envido_point=False,
            claims=Claims.DECLARED,
            implicit_quiero=True,
        )
        words = rules.to_line().split()[1:]
        assert HouseRules.from_options(dict(w.split("=") for w in words)) == rules

    @pytest.mark.parametrize(
        ("key", "value", "message"),
        [
            ("players", "3", "players must be"),
            ("target", "31", "target must be"),
            ("flor", "yes", "flor must be on or off"),
            ("falta", "all", "falta must be one of"),
            ("colour", "red", "unknown house rule"),
        ],
    )
    def test_bad_options_name_the_key(self, key: str, value: str, message: str) -> None:
        with pytest.raises(ValueError, match=message):
            HouseRules.from_options({key: value})
