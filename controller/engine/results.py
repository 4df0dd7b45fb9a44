"""What the game produces: awards, per-hand results and the outcome."""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["Award", "HandResult", "Outcome", "Reason"]


class Reason(enum.Enum):
    """Why points were awarded (the transcript JSON's ``reason``)."""

    ENVIDO = "envido"
    FLOR = "flor"
    TRUCO = "truco"
    MAZO = "mazo"
    MAZO_ENVIDO = "mazo_envido"
    PENALTY = "penalty"


@dataclass(frozen=True, slots=True)
class Award:
    """Points scored by a team; ``pica`` is the mano seat of the pica that scored them in a
    pica-pica hand (``None`` in a normal hand)."""

    team: int
    points: int
    reason: Reason
    pica: int | None = None


@dataclass(frozen=True, slots=True)
class HandResult:
    """One hand as recorded: its number (from 1), dealer, mano and awards so far, and
    whether it is a pica-pica hand (RULES.md section 8b)."""

    number: int
    dealer: int
    mano: int
    awards: tuple[Award, ...]
    pica_pica: bool = False


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of the game: the team that reached the target, and the final score."""

    winner: int
    score: tuple[int, int]
