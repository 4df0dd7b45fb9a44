"""The standings: what counts (decided matches, walkovers, overrides, swiss byes) and
the tie-breaks in their order, each shown deciding a tie the ones before it left."""

from __future__ import annotations

import random

import pytest

from controller.tournament.competition.errors import UnknownGroup
from controller.tournament.competition.model import (
    AssignTable,
    Format,
    FormatSpec,
    GameCounted,
    OverrideResult,
    Pairing,
    PairRound,
    Register,
    Seed,
    Start,
    Tournament,
    Walkover,
    Withdraw,
)
from controller.tournament.competition.standings import standings
from controller.tournament.competition.tournament import apply, replay

from .playout import SHA, entrant, play_to_end, started

Result = tuple[str, tuple[int, int], tuple[int, int]]  # winner, its games, its points


def league(
    n: int, results: dict[frozenset[str], Result], spec: FormatSpec, seed: tuple[str, ...] = ()
) -> Tournament:
    """A tournament whose every match is the organiser's result from ``results``
    (games and points given from the winner's side)."""
    t = replay("Liga", [Register(entrant(i)) for i in range(1, n + 1)])
    t = apply(apply(t, Seed(seed)), Start(spec))
    while not t.finished:
        t = apply(t, PairRound(t.round + 1))
        for m in t.round_matches(t.round):
            if m.pairing.away is None or m.result.winner is not None:
                continue
            winner, games, points = results[frozenset((m.pairing.home, m.pairing.away))]
            if winner != m.pairing.home:
                games, points = games[::-1], points[::-1]
            t = apply(t, OverrideResult(m.id, winner, games, points, "planilla"))
    return t


def order(t: Tournament, group: str | None = None) -> list[str]:
    return [s.entrant for s in standings(t, group)]


def pair(a: int, b: int) -> frozenset[str]:
    return frozenset((f"e{a:02d}", f"e{b:02d}"))


# e01 and e02 win 2; e03 and e04 win 1; everything else level.
CYCLE: dict[frozenset[str], Result] = {
    pair(1, 2): ("e01", (1, 0), (30, 20)),
    pair(2, 3): ("e02", (1, 0), (30, 20)),
    pair(3, 1): ("e03", (1, 0), (30, 20)),
    pair(1, 4): ("e01", (1, 0), (30, 20)),
    pair(2, 4): ("e02", (1, 0), (30, 20)),
    pair(4, 3): ("e04", (1, 0), (30, 20)),
}
RR = FormatSpec(Format.ROUND_ROBIN, best_of=3)


def test_head_to_head_breaks_what_the_figures_leave_level() -> None:
    t = league(4, CYCLE, RR, seed=("e02", "e03"))
    table = standings(t)
    assert [(s.won, s.games_won - s.games_lost, s.points_diff) for s in table] == [
        (2, 1, 10), (2, 1, 10), (1, -1, -10), (1, -1, -10)
    ]  # fmt: skip
    # e01 beat e02 (though e02 is the top seed); e04 beat e03 (e03 is seed 2)
    assert order(t) == ["e01", "e02", "e04", "e03"]
    assert [s.rank for s in table] == [1, 2, 3, 4]


def test_seed_is_the_last_resort() -> None:
    three = {k: v for k, v in CYCLE.items() if "e04" not in k}  # a cycle of three
    t = league(3, three, RR, seed=("e03",))
    assert order(t) == ["e03", "e01", "e02"]


def test_games_difference_before_points() -> None:
    results = dict(CYCLE)
    results[pair(2, 4)] = ("e02", (2, 0), (10, 50))  # e02: +1 game, many points fewer
    assert order(league(4, results, RR))[:2] == ["e02", "e01"]


def test_points_difference_then_points_for() -> None:
    results = dict(CYCLE)
    results[pair(2, 4)] = ("e02", (1, 0), (31, 20))
    assert order(league(4, results, RR))[:2] == ["e02", "e01"]
    results[pair(2, 4)] = ("e02", (1, 0), (40, 30))  # same difference, more points
    assert order(league(4, results, RR))[:2] == ["e02", "e01"]


def test_matches_won_first() -> None:
    results = dict(CYCLE)
    results[pair(4, 3)] = ("e03", (1, 0), (30, 20))
    results[pair(1, 4)] = ("e04", (2, 0), (90, 0))
    t = league(4, results, RR)
    assert [s.won for s in standings(t)] == [2, 2, 1, 1]
    # e04 has the best games and points of all, but one match won; e02 beat e03
    assert order(t) == ["e02", "e03", "e04", "e01"]
    assert max(standings(t), key=lambda s: s.points_diff).entrant == "e04"


