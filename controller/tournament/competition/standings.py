"""The standings: one :class:`~.model.Standing` per entrant, ranked by the tie-breaks.

Counted only from what decides a match: the games the tables proved (a decided match,
or one the organiser closed), walkovers and the organiser's overrides. A match still
being played counts nothing yet.

The tie-breaks, in order (docs/TOURNAMENT.md, "Desempates"):

1. matches won;
2. swiss only: Buchholz, the sum of the matches won by the opponents met;
3. games won minus games lost;
4. points (tantos) for minus against;
5. points for;
6. head to head: matches won among exactly the entrants still tied;
7. seed, then registration order (the last resort: it never leaves a tie).

Withdrawn entrants stay in the table, marked, after all the others. A walkover counts
best_of//2+1 games to 0 and no points; a swiss bye counts as a walkover won (the round
robin's and the knockout's byes count nothing: in a league everyone rests the same).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .entrants import seed_order
from .errors import UnknownGroup
from .model import Format, Match, MatchStatus, Standing, Tournament
from .pairing import group_letter, snake_groups

__all__ = ["COUNTED", "games_to_win", "group_members", "standings"]

COUNTED = frozenset({MatchStatus.DECIDED, MatchStatus.WALKOVER, MatchStatus.OVERRIDDEN})


def games_to_win(best_of: int) -> int:
    """Games that decide a match: 2 of 3, 3 of 5."""
    return best_of // 2 + 1


def group_members(t: Tournament) -> dict[str, tuple[str, ...]]:
    """The groups' draw (letter: entrant ids in seed order), from the order fixed at
    Start; empty unless the format has groups and it started."""
    if t.spec is None or t.spec.format is not Format.GROUPS or not t.spec.groups:
        return {}
    drawn = snake_groups(t.order, t.spec.groups)
    return {group_letter(i): tuple(g) for i, g in enumerate(drawn)}


@dataclass
class _Line:
    played: int = 0
    won: int = 0
    lost: int = 0
    games_won: int = 0
    games_lost: int = 0
    points_for: int = 0
    points_against: int = 0
    beaten: list[str] = field(default_factory=list)  # opponents beaten, once a match
    met: list[str] = field(default_factory=list)  # opponents met, once a match


def standings(t: Tournament, group: str | None = None) -> list[Standing]:
    """The table of the whole tournament, or of one group (its matches only)."""
    members = group_members(t)
    if group is not None:
        if group not in members:
            raise UnknownGroup(f"No hay un grupo {group!r}")
        ids = list(members[group])
        matches = [m for m in t.matches if m.group == group]
    else:
        ids = [e.id for e in t.entrants]
        matches = list(t.matches)
    swiss = t.spec is not None and t.spec.format is Format.SWISS
    lines = {i: _Line() for i in ids}
    for m in matches:
        _count(m, lines, swiss)

    withdrawn = {w for w, _ in t.withdrawn}
    last_resort = {e.id: i for i, e in enumerate(seed_order(t.entrants))}

    def buchholz(i: str) -> int:
        return sum(lines[o].won for o in lines[i].met if o in lines)

    def key(i: str) -> tuple[int, ...]:
        line = lines[i]
        return (
            i in withdrawn,
            -line.won,
            -buchholz(i) if swiss else 0,
            line.games_lost - line.games_won,
            line.points_against - line.points_for,
            -line.points_for,
        )

    ordered = sorted(ids, key=key)
    ranked: list[str] = []
    start = 0
    while start < len(ordered):
        end = start
        while end < len(ordered) and key(ordered[end]) == key(ordered[start]):
            end += 1
        tied = set(ordered[start:end])
        ranked += sorted(
            ordered[start:end],
            key=lambda i: (-sum(o in tied for o in lines[i].beaten), last_resort.get(i, 0)),
        )
        start = end

    group_of = {e: g for g, es in members.items() for e in es}
    return [
        Standing(
            rank=n,
            entrant=i,
            played=lines[i].played,
            won=lines[i].won,
            lost=lines[i].lost,
            games_won=lines[i].games_won,
            games_lost=lines[i].games_lost,
            points_for=lines[i].points_for,
            points_against=lines[i].points_against,
            buchholz=buchholz(i) if swiss else None,
            group=group if group is not None else group_of.get(i),
            withdrawn=i in withdrawn,
        )
        for n, i in enumerate(ranked, start=1)
    ]


def _count(m: Match, lines: dict[str, _Line], swiss: bool) -> None:
    result = m.result
    if result.status is MatchStatus.BYE:
        if swiss and m.pairing.home in lines:
            rests = lines[m.pairing.home]
            rests.played += 1
            rests.won += 1
            rests.games_won += games_to_win(m.best_of)
        return
    if result.status not in COUNTED or m.pairing.away is None:
        return
    sides = (m.pairing.home, m.pairing.away)
    for side, entrant in enumerate(sides):
        line = lines.get(entrant)
        if line is None:
            continue
        other = sides[1 - side]
        line.played += 1
        line.met.append(other)
        if result.winner == entrant:
            line.won += 1
            line.beaten.append(other)
        else:
            line.lost += 1
        line.games_won += result.games[side]
        line.games_lost += result.games[1 - side]
        line.points_for += result.points[side]
        line.points_against += result.points[1 - side]
