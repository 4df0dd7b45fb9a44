"""Cards: notation round trips, the truco rank table and envido/flor points."""

from __future__ import annotations

import pytest

from controller.engine import CARDS, Card, Suit, envido_points, flor_points, has_flor
from tests.helpers import cards


class TestNotation:
    def test_forty_cards_round_trip(self) -> None:
        assert len(CARDS) == 40
        assert len({str(c) for c in CARDS}) == 40
        for card in CARDS:
            assert Card.from_str(str(card)) is card
            assert Card.from_str(str(card).lower()) is card
            assert eval(repr(card)) == card
            assert Card.from_index(card.index) is card

    def test_constructed_card_equals_interned(self) -> None:
        assert Card(7, Suit.ESPADAS) == Card.from_str("7E")
        assert Card(12, Suit.COPAS).index == Card.from_str("12C").index

    @pytest.mark.parametrize("bad", ["8E", "9O", "13C", "0B", "7X", "E7", "", "7", "1EE", "-1E"])
    def test_not_cards(self, bad: str) -> None:
        with pytest.raises(ValueError):
            Card.from_str(bad)


# RULES.md section 1, strongest first; cards on one line tie.
RANK_TABLE = [
    "1E",
    "1B",
    "7E",
    "7O",
    "3E 3B 3O 3C",
    "2E 2B 2O 2C",
    "1O 1C",
    "12E 12B 12O 12C",
    "11E 11B 11O 11C",
    "10E 10B 10O 10C",
    "7C 7B",
    "6E 6B 6O 6C",
    "5E 5B 5O 5C",
    "4E 4B 4O 4C",
]


class TestTrucoRank:
    def test_every_card_in_the_table_once(self) -> None:
        listed = [c for line in RANK_TABLE for c in cards(line)]
        assert sorted(c.index for c in listed) == list(range(40))

    def test_order_and_ties(self) -> None:
        for i, line in enumerate(RANK_TABLE):
            group = cards(line)
            assert len({c.strength for c in group}) == 1, line
            for weaker_line in RANK_TABLE[i + 1 :]:
                for c in group:
                    for w in cards(weaker_line):
                        assert c.strength > w.strength, (c, w)


class TestEnvido:
    @pytest.mark.parametrize(
        ("hand", "points"),
        [
            ("7C 6C 3E", 33),  # two of a suit: 20 + 7 + 6
            ("7O 12O 4B", 27),
            ("10E 11E 1B", 20),  # two figures
            ("7E 5B 2O", 7),  # no pair: best single card
            ("10E 11B 12O", 0),  # three figures of different suits
            ("7E 6E 5E", 33),  # three of a suit without flor: best two + 20
            ("1E 4C 5C", 29),
            ("3O 12B 6E", 6),
            ("2O 1B 4B", 25),
        ],
    )
    def test_points(self, hand: str, points: int) -> None:
        assert envido_points(cards(hand)) == points

    def test_flor_hand_envido_is_best_single_card(self) -> None:
        assert envido_points(cards("7E 6E 5E"), flor=True) == 7
        assert envido_points(cards("10E 11E 12E"), flor=True) == 0

    def test_flor_points(self) -> None:
        assert flor_points(cards("7E 6E 5E")) == 38
        assert flor_points(cards("10O 11O 12O")) == 20
        assert flor_points(cards("7E 6E 5O")) is None
        assert has_flor(cards("1C 2C 3C"))
        assert not has_flor(cards("1C 2C"))
