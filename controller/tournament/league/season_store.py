"""A season in the league's folder, and every season kept there.

::

    liga/temporadas/2027/temporada.toml   # what the organiser writes (below)
    liga/temporadas/2027/parejas.jsonl    # pairs named, changes asked and confirmed
    liga/temporadas/2027/desk/            # that season's league desk (journal, records)

``temporada.toml`` (the league's name, clubs and rules come from ``liga/league.toml``)::

    [season]
    number = 2027
    first_date = 2027-03-06
    days_between = 7          # optional
    roster_size = 4           # optional: players on each list
    movement = 1              # optional: clubs up and down between divisions

    [[divisions]]
    id = "primera"
    name = "Primera"
    final = "knockout"        # or "group" (then final_venue = "bar-lopez")
    final_size = 4

    [[divisions.groups]]
    id = "norte"
    name = "Grupo Norte"
    clubs = ["bar-lopez", "club-sur"]

    [[rosters]]
    club = "bar-lopez"
    players = [["ana-lopez", "Ana López"], ["beto-diaz", "Beto Díaz"]]

``parejas.jsonl`` is written only by the commands (:func:`name_pair`,
:func:`ask_substitution`, :func:`confirm_substitution`), one JSON line each, never
rewritten: a pair named again before its match starts replaces the earlier one; a
change counts from its confirmation on. Every error is a :class:`SeasonStoreError`
(Spanish).
"""

from __future__ import annotations

import datetime
import json
import os
import tomllib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..desk.journal import NAME as JOURNAL
from ..desk.journal import JournalError, journal_key, read_entries
from .collect import Collected, collect
from .errors import LeagueError
from .ledger import check_from_body, fold_conflicts
from .model import Chico, League
from .rosters import Lineup, Roster, RosterPlayer, Substitution
from .season import (
    Division,
    FinalFormat,
    Group,
    Season,
    next_season,
    season_league,
    season_matches,
)
from .season_web import SeasonRecord, write_site
from .stats import counted_texts

__all__ = [
    "SeasonStoreError",
    "ask_substitution",
    "confirm_substitution",
    "load_season",
    "name_pair",
    "season_count",
    "season_numbers",
    "season_toml",
    "write_league_site",
    "write_next_season",
]


class SeasonStoreError(LeagueError):
    """A season's folder that cannot be read or a command it refuses."""


def _dir(root: Path, number: int) -> Path:
    return root / "temporadas" / str(number)


def season_numbers(root: str | os.PathLike[str]) -> list[int]:
    base = Path(root) / "temporadas"
    if not base.is_dir():
        return []
    return sorted(int(p.name) for p in base.iterdir()
                  if p.name.isdigit() and (p / "temporada.toml").is_file())  # fmt: skip


