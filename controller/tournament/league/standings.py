"""The league's table: each match's result from its chicos, the standings with the
tie-breaks of docs/TOURNAMENT.md ("Desempates"), and the view of one venue.

The standings are the competition's own (:func:`controller.tournament.competition.
standings.standings`, a round robin of two legs): matches won, chicos won minus lost,
tantos for minus against, tantos for, head to head among exactly those still tied, then
seed and registration order. Only decided matches count; a match still being played
counts nothing.

``played`` maps a fixture match's id to its chicos so far, in the order they were
played (what the league desk counted from verified records).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..competition.model import (
    Format,
    FormatSpec,
    GameCounted,
    Match,
    MatchResult,
    MatchStatus,
    Stage,
    Standing,
    Tournament,
)
from ..competition.standings import standings
from .errors import ChicosAfterDecided, UnknownFixtureMatch
from .fixture import fixture
from .model import Chico, League, LeagueMatch, LeagueRules

if TYPE_CHECKING:  # the count folds its checks with match_result: no import back at run time
    from .collect import Collected

__all__ = [
    "VenueView",
    "league_standings",
    "league_tournament",
    "match_result",
    "season",
    "venue_view",
]


def match_result(rules: LeagueRules, match: LeagueMatch, chicos: Sequence[Chico]) -> MatchResult:
    """The match's result after ``chicos``: decided once a side won ``rules.to_win``;
    a chico after that is refused (:class:`~.errors.ChicosAfterDecided`)."""
    games = [0, 0]
    points = [0, 0]
    winner: str | None = None
    for n, chico in enumerate(chicos, start=1):
        if winner is not None:
            raise ChicosAfterDecided(
                f"El partido {match.id} ya estaba definido al mejor de {rules.best_of}: "
                f"el chico {n} sobra"
            )
        games[chico.winner] += 1
        points[0] += chico.points[0]
        points[1] += chico.points[1]
        if games[chico.winner] == rules.to_win:
            winner = match.home if chico.winner == 0 else match.away
    if winner is not None:
        status = MatchStatus.DECIDED
    elif chicos:
        status = MatchStatus.PLAYING
    else:
        status = MatchStatus.ASSIGNED
    return MatchResult(winner, (games[0], games[1]), (points[0], points[1]), status)


def _matches(
    league: League, played: Mapping[str, Sequence[Chico]], only: str | None = None
) -> list[Match]:
    season = fixture(league)
    known = {m.id for m in season}
    for match_id in played:
        if match_id not in known:
            raise UnknownFixtureMatch(
                f"El partido {match_id!r} no está en el fixture de la liga {league.name}"
            )
    return [
        Match(
            id=m.id,
            round=m.matchday,
            stage=Stage.ROUND,
            label=m.label,
            pairing=m.pairing,
            best_of=league.rules.best_of,
            result=match_result(league.rules, m, played.get(m.id, ())),
        )
        for m in season
        if only is None or m.venue == only
    ]


def _as_tournament(
    league: League, matches: Sequence[Match], entrants: set[str] | None
) -> Tournament:
    spec = FormatSpec(
        Format.ROUND_ROBIN,
        best_of=league.rules.best_of,
        team_size=league.rules.team_size,
        legs=2,
    )
    chosen = tuple(e for e in league.entrants if entrants is None or e.id in entrants)
    return Tournament(league.name, spec=spec, entrants=chosen, matches=tuple(matches))


def _table(league: League, matches: list[Match], entrants: set[str] | None) -> list[Standing]:
    return standings(_as_tournament(league, matches, entrants))


def league_tournament(
    league: League,
    played: Mapping[str, Sequence[Chico]],
    games: Mapping[str, Sequence[GameCounted]] | None = None,
) -> Tournament:
    """The season as the competition's round robin of two legs: every fixture match
    with its result (and, given, the ``games`` that proved it), every entrant; what the
    tournament's pages and exports read (its standings are :func:`league_standings`)."""
    matches = _matches(league, played)
    if games:
        matches = [replace(m, games=tuple(games.get(m.id, ()))) for m in matches]
    return _as_tournament(league, matches, None)


def league_standings(league: League, played: Mapping[str, Sequence[Chico]]) -> list[Standing]:
    """The whole league's table (every entrant, ranked)."""
    return _table(league, _matches(league, played), None)


@dataclass(frozen=True)
class VenueView:
    """One venue's page: the matches it hosts, its own entrants' lines of the league's
    table (with their rank in the whole league), and the table counted only from the
    matches played there (among the entrants who played there)."""

    club: str
    fixture: tuple[LeagueMatch, ...]
    home_entrants: tuple[Standing, ...]
    hosted: tuple[Standing, ...]


def venue_view(league: League, played: Mapping[str, Sequence[Chico]], club: str) -> VenueView:
    league.club(club)  # UnknownClub for a club not in the league
    whole = league_standings(league, played)
    home = {e.id for e in league.entrants if e.club == club}
    hosted_matches = _matches(league, played, only=club)
    players = {m.pairing.home for m in hosted_matches} | {
        m.pairing.away for m in hosted_matches if m.pairing.away is not None
    }
    return VenueView(
        club=club,
        fixture=tuple(m for m in fixture(league) if m.venue == club),
        home_entrants=tuple(s for s in whole if s.entrant in home),
        hosted=tuple(_table(league, hosted_matches, players)),
    )


def _games(count: Collected) -> dict[str, list[GameCounted]]:
    games: dict[str, list[GameCounted]] = {}
    for c in count.counted:
        if c.match is not None and c.chico is not None:
            games.setdefault(c.match, []).append(
                GameCounted(
                    c.match, c.game, c.table, c.chico.points, c.chico.winner, c.record_sha256
                )
            )
    return games


def season(league: League, count: Collected, *, club_names: bool = False) -> Tournament:
    """The season as a tournament (its matches with their counted chicos); with
    ``club_names`` the entrants' clubs are the venues' names (for the pages)."""
    t = league_tournament(league, count.played, _games(count))
    if not club_names:
        return t
    names = {c.id: c.name for c in league.clubs}
    entrants = tuple(replace(e, club=names.get(e.club or "", e.club)) for e in t.entrants)
    return replace(t, entrants=entrants)
