"""Enrolling a deck: a pure session that learns which tag is which card.

The person taps the cards on one reader in deck order (``ENROLL_ORDER``: 1 to 7,
10, 11 and 12 of espadas, then bastos, oros and copas; hardware/cards.md) and
the session is fed one UID per tap::

    session = EnrollSession("bar deck 1", registry)
    print(session.prompt)            # Tocá el 1 de espadas (1E) / Tap the 1 of espadas (1E)
    step = session.tap(uid)          # EnrollStep(kind=StepKind.ACCEPTED, card=1E, ...)
    ...
    if session.finished:
        registry = registry.with_deck(session.deck())

A tap is refused, and the same card asked for again, when the tag is already
another card of this deck or belongs to another registered deck.  The same tag
twice in a row (a card left lying on the reader, or read twice) is ignored.
``undo()`` forgets the last card enrolled and asks for it again; ``skip()``
puts the card asked for at the end of the queue (it is not at hand now).  A
deck is only complete, and :meth:`EnrollSession.deck` only returns one, when
every card has a tag: a deck missing cards is never saved.

With ``cards=`` the session re-tags only those cards of an existing deck (a
card whose sticker died); the other cards keep their tags.

No I/O and no clock: the terminal command is ``controller.cli.enroll``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from ..engine.cards import CARDS, Card, Suit
from .deck import (
    UID_LENGTHS,
    Deck,
    DeckError,
    DeckRegistry,
    IncompleteDeckError,
    check_deck_name,
    uid_hex,
)

__all__ = [
    "ENROLL_ORDER",
    "EnrollSession",
    "EnrollStep",
    "StepKind",
    "card_name_en",
    "card_name_es",
]

#: The order cards are asked for: deck order, 1E 2E ... 12E 1B ... 12C.
ENROLL_ORDER: Final[tuple[Card, ...]] = CARDS

_SUIT_ES: Final = {
    Suit.ESPADAS: "espadas",
    Suit.BASTOS: "bastos",
    Suit.OROS: "oros",
    Suit.COPAS: "copas",
}


def card_name_es(card: Card) -> str:
    """``el 1 de espadas (1E)``."""
    return f"el {card.rank} de {_SUIT_ES[card.suit]} ({card})"


def card_name_en(card: Card) -> str:
    """``the 1 of espadas (1E)`` (the suits keep their Spanish names)."""
    return f"the {card.rank} of {_SUIT_ES[card.suit]} ({card})"


class StepKind(enum.Enum):
    """What a tap, undo or skip did."""

    ACCEPTED = "accepted"  # the tag is now the card asked for
    REPEAT = "repeat"  # same tag as the previous tap: ignored
    ALREADY_ENROLLED = "already_enrolled"  # the tag is another card of this deck: refused
    OTHER_DECK = "other_deck"  # the tag belongs to another registered deck: refused
    BAD_TAG = "bad_tag"  # not a usable card tag (size, or a random UID): refused
    COMPLETE = "complete"  # a tap, or skip, after every card was enrolled: ignored
    UNDONE = "undone"  # undo(): the last card enrolled is asked for again
    NOTHING_TO_UNDO = "nothing_to_undo"
    SKIPPED = "skipped"  # skip(): the card asked for moved to the end of the queue


@dataclass(frozen=True)
class EnrollStep:
    """The result of one ``tap``, ``undo`` or ``skip``.

    ``card``: the card enrolled, undone or skipped, or the card the tapped tag
    already is (in this deck, or in ``deck`` for OTHER_DECK).  ``expected``:
    the card asked for next (None once the deck is complete).
    """

    kind: StepKind
    uid: bytes | None = None
    card: Card | None = None
    deck: str | None = None
    expected: Card | None = None

    @property
    def accepted(self) -> bool:
        return self.kind is StepKind.ACCEPTED

    @property
    def refused(self) -> bool:
        """The tap was a mistake the person should notice (the card is asked for again)."""
        return self.kind in (StepKind.ALREADY_ENROLLED, StepKind.OTHER_DECK, StepKind.BAD_TAG)

    @property
    def message(self) -> str:
        """What happened, in Spanish (the English is ``message_en``, for the developers'
        logs)."""
        return _texts(self)[0]

    @property
    def message_en(self) -> str:
        return _texts(self)[1]


def _texts(step: EnrollStep) -> tuple[str, str]:
    """(Spanish, English) text for a step."""
    kind, card = step.kind, step.card
    tag = uid_hex(step.uid) if step.uid is not None else "?"
    if kind is StepKind.ACCEPTED and card is not None:
        return f"Registrado {card_name_es(card)}", f"Enrolled {card_name_en(card)} as {tag}"
    if kind is StepKind.REPEAT:
        if card is None:
            return "La misma etiqueta otra vez: ignorada", "Same tag again: ignored"
        return (
            f"La misma etiqueta otra vez ({card}): ignorada",
            f"Same tag again ({card}): ignored, take the card off the reader",
        )
    if kind is StepKind.ALREADY_ENROLLED:
        return (
            f"Esa carta ya está registrada como {card}",
            f"That tag is already enrolled as {card}",
        )
    if kind is StepKind.OTHER_DECK:
        return (
            f"Esa carta es el {card} del mazo {step.deck!r}",
            f"That tag is the {card} of deck {step.deck!r}",
        )
    if kind is StepKind.BAD_TAG:
        n = len(step.uid or b"")
        if n == 4 and step.uid is not None and step.uid[0] == 0x08:
            return (
                f"La etiqueta {tag} cambia de número en cada lectura: usá etiquetas NTAG213",
                f"Tag {tag} has a random UID that changes on every read: use NTAG213 stickers",
            )
        return (
            f"La etiqueta {tag} no sirve ({n} bytes)",
            f"Tag {tag} is not a card tag ({n} bytes; a tag UID has 4, 7 or 10)",
        )
    if kind is StepKind.COMPLETE:
        return "El mazo ya está completo", "The deck is already complete"
    if kind is StepKind.UNDONE:
        return f"Deshecho el {card}", f"Undid {card}"
    if kind is StepKind.NOTHING_TO_UNDO:
        return "No hay nada que deshacer", "Nothing to undo"
    if kind is StepKind.SKIPPED:
        return (
            f"Salteado el {card}: se pide al final",
            f"Skipped {card}: asked for again at the end",
        )
    return kind.value, kind.value


class EnrollSession:
    """Walks one person through tapping a deck's cards, one UID at a time.

    ``registry`` holds the decks already enrolled: their tags are refused,
    except the tags of the deck being (re-)enrolled under ``name`` itself.
    ``cards``: re-tag only these cards of the existing deck ``name`` (the
    others keep their tags); by default all 40 cards are enrolled afresh.
    """

    def __init__(
        self,
        name: str,
        registry: DeckRegistry | None = None,
        *,
        cards: Iterable[Card] | None = None,
    ) -> None:
        self.name = check_deck_name(name)
        registry = DeckRegistry() if registry is None else registry
        existing = registry.get(name)
        self._others = registry.without(name)
        self._kept: dict[bytes, Card] = {}
        if cards is None:
            targets = list(ENROLL_ORDER)
        else:
            wanted = set(cards)
            if existing is None:
                raise DeckError("no such deck to re-tag cards of", deck=name)
            if not wanted:
                raise DeckError("no cards to re-tag", deck=name)
            targets = [c for c in ENROLL_ORDER if c in wanted]
            self._kept = {uid: c for uid, c in existing.cards.items() if c not in wanted}
        self._retag_name = existing.name if cards is not None and existing is not None else None
        self._targets: tuple[Card, ...] = tuple(targets)
        self._pending: list[Card] = targets
        self._enrolled: dict[Card, bytes] = {}
        self._by_uid: dict[bytes, Card] = dict(self._kept)
        self._history: list[Card] = []
        self._last_uid: bytes | None = None

    # -- state -------------------------------------------------------------------------------
    @property
    def targets(self) -> tuple[Card, ...]:
        """The cards this session enrolls, in the order they are first asked for."""
        return self._targets

    @property
    def expected(self) -> Card | None:
        """The card to tap next, or None when every card is enrolled."""
        return self._pending[0] if self._pending else None

    @property
    def finished(self) -> bool:
        """Every card of the session has a tag."""
        return not self._pending

    @property
    def missing(self) -> tuple[Card, ...]:
        """The cards still without a tag, in the order they will be asked for."""
        return tuple(self._pending)

    @property
    def enrolled(self) -> Mapping[Card, bytes]:
        """The cards tagged in this session so far: card -> UID, in tapping order."""
        return MappingProxyType(dict(self._enrolled))

    @property
    def progress(self) -> tuple[int, int]:
        """(cards enrolled, cards to enroll) in this session."""
        return len(self._enrolled), len(self._targets)

    @property
    def prompt(self) -> str:
        """What to do next, in Spanish."""
        card = self.expected
        if card is None:
            n = len(self._targets)
            return f"Listo: {n} carta{'s' if n != 1 else ''} registrada{'s' if n != 1 else ''}"
        return f"Tocá {card_name_es(card)}"

    # -- input ---------------------------------------------------------------------------------
    def tap(self, uid: bytes) -> EnrollStep:
        """A tag was read: enroll it as the card asked for, or say why not."""
        uid = bytes(uid)
        if len(uid) not in UID_LENGTHS or (len(uid) == 4 and uid[0] == 0x08):
            self._last_uid = uid
            return self._step(StepKind.BAD_TAG, uid)
        if uid == self._last_uid:
            return self._step(StepKind.REPEAT, uid, self._by_uid.get(uid))
        self._last_uid = uid
        if not self._pending:
            return self._step(StepKind.COMPLETE, uid, self._by_uid.get(uid))
        mine = self._by_uid.get(uid)
        if mine is not None:
            return self._step(StepKind.ALREADY_ENROLLED, uid, mine)
        other = self._others.deck_of(uid)
        if other is not None:
            return self._step(StepKind.OTHER_DECK, uid, other.lookup(uid), other.name)
        card = self._pending.pop(0)
        self._enrolled[card] = uid
        self._by_uid[uid] = card
        self._history.append(card)
        return self._step(StepKind.ACCEPTED, uid, card)

    def undo(self) -> EnrollStep:
        """Forget the last card enrolled; it is the next card asked for."""
        if not self._history:
            return self._step(StepKind.NOTHING_TO_UNDO)
        card = self._history.pop()
        uid = self._enrolled.pop(card)
        del self._by_uid[uid]
        self._pending.insert(0, card)
        self._last_uid = None  # the same card may be tapped again at once
        return self._step(StepKind.UNDONE, uid, card)

    def skip(self) -> EnrollStep:
        """Put the card asked for at the end of the queue (it is not at hand now)."""
        if not self._pending:
            return self._step(StepKind.COMPLETE)
        card = self._pending.pop(0)
        self._pending.append(card)
        return self._step(StepKind.SKIPPED, None, card)

    # -- result -------------------------------------------------------------------------------
    def deck(self) -> Deck:
        """The enrolled deck; raises IncompleteDeckError (naming the cards) if cards are missing."""
        if self._pending:
            raise IncompleteDeckError(self.name, self._pending)
        return Deck(self._retag_name or self.name, dict(self._by_uid))

    def _step(
        self,
        kind: StepKind,
        uid: bytes | None = None,
        card: Card | None = None,
        deck: str | None = None,
    ) -> EnrollStep:
        return EnrollStep(kind, uid, card, deck, self.expected)
