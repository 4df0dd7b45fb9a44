"""Whole tournaments played to the end with random results: the invariants of every
format (hypothesis draws the format's settings, the entrant count and the results)."""

from __future__ import annotations

import random
from collections import Counter
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.tournament.competition.codec import dumps_action, loads_action
from controller.tournament.competition.errors import SwissPairingImpossible
from controller.tournament.competition.model import (
    Format,
    FormatSpec,
    Pairing,
    PairRound,
    Stage,
    Tournament,
    Withdraw,
)
from controller.tournament.competition.standings import standings
from controller.tournament.competition.tournament import final_ranking, next_pairings, replay

from .playout import Journal, play_round, play_to_end, started

FAST = settings(max_examples=25, deadline=None)


def replayed(j: Journal) -> Tournament:
    """The tournament replayed from its journal written out as JSON lines and read back."""
    lines = "\n".join(dumps_action(a) for a in j.actions)
    return replay(j.t.name, [loads_action(line) for line in lines.splitlines()])


def check_common(t: Tournament) -> None:
    assert t.finished
    for round_no in range(1, t.round + 1):
        seen = [e for m in t.round_matches(round_no) for e in (m.pairing.home, m.pairing.away) if e]
        assert len(seen) == len(set(seen)), f"someone plays twice in round {round_no}"
    table = standings(t)
    assert sorted(s.rank for s in table) == list(range(1, len(t.entrants) + 1))
    assert {s.entrant for s in table} == {e.id for e in t.entrants}
    withdrawn = {w for w, _ in t.withdrawn}
    flags = [s.entrant in withdrawn for s in table]
    assert flags == sorted(flags), "a withdrawn entrant ranked above one still playing"
    active = [s for s in table if not s.withdrawn]
    assert [s.won for s in active] == sorted((s.won for s in active), reverse=True)
    ranking = final_ranking(t)
    assert sorted(ranking) == sorted(e.id for e in t.entrants)


def check_knockout_path(t: Tournament) -> None:
    final = t.match("final")
    champion = final.result.winner
    assert champion is not None
    for m in t.matches:
        if m.stage is Stage.KNOCKOUT and champion in (m.pairing.home, m.pairing.away):
            assert m.result.winner == champion, f"the champion lost {m.id}"
    if not t.withdrawn:
        assert final_ranking(t)[0] == champion
    rounds = sorted({m.round for m in t.matches if m.stage is Stage.KNOCKOUT})
    for before, after in pairwise(rounds):
        winners = [m.result.winner for m in t.round_matches(before) if m.stage is Stage.KNOCKOUT]
        playing = [
            e
            for m in t.round_matches(after)
            if m.stage is Stage.KNOCKOUT
            for e in (m.pairing.home, m.pairing.away)
        ]
        assert playing == winners, f"round {after} is not the winners of round {before}"


@FAST
@given(
    n=st.integers(2, 32),
    best_of=st.sampled_from([1, 3]),
    third=st.booleans(),
    mishaps=st.booleans(),
    seed=st.integers(0, 2**32),
)
def test_knockout_to_the_end(n: int, best_of: int, third: bool, mishaps: bool, seed: int) -> None:
    j = started(n, FormatSpec(Format.KNOCKOUT, best_of=best_of, third_place=third))
    play_to_end(j, random.Random(seed), mishaps)
    t = j.t
    check_common(t)
    check_knockout_path(t)
    # every entrant is knocked out once, except the champion
    losers = Counter(
        e
        for m in t.matches
        if m.stage is Stage.KNOCKOUT and m.pairing.away is not None
        for e in (m.pairing.home, m.pairing.away)
        if e != m.result.winner
    )
    assert all(count == 1 for count in losers.values())
    assert len(losers) == n - 1
    assert any(m.id == "third" for m in t.matches) == (third and n >= 4)
    assert replayed(j) == t


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(2, 32),
    legs=st.sampled_from([1, 2]),
    best_of=st.sampled_from([1, 3]),
    mishaps=st.booleans(),
    seed=st.integers(0, 2**32),
)
def test_round_robin_to_the_end(n: int, legs: int, best_of: int, mishaps: bool, seed: int) -> None:
    j = started(n, FormatSpec(Format.ROUND_ROBIN, legs=legs, best_of=best_of))
    play_to_end(j, random.Random(seed), mishaps)
    t = j.t
    check_common(t)
    met = Counter(frozenset((m.pairing.home, m.pairing.away)) for m in t.matches if m.pairing.away)
    assert len(met) == n * (n - 1) // 2
    assert set(met.values()) == {legs}
    if legs == 2:
        homes = Counter((m.pairing.home, m.pairing.away) for m in t.matches if m.pairing.away)
        assert set(homes.values()) == {1}, "the second leg swaps home and away"
    assert t.round == (n - 1 + n % 2) * legs
    assert replayed(j) == t


