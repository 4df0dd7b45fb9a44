"""The Spanish 40-card deck: cards, truco strength and envido/flor points.

Cards are written rank then suit letter, case-insensitive: ``1E``, ``7O``, ``12C``.
Suits: espadas ``E``, bastos ``B``, oros ``O``, copas ``C``.

>>> Card.from_str("7e")
Card.from_str('7E')
>>> str(Card.from_str("12C"))
'12C'
>>> envido_points([Card.from_str(c) for c in ("7C", "6C", "3E")])
33
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "CARDS",
    "RANKS",
    "Card",
    "Suit",
    "envido_points",
    "flor_points",
    "has_flor",
    "truco_strength",
]


class Suit(enum.Enum):
    """The four suits, with their transcript letters."""

    ESPADAS = "E"
    BASTOS = "B"
    OROS = "O"
    COPAS = "C"

    @property
    def index(self) -> int:
        return _SUIT_INDEX[self]


_SUIT_INDEX: Final = {suit: i for i, suit in enumerate(Suit)}
_SUITS: Final = tuple(Suit)

#: The ten ranks of the deck, in deck order (no 8s or 9s).
RANKS: Final[tuple[int, ...]] = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
_RANK_INDEX: Final = {rank: i for i, rank in enumerate(RANKS)}


@dataclass(frozen=True, slots=True)
class Card:
    """One card of the deck. ``index`` (0..39) is the compact form the engine uses."""

    rank: int
    suit: Suit
    index: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.rank not in _RANK_INDEX:
            raise ValueError(f"no card of rank {self.rank} in the Spanish 40-card deck")
        if not isinstance(self.suit, Suit):
            raise ValueError(f"not a suit: {self.suit!r}")
        object.__setattr__(self, "index", self.suit.index * 10 + _RANK_INDEX[self.rank])

    @classmethod
    def from_str(cls, text: str) -> Card:
        """Parse transcript notation (``7E``, ``12c``); raises ``ValueError`` for a non-card."""
        name = text.strip().upper()
        if len(name) < 2 or not name[:-1].isdigit():
            raise ValueError(f"not a card: {text!r} (expected rank then suit, e.g. 7E)")
        try:
            suit = Suit(name[-1])
        except ValueError:
            raise ValueError(f"not a card: {text!r} (suits are E, B, O, C)") from None
        rank = int(name[:-1])
        if rank not in _RANK_INDEX:
            raise ValueError(f"not a card: {text!r} (ranks are 1-7, 10, 11, 12)")
        return CARDS[suit.index * 10 + _RANK_INDEX[rank]]

    @classmethod
    def from_index(cls, index: int) -> Card:
        return CARDS[index]

    @property
    def envido_value(self) -> int:
        """Its number for 1-7, 0 for the figures (10, 11, 12)."""
        return ENVIDO_VALUE[self.index]

    @property
    def strength(self) -> int:
        """Truco strength: higher wins; equal strengths tie (parda)."""
        return STRENGTH[self.index]

    def __str__(self) -> str:
        return f"{self.rank}{self.suit.value}"

    def __repr__(self) -> str:
        return f"Card.from_str('{self}')"


#: All 40 cards, indexed by ``Card.index``.
CARDS: Final[tuple[Card, ...]] = tuple(Card(RANKS[i % 10], _SUITS[i // 10]) for i in range(40))


def _strength(rank: int, suit: Suit) -> int:
    special = {
        (1, Suit.ESPADAS): 14,
        (1, Suit.BASTOS): 13,
        (7, Suit.ESPADAS): 12,
        (7, Suit.OROS): 11,
    }
    if (rank, suit) in special:
        return special[(rank, suit)]
    return {3: 10, 2: 9, 1: 8, 12: 7, 11: 6, 10: 5, 7: 4, 6: 3, 5: 2, 4: 1}[rank]


#: Truco strength by card index (1E = 14 strongest ... every 4 = 1).
STRENGTH: Final[tuple[int, ...]] = tuple(_strength(c.rank, c.suit) for c in CARDS)
#: Envido value by card index.
ENVIDO_VALUE: Final[tuple[int, ...]] = tuple(c.rank if c.rank <= 7 else 0 for c in CARDS)
#: Suit number (0..3) by card index.
SUIT_OF: Final[tuple[int, ...]] = tuple(i // 10 for i in range(40))


def truco_strength(card: Card) -> int:
    return STRENGTH[card.index]


def envido_of_indices(cards: Iterable[int], *, flor: bool = False) -> int:
    """Envido points of up to three cards given by index (see ``envido_points``)."""
    by_suit: dict[int, list[int]] = {}
    best_single = 0
    for c in cards:
        v = ENVIDO_VALUE[c]
        by_suit.setdefault(SUIT_OF[c], []).append(v)
        if v > best_single:
            best_single = v
    best = best_single
    for values in by_suit.values():
        if len(values) == 2 or (len(values) == 3 and not flor):
            values = sorted(values, reverse=True)
            best = max(best, 20 + values[0] + values[1])
    return best


def envido_points(cards: Iterable[Card], *, flor: bool = False) -> int:
    """A hand's envido: 20 plus two cards of one suit, else its best single card.

    Three of one suit count as the best two plus 20 when playing without flor; playing
    with flor (``flor=True``) such a hand's envido is its best single card.
    """
    return envido_of_indices((c.index for c in cards), flor=flor)


def flor_of_indices(cards: Iterable[int]) -> int | None:
    cs = list(cards)
    if len(cs) != 3 or len({SUIT_OF[c] for c in cs}) != 1:
        return None
    return 20 + sum(ENVIDO_VALUE[c] for c in cs)


def has_flor(cards: Iterable[Card]) -> bool:
    """Three cards of one suit."""
    return flor_of_indices(c.index for c in cards) is not None


def flor_points(cards: Iterable[Card]) -> int | None:
    """20 plus the three envido values when the cards are a flor, else ``None``."""
    return flor_of_indices(c.index for c in cards)
