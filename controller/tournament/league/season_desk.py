"""The organiser's side of a season at the league desk: the pairs, the changes between
chicos and the venues' tables told their matches.

A :class:`SeasonOffice` is built by :func:`.desk.desk_from_folder` for ``league desk
--season N``. The league desk's page (:mod:`.web`, ``/organizador``, the organiser's key:
:mod:`..desk.sessions`) sends it one order at a time (:meth:`SeasonOffice.act`):

``pair``
    a club names its pair for a match before it starts (:func:`.season_store.name_pair`);
``sub`` / ``confirm``
    a club asks to change a player between chicos; the organiser confirms it
    (:func:`.season_store.ask_substitution`, :func:`.season_store.confirm_substitution`);
``assign``
    a table of the match's venue plays it (``venue``, ``table``, ``match``).

Each table given a match is told it by the league desk (:meth:`.desk.LeagueDesk.
publish_assignment`: signed with that table's key, retained, through the central broker
and the venue's bridge): the chico to play next and the names of the pair of each side
after the changes confirmed (:func:`.assign.league_assignment`). It is told again, with a
higher counter, whenever that changes (a chico counted, a pair named again, a change
confirmed), and told it is free once the match is decided. Which table plays which
match is kept in ``temporadas/<n>/desk/asignaciones.json`` (with the last counter), so
a restarted league desk goes on telling them. Every refusal is a
:class:`~.season_store.SeasonStoreError` or a :class:`~.errors.LeagueError`, in Spanish.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..wire.keys import write_private
from ..wire.messages import Assignment
from .assign import league_assignment
from .model import Chico, League
from .season import Season, season_matches
from .season_store import (
    SeasonStoreError,
    ask_substitution,
    confirm_substitution,
    load_season,
    name_pair,
)
from .standings import match_result

__all__ = ["ASSIGNMENTS_FILE", "SeasonOffice"]

log = logging.getLogger(__name__)

ASSIGNMENTS_FILE = "asignaciones.json"


def _text(body: Mapping[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value.strip():
        raise SeasonStoreError(f"Falta {key}")
    return value.strip()


class SeasonOffice:
    """See the module docstring. ``root``: the league's folder; ``league``: the league
    of ``league.toml``; ``played``: what the league desk counted so far; ``publish``:
    :meth:`.desk.LeagueDesk.publish_assignment`."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        league: League,
        secret: bytes,
        number: int,
        *,
        played: Callable[[], Mapping[str, tuple[Chico, ...]]],
        publish: Callable[[str, Assignment], object],
        busy: Callable[[str, str], bool] = lambda venue, table: False,
    ) -> None:
        self.root = Path(root)
        self.league = league
        self.secret = secret
        self.number = number
        self.played = played
        self.publish = publish
        #: Whether a venue's table is in the middle of a game (dealt, not won yet), as
        #: the league desk follows its events.
        self.busy = busy
        self.path = self.root / "temporadas" / str(number) / "desk" / ASSIGNMENTS_FILE
        self.lock = threading.Lock()
        #: (venue, table): the match it plays
        self.tables: dict[tuple[str, str], str] = {}
        #: (venue, table): what it was told last (None: free)
        self.told: dict[tuple[str, str], Assignment] = {}
        self.n = 0
        self._load()

    # ------------------------------------------------------------------ the file

    def _load(self) -> None:
        try:
            obj = json.loads(self.path.read_text(encoding="utf-8"))
            self.n = int(obj["n"])
            for where, match in dict(obj["tables"]).items():
                venue, table = str(where).split("/", 1)
                self.tables[(venue, table)] = str(match)
        except FileNotFoundError:
            return
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise SeasonStoreError(f"{self.path} no se puede leer ({e})") from None

    def _save(self) -> None:
        obj = {"n": self.n, "tables": {f"{v}/{t}": m for (v, t), m in sorted(self.tables.items())}}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_private(self.path, (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8"))

    def _next_n(self) -> int:
        # above every earlier one, also across restarts (the clock in microseconds)
        self.n = max(self.n + 1, time.time_ns() // 1000)
        return self.n

    # ------------------------------------------------------------------ reading

    def season(self) -> Season:
        return load_season(self.root, self.league, self.number)

    def venue_tables(self, venue: str) -> list[str]:
        """The tables ``league add-venue`` wrote for ``venue``."""
        folder = self.root / "venues" / venue / "tables"
        if not folder.is_dir():
            return []
        return sorted(p.name for p in folder.iterdir() if p.is_dir())

    def table_of(self, match: str) -> tuple[str, str] | None:
        with self.lock:
            return next((w for w, m in self.tables.items() if m == match), None)

    # ------------------------------------------------------------------ orders

    def act(self, body: Mapping[str, Any]) -> str:
        """One order of the organiser's page; what was done (Spanish). Raises
        :class:`SeasonStoreError` (or another :class:`~.errors.LeagueError`) with the
        reason when it is refused."""
        action = body.get("action")
        match = _text(body, "match")
        if action == "assign":
            return self.assign(_text(body, "venue"), _text(body, "table"), match)
        club = _text(body, "club")
        on = self.table_of(match)
        playing = on is not None and self.busy(*on)
        if action == "pair":
            if playing and on is not None:
                raise SeasonStoreError(f"{match} ya empezó: la mesa {on[1]} está jugando un "
                                       "chico; entre chicos, se pide un cambio")  # fmt: skip
            players = body.get("players")
            if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
                raise SeasonStoreError("Faltan los jugadores de la pareja")
            name_pair(self.root, self.league, self.secret, self.number, match, club,
                      [p.strip() for p in players])  # fmt: skip
            self.refresh()
            return f"{club} nombró su pareja para {match}"
        chico = body.get("from_chico")
        if isinstance(chico, str) and chico.strip().isdigit():
            chico = int(chico)
        if isinstance(chico, bool) or not isinstance(chico, int):
            raise SeasonStoreError("Falta desde qué chico (un número)")
        if playing and action in ("sub", "confirm") and on is not None:
            now = len(self.played().get(match, ())) + 1  # the chico at the table
            if chico <= now:
                raise SeasonStoreError(
                    f"El chico {now} de {match} se está jugando en la mesa {on[1]}: el "
                    "cambio va para un chico que no empezó"
                )
        if action == "sub":
            out, into = _text(body, "out"), _text(body, "into")
            ask_substitution(self.root, self.league, self.secret, self.number, match, club,
                             chico, out, into)  # fmt: skip
            return f"{club} pidió el cambio en {match} desde el chico {chico}: falta confirmarlo"
        if action == "confirm":
            confirm_substitution(self.root, self.league, self.secret, self.number, match,
                                 club, chico)  # fmt: skip
            self.refresh()
            return f"Cambio confirmado: {club} en {match} desde el chico {chico}"
        raise SeasonStoreError(f"No hay una orden {str(action)[:40]!r}")

    def assign(self, venue: str, table: str, match: str) -> str:
        """Table ``table`` of ``venue`` plays ``match`` (a match of that venue, not
        decided); a table that had another match is free of it, and the match leaves the
        table it was on."""
        season = self.season()
        played = self.played()
        known = {m.id: m for m in season_matches(season, played)}
        m = known.get(match)
        if m is None:
            raise SeasonStoreError(f"El partido {match!r} no está (todavía) en la temporada")
        if m.venue != venue:
            raise SeasonStoreError(f"{match} se juega en {season.club(m.venue).name}, no en "
                                   f"la sede {venue}")  # fmt: skip
        if table not in self.venue_tables(venue):
            raise SeasonStoreError(f"La sede {venue} no tiene una mesa {table!r}")
        if match_result(season.rules, m, played.get(match, ())).winner is not None:
            raise SeasonStoreError(f"{match} ya terminó")
        with self.lock:
            for where, other in list(self.tables.items()):
                if other == match and where != (venue, table):
                    del self.tables[where]  # moved: that table is free
            self.tables[(venue, table)] = match
            self._save()
        self.refresh()
        return f"La mesa {table} de {season.club(venue).name} juega {match}"

    # ------------------------------------------------------------------ the tables

    def refresh(self, *, again: bool = False) -> list[Assignment]:
        """Tell each table what changed since it was told last (``again``: everything,
        as after a connection); returns what was sent."""
        try:
            season = self.season()
        except SeasonStoreError as e:
            log.error("league desk: the season does not read: %s", e)
            return []
        played = self.played()
        known = {m.id: m for m in season_matches(season, played)}
        sent = []
        with self.lock:
            wanted: dict[tuple[str, str], Assignment] = {}
            for (venue, table), match in list(self.tables.items()):
                m = known.get(match)
                decided = m is None or (
                    match_result(season.rules, m, played.get(match, ())).winner is not None
                )
                if decided:
                    del self.tables[(venue, table)]
                    wanted[(venue, table)] = Assignment(table, 0, None)
                else:
                    wanted[(venue, table)] = league_assignment(season, played, match, table, 0)
            for where, told in self.told.items():  # a table the match moved from: free
                if where not in wanted and told.match is not None:
                    wanted[where] = Assignment(where[1], 0, None)
            for where, a in wanted.items():
                before = self.told.get(where)
                if before is not None and _same(before, a):
                    if again:  # the same one (its counter too): a table that has it ignores it
                        sent.append((where[0], before))
                    continue
                if before is None and a.match is None and not again:
                    continue
                a = Assignment(a.table, self._next_n(), a.match, a.label, a.home, a.away,
                               a.chico, a.best_of, a.players)  # fmt: skip
                self.told[where] = a
                sent.append((where[0], a))
            self._save()
        for venue, a in sent:
            self.publish(venue, a)
        return [a for _, a in sent]


def _same(a: Assignment, b: Assignment) -> bool:
    return a.payload() | {"n": 0} == b.payload() | {"n": 0}
