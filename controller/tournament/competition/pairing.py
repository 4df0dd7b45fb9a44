"""Who plays whom: the bracket, the round robin's fixture, the swiss pairing, the groups.

Pure functions of entrant ids (best first where an order matters); the fold
(:mod:`.tournament`) turns their :class:`~.model.Pairing` values into matches. A pairing's
``home`` is team 0 at the table; ``away`` None is a bye.

The bracket puts the seeds where the standard draw puts them, so seeds 1 and 2 can meet
only in the final, 1 to 4 only from the semifinals:

>>> bracket_positions(8)
[1, 8, 4, 5, 2, 7, 3, 6]
>>> [(p.home, p.away) for p in knockout_first_round(["s1", "s2", "s3"])]
[('s1', None), ('s2', 's3')]

The round robin is the Berger tables (every pair meets once a leg, runs at home or
away of two at most):

>>> [[(p.home, p.away) for p in r] for r in round_robin_rounds(["a", "b", "c", "d"])]
[[('a', 'd'), ('b', 'c')], [('d', 'c'), ('a', 'b')], [('b', 'd'), ('c', 'a')]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set

from .errors import SwissPairingImpossible
from .model import Pairing

__all__ = [
    "bracket_positions",
    "bracket_size",
    "group_letter",
    "groups_knockout",
    "knockout_first_round",
    "knockout_label",
    "knockout_next_round",
    "pair_cost",
    "round_robin_rounds",
    "snake_groups",
    "swiss_first_round",
    "swiss_matching",
    "swiss_pairings",
    "swiss_rounds",
]

_KNOCKOUT_LABELS = {
    1: "Final",
    2: "Semifinal",
    4: "Cuartos de final",
    8: "Octavos de final",
    16: "Dieciseisavos de final",
    32: "Treintaidosavos de final",
}


# ---------------------------------------------------------------------------- knockout


def bracket_size(entrants: int) -> int:
    """The bracket's size: the next power of two (at least 2)."""
    size = 2
    while size < entrants:
        size *= 2
    return size


def bracket_positions(size: int) -> list[int]:
    """The seeds (1-based) in bracket order, the standard draw: each match of the first
    round pairs seed ``s`` with seed ``size + 1 - s``, and the halves are built so that
    the better seeds meet as late as possible."""
    order = [1]
    while len(order) < size:
        doubled = 2 * len(order)
        order = [x for s in order for x in (s, doubled + 1 - s)]
    return order


def knockout_first_round(seeded: Sequence[str]) -> list[Pairing]:
    """The first round of a bracket of the next power of two; the byes (the positions
    past the entrants) fall to the top seeds, and the better seed plays at home."""
    if not seeded:
        return []
    positions = bracket_positions(bracket_size(len(seeded)))
    pairings = []
    for i in range(0, len(positions), 2):
        a, b = sorted(positions[i : i + 2])
        home = seeded[a - 1]
        away = seeded[b - 1] if b <= len(seeded) else None
        pairings.append(Pairing(home, away))
    return pairings


def knockout_next_round(winners: Sequence[str]) -> list[Pairing]:
    """The winners of a round, in bracket order, paired two by two (the upper one home)."""
    return [Pairing(winners[i], winners[i + 1]) for i in range(0, len(winners) - 1, 2)]


def knockout_label(matches: int) -> str:
    """What a knockout round of ``matches`` matches is called.

    >>> knockout_label(8), knockout_label(1)
    ('Octavos de final', 'Final')
    """
    return _KNOCKOUT_LABELS.get(matches, f"Ronda de {2 * matches}")


# ---------------------------------------------------------------------------- round robin