def test_buchholz_in_the_swiss_before_the_games() -> None:
    spec = FormatSpec(Format.SWISS, best_of=3, rounds=2)
    results = {
        pair(1, 3): ("e01", (2, 1), (60, 50)),
        pair(2, 4): ("e02", (2, 0), (60, 40)),
        pair(1, 2): ("e02", (2, 0), (60, 40)),
        pair(3, 4): ("e03", (2, 0), (60, 20)),
    }
    t = league(4, results, spec)
    table = {s.entrant: s for s in standings(t)}
    assert (table["e01"].buchholz, table["e03"].buchholz) == (3, 1)
    assert table["e03"].games_won - table["e03"].games_lost > (
        table["e01"].games_won - table["e01"].games_lost
    )
    assert order(t) == ["e02", "e01", "e03", "e04"]
    assert standings(league(4, CYCLE, RR))[0].buchholz is None


def test_what_counts_walkovers_byes_and_not_a_match_being_played() -> None:
    t = replay("Copa", [Register(entrant(i)) for i in range(1, 4)])
    t = apply(apply(t, Start(FormatSpec(Format.SWISS, best_of=3))), PairRound(1))
    first = t.round_matches(1)
    assert [(m.pairing.home, m.pairing.away) for m in first] == [("e01", "e02"), ("e03", None)]
    t = apply(t, AssignTable("r1-m01", "mesa01"))
    t = apply(t, GameCounted("r1-m01", "g1", "mesa01", (30, 10), 0, SHA))
    line = {s.entrant: s for s in standings(t)}
    assert (line["e01"].played, line["e01"].games_won) == (0, 0), "nothing until decided"
    assert (line["e03"].played, line["e03"].won, line["e03"].games_won) == (1, 1, 2)
    assert line["e03"].points_for == 0
    t = apply(t, Withdraw("e02", "se descompuso"))
    line = {s.entrant: s for s in standings(t)}
    # the chico played stays as played, with its points (docs/RULES.md 13, 24): 2-0, 30-10
    assert (line["e01"].won, line["e01"].games_won, line["e01"].points_for) == (1, 2, 30)
    assert (line["e02"].games_won, line["e02"].points_for) == (0, 10)
    assert order(t)[-1] == "e02" and line["e02"].withdrawn
    t = apply(t, PairRound(2))
    # e02 is not paired again; e01 and e03 have not met (e03 had no home match yet)
    assert [m.pairing for m in t.round_matches(2)] == [Pairing("e03", "e01")]


def test_a_withdrawal_in_the_middle_of_a_match_keeps_the_chicos_played() -> None:
    # issue 42: at 1-1 of a best of 3 the withdrawn team's chico stayed unseen (0-2)
    t = replay("Copa", [Register(entrant(i)) for i in range(1, 5)])
    t = apply(apply(t, Start(FormatSpec(Format.SWISS, best_of=3))), PairRound(1))
    m = t.round_matches(1)[0]
    home, away = m.pairing.home, m.pairing.away
    assert away is not None
    t = apply(t, AssignTable(m.id, "mesa01"))
    t = apply(t, GameCounted(m.id, "g1", "mesa01", (15, 9), 0, SHA))
    t = apply(t, GameCounted(m.id, "g2", "mesa01", (11, 15), 1, SHA))
    t = apply(t, Withdraw(home, "se descompuso"))
    r = t.match(m.id).result
    assert (r.winner, r.games, r.points) == (away, (1, 2), (26, 24))
    line = {s.entrant: s for s in standings(t)}
    assert (line[home].games_won, line[away].games_won) == (1, 2)


def test_round_robin_byes_count_nothing() -> None:
    t = league(3, {k: v for k, v in CYCLE.items() if "e04" not in k}, RR)
    assert {s.played for s in standings(t)} == {2}


def test_a_withdrawn_entrant_ranks_last_whatever_it_won() -> None:
    j = started(4, FormatSpec(Format.ROUND_ROBIN))
    play_to_end(j, random.Random(5))
    best = standings(j.t)[0].entrant
    t = replay("Copa", [*j.actions[:-1]])  # before the last game: not finished yet
    undecided = [m for m in t.matches if m.result.winner is None]
    assert undecided
    t = apply(t, Withdraw(best, "viaje"))
    assert order(t)[-1] == best


def test_group_tables() -> None:
    j = started(8, FormatSpec(Format.GROUPS, groups=2))
    play_to_end(j, random.Random(2))
    a = standings(j.t, "A")
    assert [s.entrant for s in a] != [] and {s.group for s in a} == {"A"}
    assert {s.entrant for s in a} == {"e01", "e04", "e05", "e08"}
    assert all(s.played == 3 for s in a), "only the group's matches"
    assert {s.group for s in standings(j.t)} == {"A", "B"}
    with pytest.raises(UnknownGroup):
        standings(j.t, "C")


def test_walkover_in_a_best_of_five() -> None:
    t = replay("Copa", [Register(entrant(1)), Register(entrant(2))])
    t = apply(apply(t, Start(FormatSpec(Format.KNOCKOUT, best_of=5))), PairRound(1))
    t = apply(t, Walkover("final", "e02", "llegó tarde"))
    line = standings(t)[0]
    assert (line.entrant, line.games_won, line.games_lost, line.points_for) == ("e02", 3, 0, 0)
