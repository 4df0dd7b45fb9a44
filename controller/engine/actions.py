"""Actions: what a seat does, in transcript notation.

>>> a = Action.from_str("0 play 7e")
>>> a
Action.from_str('0 play 7E')
>>> str(a), a.text
('0 play 7E', 'play 7E')
>>> Action.from_str("1 no-quiero").kind is Kind.NO_QUIERO
True
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Final, cast

from .cards import Card
from .errors import InvalidActionError

__all__ = ["MAX_SEATS", "Action", "Kind", "team_of"]

MAX_SEATS: Final = 6


def team_of(seat: int) -> int:
    """The team ``seat`` plays for: seats alternate around the table, 0, 1, 0, 1..."""
    return seat & 1



class Kind(enum.IntEnum):
    """The kinds of action; ``word`` is the transcript keyword."""

    PLAY = 0
    TRUCO = 1
    RETRUCO = 2
    VALE_CUATRO = 3
    ENVIDO = 4
    REAL_ENVIDO = 5
    FALTA_ENVIDO = 6
    FLOR = 7
    CONTRAFLOR = 8
    CONTRAFLOR_AL_RESTO = 9
    CON_FLOR_ME_ACHICO = 10
    QUIERO = 11
    NO_QUIERO = 12
    MAZO = 13
    DECLARE = 14
    SON_BUENAS = 15
    SHOW = 16

    @property
    def word(self) -> str:
        return _WORDS[self]

    @classmethod
    def from_word(cls, word: str) -> Kind:
        try:
            return _BY_WORD[word.lower()]
        except KeyError:
            raise InvalidActionError(f"unknown action {word!r}") from None


# Each kind under a module name as well, defined here once beside ``Kind`` (``K_FLOR is
# Kind.FLOR``): the engine's hot paths compare kinds with these, a module name costing a
# fifth of an enum attribute (its members are looked up through the enum's class).
K_PLAY: Final = Kind.PLAY
K_TRUCO: Final = Kind.TRUCO
K_RETRUCO: Final = Kind.RETRUCO
K_VALE_CUATRO: Final = Kind.VALE_CUATRO
K_ENVIDO: Final = Kind.ENVIDO
K_REAL_ENVIDO: Final = Kind.REAL_ENVIDO
K_FALTA_ENVIDO: Final = Kind.FALTA_ENVIDO
K_FLOR: Final = Kind.FLOR
K_CONTRAFLOR: Final = Kind.CONTRAFLOR
K_CONTRAFLOR_AL_RESTO: Final = Kind.CONTRAFLOR_AL_RESTO
K_CON_FLOR_ME_ACHICO: Final = Kind.CON_FLOR_ME_ACHICO
K_QUIERO: Final = Kind.QUIERO
K_NO_QUIERO: Final = Kind.NO_QUIERO
K_MAZO: Final = Kind.MAZO
K_DECLARE: Final = Kind.DECLARE
K_SON_BUENAS: Final = Kind.SON_BUENAS
K_SHOW: Final = Kind.SHOW

_WORDS: Final = {k: k.name.lower().replace("_", "-") for k in Kind}
_BY_WORD: Final = {w: k for k, w in _WORDS.items()}

#: Slots of an action code: cards 0..39, argument-free kinds 40.., declarations 64..127.
_KIND_SLOT: Final = 40
_DECLARE_SLOT: Final = 64
_MAX_DECLARE: Final = 63


@dataclass(frozen=True, slots=True)
class Action:
    """One seat's action. ``card`` for play, ``number`` for declare, ``cards`` for show.

    ``code`` is a small integer that identifies the action (``-1`` for ``show`` and for
    declarations out of any range); the engine uses it for fast legality checks.
    """

    seat: int
    kind: Kind
    card: Card | None = None
    number: int | None = None
    cards: tuple[Card, ...] = ()
    code: int = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not 0 <= self.seat < MAX_SEATS:
            raise InvalidActionError(f"no seat {self.seat} (seats are 0..{MAX_SEATS - 1})")
        k = self.kind
        if (k is Kind.PLAY) != (self.card is not None):
            raise InvalidActionError("play takes exactly one card")
        if (k is Kind.DECLARE) != (self.number is not None):
            raise InvalidActionError("declare takes exactly one number")
        if (k is Kind.SHOW) != bool(self.cards):
            raise InvalidActionError("show takes one or more cards")
        if k is Kind.PLAY:
            assert self.card is not None
            slot = self.card.index
        elif k is Kind.DECLARE:
            assert self.number is not None
            slot = _DECLARE_SLOT + self.number if 0 <= self.number <= _MAX_DECLARE else -1
        elif k is Kind.SHOW:
            slot = -1
        else:
            slot = _KIND_SLOT + int(k)
        object.__setattr__(self, "code", -1 if slot < 0 else self.seat * 128 + slot)

    @classmethod
    def from_str(cls, text: str) -> Action:
        """Parse ``"S ACTION ..."`` as written in a transcript (case-insensitive)."""
        words = text.split()
        if not words or not words[0].isdigit():
            raise InvalidActionError(f"expected a seat number then an action, got {text!r}")
        return cls.from_words(int(words[0]), words[1:])

    @classmethod
    def from_words(cls, seat: int, words: list[str]) -> Action:
        """Parse an action's words (without the seat)."""
        if not words:
            raise InvalidActionError("missing action")
        kind = Kind.from_word(words[0])
        args = words[1:]
        try:
            if kind is Kind.PLAY:
                if len(args) != 1:
                    raise InvalidActionError(f"play takes one card, got {len(args)} arguments")
                return cls(seat, kind, card=Card.from_str(args[0]))
            if kind is Kind.DECLARE:
                if len(args) != 1:
                    raise InvalidActionError(f"declare takes one number, got {len(args)} arguments")
                try:
                    number = int(args[0])
                except ValueError:
                    raise InvalidActionError(f"declare takes a number, not {args[0]!r}") from None
                return cls(seat, kind, number=number)
            if kind is Kind.SHOW:
                if not args:
                    raise InvalidActionError("show takes one or more cards")
                return cls(seat, kind, cards=tuple(Card.from_str(a) for a in args))
        except InvalidActionError:
            raise
        except ValueError as e:
            raise InvalidActionError(str(e)) from None
        if args:
            raise InvalidActionError(f"{kind.word} takes no arguments, got {' '.join(args)!r}")
        return cls(seat, kind)

    @property
    def text(self) -> str:
        """The action as written in a transcript, without the seat (``play 7E``)."""
        return self.kind.word + self.objects

    @property
    def objects(self) -> str:
        """What the action names after its word, with its space: `` 7E`` (a card played),
        `` 33`` (points declared), `` 4C 6C`` (cards shown), else nothing."""
        if self.kind is Kind.PLAY:
            return f" {self.card}"
        if self.kind is Kind.DECLARE:
            return f" {self.number}"
        if self.kind is Kind.SHOW:
            return " " + " ".join(str(c) for c in self.cards)
        return ""

    @property
    def team(self) -> int:
        return team_of(self.seat)

    def __str__(self) -> str:
        return f"{self.seat} {self.text}"

    def __repr__(self) -> str:
        return f"Action.from_str('{self}')"


def _build_table() -> tuple[tuple[Action, ...], ...]:
    from .cards import CARDS

    table: list[tuple[Action | None, ...]] = []
    for seat in range(MAX_SEATS):
        row: list[Action | None] = [None] * 128
        for card in CARDS:
            row[card.index] = Action(seat, Kind.PLAY, card=card)
        for kind in Kind:
            if kind not in (Kind.PLAY, Kind.DECLARE, Kind.SHOW):
                row[_KIND_SLOT + int(kind)] = Action(seat, kind)
        for n in range(_MAX_DECLARE + 1):
            row[_DECLARE_SLOT + n] = Action(seat, Kind.DECLARE, number=n)
        table.append(tuple(row))
    # Slots between the kinds and the declarations stay empty and are never looked up.
    return cast(tuple[tuple[Action, ...], ...], tuple(table))


#: Interned actions: ``ACTION_TABLE[seat][slot]``; the engine hands these out, never copies.
ACTION_TABLE: Final = _build_table()
KIND_SLOT: Final = _KIND_SLOT
DECLARE_SLOT: Final = _DECLARE_SLOT
