"""The pure rules engine: cards, actions, house rules, the game state and its refusals.

No I/O, no clock, no global randomness: everything here is a function of the actions
pushed and the cards dealt. See docs/RULES.md for the rules it referees.
"""

from .actions import Action, Kind
from .cards import CARDS, Card, Suit, envido_points, flor_points, has_flor, truco_strength
from .errors import IllegalActionError, InvalidActionError, RefusalCode, TrucoError
from .game import (
    Game,
    HandInProgressError,
    HandPlay,
    LegalActions,
    NoHandError,
    PicaPicaHandError,
    Telling,
)
from .results import Award, HandResult, Outcome, Reason
from .rules import Claims, Falta, HouseRules
from .view import SeatView

__all__ = [
    "CARDS",
    "Action",
    "Award",
    "Card",
    "Claims",
    "Falta",
    "Game",
    "HandInProgressError",
    "HandPlay",
    "HandResult",
    "HouseRules",
    "IllegalActionError",
    "InvalidActionError",
    "Kind",
    "LegalActions",
    "NoHandError",
    "Outcome",
    "PicaPicaHandError",
    "Reason",
    "RefusalCode",
    "SeatView",
    "Suit",
    "Telling",
    "TrucoError",
    "envido_points",
    "flor_points",
    "has_flor",
    "truco_strength",
]
