"""What needs the referee: the one place that sorts a table's events for the desk.

A table refuses whatever the rules forbid and tells the player why on the seat's
display; the game state does not change (docs/RULES.md section 11). Most refusals are
the table doing the referee's job by itself: a card tapped out of turn, a call while
another awaits its answer, a quiero with nothing to answer. The player sees the reason
and plays on; a person walking over would add nothing. The desk keeps those as counts
and history. What a person must see (the desk's *atención* list) is:

- **a referee call**: a player held *quiero* and *no quiero* together on the pad
  (``referee-call`` event). Always.
- **a card from outside the hand's deck** (``unknown_card``): a tag that is no card of
  the registered deck, or a card of another enrolled deck than the one this hand is
  dealt from. A card that does not belong in the game is on the table: a mixed-up
  deck, a card from the next table, or a card brought in.
- **a card not dealt to that player** (``card_not_in_hand``, hands known): the table
  read the seat's three cards at the deal and this is none of them. Cards were swapped
  or passed between players, or the deal was read wrong: only a person can tell.
- **the same seat refused again and again**: ``REPEAT_COUNT`` routine refusals at one
  seat of one game within ``REPEAT_S`` seconds of the table's clock. Once is a slip;
  three in a minute is a player who does not understand the ruling or disputes it
  (or a pad that misbehaves). One item per burst: the count starts again after it.
- **an undo** (``undo`` event): an action of a tournament game was taken back, by the
  two teams' agreement on the pads or with ``truco-table control undo``. The referee
  confirms it was the mistake the players say it was.
- **a refusal code this desk does not know** (a table with newer software): shown
  rather than guessed routine.

Routine (counted, shown in the history, never in *atención*): ``not_your_turn``,
``call_pending``, ``no_pending_call``, ``raise_not_allowed``, ``envido_closed``,
``flor_disabled``, ``no_flor``, ``bad_declaration``, ``card_already_played``,
``hand_over``, ``game_over``. Each is a pad or reader slip that the table refused with
its reason and that changed nothing: ``card_already_played`` is a played card passed
over the reader again, ``no_flor`` a flor button pressed by a player the table knows
holds none (refused, no points move; a player who insists shows up as repeated
refusals), ``bad_declaration`` a number the rules do not take, told again on the pad.

Not sent to the desk at all: two cards on a reader at once (the table reads neither and
says "Una carta por vez": nothing can be played wrongly that way). A penalty for a false
or unproven claim is the rules applied by the table, in the record; a player who
disputes it calls the referee.

Pure: no I/O, no clock (the times are the events' own). ``controller.tournament.desk.state``
applies it; docs/RULES.md section 11 and the README's tournament section say the same.
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from ..wire.messages import Event, EventKind

__all__ = [
    "EXCEPTIONAL",
    "REPEAT_COUNT",
    "REPEAT_S",
    "ROUTINE",
    "Concern",
    "RefereeItem",
    "RepeatWatch",
    "refusal_concern",
    "triage",
]


class Concern(StrEnum):
    """Why an event needs a person at the table."""

    CALLED = "called"
    OUTSIDE_CARD = "outside_card"
    NOT_THEIR_CARD = "not_their_card"
    REPEATED = "repeated"
    UNDONE = "undone"
    UNKNOWN_REFUSAL = "unknown_refusal"

    @property
    def words(self) -> str:
        """What the desk shows the referee, in Spanish."""
        return _WORDS[self]


_WORDS: Final[Mapping[Concern, str]] = {
    Concern.CALLED: "Llaman al árbitro",
    Concern.OUTSIDE_CARD: "Carta que no es del mazo de la mano",
    Concern.NOT_THEIR_CARD: "Carta que no le repartieron a ese asiento",
    Concern.REPEATED: "Rechazos repetidos en un asiento",
    Concern.UNDONE: "Jugada deshecha en la mesa",
    Concern.UNKNOWN_REFUSAL: "Rechazo de un tipo que la mesa de control no conoce",
}

#: Refusals the table handled by itself (their codes, docs/RULES.md section 11).
ROUTINE: Final = frozenset(
    {
        "not_your_turn",
        "call_pending",
        "no_pending_call",
        "raise_not_allowed",
        "envido_closed",
        "flor_disabled",
        "no_flor",
        "bad_declaration",
        "card_already_played",
        "hand_over",
        "game_over",
    }
)
#: Refusals a person must look at, and why.
EXCEPTIONAL: Final[Mapping[str, Concern]] = {
    "unknown_card": Concern.OUTSIDE_CARD,
    "card_not_in_hand": Concern.NOT_THEIR_CARD,
}
#: Routine refusals at one seat of one game within REPEAT_S seconds that need a person.
REPEAT_COUNT: Final = 3
REPEAT_S: Final = 60.0


def refusal_concern(code: str) -> Concern | None:
    """Why a refusal with ``code`` needs a person by itself (``None``: routine)."""
    if code in ROUTINE:
        return None
    return EXCEPTIONAL.get(code, Concern.UNKNOWN_REFUSAL)


class RepeatWatch:
    """The recent routine refusals of each seat of each game, to spot a burst."""

    def __init__(self, count: int = REPEAT_COUNT, window: float = REPEAT_S) -> None:
        if count < 2 or not window > 0:
            raise ValueError(f"need count >= 2 and window > 0 (got {count}, {window})")
        self.count = count
        self.window = window
        self._recent: dict[tuple[str, int | None], collections.deque[float]] = {}

    def note(self, game: str, seat: int | None, ts: float) -> bool:
        """One routine refusal; True when it makes ``count`` within ``window``."""
        recent = self._recent.setdefault((game, seat), collections.deque(maxlen=self.count))
        recent.append(ts)
        if len(recent) == self.count and recent[-1] - recent[0] <= self.window:
            recent.clear()  # one item per burst
            return True
        return False


def triage(event: Event, watch: RepeatWatch, now: float) -> Concern | None:
    """Why ``event`` needs a person (``None``: it does not). ``now`` stands in for the
    event's time when the table sent none."""
    if event.kind is EventKind.REFEREE_CALL:
        return Concern.CALLED
    if event.kind is EventKind.UNDO:
        return Concern.UNDONE
    if event.kind is not EventKind.REFUSAL:
        return None
    concern = refusal_concern(event.code or "")
    if concern is None and watch.note(event.game, event.seat, event.ts or now):
        return Concern.REPEATED
    return concern


@dataclass(frozen=True, slots=True)
class RefereeItem:
    """One item of the desk's *atención* list: the event (``seq``) that raised it."""

    table: str
    seq: int
    ts: float
    game: str
    seat: int | None
    concern: Concern
    text: str  # the event's own text (the record's comment), cleaned by the desk
    at: float = 0.0  # when it reached the desk (the desk's clock: the list's order)

    def row(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "seq": self.seq,
            "ts": self.ts,
            "game": self.game,
            "seat": self.seat,
            "concern": str(self.concern),
            "words": self.concern.words,
            "text": self.text,
        }