def round_robin_rounds(order: Sequence[str], legs: int = 1) -> list[list[Pairing]]:
    """The whole fixture by the Berger tables (FIDE's): with ``n`` places (an odd count
    gets an empty place, the bye), round 1 is 1-n, 2-(n-1), ...; each next round adds
    n/2 to every other number (1 to n-1, cyclically) keeping its side, and the last
    place changes side. Every pair meets once a leg, and no entrant plays more than two
    in a row at home or away. The bye (whoever meets the empty place) is listed last.
    The second leg repeats the first with home and away swapped."""
    slots: list[str | None] = list(order)
    if len(slots) % 2:
        slots.append(None)
    count = len(slots)
    if count < 2:
        return []
    half = count // 2
    # 0-based numbers: count - 1 is the fixed place; tables as (home, away) numbers
    tables = [(i, count - 1 - i) for i in range(half)]
    first_leg: list[list[Pairing]] = []
    for _ in range(count - 1):
        matches: list[Pairing] = []
        byes: list[Pairing] = []
        for h, a in tables:
            home, away = slots[h], slots[a]
            if home is None or away is None:
                rests = home if home is not None else away
                if rests is not None:
                    byes.append(Pairing(rests, None))
            else:
                matches.append(Pairing(home, away))
        first_leg.append(matches + byes)
        fixed = count - 1
        turned = []
        for h, a in tables:
            h2 = h if h == fixed else (h + half) % (count - 1)
            a2 = a if a == fixed else (a + half) % (count - 1)
            if fixed in (h, a):
                h2, a2 = a2, h2  # the fixed place changes side
            turned.append((h2, a2))
        tables = turned
    fixture = list(first_leg)
    if legs >= 2:
        fixture += [
            [Pairing(p.away, p.home) if p.away is not None else p for p in r] for r in first_leg
        ]
    return fixture


# ---------------------------------------------------------------------------- swiss


def swiss_rounds(entrants: int) -> int:
    """The default number of swiss rounds: ceil(log2 n), at least 1."""
    rounds = 1
    while 2**rounds < entrants:
        rounds += 1
    return rounds


def swiss_first_round(seeded: Sequence[str]) -> list[Pairing]:
    """Round 1: the top half against the bottom half in seed order (1 v n/2+1, ...);
    with an odd count the lowest seed has the bye."""
    players = list(seeded)
    byes = [Pairing(players.pop(), None)] if len(players) % 2 else []
    half = len(players) // 2
    return [Pairing(players[i], players[i + half]) for i in range(half)] + byes


def swiss_pairings(
    ranked: Sequence[str],
    met: Set[frozenset[str]],
    byes: Mapping[str, int],
    homes: Mapping[str, int],
    round_no: int = 0,
    *,
    scores: Mapping[str, int] | None = None,
    aways: Mapping[str, int] | None = None,
) -> list[Pairing]:
    """A later swiss round: ``ranked`` best first (the standings: matches won, then the
    tie-breaks); ``scores`` the matches each has won (a bye counts one, as the standings
    count it); ``homes`` and ``aways`` the matches each played at home and away.

    The bye goes to the lowest-ranked entrant who has had the fewest (none, first) and
    can rest leaving the others pairable. The rest are paired by weighted matching
    (:func:`swiss_matching`), the best of all the pairings with no repeated cruce:

    1. the least sum of the squared score differences of the pairs (the fewest and the
       smallest floats between score groups);
    2. then the best home/away balance: the least sum over the entrants of
       ``|homes - aways|`` after the round, the side with fewer homes so far at home;
    3. then the least sum of the squared rank differences (the best meets the next best
       of its score group, as the Monrad system would).

    Raises :class:`SwissPairingImpossible` when no such pairing exists."""
    players = tuple(ranked)
    won = scores if scores is not None else {}
    away = aways if aways is not None else {}
    candidates: list[str | None] = [None]
    if len(players) % 2:
        by_need = sorted(range(len(players)), key=lambda i: (byes.get(players[i], 0), -i))
        candidates = [players[i] for i in by_need]
    for resting in candidates:
        rest = tuple(p for p in players if p != resting)
        found = swiss_matching(rest, met, won, homes, away)
        if found is not None:
            pairings = [_home_first(a, b, homes, away) for a, b in found]
            return pairings + ([Pairing(resting, None)] if resting is not None else [])
    raise SwissPairingImpossible(
        f"No se puede armar la ronda {round_no} sin repetir un cruce: armala a mano "
        "(con los cruces que decida el organizador)"
    )


def _balance(entrant: str, homes: Mapping[str, int], aways: Mapping[str, int]) -> int:
    return homes.get(entrant, 0) - aways.get(entrant, 0)


def _home_first(
    a: str, b: str, homes: Mapping[str, int], aways: Mapping[str, int] | None = None
) -> Pairing:
    """The side that has played more at home plays away (the better ranked, ``a``,
    at home on a tie)."""
    away = aways if aways is not None else {}
    return Pairing(b, a) if _balance(a, homes, away) > _balance(b, homes, away) else Pairing(a, b)


