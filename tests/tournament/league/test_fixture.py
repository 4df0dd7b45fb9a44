"""The fixture: every pair meets twice (once home, once away), runs of home or away of
at most two, each match at the home entrant's club on its matchday's date."""

from __future__ import annotations

import datetime
import itertools
import re
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.tournament.league.fixture import (
    berger_rounds,
    double_round_robin,
    fixture,
    venue_fixture,
)
from controller.tournament.league.model import LeagueMatch

from .helpers import make_league


def _runs(order: list[str], days: list[list[tuple[str, str | None]]]) -> int:
    longest = 0
    for entrant in order:
        sides = "".join(
            "H" if home == entrant else "A"
            for day in days
            for home, away in day
            if entrant in (home, away)
        )
        longest = max([longest, *(len(m[0]) for m in re.finditer(r"H+|A+", sides))])
    return longest


def test_berger_table_of_six_is_the_published_one() -> None:
    # FIDE's Berger table for 6 (C.05 annex 1): 1-6 2-5 3-4 / 6-4 5-3 1-2 / 2-6 3-1 4-5 / ...
    days = [[(p.home, p.away) for p in day] for day in berger_rounds("123456")]
    assert days == [
        [("1", "6"), ("2", "5"), ("3", "4")],
        [("6", "4"), ("5", "3"), ("1", "2")],
        [("2", "6"), ("3", "1"), ("4", "5")],
        [("6", "5"), ("1", "4"), ("2", "3")],
        [("3", "6"), ("4", "2"), ("5", "1")],
    ]


def test_the_second_leg_swaps_home_and_away_from_its_second_day() -> None:
    days = [[(p.home, p.away) for p in day] for day in double_round_robin("abcd")]
    assert days[3:] == [
        [("c", "d"), ("b", "a")],
        [("d", "b"), ("a", "c")],
        [("d", "a"), ("c", "b")],
    ]


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=2, max_value=24))
def test_double_round_robin_every_pair_twice_once_each_way_runs_at_most_two(n: int) -> None:
    order = [f"t{i}" for i in range(n)]
    days = [[(p.home, p.away) for p in day] for day in double_round_robin(order)]
    met = Counter(pair for day in days for pair in day)
    for a in order:
        for b in order:
            if a != b:
                assert met[(a, b)] == 1, (a, b)
    assert sum(met.values()) == n * (n - 1)
    for day in days:  # nobody plays twice the same matchday
        seen = [e for pair in day for e in pair]
        assert len(seen) == len(set(seen))
    assert len(days) == 2 * (n - 1 + n % 2)
    assert _runs(order, days) <= 2
    for first, second in itertools.pairwise(days):  # no rematch the next day
        if n == 2:
            break  # two entrants: they meet every matchday
        assert not {frozenset(p) for p in first} & {frozenset(p) for p in second}


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=2, max_value=16), st.integers(min_value=1, max_value=5))
def test_each_match_at_the_home_entrants_club_on_its_date(n: int, clubs: int) -> None:
    league = make_league(n, clubs)
    season = fixture(league)
    club_of = {e.id: e.club for e in league.entrants}
    assert len({m.id for m in season}) == len(season) == n * (n - 1)
    days = max(m.matchday for m in season)
    for m in season:
        assert isinstance(m, LeagueMatch)
        assert m.venue == club_of[m.home]
        assert m.date == datetime.date(2027, 3, 6) + datetime.timedelta(days=7 * (m.matchday - 1))
        assert m.leg == (1 if m.matchday <= days // 2 else 2)
        assert m.id.startswith(f"f{m.matchday:02d}-m")
    by_venue = [m for c in league.clubs for m in venue_fixture(league, c.id)]
    assert sorted(m.id for m in by_venue) == sorted(m.id for m in season)


def test_a_labelled_match() -> None:
    season = fixture(make_league(4, 2))
    assert season[0].label == "Fecha 1 (ida)"
    assert season[-1].label == "Fecha 6 (vuelta)"
    assert (season[0].home, season[0].away, season[0].venue) == ("e01", "e04", "c1")


def test_the_modules_examples_run_as_written() -> None:
    import doctest

    import controller.tournament.league.fixture as module

    result = doctest.testmod(module)
    assert result.attempted >= 1 and result.failed == 0
