"""Results from chicos, the standings with docs/TOURNAMENT.md's tie-breaks, a venue's view."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.tournament.competition.model import MatchStatus
from controller.tournament.league.errors import (
    ChicosAfterDecided,
    UnknownClub,
    UnknownFixtureMatch,
)
from controller.tournament.league.fixture import fixture
from controller.tournament.league.model import Chico
from controller.tournament.league.standings import league_standings, match_result, venue_view

from .helpers import make_league

HOME = Chico(0, (30, 20))
AWAY = Chico(1, (18, 30))


def test_match_result_best_of_three() -> None:
    league = make_league(4)
    m = fixture(league)[0]
    assert match_result(league.rules, m, ()).status is MatchStatus.ASSIGNED
    one = match_result(league.rules, m, (HOME,))
    assert (one.status, one.winner, one.games) == (MatchStatus.PLAYING, None, (1, 0))
    done = match_result(league.rules, m, (HOME, AWAY, AWAY))
    assert (done.status, done.winner) == (MatchStatus.DECIDED, m.away)
    assert done.games == (1, 2) and done.points == (30 + 18 + 18, 20 + 30 + 30)
    with pytest.raises(ChicosAfterDecided, match="el chico 3 sobra"):
        match_result(league.rules, m, (HOME, HOME, AWAY))


def _by_entrant(rows: Sequence[object]) -> dict[str, object]:
    return {r.entrant: r for r in rows}  # type: ignore[attr-defined]


def test_standings_counts_only_decided_matches_and_ranks_by_the_tie_breaks() -> None:
    league = make_league(3, 3)  # e01 (c1), e02 (c2), e03 (c3)
    season = {(m.home, m.away): m.id for m in fixture(league)}
    played = {
        season[("e01", "e02")]: (HOME, HOME),  # e01 beats e02 2-0
        season[("e02", "e03")]: (HOME, HOME),  # e02 beats e03 2-0
        season[("e03", "e01")]: (HOME, HOME),  # e03 beats e01 2-0
        season[("e02", "e01")]: (HOME,),  # still being played: counts nothing
    }
    table = league_standings(league, played)
    # one win each, chicos 2-2 each, tantos 60-40 each: head to head is a cycle, so seed
    # and registration order decide (the last resort of docs/TOURNAMENT.md)
    assert [s.entrant for s in table] == ["e01", "e02", "e03"]
    assert all((s.played, s.won, s.games_won, s.games_lost) == (2, 1, 2, 2) for s in table)
    played[season[("e02", "e01")]] = (HOME, AWAY, HOME)  # now e02 has two wins
    table = league_standings(league, played)
    assert table[0].entrant == "e02" and table[0].won == 2 and table[0].rank == 1
    assert _by_entrant(table)["e01"].points_for == (30 + 30) + (20 + 20) + (20 + 30 + 20)  # type: ignore[attr-defined]


def test_points_difference_breaks_a_tie_before_registration_order() -> None:
    league = make_league(2, 2)
    a, b = fixture(league)  # e01 at home, then e02 at home
    close, wide = Chico(0, (30, 29)), Chico(0, (30, 0))
    table = league_standings(league, {a.id: (close, close), b.id: (wide, wide)})
    # a win and chicos 2-2 each; e02's tantos: 58 + 60 for, 60 + 0 against (+58)
    e02 = _by_entrant(table)["e02"]
    assert (e02.points_for, e02.points_against) == (118, 60)  # type: ignore[attr-defined]
    assert [s.entrant for s in table] == ["e02", "e01"]


def test_a_result_for_a_match_not_in_the_fixture_is_refused() -> None:
    with pytest.raises(UnknownFixtureMatch, match="'f99-m01'"):
        league_standings(make_league(4), {"f99-m01": (HOME,)})


def test_venue_view() -> None:
    league = make_league(4, 2)  # c1: e01, e03; c2: e02, e04
    season = fixture(league)
    played = {m.id: (HOME, HOME) for m in season}  # the home side always wins
    view = venue_view(league, played, "c1")
    assert view.club == "c1"
    assert {m.venue for m in view.fixture} == {"c1"}
    assert len(view.fixture) == 6  # e01 and e03 host 3 matches each
    assert {s.entrant for s in view.home_entrants} == {"e01", "e03"}
    whole = _by_entrant(league_standings(league, played))
    for s in view.home_entrants:
        assert s == whole[s.entrant]  # their line of the whole league, rank included
    hosted = _by_entrant(view.hosted)
    # at c1, e01 hosted three (won) and visited e03 once (lost)
    assert (hosted["e01"].played, hosted["e01"].won) == (4, 3)  # type: ignore[attr-defined]
    assert hosted["e02"].won == 0 and hosted["e02"].played == 2  # type: ignore[attr-defined]
    with pytest.raises(UnknownClub):
        venue_view(league, played, "c5")


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=2, max_value=9), st.data())
def test_standings_add_up(n: int, data: st.DataObject) -> None:
    league = make_league(n)
    season = fixture(league)
    played = {}
    for m in season:
        chicos = data.draw(st.lists(st.sampled_from([HOME, AWAY]), max_size=3))
        kept: list[Chico] = []
        for c in chicos:
            if match_result(league.rules, m, kept).winner is not None:
                break
            kept.append(c)
        played[m.id] = tuple(kept)
    table = league_standings(league, played)
    decided = [m for m in season if match_result(league.rules, m, played[m.id]).winner]
    assert sorted(s.rank for s in table) == list(range(1, n + 1))
    assert sum(s.won for s in table) == sum(s.lost for s in table) == len(decided)
    assert sum(s.games_won for s in table) == sum(s.games_lost for s in table)
    assert [s.won for s in table] == sorted((s.won for s in table), reverse=True)
