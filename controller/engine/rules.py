"""House rules: agreed before the game and fixed for its whole length."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["Claims", "Falta", "HouseRules"]


class Falta(enum.Enum):
    """How a falta envido is valued (docs/RULES.md section 5)."""

    TO_WIN = "to_win"
    MALAS_BUENAS = "malas_buenas"
    LOSER_BASED = "loser_based"
    GAME_IN_MALAS = "game_in_malas"


class Claims(enum.Enum):
    """How envido and flor points are told."""

    AUTO = "auto"
    DECLARED = "declared"


_ON_OFF = {"on": True, "off": False}


@dataclass(frozen=True, slots=True)
class HouseRules:
    """The table's house rules (docs/RULES.md section 10). Invalid values raise ``ValueError``."""

    players: int = 2
    target: int = 30
    flor: bool = False
    falta: Falta = Falta.TO_WIN
    mazo_envido_point: bool = True
    claims: Claims = Claims.AUTO
    implicit_quiero: bool = False
    pica_pica: bool = False

    def __post_init__(self) -> None:
        if self.players not in (2, 4, 6):
            raise ValueError(f"players must be 2, 4 or 6, not {self.players}")
        if self.target not in (15, 30):
            raise ValueError(f"target must be 15 or 30, not {self.target}")
        if not isinstance(self.falta, Falta):
            raise ValueError(f"falta must be a Falta, not {self.falta!r}")
        if not isinstance(self.claims, Claims):
            raise ValueError(f"claims must be a Claims, not {self.claims!r}")

    @property
    def half(self) -> int:
        """Where the malas end: ``ceil(target / 2)``."""
        return (self.target + 1) // 2

    @property
    def pica_window(self) -> tuple[int, int]:
        """Scores that make a six-player hand a pica-pica hand (section 8b): the leader at
        least the first and at most the second."""
        return (5, 25) if self.target == 30 else (3, 12)

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> HouseRules:
        """Build from ``key=value`` words as in a transcript's ``table`` line.

        Raises ``ValueError`` naming the key and the values it takes.
        """
        kwargs: dict[str, object] = {}
        for raw_key, raw_value in options.items():
            key, value = raw_key.lower(), raw_value.lower()
            if key in ("players", "target"):
                allowed = ("2", "4", "6") if key == "players" else ("15", "30")
                if value not in allowed:
                    raise ValueError(f"{key} must be one of {', '.join(allowed)}, not {value!r}")
                kwargs[key] = int(value)
            elif key in ("flor", "mazo_envido_point", "implicit_quiero", "pica_pica"):
                if value not in _ON_OFF:
                    raise ValueError(f"{key} must be on or off, not {value!r}")
                kwargs[key] = _ON_OFF[value]
            elif key == "falta":
                try:
                    kwargs[key] = Falta(value)
                except ValueError:
                    names = ", ".join(f.value for f in Falta)
                    raise ValueError(f"falta must be one of {names}, not {value!r}") from None
            elif key == "claims":
                try:
                    kwargs[key] = Claims(value)
                except ValueError:
                    raise ValueError(f"claims must be auto or declared, not {value!r}") from None
            else:
                raise ValueError(
                    f"unknown house rule {raw_key!r} (known: players, target, flor, falta, "
                    "mazo_envido_point, claims, implicit_quiero, pica_pica)"
                )
        return cls(**kwargs)  # type: ignore[arg-type]

    def to_options(self) -> dict[str, str]:
        def onoff(b: bool) -> str:
            return "on" if b else "off"

        return {
            "players": str(self.players),
            "target": str(self.target),
            "flor": onoff(self.flor),
            "falta": self.falta.value,
            "mazo_envido_point": onoff(self.mazo_envido_point),
            "claims": self.claims.value,
            "implicit_quiero": onoff(self.implicit_quiero),
            "pica_pica": onoff(self.pica_pica),
        }

    def to_line(self) -> str:
        """The transcript's ``table`` line."""
        return "table " + " ".join(f"{k}={v}" for k, v in self.to_options().items())
