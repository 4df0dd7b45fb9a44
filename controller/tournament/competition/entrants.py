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
from dataclasses import dataclass
from typing import Final

from .errors import EntrantsCsvError, InvalidEntrant, UnsafeText
from .model import Entrant, Player

__all__ = [
    "ID_PATTERN",
    "Sheet",
    "check_text",
    "clean_text",
    "decode_sheet",
    "is_topic_safe",
    "name_key",
    "new_entrant_id",
    "parse_entrants_csv",
    "read_sheet",
    "seed_order",
    "validate_entrant",
]

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_ENTRANT_ID = re.compile(r"e(\d+)")


def is_topic_safe(text: str) -> bool:
    """An id that can stand in an MQTT topic and a file name: letters, digits, ``_.-``,
    1 to 64 characters, not starting with a punctuation mark."""
    return ID_PATTERN.fullmatch(text) is not None


#: The bidirectional controls (embeddings, overrides, isolates, marks): a name with one
#: shows reversed or scrambled on a page and a printout.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def check_text(text: str, what: str) -> str:
    """``text`` as typed, or :class:`UnsafeText` naming ``what`` (Spanish: "el nombre del
    equipo") when it has a control character (an escape that clears a terminal, a
    newline, a tab) or a bidirectional control (a right-to-left override).

    >>> check_text("Los del Fondo", "el nombre")
    'Los del Fondo'
    >>> try:
    ...     check_text("\x1b[2JGanamos", "el nombre")
    ... except UnsafeText as e:
    ...     print(e)
    el nombre tiene un carácter de control (U+001B): escribilo de nuevo sin él
    """
    for char in text:
        code = ord(char)
        if char in _BIDI:
            raise UnsafeText(
                f"{what} tiene un carácter invisible que da vuelta el texto (U+{code:04X}): "
                "escribilo de nuevo sin él"
            )
        if unicodedata.category(char) in ("Cc", "Zl", "Zp"):
            raise UnsafeText(
                f"{what} tiene un carácter de control (U+{code:04X}): escribilo de nuevo sin él"
            )
    return text


def clean_text(text: str, what: str) -> str:
    """``text`` checked (:func:`check_text`), in Unicode's composed form, its spaces
    trimmed and runs of them made one.

    >>> clean_text("  Los   del Fondo ", "el nombre")
    'Los del Fondo'
    """
    return " ".join(unicodedata.normalize("NFC", check_text(text, what)).split())


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
    name = clean_text(entrant.name, f"El nombre del equipo {entrant.name!r}")
    label = name
    players = tuple(
        Player(
            clean_text(p.name, f"{label}: el nombre del jugador {n}"),
            None
            if p.member_id is None
            else clean_text(p.member_id, f"{label}: el número de socio del jugador {n}"),
        )
        for n, p in enumerate(entrant.players, start=1)
    )
    club = None if entrant.club is None else clean_text(entrant.club, f"{label}: el club")
    if (name, players, club) != (entrant.name, entrant.players, entrant.club):
        entrant = Entrant(entrant.id, name, players, club or None, entrant.seed)
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


@dataclass(frozen=True)
class Sheet:
    """An organiser's spreadsheet read (:func:`read_sheet`): the entrants it would
    register (ids after the ones in use) and every bad line; nothing of it is registered
    unless ``problems`` is empty."""

    entrants: tuple[Entrant, ...]
    problems: tuple[str, ...]  # "línea 4: falta el nombre del equipo", one a bad line
    encoding: str  # how it was read: "UTF-8", "UTF-8 con BOM", "Windows-1252"
    delimiter: str  # ";" or ","


#: How to save a sheet the desk can read, said when it cannot.
SAVE_AS: Final = (
    "guardala desde la planilla con «Guardar como» → «CSV UTF-8 (delimitado por comas)» "
    "(o «CSV (delimitado por comas)»)"
)


