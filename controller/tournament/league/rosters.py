"""Clubs' lists of players (la "lista de buena fe"), the pair each club names for a
match, and a substitution between chicos with the organiser's confirmation.

Pure values, checked whole: a club registers a list of ``size`` players (4 by default,
configurable per season); a player is on one club's list in a season; before a match
starts each club names its pair (``team_size`` players of its list, in seat order: the
home pair sits at seats 0 and 2, the away pair at 1 and 3); between two chicos a club
may change one player for another of its list, which counts only once the league's
organiser confirmed it. :func:`side_players` says who played each chico, which is what
ratings and statistics read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .errors import LeagueError
from .model import check_id

__all__ = [
    "ROSTER_SIZE",
    "InvalidLineup",
    "InvalidRoster",
    "Lineup",
    "Roster",
    "RosterPlayer",
    "Substitution",
    "check_lineup",
    "check_rosters",
    "check_substitution",
    "seats_of",
    "side_players",
]

#: Players on a club's list unless the season says otherwise.
ROSTER_SIZE = 4


class InvalidRoster(LeagueError):
    """A club's list that does not hold (size, a player in two lists, a bad id)."""


class InvalidLineup(LeagueError):
    """A pair or a substitution that does not hold."""


@dataclass(frozen=True)
class RosterPlayer:
    """A player of a club's list: ``id`` (topic-safe, stable across seasons: ratings
    follow it) and the name the pages and the seats show."""

    id: str  # "ana-lopez"
    name: str  # "Ana López"

    def __post_init__(self) -> None:
        check_id("El id del jugador", self.id, InvalidRoster)
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidRoster(f"El jugador {self.id!r} necesita un nombre")


@dataclass(frozen=True)
class Roster:
    """A club's list of players for the season."""

    club: str
    players: tuple[RosterPlayer, ...]

    def has(self, player: str) -> bool:
        return any(p.id == player for p in self.players)


def check_rosters(
    rosters: Iterable[Roster], clubs: Iterable[str], *, size: int, team_size: int
) -> dict[str, Roster]:
    """The lists by club, checked: each of a club of the season, at most one per club,
    from ``team_size`` to ``size`` players, no player twice in the season."""
    known = set(clubs)
    if isinstance(size, bool) or not isinstance(size, int) or not team_size <= size <= 12:
        raise InvalidRoster(f"La lista de buena fe va de {team_size} a 12 jugadores, no {size!r}")
    out: dict[str, Roster] = {}
    owner: dict[str, str] = {}
    for roster in rosters:
        if roster.club not in known:
            raise InvalidRoster(
                f"La lista es de la sede {roster.club!r}, que no está en la temporada"
            )
        if roster.club in out:
            raise InvalidRoster(f"La sede {roster.club!r} tiene dos listas de buena fe")
        if not team_size <= len(roster.players) <= size:
            raise InvalidRoster(
                f"La lista de {roster.club} tiene {len(roster.players)} jugadores: "
                f"van de {team_size} a {size}"
            )
        for p in roster.players:
            if p.id in owner:
                where = owner[p.id]
                raise InvalidRoster(
                    f"{p.name} ({p.id}) ya está en la lista de {where}: un jugador es de una "
                    "sola sede por temporada"
                )
            owner[p.id] = roster.club
        out[roster.club] = roster
    return out


@dataclass(frozen=True)
class Lineup:
    """The pair a club names for a match, before it starts (seat order)."""

    match: str
    club: str
    players: tuple[str, ...]


@dataclass(frozen=True)
class Substitution:
    """``out`` leaves and ``into`` plays from chico ``from_chico`` on (2 or later: between
    chicos); it counts only ``confirmed`` by the league's organiser."""

    match: str
    club: str
    from_chico: int
    out: str
    into: str
    confirmed: bool = False


def check_lineup(lineup: Lineup, roster: Roster | None, team_size: int) -> Lineup:
    """``lineup`` if its players are ``team_size`` different players of the club's list."""
    if roster is None:
        raise InvalidLineup(f"La sede {lineup.club} no tiene lista de buena fe")
    if len(lineup.players) != team_size or len(set(lineup.players)) != team_size:
        raise InvalidLineup(
            f"Para {lineup.match} la sede {lineup.club} nombra {team_size} jugadores distintos"
        )
    for p in lineup.players:
        if not roster.has(p):
            raise InvalidLineup(
                f"{p!r} no está en la lista de buena fe de {lineup.club}: "
                f"no puede jugar {lineup.match}"
            )
    return lineup


def check_substitution(sub: Substitution, pair: Sequence[str], roster: Roster | None) -> None:
    """Whether ``sub`` can be made on ``pair`` (the players of its chico before)."""
    if (
        isinstance(sub.from_chico, bool)
        or not isinstance(sub.from_chico, int)
        or sub.from_chico < 2
    ):
        raise InvalidLineup("Un cambio se hace entre chicos: desde el chico 2 en adelante")
    if sub.out not in pair:
        raise InvalidLineup(
            f"{sub.out!r} no está jugando {sub.match} por {sub.club}: no puede salir"
        )
    if sub.into in pair:
        raise InvalidLineup(f"{sub.into!r} ya está jugando {sub.match}")
    if roster is None or not roster.has(sub.into):
        raise InvalidLineup(f"{sub.into!r} no está en la lista de buena fe de {sub.club}")


def side_players(
    lineup: Lineup | None, subs: Iterable[Substitution], chico: int
) -> tuple[str, ...] | None:
    """Who played chico ``chico`` (1-based) for the club of ``lineup``: the named pair
    with every confirmed substitution from that chico or earlier applied in order; None
    when no pair was named."""
    if lineup is None:
        return None
    pair = list(lineup.players)
    for sub in sorted((s for s in subs if s.confirmed and s.match == lineup.match
                       and s.club == lineup.club), key=lambda s: s.from_chico):  # fmt: skip
        if sub.from_chico <= chico and sub.out in pair:
            pair[pair.index(sub.out)] = sub.into
    return tuple(pair)


def seats_of(home: Sequence[str], away: Sequence[str]) -> dict[int, str]:
    """Seat to player: the home pair at the even seats, the away pair at the odd ones
    (team 0 is the home entrant, as the league's records count it)."""
    seats: dict[int, str] = {}
    for i, p in enumerate(home):
        seats[2 * i] = p
    for i, p in enumerate(away):
        seats[2 * i + 1] = p
    return seats


def names(rosters: Mapping[str, Roster]) -> dict[str, str]:
    """Player id to name over every list."""
    return {p.id: p.name for r in rosters.values() for p in r.players}