def pair_cost(
    a: str,
    b: str,
    ranks: Mapping[str, int],
    scores: Mapping[str, int],
    homes: Mapping[str, int],
    aways: Mapping[str, int],
) -> tuple[int, int, int]:
    """What pairing ``a`` with ``b`` costs, compared in order: the squared score
    difference, the two sides' ``|homes - aways|`` after the match (the one with the
    lower balance at home), the squared rank difference."""
    ba, bb = _balance(a, homes, aways), _balance(b, homes, aways)
    low, high = min(ba, bb), max(ba, bb)
    score = (scores.get(a, 0) - scores.get(b, 0)) ** 2
    return score, abs(low + 1) + abs(high - 1), (ranks[a] - ranks[b]) ** 2


def swiss_matching(
    players: Sequence[str],
    met: Set[frozenset[str]],
    scores: Mapping[str, int],
    homes: Mapping[str, int],
    aways: Mapping[str, int],
) -> list[tuple[str, str]] | None:
    """The pairs (better ranked first) of the pairing of ``players`` (an even count,
    best first) with no pair in ``met`` whose summed :func:`pair_cost` is least in its
    order (the score part first, then the balance, then the ranks); None when no such
    pairing exists.

    Exact: a maximum-weight matching among the maximum-cardinality ones (networkx's
    blossom algorithm, on integer weights), with the three parts folded into one
    weight so that any gain in an earlier part outweighs every later one."""
    import networkx as nx  # imported here: the rest of the competition does not need it

    n = len(players)
    if n == 0:
        return []
    ranks = {p: i for i, p in enumerate(players)}
    costs: dict[tuple[int, int], tuple[int, int, int]] = {}
    for i in range(n):
        for j in range(i + 1, n):
            if frozenset((players[i], players[j])) not in met:
                costs[i, j] = pair_cost(players[i], players[j], ranks, scores, homes, aways)
    if not costs:
        return None
    # Each part's whole sum (over n/2 pairs) stays below one unit of the part before.
    rank_span = n * n * n + 1
    balance_span = (max(c[1] for c in costs.values()) * n + 1) * rank_span
    score_top = max(c[0] for c in costs.values())
    top = (score_top * balance_span + balance_span) * n + 1
    graph: nx.Graph[int] = nx.Graph()
    graph.add_nodes_from(range(n))
    for (i, j), (score, balance, rank) in costs.items():
        weight = top - (score * balance_span + balance * rank_span + rank)
        graph.add_edge(i, j, weight=weight)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    if 2 * len(matching) != n:
        return None
    pairs = sorted((min(i, j), max(i, j)) for i, j in matching)
    return [(players[i], players[j]) for i, j in pairs]


# ---------------------------------------------------------------------------- groups


def group_letter(index: int) -> str:
    """A, B, ..., Z, then AA, AB, ... (topic-safe)."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


def snake_groups(order: Sequence[str], groups: int) -> list[list[str]]:
    """The groups filled by snake seeding: seeds 1..g one to each group, g+1..2g back
    the other way, and so on.

    >>> snake_groups(["1", "2", "3", "4", "5", "6"], 2)
    [['1', '4', '5'], ['2', '3', '6']]
    """
    filled: list[list[str]] = [[] for _ in range(groups)]
    for i, entrant in enumerate(order):
        row, col = divmod(i, groups)
        filled[col if row % 2 == 0 else groups - 1 - col].append(entrant)
    return filled


def groups_knockout(qualifiers: Sequence[Sequence[str]]) -> list[Pairing]:
    """The first knockout round after the groups; ``qualifiers[g]`` is group g's best,
    in their place order.

    Two from each of 2, 4, 8, ... groups (a full bracket): the cross pairing, A1 v B2,
    C1 v D2, ..., then B1 v A2, D1 v C2, ..., so that two of one group meet only in the
    final.
    Otherwise the qualifiers are seeded into a bracket (the group winners first, in group
    order; the runners-up in reverse order, and so on) with its byes.

    >>> [(p.home, p.away) for p in groups_knockout([["A1", "A2"], ["B1", "B2"]])]
    [('A1', 'B2'), ('B1', 'A2')]
    """
    groups = len(qualifiers)
    if groups >= 2 and groups & (groups - 1) == 0 and all(len(q) == 2 for q in qualifiers):
        upper = [Pairing(qualifiers[i][0], qualifiers[i + 1][1]) for i in range(0, groups, 2)]
        lower = [Pairing(qualifiers[i + 1][0], qualifiers[i][1]) for i in range(0, groups, 2)]
        return upper + lower
    places = max((len(q) for q in qualifiers), default=0)
    seeded: list[str] = []
    for place in range(places):
        row = [q[place] for q in qualifiers if len(q) > place]
        seeded += row if place % 2 == 0 else row[::-1]
    return knockout_first_round(seeded)
