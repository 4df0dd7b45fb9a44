"""The swiss pairing is the best one without a repeat: checked against every pairing of
small fields (brute force), and over whole simulated swiss tournaments (a bounded stress
run, each round compared with the brute-force optimum). The round robin's Berger tables
keep home and away in runs of two at most."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Mapping, Sequence, Set

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.tournament.competition.model import Pairing
from controller.tournament.competition.pairing import (
    pair_cost,
    round_robin_rounds,
    swiss_first_round,
    swiss_matching,
    swiss_pairings,
)

Cost = tuple[int, int, int]


def all_pairings(players: list[str]) -> Iterator[list[tuple[str, str]]]:
    if not players:
        yield []
        return
    first, rest = players[0], players[1:]
    for j, other in enumerate(rest):
        for tail in all_pairings(rest[:j] + rest[j + 1 :]):
            yield [(first, other), *tail]


def total(
    pairs: Sequence[tuple[str, str]],
    players: Sequence[str],
    scores: Mapping[str, int],
    homes: Mapping[str, int],
    aways: Mapping[str, int],
) -> Cost:
    """The pairing's cost counted here from its definition (not by the code under
    test): squared score gaps, then sum of |homes - aways| after the round with the side
    that had fewer homes (net) at home, then squared rank gaps."""
    rank = {p: i for i, p in enumerate(players)}
    gaps = sum((scores.get(a, 0) - scores.get(b, 0)) ** 2 for a, b in pairs)
    after = 0
    for a, b in pairs:
        net = sorted([homes.get(a, 0) - aways.get(a, 0), homes.get(b, 0) - aways.get(b, 0)])
        after += abs(net[0] + 1) + abs(net[1] - 1)
    ranks = sum((rank[a] - rank[b]) ** 2 for a, b in pairs)
    return gaps, after, ranks


def best_by_brute_force(
    players: Sequence[str],
    met: Set[frozenset[str]],
    scores: Mapping[str, int],
    homes: Mapping[str, int],
    aways: Mapping[str, int],
) -> Cost | None:
    costs = [
        total(p, players, scores, homes, aways)
        for p in all_pairings(list(players))
        if not any(frozenset(pair) in met for pair in p)
    ]
    return min(costs) if costs else None


@st.composite
def fields(draw: st.DrawFn) -> tuple[list[str], set[frozenset[str]], dict[str, int],
                                     dict[str, int], dict[str, int]]:  # fmt: skip
    n = draw(st.sampled_from([2, 4, 6, 8, 10]))
    players = [f"p{i:02d}" for i in range(n)]
    rounds = draw(st.integers(0, 4))
    scores = {p: draw(st.integers(0, rounds)) for p in players}
    players.sort(key=lambda p: -scores[p])  # best first, as the standings give them
    homes = {p: draw(st.integers(0, rounds)) for p in players}
    aways = {p: draw(st.integers(0, rounds - homes[p])) for p in players}
    met = {
        frozenset((a, b))
        for i, a in enumerate(players)
        for b in players[i + 1 :]
        if draw(st.integers(0, 99)) < 35
    }
    return players, met, scores, homes, aways


@settings(max_examples=150, deadline=None)
@given(fields())
def test_the_matching_is_the_brute_force_optimum(
    field: tuple[list[str], set[frozenset[str]], dict[str, int], dict[str, int], dict[str, int]],
) -> None:
    players, met, scores, homes, aways = field
    ranks = {p: i for i, p in enumerate(players)}
    for a, b in itertools.pairwise(players):
        assert sum(pair_cost(a, b, ranks, scores, homes, aways)) == sum(
            total([(a, b)], players, scores, homes, aways)
        )
    found = swiss_matching(players, met, scores, homes, aways)
    best = best_by_brute_force(players, met, scores, homes, aways)
    if best is None:
        assert found is None
        return
    assert found is not None
    assert sorted(p for pair in found for p in pair) == sorted(players)
    assert not any(frozenset(pair) in met for pair in found), "no repeated cruce"
    assert total(found, players, scores, homes, aways) == best


def test_a_float_is_avoided_when_a_pairing_without_one_exists() -> None:
    # a and b (2 won) met, c and d (0 won) met: every pairing floats two across
    players = ["a", "b", "c", "d"]
    scores = {"a": 2, "b": 2, "c": 0, "d": 0}
    met = {frozenset(("a", "b")), frozenset(("c", "d"))}
    found = swiss_matching(players, met, scores, {}, {})
    assert found is not None
    assert total(found, players, scores, {}, {})[0] == 8  # every pairing floats two
    met = {frozenset(("a", "c"))}
    found = swiss_matching(players, met, scores, {}, {})
    assert found == [("a", "b"), ("c", "d")]


def test_home_and_away_balance_decides_between_equal_scores() -> None:
    # a and b have played twice at home, c and d twice away: a v c and b v d balance all
    players = ["a", "b", "c", "d"]
    homes = {"a": 2, "b": 2}
    aways = {"c": 2, "d": 2}
    got = swiss_pairings(players, set(), {}, homes, aways=aways)
    assert sorted((p.home, p.away) for p in got) == [("c", "a"), ("d", "b")]


def play_round(pairings: Sequence[Pairing], scores: dict[str, int], rng: random.Random) -> None:
    for p in pairings:
        if p.away is None:
            scores[p.home] += 1
        else:
            scores[rng.choice((p.home, p.away))] += 1


def test_stress_whole_swiss_tournaments_stay_optimal() -> None:
    """Whole swiss tournaments of 6 to 12 entrants (odd ones with a bye), random results:
    every round's pairing has the brute-force optimum's cost. The issue's bar is 1% of
    rounds worse than optimal at most; the matching is exact, so none is."""
    rng = random.Random(29)
    rounds_checked = worse = 0
    for _ in range(40):
        n = rng.randint(6, 12)
        entrants = [f"e{i:02d}" for i in range(1, n + 1)]
        scores = dict.fromkeys(entrants, 0)
        met: set[frozenset[str]] = set()
        byes: dict[str, int] = {}
        homes: dict[str, int] = {}
        aways: dict[str, int] = {}
        rounds = min(n - 2, 5)
        pairing = swiss_first_round(entrants)
        for round_no in range(1, rounds + 1):
            if round_no > 1:
                ranked = sorted(entrants, key=lambda e: (-scores[e], entrants.index(e)))
                try:
                    pairing = swiss_pairings(
                        ranked, met, byes, homes, round_no, scores=scores, aways=aways
                    )
                except Exception:
                    break  # a late round with no pairing left: the organiser's to pair
                resting = [p.home for p in pairing if p.away is None]
                field = [e for e in ranked if e not in resting]
                got = [(p.home, p.away) for p in pairing if p.away is not None]
                ranked_pairs = [
                    (a, b) if field.index(a) < field.index(b) else (b, a)
                    for a, b in got
                    if b is not None
                ]
                best = best_by_brute_force(field, met, scores, homes, aways)
                rounds_checked += 1
                worse += total(ranked_pairs, field, scores, homes, aways) != best
            for p in pairing:
                if p.away is None:
                    byes[p.home] = byes.get(p.home, 0) + 1
                else:
                    met.add(frozenset((p.home, p.away)))
                    homes[p.home] = homes.get(p.home, 0) + 1
                    aways[p.away] = aways.get(p.away, 0) + 1
            play_round(pairing, scores, rng)
    assert rounds_checked > 100
    assert worse <= rounds_checked // 100
    assert worse == 0


def runs(sides: Sequence[str]) -> int:
    longest = current = 0
    previous = None
    for side in sides:
        current = current + 1 if side == previous else 1
        previous = side
        longest = max(longest, current)
    return longest


@pytest.mark.parametrize("n", [*range(2, 21), 24, 32])
def test_berger_home_and_away_come_in_runs_of_two_at_most(n: int) -> None:
    entrants = [f"e{i:02d}" for i in range(1, n + 1)]
    fixture = round_robin_rounds(entrants)
    for e in entrants:
        sides = []
        for fecha in fixture:
            for p in fecha:
                if p.away is not None and e in (p.home, p.away):
                    sides.append("H" if p.home == e else "A")
        assert runs(sides) <= 2, (e, "".join(sides))


def test_berger_six_is_fides_table() -> None:
    fixture = round_robin_rounds([str(i) for i in range(1, 7)])
    assert [[(p.home, p.away) for p in r] for r in fixture] == [
        [("1", "6"), ("2", "5"), ("3", "4")],
        [("6", "4"), ("5", "3"), ("1", "2")],
        [("2", "6"), ("3", "1"), ("4", "5")],
        [("6", "5"), ("1", "4"), ("2", "3")],
        [("3", "6"), ("4", "2"), ("5", "1")],
    ]
