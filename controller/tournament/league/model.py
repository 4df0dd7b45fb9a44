"""The league's values: clubs (the venues), entrants, the rules of its matches, the
fixture's matches and the chicos played in them.

Pure values (frozen dataclasses), no I/O, no clock: dates are given (the first
matchday's date and the days between matchdays), never read from a clock. Building a
:class:`League` checks it whole and raises a :class:`~.errors.LeagueError` subclass
whose message (Spanish) names what to fix.

Ids are topic-safe names (letters, digits, ``.``, ``_``, ``-``; 1 to 64, as
:data:`controller.tournament.wire.topics.ID_RE`): a club's id is its prefix on the central
broker (``league/<club>/``), an entrant's id (``e01``) is how the fixture names it.
Entrants are the competition's :class:`~controller.tournament.competition.model.Entrant`
values, their ``club`` being the id of the club they play home at.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field

from ...engine import HouseRules
from ..competition.model import Entrant, Pairing
from ..wire.topics import ID_RE
from .errors import (
    DuplicateClub,
    DuplicateLeagueEntrant,
    InvalidChico,
    InvalidClub,
    InvalidLeague,
    InvalidLeagueEntrant,
    InvalidLeagueRules,
    NotEnoughLeagueEntrants,
    UnknownClub,
)

__all__ = ["Chico", "Club", "League", "LeagueMatch", "LeagueRules", "check_id"]

#: A chico's best-of counts a league accepts (the first to best_of // 2 + 1 wins).
BEST_OF = (1, 3, 5, 7)
#: Longest gap between two matchdays (a season with a summer break still fits).
MAX_DAYS_BETWEEN = 366


def check_id(what: str, value: object, error: type[Exception] = InvalidLeague) -> str:
    """``value`` if it is a topic-safe id, else ``error`` saying what one looks like."""
    if not isinstance(value, str) or not ID_RE.fullmatch(value):
        raise error(
            f"{what} {value!r} no sirve: usá de 1 a 64 letras sin acento, dígitos, '.', "
            "'_' o '-', empezando con letra o dígito"
        )
    return value


@dataclass(frozen=True)
class Club:
    """A venue of the league: a bar or club with its own tables and broker."""

    id: str  # "bar-lopez": its prefix on the central broker, league/bar-lopez/
    name: str  # "Bar López"

    def __post_init__(self) -> None:
        check_id("El id de la sede", self.id, InvalidClub)
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidClub(f"La sede {self.id!r} necesita un nombre")


@dataclass(frozen=True)
class LeagueRules:
    """How every match of the league is played: the best of ``best_of`` chicos, each at
    the league's house rules (the same at every venue)."""

    best_of: int = 3
    house: HouseRules = field(default_factory=HouseRules)

    def __post_init__(self) -> None:
        if isinstance(self.best_of, bool) or self.best_of not in BEST_OF:
            raise InvalidLeagueRules(
                f"Al mejor de {self.best_of!r} chicos no se puede: elegí 1, 3, 5 o 7"
            )
        if not isinstance(self.house, HouseRules):
            raise InvalidLeagueRules("Las reglas de la casa de la liga no son reglas de mesa")

    @property
    def to_win(self) -> int:
        """Chicos that win a match: 2 of 3."""
        return self.best_of // 2 + 1

    @property
    def team_size(self) -> int:
        """Players per entrant: 1 (2 seats), 2 (4 seats) or 3 (6 seats)."""
        return self.house.players // 2

    @classmethod
    def from_text(cls, best_of: int, house: str) -> LeagueRules:
        """From the house rules as the ``table`` line writes them (``players=4 target=30``)."""
        options: dict[str, str] = {}
        for word in house.split():
            key, sep, value = word.partition("=")
            if not sep or not key or not value:
                raise InvalidLeagueRules(
                    f"Regla {word!r} mal escrita: va clave=valor, como players=4 o target=30"
                )
            options[key] = value
        try:
            rules = HouseRules.from_options(options)
        except ValueError as e:
            raise InvalidLeagueRules(f"Reglas de la casa que no sirven: {e}") from None
        return cls(best_of, rules)


@dataclass(frozen=True)
class LeagueMatch:
    """One match of the fixture: played at the home entrant's club on its matchday."""

    id: str  # "f03-m02": matchday 3, match 2 (what the table's seal binds as match=)
    matchday: int  # 1-based ("Fecha 3")
    date: datetime.date
    leg: int  # 1 (ida) or 2 (vuelta)
    pairing: Pairing  # home: team 0 at the table; away: team 1 (never None here)
    venue: str  # the home entrant's club id
    title: str = ""  # a season's phase names it ("Primera, grupo A, fecha 2"; "Semifinal")

    @property
    def home(self) -> str:
        return self.pairing.home

    @property
    def away(self) -> str:
        assert self.pairing.away is not None
        return self.pairing.away

    @property
    def label(self) -> str:
        if self.title:
            return self.title
        return f"Fecha {self.matchday} ({'ida' if self.leg == 1 else 'vuelta'})"


