"""The league's fixture: a double round robin by Berger tables.

Berger tables (the FIDE round robin): with ``n`` entrants (one more, a rest, when ``n``
is odd) numbered ``1..n`` in registration order (seeded ones first), matchday 1 pairs
``1-n, 2-(n-1), ...``; each next matchday adds ``n/2`` to every number but ``n``
(modulo ``n-1``, in ``1..n-1``) and ``n`` changes sides. Every entrant then plays home
and away alternately, with at most one repeat (two homes or two aways in a row) per leg.

The second leg (la vuelta) is the first with home and away swapped, started from its
second matchday and ending with its first: no pair meets on two matchdays in a row (but
when there are only two entrants), and
across the two legs nobody plays more than two homes or two aways in a row (tested over
every size up to 24 by tests/tournament/league/test_fixture.py).

>>> [[(p.home, p.away) for p in day] for day in berger_rounds(["a", "b", "c", "d"])]
[[('a', 'd'), ('b', 'c')], [('d', 'c'), ('a', 'b')], [('b', 'd'), ('c', 'a')]]

A rest (odd ``n``) is dropped: that entrant has no match that matchday. Each match is
played at the home entrant's club, on its matchday's date.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..competition.entrants import seed_order
from ..competition.model import Pairing
from .model import League, LeagueMatch

__all__ = ["berger_rounds", "double_round_robin", "fixture", "venue_fixture"]


def berger_rounds(order: Sequence[str]) -> list[list[Pairing]]:
    """One leg by Berger tables; with an odd count the rest is left out of each day."""
    slots: list[str | None] = list(order)
    if len(slots) % 2:
        slots.append(None)
    n = len(slots)
    if n < 2:
        return []
    half = n // 2

    def turn(x: int) -> int:  # 1-based numbers; n stays
        return x if x == n else (x - 1 + half) % (n - 1) + 1

    pairs = [(i + 1, n - i) for i in range(half)]
    days: list[list[Pairing]] = []
    for _ in range(n - 1):
        day = []
        for a, b in pairs:
            home, away = slots[a - 1], slots[b - 1]
            if home is not None and away is not None:
                day.append(Pairing(home, away))
        days.append(day)
        turned = []
        for i, (a, b) in enumerate(pairs):
            if i == 0:  # the pair with n: n changes sides
                turned.append((turn(b), n) if a == n else (n, turn(a)))
            else:
                turned.append((turn(a), turn(b)))
        pairs = turned
    return days


def double_round_robin(order: Sequence[str]) -> list[list[Pairing]]:
    """Both legs: the first by Berger tables, the second swapped, from its day 2."""
    first = berger_rounds(order)
    swapped = [[Pairing(p.away, p.home) for p in day if p.away is not None] for day in first]
    return first + swapped[1:] + swapped[:1]


def fixture(league: League) -> tuple[LeagueMatch, ...]:
    """Every match of the season, matchday by matchday (ids ``f01-m01``...); a league
    with its own ``schedule`` (a season's groups and final phase) has those."""
    if league.schedule:
        return league.schedule
    order = [e.id for e in seed_order(league.entrants)]
    days = double_round_robin(order)
    legs = len(days) // 2
    home_club = league.home_club
    out: list[LeagueMatch] = []
    for d, day in enumerate(days, start=1):
        for m, pairing in enumerate(day, start=1):
            out.append(
                LeagueMatch(
                    id=f"f{d:02d}-m{m:02d}",
                    matchday=d,
                    date=league.matchday_date(d),
                    leg=1 if d <= legs else 2,
                    pairing=pairing,
                    venue=home_club[pairing.home],
                )
            )
    return tuple(out)


def venue_fixture(league: League, club: str) -> tuple[LeagueMatch, ...]:
    """The matches played at ``club`` (raises UnknownClub for a club not in the league)."""
    league.club(club)
    return tuple(m for m in fixture(league) if m.venue == club)
