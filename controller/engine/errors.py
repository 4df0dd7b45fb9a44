"""Refusal codes and the engine's errors (docs/RULES.md section 11)."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .actions import Action

__all__ = ["IllegalActionError", "InvalidActionError", "RefusalCode", "TrucoError"]


class RefusalCode(enum.Enum):
    """Why the table refused an action. The value is the code the table records."""

    GAME_OVER = "game_over"
    HAND_OVER = "hand_over"
    FLOR_DISABLED = "flor_disabled"
    CALL_PENDING = "call_pending"
    NO_PENDING_CALL = "no_pending_call"
    ENVIDO_CLOSED = "envido_closed"
    RAISE_NOT_ALLOWED = "raise_not_allowed"
    NOT_YOUR_TURN = "not_your_turn"
    CARD_ALREADY_PLAYED = "card_already_played"
    CARD_NOT_IN_HAND = "card_not_in_hand"
    NO_FLOR = "no_flor"
    BAD_DECLARATION = "bad_declaration"
    UNKNOWN_CARD = "unknown_card"

    @property
    def message(self) -> str:
        """A short Spanish message for the seat's display."""
        return _MESSAGES[self]


_MESSAGES = {
    RefusalCode.GAME_OVER: "El partido terminó",
    RefusalCode.HAND_OVER: "La mano terminó",
    RefusalCode.FLOR_DISABLED: "Se juega sin flor",
    RefusalCode.CALL_PENDING: "Hay un canto sin responder",
    RefusalCode.NO_PENDING_CALL: "No hay nada que responder",
    RefusalCode.ENVIDO_CLOSED: "El envido ya cerró",
    RefusalCode.RAISE_NOT_ALLOWED: "No te toca subir",
    RefusalCode.NOT_YOUR_TURN: "No es tu turno",
    RefusalCode.CARD_ALREADY_PLAYED: "Esa carta ya se jugó",
    RefusalCode.CARD_NOT_IN_HAND: "Esa carta no es tuya",
    RefusalCode.NO_FLOR: "No tenés flor",
    RefusalCode.BAD_DECLARATION: "Tanto mal cantado",
    RefusalCode.UNKNOWN_CARD: "Carta desconocida",
}


class TrucoError(ValueError):
    """Base class of the engine's errors."""


class InvalidActionError(TrucoError):
    """Text that is not an action in transcript notation."""


class IllegalActionError(TrucoError):
    """The rules refuse this action; the game state is unchanged."""

    def __init__(self, action: Action | None, code: RefusalCode) -> None:
        self.action = action
        self.code = code
        what = f"{action}" if action is not None else "action"
        super().__init__(f"{what} refused: {code.value} ({code.message})")