def _base(league: League, text: str, source: str) -> Season:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SeasonStoreError(f"{source} no es TOML válido: {e}") from None
    head = doc.get("season")
    if not isinstance(head, dict):
        raise SeasonStoreError(f"{source}: falta la sección [season]")

    def number(table: dict[str, Any], key: str, default: int | None = None) -> int:
        value = table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise SeasonStoreError(f"{source}: {key} va como número entero")
        return value

    def word(table: dict[str, Any], key: str, where: str) -> str:
        value = table.get(key)
        if not isinstance(value, str) or not value.strip():
            raise SeasonStoreError(f"{source}, {where}: falta {key} (un texto)")
        return value

    divisions = []
    for n, d in enumerate(doc.get("divisions", []), start=1):
        if not isinstance(d, dict):
            raise SeasonStoreError(f"{source}: la división {n} no es una tabla [[divisions]]")
        where = f"división {n}"
        groups = []
        for k, g in enumerate(d.get("groups", []), start=1):
            clubs = g.get("clubs") if isinstance(g, dict) else None
            if not isinstance(clubs, list) or not all(isinstance(c, str) for c in clubs):
                raise SeasonStoreError(f"{source}, {where}, grupo {k}: clubs va como lista de ids")
            groups.append(Group(word(g, "id", f"{where}, grupo {k}"),
                                word(g, "name", f"{where}, grupo {k}"), tuple(clubs)))  # fmt: skip
        final = d.get("final", "knockout")
        if final not in {f.value for f in FinalFormat}:
            raise SeasonStoreError(f"{source}, {where}: final va \"knockout\" (eliminación) o "
                                   "\"group\" (grupo final en una sede)")  # fmt: skip
        venue = d.get("final_venue")
        if venue is not None and not isinstance(venue, str):
            raise SeasonStoreError(f"{source}, {where}: final_venue va como el id de una sede")
        divisions.append(Division(word(d, "id", where), word(d, "name", where), tuple(groups),
                                  number(d, "final_size", 4), FinalFormat(final),
                                  venue))  # fmt: skip
    rosters = []
    for n, r in enumerate(doc.get("rosters", []), start=1):
        players = r.get("players") if isinstance(r, dict) else None
        if not isinstance(players, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
            for p in players
        ):
            raise SeasonStoreError(
                f"{source}, lista {n}: players va como [[\"id\", \"Nombre\"], ...]"
            )
        rosters.append(Roster(word(r, "club", f"lista {n}"),
                              tuple(RosterPlayer(p[0], p[1]) for p in players)))  # fmt: skip
    first = head.get("first_date")
    if not isinstance(first, datetime.date) or isinstance(first, datetime.datetime):
        raise SeasonStoreError(
            f"{source}: first_date va como fecha sin comillas, p. ej. 2027-03-06"
        )
    return Season(league.name, number(head, "number"), league.clubs, tuple(divisions),
                  league.rules, first, number(head, "days_between", 7),
                  number(head, "roster_size", 4), tuple(rosters),
                  movement=number(head, "movement", 1))  # fmt: skip


def _lines(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as e:
        raise SeasonStoreError(f"No se puede leer {path}: {e}") from None
    out = []
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except json.JSONDecodeError:
            raise SeasonStoreError(f"{path}, línea {n}: no es JSON") from None
        if isinstance(item, dict):
            out.append(item)
    return out


def _apply(season: Season, lines: Sequence[dict[str, Any]]) -> Season:
    lineups: dict[tuple[str, str], Lineup] = {}
    subs: list[Substitution] = []
    for item in lines:
        kind = item.get("kind")
        if kind == "pair":
            lineup = Lineup(str(item["match"]), str(item["club"]),
                            tuple(str(p) for p in item["players"]))  # fmt: skip
            lineups[(lineup.match, lineup.club)] = lineup
        elif kind == "sub":
            subs.append(Substitution(str(item["match"]), str(item["club"]),
                                     int(item["from_chico"]), str(item["out"]),
                                     str(item["into"])))  # fmt: skip
        elif kind == "confirm":
            for i, s in enumerate(subs):
                if (s.match, s.club, s.from_chico) == (item["match"], item["club"],
                                                       item["from_chico"]):  # fmt: skip
                    subs[i] = replace(s, confirmed=True)
    return Season(season.league, season.number, season.clubs, season.divisions, season.rules,
                  season.first_date, season.days_between, season.roster_size, season.rosters,
                  tuple(lineups.values()), tuple(subs), season.movement)  # fmt: skip


def _apply_checked(season: Season, lines: Sequence[dict[str, Any]], path: Path) -> Season:
    try:
        return _apply(season, lines)
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, LeagueError):
            raise
        raise SeasonStoreError(f"{path}: una línea que no se puede leer ({e})") from None


