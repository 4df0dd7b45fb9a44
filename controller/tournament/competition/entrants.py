"""Entrants: their validation, their ids, the seeding order, the organiser's spreadsheet.

>>> new_entrant_id(["e01", "e02"])
'e03'
>>> from .model import Player
>>> e = Entrant("e01", "Los del Fondo", (Player("Ana"), Player("Beto")))
>>> validate_entrant(e, team_size=2) is e
True

The organiser's spreadsheet, as Excel saves it in Spanish (``;``, a BOM):

>>> rows = "\\ufeffnombre;jugador1;jugador2;club;cabeza\\nLos del Fondo;Ana;Beto;Sportivo;1\\n"
>>> [(x.id, x.name, [p.name for p in x.players], x.club, x.seed)
...  for x in parse_entrants_csv(rows, team_size=2)]
[('e01', 'Los del Fondo', ['Ana', 'Beto'], 'Sportivo', 1)]
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Iterable, Sequence

from .errors import EntrantsCsvError, InvalidEntrant
from .model import Entrant, Player

__all__ = [
    "ID_PATTERN",
    "is_topic_safe",
    "name_key",
    "new_entrant_id",
    "parse_entrants_csv",
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


# ---------------------------------------------------------------------------- the spreadsheet

_COLUMNS = {
    "nombre": "name",
    "equipo": "name",
    "name": "name",
    "team": "name",
    "club": "club",
    "cabeza": "seed",
    "cabezadeserie": "seed",
    "seed": "seed",
}
for _n in (1, 2, 3):
    for _alias in ("jugador", "player"):
        _COLUMNS[f"{_alias}{_n}"] = f"player{_n}"
    for _alias in ("socio", "member"):
        _COLUMNS[f"{_alias}{_n}"] = f"member{_n}"


def _column(header: str) -> str:
    """A header cell as its column: case, accents and spaces ignored."""
    plain = unicodedata.normalize("NFKD", header).encode("ascii", "ignore").decode()
    return "".join(plain.split()).casefold().replace("_", "").replace("-", "")


def parse_entrants_csv(
    text: str, team_size: int, existing_ids: Iterable[str] = ()
) -> list[Entrant]:
    """The entrants of an organiser's CSV: a header row, then one team a line.

    Columns (any order, case and accents ignored): ``nombre`` (the team's name),
    ``jugador1`` to ``jugador3``, optional ``club``, ``socio1`` to ``socio3`` (member
    numbers) and ``cabeza`` (seed); the English ``name``, ``player1``, ``club``,
    ``member1``, ``seed`` are read the same. UTF-8 with or without a BOM, separated by
    ``,`` or ``;``. Ids are given in order after ``existing_ids`` (e01, e02, ...).

    A bad line raises :class:`EntrantsCsvError` naming it ("línea 4: falta el nombre
    del equipo"); nothing is half read.
    """
    text = text.removeprefix("\ufeff")
    lines = text.splitlines()
    header_line = next((line for line in lines if line.strip()), None)
    if header_line is None:
        raise EntrantsCsvError("El archivo está vacío: falta el encabezado (nombre, jugador1, ...)")
    delimiter = ";" if header_line.count(";") > header_line.count(",") else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    columns: list[str] | None = None
    entrants: list[Entrant] = []
    names: dict[str, int] = {}
    seeds: dict[int, int] = {}
    ids = list(existing_ids)
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if columns is None:
            columns = _header(row, line)
            continue
        if len(row) > len(columns) and any(cell.strip() for cell in row[len(columns) :]):
            raise EntrantsCsvError(f"línea {line}: tiene más columnas que el encabezado")
        cells = {c: v.strip() for c, v in zip(columns, row, strict=False)}
        entrant = _entrant(cells, line, team_size, new_entrant_id(ids))
        key = name_key(entrant.name)
        if key in names:
            raise EntrantsCsvError(
                f"línea {line}: el equipo {entrant.name!r} ya está en la línea {names[key]}"
            )
        if entrant.seed is not None:
            if entrant.seed in seeds:
                raise EntrantsCsvError(
                    f"línea {line}: la cabeza de serie {entrant.seed} ya está en la línea "
                    f"{seeds[entrant.seed]}"
                )
            seeds[entrant.seed] = line
        names[key] = line
        ids.append(entrant.id)
        entrants.append(entrant)
    if columns is None:  # pragma: no cover - a non-blank line is always read as a row
        raise EntrantsCsvError("El archivo está vacío")
    return entrants


def _header(row: Sequence[str], line: int) -> list[str]:
    columns = []
    for cell in row:
        column = _COLUMNS.get(_column(cell))
        if column is None:
            raise EntrantsCsvError(
                f"línea {line}: no conozco la columna {cell.strip()!r} (van nombre, "
                "jugador1..jugador3, club, socio1..socio3, cabeza)"
            )
        if column in columns:
            raise EntrantsCsvError(f"línea {line}: la columna {cell.strip()!r} está dos veces")
        columns.append(column)
    if "name" not in columns:
        raise EntrantsCsvError(f"línea {line}: falta la columna nombre (el nombre del equipo)")
    if "player1" not in columns:
        raise EntrantsCsvError(f"línea {line}: falta la columna jugador1")
    return columns


def _entrant(cells: dict[str, str], line: int, team_size: int, entrant_id: str) -> Entrant:
    name = cells.get("name", "")
    if not name:
        raise EntrantsCsvError(f"línea {line}: falta el nombre del equipo")
    found: list[Player] = []
    for n in (1, 2, 3):
        player, member = cells.get(f"player{n}", ""), cells.get(f"member{n}", "")
        if not player:
            if member:
                raise EntrantsCsvError(
                    f"línea {line}: {name} tiene el socio {n} pero no el jugador {n}"
                )
            continue
        found.append(Player(player, member or None))
    seed_text = cells.get("seed", "")
    seed = None
    if seed_text:
        if not seed_text.isdigit() or int(seed_text) < 1:
            raise EntrantsCsvError(
                f"línea {line}: la cabeza de serie es un número (1, 2, 3, ...), no {seed_text!r}"
            )
        seed = int(seed_text)
    entrant = Entrant(entrant_id, name, tuple(found), cells.get("club") or None, seed)
    try:
        return validate_entrant(entrant, team_size)
    except InvalidEntrant as error:
        raise EntrantsCsvError(f"línea {line}: {error}") from None
