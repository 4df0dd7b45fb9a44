"""What the table tells a seat: typed notices, worded only by ``controller.render.notices``.

The table and the service decide *what* a seat is told (a refusal, a point scored, the
reader unplugged, the disk gone); the render layer decides *how it reads* on the panel
(``notice_text``), in Rioplatense Spanish. Nothing compares words: a screen that must
hide, keep or replace a notice tests its type.

Every notice is a frozen value: an enum member for the ones without data, a frozen
dataclass for the ones that carry some. Add a new kind here and its words in
``controller.render.notices`` (a test checks that every kind has words).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .engine import Card, RefusalCode
from .engine.results import Reason

__all__ = [
    "ActionUndone",
    "AskConfirm",
    "CardAlreadyRead",
    "CardInAnotherHand",
    "DealStarted",
    "GameWon",
    "LinkNotice",
    "NotTheDealer",
    "Notice",
    "PanelMissingAt",
    "RecordDamaged",
    "RefereeCalled",
    "Refusal",
    "Scored",
    "SeatFault",
    "SeatTest",
    "TableAlert",
    "TableNotice",
]


class LinkNotice(enum.Enum):
    """The seat's node or reader: gone, silent, back, or its reader chip missing."""

    UNPLUGGED = "unplugged"  # the node's USB port vanished or failed
    SILENT = "silent"  # no valid frame for the heartbeat timeout
    CONNECTED = "connected"
    READER_MISSING = "reader_missing"  # the node answers but its MFRC522 does not
    ONE_CARD = "one_card"  # several tags in the reader's field at once: none was read


class TableNotice(enum.Enum):
    """Short table-level notices that carry no data."""

    HAND_FULL = "hand_full"  # a fourth card tapped during the deal
    INTERNAL_ERROR = "internal_error"  # handling the event failed; the table goes on
    CANCELLED = "cancelled"  # a table control was declined by the other team
    NOTHING_TO_UNDO = "nothing_to_undo"
    OTHER_DECK = "other_deck"  # a card of another enrolled deck than the hand's
    SECOND_RUN = "second_run"  # a second `truco-table run` tried this table, and stopped


class SeatFault(enum.Enum):
    """A fault of the seat's own hardware, shown on its panel until it goes away (the
    deal does not hide it): the player calls the owner, who runs ``truco-table doctor``."""

    READER_MISSING = "reader_missing"  # the node's MFRC522 does not answer
    PAD_STUCK = "pad_stuck"  # a button down for the node's stuck time (STUCK)
    WRONG_SEAT = "wrong_seat"  # the node says it is another seat than the pin map's
    OTHER_DECK = "other_deck"  # a card of another deck (or none enrolled) was read here


@dataclass(frozen=True, slots=True)
class PanelMissingAt:
    """Seat ``seat``'s panel does not answer: the other seats say so for it."""

    seat: int


@dataclass(frozen=True, slots=True)
class SeatTest:
    """The seat test (``truco-table doctor --asientos``): what the seat just heard, a
    button's name or a card's (``button``: a button's value, ``card``: a card)."""

    button: str | None = None
    card: Card | None = None


class TableAlert(enum.Enum):
    """Lasting warnings shown on every seat until the cause goes away."""

    NO_DISK = "no_disk"  # the record cannot be written: the game is kept in memory only


@dataclass(frozen=True, slots=True)
class Refusal:
    """The engine (or the table) refused the seat's action."""

    code: RefusalCode


@dataclass(frozen=True, slots=True)
class DealStarted:
    """A hand's deal is being read: by every seat, or by the dealer alone."""

    dealer: int
    dealer_reads: bool


@dataclass(frozen=True, slots=True)
class NotTheDealer:
    """A card tapped at another seat while the dealer reads the deal."""

    dealer: int


@dataclass(frozen=True, slots=True)
class CardAlreadyRead:
    """The dealer tapped a card already read in this deal."""

    card: Card


@dataclass(frozen=True, slots=True)
class CardInAnotherHand:
    """A seat tapped a card that another seat already has in this deal."""

    card: Card


@dataclass(frozen=True, slots=True)
class Scored:
    """Points awarded; ``best``: the winning (seat, points) of an envido or flor;
    ``note``: why a penalty was given (``controller.table.claims``' words)."""

    points: int
    team: int
    reason: Reason
    best: tuple[int, int] | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class GameWon:
    team: int
    score: tuple[int, int]


@dataclass(frozen=True, slots=True)
class AskConfirm:
    """A table control asked for at one seat; the other team confirms with quiero."""

    command: str  # "undo" or "new-game"


@dataclass(frozen=True, slots=True)
class RecordDamaged:
    """The game record was damaged (a power cut mid-write): play goes on from line ``kept``."""

    kept: int


@dataclass(frozen=True, slots=True)
class ActionUndone:
    """The referee's undo took back ``action`` (as written in the record)."""

    action: str


@dataclass(frozen=True, slots=True)
class RefereeCalled:
    """Seat ``seat`` called the referee (quiero and no quiero held together)."""

    seat: int


Notice = (
    LinkNotice
    | SeatFault
    | PanelMissingAt
    | SeatTest
    | TableNotice
    | TableAlert
    | Refusal
    | DealStarted
    | NotTheDealer
    | CardAlreadyRead
    | CardInAnotherHand
    | Scored
    | GameWon
    | AskConfirm
    | ActionUndone
    | RecordDamaged
    | RefereeCalled
)