@dataclass(frozen=True)
class Chico:
    """One chico (game) of a match as its table proved it: who won (0 home, 1 away) and
    the points (tantos) of each side, home first."""

    winner: int
    points: tuple[int, int]

    def __post_init__(self) -> None:
        if isinstance(self.winner, bool) or self.winner not in (0, 1):
            raise InvalidChico(
                f"El ganador de un chico es 0 (local) o 1 (visitante), no {self.winner!r}"
            )
        if (
            not isinstance(self.points, tuple)
            or len(self.points) != 2
            or not all(
                isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in self.points
            )
        ):
            raise InvalidChico(
                f"Los tantos de un chico son dos números desde 0, no {self.points!r}"
            )
        if self.points[self.winner] < self.points[1 - self.winner]:
            raise InvalidChico(
                f"El ganador del chico no puede tener menos tantos que el otro: {self.points!r}"
            )


@dataclass(frozen=True)
class League:
    """The league: its clubs, its entrants (in registration order), the rules of its
    matches, and its calendar (matchday 1 on ``first_date``, then every
    ``days_between`` days)."""

    name: str
    clubs: tuple[Club, ...]
    entrants: tuple[Entrant, ...]
    rules: LeagueRules
    first_date: datetime.date
    days_between: int = 7
    #: The matches, when a season's phases set them (:mod:`.season`): regional groups and
    #: a final phase in one fixture; empty: the double round robin of all the entrants.
    schedule: tuple[LeagueMatch, ...] = ()

    def __post_init__(self) -> None:
        check_id("El nombre de la liga", self.name)
        if not isinstance(self.first_date, datetime.date):
            raise InvalidLeague("La primera fecha de la liga tiene que ser un día (año-mes-día)")
        if (
            isinstance(self.days_between, bool)
            or not isinstance(self.days_between, int)
            or not 1 <= self.days_between <= MAX_DAYS_BETWEEN
        ):
            raise InvalidLeague(
                f"Entre fecha y fecha van de 1 a {MAX_DAYS_BETWEEN} días, no {self.days_between!r}"
            )
        if not self.clubs:
            raise InvalidLeague("Una liga necesita al menos una sede")
        seen: set[str] = set()
        for club in self.clubs:
            if club.id in seen:
                raise DuplicateClub(f"Hay dos sedes con el id {club.id!r}")
            seen.add(club.id)
        ids: set[str] = set()
        for entrant in self.entrants:
            check_id("El id del equipo", entrant.id, InvalidLeagueEntrant)
            if entrant.id in ids:
                raise DuplicateLeagueEntrant(f"Hay dos equipos con el id {entrant.id!r}")
            ids.add(entrant.id)
            if entrant.club is None:
                raise InvalidLeagueEntrant(
                    f"El equipo {entrant.name!r} ({entrant.id}) no tiene sede: en la liga "
                    "cada equipo es local en una sede"
                )
            if entrant.club not in seen:
                raise UnknownClub(
                    f"El equipo {entrant.name!r} ({entrant.id}) es de la sede {entrant.club!r}, "
                    "que no está en la liga"
                )
            if entrant.players and len(entrant.players) != self.rules.team_size:
                raise InvalidLeagueEntrant(
                    f"El equipo {entrant.name!r} ({entrant.id}) tiene {len(entrant.players)} "
                    f"jugadores y en esta liga se juega de a {self.rules.team_size}"
                )
        if len(self.entrants) < 2:
            raise NotEnoughLeagueEntrants("Una liga necesita al menos dos equipos")
        ids_seen: set[str] = set()
        for m in self.schedule:
            if m.id in ids_seen:
                raise InvalidLeague(f"Hay dos partidos con el id {m.id!r}")
            ids_seen.add(m.id)
            if m.home not in ids or m.away not in ids or m.venue not in seen:
                raise InvalidLeague(f"El partido {m.id} nombra un equipo o una sede que no está")

    def club(self, club_id: str) -> Club:
        for club in self.clubs:
            if club.id == club_id:
                return club
        raise UnknownClub(f"La sede {club_id!r} no está en la liga {self.name}")

    def entrant(self, entrant_id: str) -> Entrant:
        for entrant in self.entrants:
            if entrant.id == entrant_id:
                return entrant
        raise InvalidLeagueEntrant(f"El equipo {entrant_id!r} no está en la liga {self.name}")

    @property
    def home_club(self) -> Mapping[str, str]:
        """Entrant id to the id of its club."""
        return {e.id: e.club for e in self.entrants if e.club is not None}

    def matchday_date(self, matchday: int) -> datetime.date:
        return self.first_date + datetime.timedelta(days=(matchday - 1) * self.days_between)