@FAST
@given(
    n=st.integers(2, 32),
    best_of=st.sampled_from([1, 3]),
    mishaps=st.booleans(),
    extra=st.integers(0, 2),
    seed=st.integers(0, 2**32),
)
def test_swiss_to_the_end(n: int, best_of: int, mishaps: bool, extra: int, seed: int) -> None:
    """Up to n/2 rounds (or the default): a pairing without repeats always exists."""
    default = max(1, (n - 1).bit_length())  # ceil(log2 n)
    rounds = max(default, min(n // 2, default + extra))
    j = started(n, FormatSpec(Format.SWISS, best_of=best_of, rounds=rounds))
    play_to_end(j, random.Random(seed), mishaps)
    t = j.t
    check_common(t)
    assert t.round == rounds
    pairs = [frozenset((m.pairing.home, m.pairing.away)) for m in t.matches if m.pairing.away]
    assert len(pairs) == len(set(pairs)), "a swiss pairing repeated"
    byes = Counter(m.pairing.home for m in t.matches if m.pairing.away is None)
    gone: set[str] = set()
    for action in j.actions:  # a withdrawn entrant is not paired again
        if isinstance(action, Withdraw):
            gone.add(action.entrant)
        elif isinstance(action, PairRound):
            paired = t.round_matches(action.round)
            assert not gone & {e for m in paired for e in (m.pairing.home, m.pairing.away)}
    if not mishaps and rounds <= (n + 1) // 2:
        assert set(byes.values()) <= {1}, "a second bye while someone had none"
    assert replayed(j) == t


@FAST
@given(
    n=st.integers(2, 32),
    groups=st.integers(1, 8),
    advance=st.integers(1, 3),
    legs=st.sampled_from([1, 2]),
    mishaps=st.booleans(),
    seed=st.integers(0, 2**32),
)
def test_groups_to_the_end(
    n: int, groups: int, advance: int, legs: int, mishaps: bool, seed: int
) -> None:
    groups = max(1, min(groups, n // 2))
    advance = min(advance, n // groups)
    if groups * advance < 2:
        advance = 2
    spec = FormatSpec(Format.GROUPS, groups=groups, advance=advance, legs=legs)
    j = started(n, spec)
    play_to_end(j, random.Random(seed), mishaps)
    t = j.t
    check_common(t)
    check_knockout_path(t)
    group_matches = [m for m in t.matches if m.stage is Stage.GROUP]
    met = Counter(
        frozenset((m.pairing.home, m.pairing.away)) for m in group_matches if m.pairing.away
    )
    members = {(m.group, e) for m in group_matches for e in (m.pairing.home, m.pairing.away) if e}
    sizes = Counter(g for g, _ in members)
    assert sum(sizes.values()) == n, "everyone plays in exactly one group"
    assert max(sizes.values()) - min(sizes.values()) <= 1
    assert set(met.values()) <= {legs}
    assert len(met) == sum(k * (k - 1) // 2 for k in sizes.values())
    knockout = {
        e
        for m in t.matches
        if m.stage is Stage.KNOCKOUT
        for e in (m.pairing.home, m.pairing.away)
        if e
    }
    assert len(knockout) <= groups * advance
    group_of = {e: g for g, e in members}
    if advance == 2 and groups >= 2 and groups & (groups - 1) == 0 and not t.withdrawn:
        for m in t.matches:  # the cross pairing: one group's two meet only in the final
            if m.stage is Stage.KNOCKOUT and m.id != "final" and m.pairing.away:
                assert group_of[m.pairing.home] != group_of[m.pairing.away], m.id
    if not t.withdrawn:
        ranking = final_ranking(t)
        assert set(ranking[: len(knockout)]) == knockout, "the knockout's entrants rank first"
        place = {s.entrant: s.rank for g in sizes for s in standings(t, g)}
        rest = [place[e] for e in ranking[len(knockout) :]]
        assert rest == sorted(rest), "the others by their place in their group"
    assert replayed(j) == t


def pairable(players: list[str], met: set[frozenset[str]]) -> bool:
    """Brute force, independent of the pairing's search: can ``players`` (one of them
    resting when odd) all be paired with someone they have not met?"""
    if len(players) % 2:
        return any(pairable(players[:i] + players[i + 1 :], met) for i in range(len(players)))
    if not players:
        return True
    first, rest = players[0], players[1:]
    return any(
        frozenset((first, other)) not in met and pairable(rest[:i] + rest[i + 1 :], met)
        for i, other in enumerate(rest)
    )


@settings(max_examples=30, deadline=None)
@given(n=st.integers(3, 9), seed=st.integers(0, 2**32))
def test_swiss_beyond_half_says_so_only_when_no_pairing_exists(n: int, seed: int) -> None:
    """With every round the format allows (n-1 or n), the desk's pairing can reach a dead
    end; it says so only when there truly is no pairing without a repeat, and then the
    organiser's pairing (repeats allowed, their call) takes the tournament on."""
    most = n if n % 2 else n - 1
    j = started(n, FormatSpec(Format.SWISS, rounds=most))
    rng = random.Random(seed)
    while not j.t.finished:
        try:
            next_pairings(j.t)
        except SwissPairingImpossible:
            met = {
                frozenset((m.pairing.home, m.pairing.away)) for m in j.t.matches if m.pairing.away
            }
            players = [e.id for e in j.t.entrants]
            assert not pairable(players, met)
            j.do(PairRound(j.t.round + 1, tuple(Pairing(*p) for p in by_hand(players))))
        play_round(j, rng)
    check_common(j.t)
    assert replayed(j) == j.t


def by_hand(players: list[str]) -> list[tuple[str, str | None]]:
    pairs: list[tuple[str, str | None]] = [
        (players[i], players[i + 1]) for i in range(0, len(players) - 1, 2)
    ]
    return pairs + ([(players[-1], None)] if len(players) % 2 else [])