def load_season(root: str | os.PathLike[str], league: League, number: int) -> Season:
    """The season ``number`` of the league folder ``root``, with its pairs and changes."""
    folder = _dir(Path(root), number)
    path = folder / "temporada.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SeasonStoreError(f"No hay temporada {number}: falta {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise SeasonStoreError(f"No se puede leer {path}: {e}") from None
    base = _base(league, text, str(path))
    if base.number != number:
        raise SeasonStoreError(f"{path} dice temporada {base.number}, no {number}")
    return _apply_checked(base, _lines(folder / "parejas.jsonl"), folder / "parejas.jsonl")


def season_count(root: str | os.PathLike[str], league: League, season: Season,
                 secret: bytes) -> Collected:  # fmt: skip
    """What the season's league desk counted (its journal; nothing when it never ran)."""
    desk = _dir(Path(root), season.number) / "desk"
    if not desk.is_dir():
        return Collected({}, (), (), 0)
    try:
        entries = read_entries(desk / JOURNAL, league.name, journal_key(secret, league.name))
    except JournalError as e:
        raise SeasonStoreError(f"El diario de la temporada {season.number} no sirve: {e}") from None
    checks = [check_from_body(e.body) for e in entries if e.body.get("kind") == "record"]
    conflicts = fold_conflicts(e.body for e in entries)
    played: dict[str, tuple[Chico, ...]] = {}
    while True:  # each phase the count decides adds its matches
        league_now = season_league(season, played)
        known = {m.id for m in league_now.schedule}
        count = collect(league_now, [c for c in checks if not c.counted or c.match in known],
                        conflicts)  # fmt: skip
        if dict(count.played) == played:
            return count
        played = dict(count.played)


def _add(root: Path, number: int, item: dict[str, Any]) -> None:
    path = _dir(root, number) / "parejas.jsonl"
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(item, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())


def _match(season: Season, played: dict[str, tuple[Chico, ...]], match: str, club: str) -> None:
    known = {m.id: m for m in season_matches(season, played)}
    m = known.get(match)
    if m is None:
        raise SeasonStoreError(f"El partido {match!r} no está (todavía) en la temporada "
                               f"{season.number}")  # fmt: skip
    if club not in (m.home, m.away):
        raise SeasonStoreError(f"{club} no juega {match} ({m.home} contra {m.away})")


def name_pair(root: str | os.PathLike[str], league: League, secret: bytes, number: int,
              match: str, club: str, players: Sequence[str]) -> Season:  # fmt: skip
    """``club`` names its pair for ``match``; refused once a chico of it was counted."""
    base = Path(root)
    season = load_season(base, league, number)
    played = dict(season_count(base, league, season, secret).played)
    _match(season, played, match, club)
    if played.get(match):
        raise SeasonStoreError(f"{match} ya empezó: la pareja se nombra antes; entre chicos, "
                               "se pide un cambio")  # fmt: skip
    item = {"kind": "pair", "match": match, "club": club, "players": list(players)}
    checked = _apply(season, [*_lines(_dir(base, number) / "parejas.jsonl"), item])
    _add(base, number, item)
    return checked


def ask_substitution(root: str | os.PathLike[str], league: League, secret: bytes, number: int,
                     match: str, club: str, from_chico: int, out: str,
                     into: str) -> Season:  # fmt: skip
    """``club`` asks to change ``out`` for ``into`` from chico ``from_chico`` (it counts
    once the organiser confirms it); refused when that chico was already counted."""
    base = Path(root)
    season = load_season(base, league, number)
    played = dict(season_count(base, league, season, secret).played)
    _match(season, played, match, club)
    if len(played.get(match, ())) >= from_chico:
        raise SeasonStoreError(f"El chico {from_chico} de {match} ya se jugó: el cambio va "
                               "para un chico que no empezó")  # fmt: skip
    item = {"kind": "sub", "match": match, "club": club, "from_chico": from_chico,
            "out": out, "into": into}  # fmt: skip
    checked = _apply(season, [*_lines(_dir(base, number) / "parejas.jsonl"), item])
    _add(base, number, item)
    return checked


def confirm_substitution(root: str | os.PathLike[str], league: League, secret: bytes,
                         number: int, match: str, club: str,
                         from_chico: int) -> Season:  # fmt: skip
    """The organiser confirms a change asked for; refused once its chico was counted."""
    base = Path(root)
    season = load_season(base, league, number)
    if not any((s.match, s.club, s.from_chico) == (match, club, from_chico)
               for s in season.substitutions):  # fmt: skip
        raise SeasonStoreError(f"{club} no pidió un cambio en {match} desde el chico {from_chico}")
    played = dict(season_count(base, league, season, secret).played)
    if len(played.get(match, ())) >= from_chico:
        raise SeasonStoreError(f"El chico {from_chico} de {match} ya se jugó sin el cambio")
    item = {"kind": "confirm", "match": match, "club": club, "from_chico": from_chico}
    checked = _apply(season, [*_lines(_dir(base, number) / "parejas.jsonl"), item])
    _add(base, number, item)
    return checked


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string is a JSON string


def season_toml(season: Season) -> str:
    """``temporada.toml`` for ``season`` (its divisions, groups, final phases and lists;
    pairs and changes go in ``parejas.jsonl``)."""
    out = ["# Temporada escrita por truco-table league season-next: revisala antes de jugar",
           "[season]", f"number = {season.number}", f"first_date = {season.first_date}",
           f"days_between = {season.days_between}", f"roster_size = {season.roster_size}",
           f"movement = {season.movement}", ""]  # fmt: skip
    for d in season.divisions:
        out += ["[[divisions]]", f"id = {_q(d.id)}", f"name = {_q(d.name)}",
                f"final = {_q(d.final.value)}", f"final_size = {d.final_size}"]  # fmt: skip
        if d.final_venue is not None:
            out.append(f"final_venue = {_q(d.final_venue)}")
        out.append("")
        for g in d.groups:
            clubs = ", ".join(_q(c) for c in g.clubs)
            out += ["[[divisions.groups]]", f"id = {_q(g.id)}", f"name = {_q(g.name)}",
                    f"clubs = [{clubs}]", ""]  # fmt: skip
    for r in season.rosters:
        players = ", ".join(f"[{_q(p.id)}, {_q(p.name)}]" for p in r.players)
        out += ["[[rosters]]", f"club = {_q(r.club)}", f"players = [{players}]", ""]
    return "\n".join(out)


def write_next_season(root: str | os.PathLike[str], league: League, secret: bytes,
                      number: int, first_date: datetime.date) -> Path:  # fmt: skip
    """``temporadas/<number+1>/temporada.toml`` after season ``number`` ended: its
    promotions and relegations applied (:func:`.season.next_season`), each club's list
    copied as a start (edit it: each club registers its list again). Refused while the
    season is not over or when the next one exists."""
    base = Path(root)
    season = load_season(base, league, number)
    count = season_count(base, league, season, secret)
    try:
        nxt = next_season(season, count.played, number=number + 1, first_date=first_date)
    except LeagueError as e:
        raise SeasonStoreError(str(e)) from None
    nxt = replace(nxt, rosters=season.rosters, _rosters={})
    path = _dir(base, number + 1) / "temporada.toml"
    if path.exists():
        raise SeasonStoreError(f"Ya existe {path}: no se pisa")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(season_toml(nxt), encoding="utf-8")
    return path


def write_league_site(root: str | os.PathLike[str], league: League, secret: bytes,
                      out: str | os.PathLike[str]) -> list[Path]:  # fmt: skip
    """The league's public pages with every season kept in ``root`` (the history)."""
    base = Path(root)
    records = []
    for n in season_numbers(base):
        season = load_season(base, league, n)
        count = season_count(base, league, season, secret)
        texts = counted_texts(_dir(base, n) / "desk", count)
        records.append(SeasonRecord(season, count.played, texts))
    if not records:
        raise SeasonStoreError(f"En {base / 'temporadas'} no hay ninguna temporada")
    return write_site(Path(out), records)
