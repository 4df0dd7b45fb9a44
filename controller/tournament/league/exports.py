"""The league's exports: its standings and matches (the tournament's own,
:mod:`..desk.exports`, of the season as a round robin) and its games.

``games.*``: one row per chico the league desk counted (``counted`` true, ``verdict``
``counted``; in fixture order, a match's chicos as they came), then one per record it
collected and did not count (``counted`` false), as they came: ``verdict`` is the
league's check (``forged``, ``unsealed``, ``not-a-match``, ``wrong-venue``,
``unknown-venue``, ``problems``) or ``surplus`` for a sound record the count did not take
(another copy of a game already collected, a chico already counted, a match already
decided), and ``reason`` says why in Spanish. The columns are the tournament's games'
plus ``venue`` and ``reason`` (:data:`LEAGUE_GAME_FIELDS`); a record of no match of the
fixture has its match's columns empty, and the score and winner are given only for a
record whose seal and rules the check accepted (a forged record's claims are not shown).

Each comes as ``.csv`` (for programs), ``.excel.csv`` (a Spanish spreadsheet) and
``.json``, with the tournament's cell rules (a text that starts like a formula gets a
``'``). The league desk serves them at ``/export/<name>`` and writes them into its
folder (:func:`write_league_exports`, atomically, only what changed). Pure but for that.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from ..competition.model import Match, Tournament
from ..desk.exports import GAME_FIELDS, Row, export_text, to_csv, to_json, write_changed
from .collect import Collected
from .model import League
from .standings import season
from .verify import LeagueRecordCheck, RecordVerdict

__all__ = [
    "EXPORT_NAMES",
    "LEAGUE_GAME_FIELDS",
    "SURPLUS",
    "league_export_text",
    "league_game_rows",
    "write_league_exports",
]

_TABLE = GAME_FIELDS.index("table")
_AFTER_VERDICT = GAME_FIELDS.index("verdict") + 1
#: The tournament's games' columns, with the venue before the table and the reason after
#: the verdict.
LEAGUE_GAME_FIELDS: Final = (
    *GAME_FIELDS[:_TABLE],
    "venue",
    *GAME_FIELDS[_TABLE:_AFTER_VERDICT],
    "reason",
    *GAME_FIELDS[_AFTER_VERDICT:],
)

#: The verdict of a sound record that the count did not take.
SURPLUS: Final = "surplus"

#: Every export's file name (served at /export/, written into the desk's folder).
EXPORT_NAMES: Final = tuple(
    f"{stem}.{kind}"
    for stem in ("standings", "matches", "games")
    for kind in ("csv", "excel.csv", "json")
)


def _row(
    t: Tournament,
    by_id: dict[str, Match],
    check: LeagueRecordCheck,
    counted: bool,
    verdict: str,
    reason: str,
) -> Row:
    match = by_id.get(check.match) if check.match is not None else None
    names = {e.id: e.name for e in t.entrants}
    winner: str | None = None
    if match is not None and check.chico is not None:
        winner = match.pairing.home if check.chico.winner == 0 else match.pairing.away
    points = check.chico.points if check.chico is not None else (None, None)
    return {
        "game": check.game,
        "match": check.match,
        "round": match.round if match is not None else None,
        "label": match.label if match is not None else None,
        "venue": check.venue,
        "table": check.table,
        "home": match.pairing.home if match is not None else None,
        "away": match.pairing.away if match is not None else None,
        "score_home": points[0],
        "score_away": points[1],
        "winner": winner,
        "winner_name": names.get(winner) if winner is not None else None,
        "counted": counted,
        "verdict": verdict,
        "reason": reason,
        "record_sha256": check.record_sha256,
    }


def league_game_rows(league: League, count: Collected) -> list[Row]:
    """Every counted chico, in fixture order (a match's chicos as they came), then every
    record not counted, as it came."""
    t = season(league, count)
    by_id = {m.id: m for m in t.matches}
    order = {m.id: i for i, m in enumerate(t.matches)}
    arrived = sorted(
        enumerate(count.counted), key=lambda ic: (order.get(ic[1].match or "", len(order)), ic[0])
    )
    out = [_row(t, by_id, c, True, RecordVerdict.COUNTED.value, "") for _, c in arrived]
    for flag in count.flags:
        check = flag.check
        verdict = SURPLUS if check.counted else check.verdict.value
        out.append(_row(t, by_id, check, False, verdict, flag.reason))
    return out


def league_export_text(name: str, league: League, count: Collected) -> str:
    """The export called ``name`` (one of :data:`EXPORT_NAMES`); :class:`KeyError` else."""
    if name not in EXPORT_NAMES:
        raise KeyError(name)
    t = season(league, count)
    stem, _, kind = name.partition(".")
    if stem != "games":
        return export_text(name, t)
    rows = league_game_rows(league, count)
    if kind == "json":
        return to_json(t, "games", rows)
    return to_csv(rows, LEAGUE_GAME_FIELDS, excel=kind == "excel.csv")


def write_league_exports(league: League, count: Collected, folder: str | Path) -> list[Path]:
    """Write the nine exports into ``folder``, each atomically and only when the disk's
    copy differs from what the page serves; their paths."""
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in EXPORT_NAMES:
        path = target / name
        write_changed(path, league_export_text(name, league, count).encode("utf-8"))
        paths.append(path)
    return paths
