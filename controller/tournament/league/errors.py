"""Why the league refuses something: one class per reason, the text in Spanish for the
league's organiser (one line, shown as is)."""

from __future__ import annotations

__all__ = [
    "ChicosAfterDecided",
    "DuplicateClub",
    "DuplicateLeagueEntrant",
    "InvalidChico",
    "InvalidClub",
    "InvalidLeague",
    "InvalidLeagueEntrant",
    "InvalidLeagueRules",
    "LeagueError",
    "NotEnoughLeagueEntrants",
    "UnknownClub",
    "UnknownFixtureMatch",
]


class LeagueError(ValueError):
    """Something the league refuses (the message says why and what to do)."""


class InvalidLeague(LeagueError):
    """The league's name, dates or shape cannot be used."""


class InvalidClub(LeagueError):
    """A club's id or name cannot be used."""


class DuplicateClub(LeagueError):
    """Two clubs with the same id."""


class UnknownClub(LeagueError):
    """An entrant (or a query) names a club the league does not have."""


class InvalidLeagueEntrant(LeagueError):
    """An entrant's id, club or players cannot be used."""


class DuplicateLeagueEntrant(LeagueError):
    """Two entrants with the same id."""


class NotEnoughLeagueEntrants(LeagueError):
    """A league needs at least two entrants."""


class InvalidLeagueRules(LeagueError):
    """The matches' rules (best of N, house rules) cannot be used."""


class UnknownFixtureMatch(LeagueError):
    """A result names a match that is not in the fixture."""


class InvalidChico(LeagueError):
    """A chico's result cannot be (winner, points)."""


class ChicosAfterDecided(LeagueError):
    """More chicos than a decided match has."""
