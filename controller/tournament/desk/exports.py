"""The tournament's exports: standings, matches and games, as CSV and as JSON.

Pure functions of a :class:`~controller.tournament.competition.model.Tournament` (and,
for the games, of the desk's judged records): one row per standing, per match, per
game, each with its status or verdict. The columns are fixed (``STANDING_FIELDS``,
``MATCH_FIELDS``, ``GAME_FIELDS``); a CSV cell for ``None`` is empty, JSON keeps
``null``. The desk serves them at ``/export/<name>`` and writes them into its folder
(:func:`write_exports`, atomically, as ``results.csv`` is).

``standings.*`` rows: ``status`` is ``active``, ``eliminated`` (lost a knockout
match), ``withdrawn`` or ``champion`` (rank 1 of a finished tournament). ``matches.*``:
``status`` is the match's (``waiting``, ``assigned``, ``playing``, ``decided``,
``bye``, ``walkover``, ``overridden``) with the organiser's ``reason``. ``games.*``:
every game counted into a match (from a verified record) with ``counted`` true, and
every record the desk judged for a match of the tournament but did not count, with
``counted`` false; ``verdict`` is the desk's (``intact``, ``tampered``, ...; empty
when the desk's judgement was not given). A swiss bye's games are the walkover's the
standings count for it (2-0 in a best of 3).

Each CSV comes in two forms: ``standings.csv`` for programs (``,``, UTF-8, LF,
``true``/``false``) and ``standings.excel.csv`` as a Spanish spreadsheet opens it
(``;``, a BOM, CRLF, ``sí``/``no``, the headers and the status words in Spanish:
``puesto``, ``equipo``, ``campeón``, ``cargado a mano``, ``íntegro``). In both, a text
cell that starts with ``=``, ``+``, ``-``, ``@`` (or a tab or carriage return) gets a
leading ``'``, so that no
spreadsheet runs it as a formula (a team called ``=HYPERLINK(...)``); numbers are never
touched. The files on the disk are the page's exports byte for byte
(:func:`write_exports` rewrites any that differ).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Final

from ..competition.model import Format, MatchStatus, Stage, Standing, Tournament
from ..competition.standings import games_to_win, standings
from ..competition.tournament import final_ranking
from ..table.outbox import atomic_write
from .records import GameResult

__all__ = [
    "EXCEL_HEADERS",
    "EXCEL_WORDS",
    "EXPORTS",
    "EXPORT_NAMES",
    "GAME_FIELDS",
    "MATCH_FIELDS",
    "STANDING_FIELDS",
    "Row",
    "export_text",
    "game_rows",
    "match_rows",
    "standing_rows",
    "standings_of",
    "to_csv",
    "to_json",
    "write_changed",
    "write_exports",
]

Row = dict[str, str | int | bool | None]

STANDING_FIELDS: Final = (
    "rank",
    "entrant",
    "name",
    "club",
    "players",
    "group",
    "played",
    "won",
    "lost",
    "games_won",
    "games_lost",
    "points_for",
    "points_against",
    "points_diff",
    "buchholz",
    "status",
)

MATCH_FIELDS: Final = (
    "match",
    "round",
    "stage",
    "label",
    "group",
    "table",
    "home",
    "home_name",
    "away",
    "away_name",
    "best_of",
    "games_home",
    "games_away",
    "points_home",
    "points_away",
    "games_counted",
    "winner",
    "winner_name",
    "status",
    "reason",
)

GAME_FIELDS: Final = (
    "game",
    "match",
    "round",
    "label",
    "table",
    "home",
    "away",
    "score_home",
    "score_away",
    "winner",
    "winner_name",
    "counted",
    "verdict",
    "record_sha256",
)


def standings_of(t: Tournament, group: str | None = None) -> list[Standing]:
    """The standings by the competition's rules (:func:`~..competition.standings.standings`);
    none before the tournament starts. A knockout's (and the whole of a groups
    tournament's) are in the order of its final ranking
    (:func:`~..competition.tournament.final_ranking`: the champion first, then by the
    round reached; provisional until the end), ranked 1, 2, 3, ..."""
    if t.spec is None:
        return []
    table = standings(t, group)
    if group is not None or t.spec.format not in (Format.KNOCKOUT, Format.GROUPS):
        return table
    by_id = {s.entrant: s for s in table}
    ranked = [by_id[e] for e in final_ranking(t) if e in by_id]
    return [replace(s, rank=i) for i, s in enumerate(ranked, start=1)]


def _name(t: Tournament, entrant_id: str | None) -> str | None:
    if entrant_id is None:
        return None
    try:
        return t.entrant(entrant_id).name
    except KeyError:
        return entrant_id


# ---------------------------------------------------------------------------- rows


def standing_rows(t: Tournament, table: Iterable[Standing] | None = None) -> list[Row]:
    """One row per standing (``table`` default: :func:`standings_of`)."""
    lines = list(table) if table is not None else standings_of(t)
    knocked_out = {
        m.pairing.away if m.result.winner == m.pairing.home else m.pairing.home
        for m in t.matches
        if m.stage is Stage.KNOCKOUT and m.result.winner is not None
    }
    out: list[Row] = []
    for s in lines:
        try:
            e = t.entrant(s.entrant)
            club: str | None = e.club
            players: str | None = " / ".join(p.name for p in e.players)
        except KeyError:
            club = players = None
        if s.withdrawn:
            status = "withdrawn"
        elif s.entrant in knocked_out:
            status = "eliminated"
        elif t.finished and s.rank == 1:
            status = "champion"
        else:
            status = "active"
        out.append(
            {
                "rank": s.rank,
                "entrant": s.entrant,
                "name": _name(t, s.entrant),
                "club": club,
                "players": players,
                "group": s.group,
                "played": s.played,
                "won": s.won,
                "lost": s.lost,
                "games_won": s.games_won,
                "games_lost": s.games_lost,
                "points_for": s.points_for,
                "points_against": s.points_against,
                "points_diff": s.points_diff,
                "buchholz": s.buchholz,
                "status": status,
            }
        )
    return out


def match_rows(t: Tournament) -> list[Row]:
    """One row per match, in the order they were made."""
    out: list[Row] = []
    swiss = t.spec is not None and t.spec.format is Format.SWISS
    for m in t.matches:
        r = m.result
        if swiss and r.status is MatchStatus.BYE:  # counted as a walkover won
            r = replace(r, games=(games_to_win(m.best_of), 0))
        out.append(
            {
                "match": m.id,
                "round": m.round,
                "stage": m.stage.value,
                "label": m.label,
                "group": m.group,
                "table": m.table,
                "home": m.pairing.home,
                "home_name": _name(t, m.pairing.home),
                "away": m.pairing.away,
                "away_name": _name(t, m.pairing.away),
                "best_of": m.best_of,
                "games_home": r.games[0],
                "games_away": r.games[1],
                "points_home": r.points[0],
                "points_away": r.points[1],
                "games_counted": len(m.games),
                "winner": r.winner,
                "winner_name": _name(t, r.winner),
                "status": r.status.value,
                "reason": r.reason,
            }
        )
    return out


def game_rows(t: Tournament, results: Iterable[GameResult] = ()) -> list[Row]:
    """Every game counted into a match, then every other record judged for a match of
    this tournament (not counted: flagged, or a copy), in match order."""
    judged = {r.game: r for r in results}
    out: list[Row] = []
    counted: set[str] = set()
    for m in t.matches:
        for g in m.games:
            counted.add(g.game)
            winner = m.pairing.home if g.winner == 0 else m.pairing.away
            result = judged.get(g.game)
            out.append(
                {
                    "game": g.game,
                    "match": m.id,
                    "round": m.round,
                    "label": m.label,
                    "table": g.table,
                    "home": m.pairing.home,
                    "away": m.pairing.away,
                    "score_home": g.score[0],
                    "score_away": g.score[1],
                    "winner": winner,
                    "winner_name": _name(t, winner),
                    "counted": True,
                    "verdict": result.verdict if result is not None else "",
                    "record_sha256": g.record_sha256,
                }
            )
    by_id = {m.id: m for m in t.matches}
    for r in sorted(judged.values(), key=lambda r: (r.match, r.game)):
        match = by_id.get(r.match)
        if match is None or r.game in counted:
            continue
        winner = None
        if r.winner is not None:
            winner = match.pairing.home if r.winner == 0 else match.pairing.away
        out.append(
            {
                "game": r.game,
                "match": match.id,
                "round": match.round,
                "label": match.label,
                "table": r.table,
                "home": match.pairing.home,
                "away": match.pairing.away,
                "score_home": r.score[0],
                "score_away": r.score[1],
                "winner": winner,
                "winner_name": _name(t, winner),
                "counted": False,
                "verdict": r.verdict,
                "record_sha256": r.sha256,
            }
        )
    return out


# ---------------------------------------------------------------------------- files


#: The columns' headers in the spreadsheet form (``*.excel.csv``): Spanish, as the
#: organiser reads them; the program form keeps the field names.
EXCEL_HEADERS: Final[Mapping[str, str]] = {
    "rank": "puesto", "entrant": "id", "name": "equipo", "club": "club",
    "players": "jugadores", "group": "grupo", "played": "jugados", "won": "ganados",
    "lost": "perdidos", "games_won": "chicos ganados", "games_lost": "chicos perdidos",
    "points_for": "tantos a favor", "points_against": "tantos en contra",
    "points_diff": "diferencia de tantos", "buchholz": "buchholz", "status": "estado",
    "match": "partido", "round": "ronda", "stage": "etapa", "label": "nombre de la ronda",
    "table": "mesa", "home": "id local", "home_name": "local", "away": "id visitante",
    "away_name": "visitante", "best_of": "al mejor de", "games_home": "chicos local",
    "games_away": "chicos visitante", "points_home": "tantos local",
    "points_away": "tantos visitante", "games_counted": "chicos contados",
    "winner": "id ganador", "winner_name": "ganador", "reason": "motivo",
    "game": "chico", "score_home": "tanteador local", "score_away": "tanteador visitante",
    "counted": "contado", "verdict": "registro", "record_sha256": "sha256 del registro",
    "venue": "sede",
}  # fmt: skip
#: The words of the ``status``, ``stage`` and ``verdict`` columns in the spreadsheet
#: form.
EXCEL_WORDS: Final[Mapping[str, Mapping[str, str]]] = {
    "status": {
        "active": "en competencia", "eliminated": "eliminado", "withdrawn": "retirado",
        "champion": "campeón", "waiting": "espera mesa", "assigned": "asignado",
        "playing": "jugando", "decided": "terminado", "bye": "libre",
        "walkover": "walkover", "overridden": "cargado a mano",
    },
    "stage": {"round": "ronda", "group": "grupos", "knockout": "eliminación",
              "third-place": "tercer puesto"},
    "verdict": {"intact": "íntegro", "tampered": "alterado", "unsealed": "sin sello",
                "unreadable": "ilegible", "unchecked": "sin verificar"},
}  # fmt: skip

#: What a spreadsheet takes for a formula at the start of a cell.
_FORMULA_START: Final = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: str | int | bool | None, excel: bool) -> str | int:
    if value is None:
        return ""
    if isinstance(value, bool):
        return ("sí" if value else "no") if excel else ("true" if value else "false")
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def to_csv(rows: Iterable[Row], fields: tuple[str, ...], *, excel: bool = False) -> str:
    """Rows as CSV with a header (``None`` an empty cell, booleans ``true``/``false``;
    a text that a spreadsheet would run as a formula starts with ``'``).

    ``excel``: as a Spanish spreadsheet opens it, ``;``-separated, a BOM, CRLF,
    ``sí``/``no``, the headers (``EXCEL_HEADERS``) and the status words
    (``EXCEL_WORDS``) in Spanish.

    >>> to_csv([{"name": "=HYPERLINK(1)", "won": -1, "ok": True}], ("name", "won", "ok"))
    "name,won,ok\\n'=HYPERLINK(1),-1,true\\n"
    >>> to_csv([{"name": "Atlético", "ok": False}], ("name", "ok"), excel=True)
    '\\ufeffequipo;ok\\r\\nAtlético;no\\r\\n'
    """
    buf = io.StringIO()
    if excel:
        buf.write("\ufeff")
    writer = csv.DictWriter(
        buf,
        fieldnames=fields,
        delimiter=";" if excel else ",",
        lineterminator="\r\n" if excel else "\n",
    )
    if excel:  # the headers and the status words in Spanish
        writer.writerow({f: EXCEL_HEADERS.get(f, f) for f in fields})
    else:
        writer.writeheader()
    for row in rows:
        if excel:
            row = {k: EXCEL_WORDS[k].get(v, v) if k in EXCEL_WORDS and isinstance(v, str)
                   else v for k, v in row.items()}  # fmt: skip
        writer.writerow({k: _cell(v, excel) for k, v in row.items()})
    return buf.getvalue()


def to_json(t: Tournament, key: str, rows: list[Row]) -> str:
    """``{"tournament": name, "round": n, "finished": bool, key: rows}``."""
    data = {"tournament": t.name, "round": t.round, "finished": t.finished, key: rows}
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


#: The exports by file name: what each holds and its columns.
EXPORTS: Final[Mapping[str, tuple[str, tuple[str, ...]]]] = {
    "standings": ("standings", STANDING_FIELDS),
    "matches": ("matches", MATCH_FIELDS),
    "games": ("games", GAME_FIELDS),
}


def export_text(
    name: str,
    t: Tournament,
    results: Iterable[GameResult] = (),
    table: Iterable[Standing] | None = None,
) -> str:
    """The export called ``name`` (``standings.csv``, ``standings.excel.csv``,
    ``games.json``, ...).

    Raises :class:`KeyError` for any other name."""
    stem, dot, kind = name.rpartition(".")
    excel = kind == "csv" and stem.endswith(".excel")
    stem = stem.removesuffix(".excel")
    if not dot or stem not in EXPORTS or kind not in ("csv", "json"):
        raise KeyError(name)
    key, fields = EXPORTS[stem]
    if stem == "standings":
        rows = standing_rows(t, table)
    elif stem == "matches":
        rows = match_rows(t)
    else:
        rows = game_rows(t, results)
    return to_csv(rows, fields, excel=excel) if kind == "csv" else to_json(t, key, rows)


#: Every export's file name, as the desk writes them and serves them at /export/.
EXPORT_NAMES: Final = tuple(
    f"{stem}.{kind}" for stem in EXPORTS for kind in ("csv", "excel.csv", "json")
)


def write_exports(
    t: Tournament, folder: str | Path, results: Iterable[GameResult] = ()
) -> list[Path]:
    """Write the nine exports (:data:`EXPORT_NAMES`) into ``folder``, each atomically
    and only when the disk's copy differs from what the page would serve; their paths."""
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    judged = list(results)
    table = standings_of(t)
    paths = []
    for name in EXPORT_NAMES:
        path = target / name
        write_changed(path, export_text(name, t, judged, table).encode("utf-8"))
        paths.append(path)
    return paths


def write_changed(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, unless the file already holds exactly it."""
    try:
        same = path.read_bytes() == data
    except OSError:
        same = False
    if not same:
        atomic_write(path, data, fsync=False)
