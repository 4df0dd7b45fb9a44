"""What a venue's table is told to play in a league season: the wire's
:class:`~controller.tournament.wire.messages.Assignment` for a match of the season, with
its pair's names (the pair each club named for it, after the changes the organiser
confirmed), so that the match card on every seat and the terminal table name the players
of each side.

Pure: the season, what was counted so far (the chico to play is the next one), the
table and the desk's counter for it.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..wire.messages import MAX_NAME, Assignment
from .errors import UnknownFixtureMatch
from .model import Chico, LeagueMatch
from .rosters import names
from .season import ROUND_NAMES, Season, season_matches, stage_of

__all__ = ["league_assignment", "seat_label"]


def _short(text: str) -> str:
    return text if len(text) <= MAX_NAME else text[: MAX_NAME - 1] + "…"


def seat_label(season: Season, m: LeagueMatch) -> str:
    """The round as a seat's panel fits it: ``Primera, fecha 3``, ``Semifinal``,
    ``Grupo final, fecha 1``."""
    division, group = stage_of(season, m.id)
    if group is not None:
        return f"{division.name}, fecha {m.matchday}"
    if "-final-f" in m.id:
        return f"Grupo final, fecha {int(m.id.split('-final-f', 1)[1][:2])}"
    return next((r for r in ROUND_NAMES.values() if m.label.endswith(r)), m.label)


def league_assignment(
    season: Season, played: Mapping[str, tuple[Chico, ...]], match_id: str, table: str, n: int
) -> Assignment:
    """The assignment of ``table`` to the next chico of ``match_id`` (counter ``n``)."""
    known = {m.id: m for m in season_matches(season, played)}
    m = known.get(match_id)
    if m is None:
        raise UnknownFixtureMatch(f"El partido {match_id!r} no está en la temporada")
    chico = len(played.get(match_id, ())) + 1
    who = names(season.roster_of)
    sides = season.players(m, chico)
    players: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    if sides is not None:
        players = (tuple(_short(who.get(p, p)) for p in sides[0]),
                   tuple(_short(who.get(p, p)) for p in sides[1]))  # fmt: skip
    return Assignment(
        table, n, m.id, _short(seat_label(season, m)), _short(season.club(m.home).name),
        _short(season.club(m.away).name), chico, season.rules.best_of, players,
    )  # fmt: skip
