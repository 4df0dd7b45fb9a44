"""Entrants: their validation, their ids, the seeding order, the organiser's spreadsheet.

>>> new_entrant_id(["e01", "e02"])
'e03'
>>> from .model import Player
>>> e = Entrant("e01", "Los del Fondo", (Player("Ana"), Player("Beto")))
>>> validate_entrant(e, team_size=2) is e
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .errors import InvalidEntrant
from .model import Entrant

__all__ = [
    "ID_PATTERN",
    "is_topic_safe",
    "name_key",
    "new_entrant_id",
    "seed_order",
    "validate_entrant",
]

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_ENTRANT_ID = re.compile(r"e(\d+)")


def is_topic_safe(text: str) -> bool:
    """An id that can stand in an MQTT topic and a file name: letters, digits, ``_.-``,
    1 to 64 characters, not starting with a punctuation mark."""
    return ID_PATTERN.fullmatch(text) is not None


def name_key(name: str) -> str:
    """How two team names are compared for duplicates: case and spacing ignored."""
    return " ".join(name.split()).casefold()


def validate_entrant(entrant: Entrant, team_size: int | None = None) -> Entrant:
    """The entrant as given, or :class:`InvalidEntrant` saying what is wrong.

    ``team_size`` None (before the format is chosen) accepts 1 to 3 players.
    """
    if not is_topic_safe(entrant.id):
        raise InvalidEntrant(
            f"El id {entrant.id!r} no sirve: solo letras, números, '.', '_' y '-' "
            "(hasta 64, empezando por letra o número)"
        )
    if not entrant.name.strip():
        raise InvalidEntrant(f"{entrant.id}: falta el nombre del equipo")
    count = len(entrant.players)
    if not 1 <= count <= 3:
        raise InvalidEntrant(f"{entrant.name}: un equipo tiene de 1 a 3 jugadores, no {count}")
    if team_size is not None and count != team_size:
        raise InvalidEntrant(
            f"{entrant.name}: tiene {count} jugador{'es' if count != 1 else ''} y en este "
            f"torneo cada equipo tiene {team_size}"
        )
    for number, player in enumerate(entrant.players, start=1):
        if not player.name.strip():
            raise InvalidEntrant(f"{entrant.name}: falta el nombre del jugador {number}")
        if player.member_id is not None and not player.member_id.strip():
            raise InvalidEntrant(
                f"{entrant.name}: el número de socio del jugador {number} está vacío"
            )
    if entrant.seed is not None and entrant.seed < 1:
        raise InvalidEntrant(
            f"{entrant.name}: la cabeza de serie es 1, 2, 3, ... (no {entrant.seed})"
        )
    return entrant


def new_entrant_id(existing: Iterable[str]) -> str:
    """The next free id of the form ``e01``, ``e02``, ... (after the highest in use).

    >>> new_entrant_id([])
    'e01'
    >>> new_entrant_id(["e09", "x", "e02"])
    'e10'
    """
    highest = 0
    for entrant_id in existing:
        found = _ENTRANT_ID.fullmatch(entrant_id)
        if found:
            highest = max(highest, int(found.group(1)))
    return f"e{highest + 1:02d}"


def seed_order(entrants: Sequence[Entrant]) -> list[Entrant]:
    """Best first: the seeded ones by seed (1 first), then the unseeded ones in
    registration order (``entrants`` is in registration order).

    >>> from .model import Player
    >>> a, b, c = (Entrant(i, i, (Player(i),)) for i in ("e01", "e02", "e03"))
    >>> [e.id for e in seed_order([a, b, Entrant("e03", "c", (Player("c"),), seed=1)])]
    ['e03', 'e01', 'e02']
    """
    seeded = sorted(
        (e for e in entrants if e.seed is not None),
        key=lambda e: e.seed if e.seed is not None else 0,
    )
    return seeded + [e for e in entrants if e.seed is None]