def decode_sheet(data: bytes) -> tuple[str, str]:
    """The text of a CSV as a spreadsheet saves it, and what it was read as: UTF-8 (with
    or without Excel's BOM), else Windows-1252 (what older Excel saves in Spanish; it
    reads Latin-1's letters the same). Anything else (UTF-16, a binary .xlsx, bytes that
    are none of these) is :class:`EntrantsCsvError` in one line saying how to save it.

    >>> decode_sheet("nombre;jugador1\\nAtlético;Ana".encode("cp1252"))
    ('nombre;jugador1\\nAtlético;Ana', 'Windows-1252')
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in data:
        raise EntrantsCsvError(f"El archivo está en UTF-16 (texto Unicode): {SAVE_AS}")
    if data.startswith(b"PK\x03\x04"):
        raise EntrantsCsvError(f"El archivo es un libro de Excel (.xlsx), no un CSV: {SAVE_AS}")
    if data.startswith(b"\xef\xbb\xbf"):
        try:
            return data[3:].decode("utf-8"), "UTF-8 con BOM"
        except UnicodeDecodeError as e:
            raise EntrantsCsvError(
                f"El archivo dice ser UTF-8 pero el byte {e.start + 3} no lo es: {SAVE_AS}"
            ) from None
    try:
        return data.decode("utf-8"), "UTF-8"
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252"), "Windows-1252"
    except UnicodeDecodeError:
        raise EntrantsCsvError(
            f"El archivo no está en UTF-8 ni en Windows-1252/Latin-1: {SAVE_AS}"
        ) from None


def read_sheet(data: bytes | str, team_size: int, registered: Sequence[Entrant] = ()) -> Sheet:
    """The organiser's CSV read whole (see :func:`parse_entrants_csv` for the columns),
    every bad line listed, and checked against the teams already ``registered`` (a name
    or a seed they have is a bad line too)."""
    if isinstance(data, bytes):
        text, encoding = decode_sheet(data)
    else:
        text, encoding = data.removeprefix("\ufeff"), "texto"
    text = text.removeprefix("\ufeff")
    lines = text.splitlines()
    header_line = next((line for line in lines if line.strip()), None)
    if header_line is None:
        raise EntrantsCsvError("El archivo está vacío: falta el encabezado (nombre, jugador1, ...)")
    delimiter = ";" if header_line.count(";") > header_line.count(",") else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    columns: list[str] | None = None
    entrants: list[Entrant] = []
    problems: list[str] = []
    names: dict[str, str] = {name_key(e.name): f"ya está anotado ({e.id})" for e in registered}
    seeds: dict[int, str] = {
        e.seed: f"ya es de {e.name} ({e.id})" for e in registered if e.seed is not None
    }
    ids = [e.id for e in registered]
    try:
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if columns is None:
                columns = _header(row, line)
                continue
            try:
                if len(row) > len(columns) and any(c.strip() for c in row[len(columns) :]):
                    raise EntrantsCsvError(f"línea {line}: tiene más columnas que el encabezado")
                cells = {c: v.strip() for c, v in zip(columns, row, strict=False)}
                entrant = _entrant(cells, line, team_size, new_entrant_id(ids))
                key = name_key(entrant.name)
                if key in names:
                    raise EntrantsCsvError(f"línea {line}: el equipo {entrant.name!r} {names[key]}")
                if entrant.seed is not None and entrant.seed in seeds:
                    raise EntrantsCsvError(
                        f"línea {line}: la cabeza de serie {entrant.seed} {seeds[entrant.seed]}"
                    )
            except EntrantsCsvError as bad:
                problems.append(str(bad))
                continue
            names[key] = f"ya está en la línea {line}"
            if entrant.seed is not None:
                seeds[entrant.seed] = f"ya está en la línea {line}"
            ids.append(entrant.id)
            entrants.append(entrant)
    except csv.Error as e:
        problems.append(f"línea {reader.line_num}: no se puede leer ({e})")
    except EntrantsCsvError as bad:  # the header: the rest cannot be read
        problems.append(str(bad))
    return Sheet(tuple(entrants), tuple(problems), encoding, delimiter)


def parse_entrants_csv(
    text: str | bytes, team_size: int, existing_ids: Iterable[str] = ()
) -> list[Entrant]:
    """The entrants of an organiser's CSV: a header row, then one team a line.

    Columns (any order, case and accents ignored): ``nombre`` (the team's name),
    ``jugador1`` to ``jugador3``, optional ``club``, ``socio1`` to ``socio3`` (member
    numbers) and ``cabeza`` (seed); the English ``name``, ``player1``, ``club``,
    ``member1``, ``seed`` are read the same. Bytes are UTF-8 with or without a BOM or
    Windows-1252/Latin-1 (:func:`decode_sheet`); separated by ``,`` or ``;``. Ids are
    given in order after ``existing_ids`` (e01, e02, ...). Names are cleaned
    (:func:`clean_text`): a control or bidirectional character is a bad line.

    Bad lines raise one :class:`EntrantsCsvError` naming every one ("línea 4: falta el
    nombre del equipo · línea 9: ..."); nothing is half read.
    """
    registered = [Entrant(i, f"\x00{i}", (Player(i),)) for i in existing_ids]
    sheet = read_sheet(text, team_size, registered)
    if sheet.problems:
        raise EntrantsCsvError(" · ".join(sheet.problems), sheet.problems)
    return list(sheet.entrants)


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
