"""The pairing functions on their own: the bracket's seeding, the circle method, the
swiss pairing with its backtracking, the snake draw and the groups' cross pairing."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.tournament.competition.errors import SwissPairingImpossible
from controller.tournament.competition.model import Pairing
from controller.tournament.competition.pairing import (
    bracket_positions,
    group_letter,
    groups_knockout,
    knockout_first_round,
    knockout_label,
    knockout_next_round,
    round_robin_rounds,
    snake_groups,
    swiss_first_round,
    swiss_pairings,
    swiss_rounds,
)


def pairs(pairings: list[Pairing]) -> list[tuple[str, str | None]]:
    return [(p.home, p.away) for p in pairings]


def seeds(n: int) -> list[str]:
    return [f"s{i}" for i in range(1, n + 1)]


def test_the_standard_draw_of_sixteen() -> None:
    first = pairs(knockout_first_round(seeds(16)))
    assert first == [
        ("s1", "s16"), ("s8", "s9"), ("s4", "s13"), ("s5", "s12"),
        ("s2", "s15"), ("s7", "s10"), ("s3", "s14"), ("s6", "s11"),
    ]  # fmt: skip


def test_byes_go_to_the_top_seeds() -> None:
    first = knockout_first_round(seeds(12))
    assert len(first) == 8
    assert sorted(p.home for p in first if p.away is None) == ["s1", "s2", "s3", "s4"]


@settings(max_examples=40)
@given(st.integers(2, 64))
def test_the_favourites_meet_as_late_as_the_draw_allows(n: int) -> None:
    """With the better seed always winning: 1 v 2 in the final, 1 v 4 and 2 v 3 in the
    semifinals."""
    rounds = [knockout_first_round(seeds(n))]
    while len(rounds[-1]) > 1:
        winners = [min(p.home, p.away or p.home, key=lambda s: int(s[1:])) for p in rounds[-1]]
        rounds.append(knockout_next_round(winners))
    assert pairs(rounds[-1]) == [("s1", "s2")]
    if n >= 4:
        assert sorted(pairs(rounds[-2])) == [("s1", "s4"), ("s2", "s3")]
    everyone = [e for p in rounds[0] for e in (p.home, p.away) if e]
    assert sorted(everyone) == sorted(seeds(n))


def test_bracket_positions_are_a_permutation() -> None:
    for size in (2, 4, 8, 16, 32):
        assert sorted(bracket_positions(size)) == list(range(1, size + 1))


def test_knockout_labels() -> None:
    assert [knockout_label(k) for k in (16, 8, 4, 2, 1)] == [
        "Dieciseisavos de final", "Octavos de final", "Cuartos de final", "Semifinal", "Final"
    ]  # fmt: skip


@settings(max_examples=40)
@given(st.integers(2, 21), st.sampled_from([1, 2]))
def test_round_robin_everyone_meets_everyone(n: int, legs: int) -> None:
    fixture = round_robin_rounds(seeds(n), legs)
    assert len(fixture) == (n - 1 + n % 2) * legs
    for fecha in fixture:
        playing = [e for p in fecha for e in (p.home, p.away) if e]
        assert sorted(playing) == sorted(seeds(n)), "everyone plays or rests every fecha"
        assert sum(p.away is None for p in fecha) == n % 2
    met = Counter(frozenset((p.home, p.away)) for f in fixture for p in f if p.away)
    assert set(met) == {frozenset(c) for c in combinations(seeds(n), 2)}
    assert set(met.values()) == {legs}
    homes = Counter(p.home for f in fixture[: len(fixture) // legs] for p in f if p.away)
    assert max(homes.values(), default=0) - min(homes.values(), default=0) <= 1, "home balanced"
    if legs == 2:
        half = len(fixture) // 2
        for first, second in zip(fixture[:half], fixture[half:], strict=True):
            assert pairs(second) == [(p.away, p.home) if p.away else (p.home, None) for p in first]


def test_swiss_round_one_is_top_half_against_bottom_half() -> None:
    assert pairs(swiss_first_round(seeds(6))) == [("s1", "s4"), ("s2", "s5"), ("s3", "s6")]
    assert pairs(swiss_first_round(seeds(5))) == [("s1", "s3"), ("s2", "s4"), ("s5", None)]


def test_swiss_pairs_down_the_table_and_backtracks() -> None:
    ranked = seeds(4)
    # s1 met s2 and s3: it must take s4, which leaves s2 v s3
    met = {frozenset(("s1", "s2")), frozenset(("s1", "s3"))}
    assert sorted(pairs(swiss_pairings(ranked, met, {}, {}))) == [("s1", "s4"), ("s2", "s3")]
    # the greedy s1 v s2 would leave s3 v s4, already met: backtrack to s1 v s3
    met = {frozenset(("s3", "s4"))}
    assert sorted(pairs(swiss_pairings(ranked, met, {}, {}))) == [("s1", "s3"), ("s2", "s4")]


def test_swiss_bye_to_the_lowest_without_one() -> None:
    ranked = seeds(5)
    got = swiss_pairings(ranked, set(), {"s5": 1}, {})
    assert got[-1] == Pairing("s4", None)
    got = swiss_pairings(ranked, set(), {e: 1 for e in ranked}, {})
    assert got[-1] == Pairing("s5", None)


def test_swiss_home_to_who_had_fewer() -> None:
    got = swiss_pairings(["a", "b"], set(), {}, {"a": 2, "b": 1})
    assert pairs(got) == [("b", "a")]


def test_swiss_impossible_says_so() -> None:
    met = {frozenset(c) for c in combinations("abcd", 2)}
    with pytest.raises(SwissPairingImpossible, match="ronda 4 sin repetir"):
        swiss_pairings(list("abcd"), met, {}, {}, round_no=4)


def test_swiss_default_rounds() -> None:
    assert [swiss_rounds(n) for n in (2, 3, 4, 5, 8, 9, 16, 17, 32)] == [1, 2, 2, 3, 3, 4, 4, 5, 5]


def test_snake_draw() -> None:
    assert snake_groups(seeds(8), 3) == [["s1", "s6", "s7"], ["s2", "s5", "s8"], ["s3", "s4"]]
    assert [group_letter(i) for i in (0, 1, 25, 26, 27)] == ["A", "B", "Z", "AA", "AB"]


def test_cross_pairing_keeps_a_group_apart_until_the_final() -> None:
    q = [[f"{g}1", f"{g}2"] for g in "ABCD"]
    assert pairs(groups_knockout(q)) == [("A1", "B2"), ("C1", "D2"), ("B1", "A2"), ("D1", "C2")]
    semis = knockout_next_round(["A1", "C1", "B1", "D1"])
    assert pairs(semis) == [("A1", "C1"), ("B1", "D1")]


def test_odd_groups_are_seeded_into_a_bracket() -> None:
    q = [["A1", "A2"], ["B1", "B2"], ["C1", "C2"]]
    got = pairs(groups_knockout(q))
    assert ("A1", None) in got and ("B1", None) in got
    assert all(a is None or a[0] != h[0] for h, a in got), "no group meets itself first"


def test_six_groups_make_a_bracket_of_sixteen_with_byes() -> None:
    q = [[f"{g}1", f"{g}2"] for g in "ABCDEF"]
    got = groups_knockout(q)
    assert len(got) == 8
    assert sorted(p.home for p in got if p.away is None) == ["A1", "B1", "C1", "D1"]
    assert all(p.away is None or p.home[0] != p.away[0] for p in got)
