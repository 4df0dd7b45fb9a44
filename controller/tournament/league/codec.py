"""The league described in its folder's ``league.toml`` (pure: from the file's text).

::

    [league]
    name = "liga-bares"
    central = "203.0.113.5:8884"       # written by add-venue the first time
    best_of = 3                         # chicos per match (1, 3, 5, 7)
    rules = "players=4 target=30"       # the league's house rules
    first_date = 2027-03-06             # matchday 1
    days_between = 7

    [[clubs]]
    id = "bar-lopez"
    name = "Bar López"

    [[entrants]]
    id = "e01"
    name = "Los del Fondo"
    club = "bar-lopez"
    players = ["Ana", "Beto"]
    seed = 1                            # optional

Without any ``[[entrants]]`` each club is one (a league of clubs, whose seasons
``temporadas/<año>/temporada.toml`` describes: :mod:`.season_store`).

Anything missing or wrong raises a :class:`~.errors.LeagueError` subclass saying what,
in Spanish.
"""

from __future__ import annotations

import datetime
import tomllib
from typing import Any

from ..competition.model import Entrant, Player
from .errors import InvalidClub, InvalidLeague, InvalidLeagueEntrant
from .model import Club, League, LeagueRules

__all__ = ["league_from_toml"]


def _text(table: dict[str, Any], key: str, where: str, error: type[Exception]) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise error(f"{where}: falta {key} (un texto)")
    return value


def league_from_toml(text: str, source: str = "league.toml") -> League:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InvalidLeague(f"{source} no es TOML válido: {e}") from None
    head = doc.get("league")
    if not isinstance(head, dict):
        raise InvalidLeague(f"{source}: falta la sección [league]")
    name = _text(head, "name", f"{source} [league]", InvalidLeague)
    best_of = head.get("best_of", 3)
    if not isinstance(best_of, int) or isinstance(best_of, bool):
        raise InvalidLeague(f"{source} [league]: best_of va como número (1, 3, 5 o 7)")
    rules = LeagueRules.from_text(best_of, str(head.get("rules", "")))
    first = head.get("first_date")
    if not isinstance(first, datetime.date) or isinstance(first, datetime.datetime):
        raise InvalidLeague(
            f"{source} [league]: first_date va como fecha sin comillas, p. ej. 2027-03-06"
        )
    days = head.get("days_between", 7)
    clubs = []
    for n, raw in enumerate(doc.get("clubs", []), start=1):
        if not isinstance(raw, dict):
            raise InvalidClub(f"{source}: la sede {n} no es una tabla [[clubs]]")
        where = f"{source}, sede {n}"
        clubs.append(
            Club(_text(raw, "id", where, InvalidClub), _text(raw, "name", where, InvalidClub))
        )
    entrants = []
    for n, raw in enumerate(doc.get("entrants", []), start=1):
        if not isinstance(raw, dict):
            raise InvalidLeagueEntrant(f"{source}: el equipo {n} no es una tabla [[entrants]]")
        where = f"{source}, equipo {n}"
        players = raw.get("players", [])
        if not isinstance(players, list) or not all(
            isinstance(p, str) and p.strip() for p in players
        ):
            raise InvalidLeagueEntrant(f"{where}: players va como lista de nombres")
        seed = raw.get("seed")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 1):
            raise InvalidLeagueEntrant(f"{where}: seed va como número desde 1")
        entrants.append(
            Entrant(
                _text(raw, "id", where, InvalidLeagueEntrant),
                _text(raw, "name", where, InvalidLeagueEntrant),
                tuple(Player(p) for p in players),
                club=_text(raw, "club", where, InvalidLeagueEntrant),
                seed=seed,
            )
        )
    if not entrants and "entrants" not in doc:  # a league of clubs (its seasons: season.py)
        entrants = [Entrant(c.id, c.name, (), club=c.id) for c in clubs]
    return League(name, tuple(clubs), tuple(entrants), rules, first, days)
