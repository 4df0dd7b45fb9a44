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

The round robin is the circle method (every pair meets once a leg):

>>> [[(p.home, p.away) for p in r] for r in round_robin_rounds(["a", "b", "c"])]
[[('b', 'c'), ('a', None)], [('c', 'a'), ('b', None)], [('a', 'b'), ('c', None)]]
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
    "round_robin_rounds",
    "snake_groups",
    "swiss_first_round",
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
    """The whole fixture by the circle method: the first entrant stays, the others turn
    one place a fecha; with an odd count one entrant rests each fecha (a bye, listed
    last). The second leg repeats the first with home and away swapped."""
    slots: list[str | None] = list(order)
    if len(slots) % 2:
        slots.append(None)
    count = len(slots)
    if count < 2:
        return []
    first_leg: list[list[Pairing]] = []
    others = slots[1:]
    for r in range(count - 1):
        turned = others[len(others) - r :] + others[: len(others) - r]
        circle = [slots[0], *turned]
        matches: list[Pairing] = []
        byes: list[Pairing] = []
        for i in range(count // 2):
            a, b = circle[i], circle[count - 1 - i]
            if i == 0 and r % 2:
                a, b = b, a
            if a is None or b is None:
                rests = a if a is not None else b
                if rests is not None:
                    byes.append(Pairing(rests, None))
            else:
                matches.append(Pairing(a, b))
        first_leg.append(matches + byes)
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
) -> list[Pairing]:
    """A later swiss round: ``ranked`` best first (the standings: matches won, then the
    tie-breaks). The bye goes to the lowest-ranked entrant who has not had one (then to
    the one with fewest). The rest are paired down the table: the best unpaired entrant
    meets the next one it has not met (the Monrad system), backtracking when that leaves
    the others unpairable, so no pairing repeats. The side with fewer home matches so far
    plays at home (the better ranked on a tie).

    Raises :class:`SwissPairingImpossible` when no such pairing exists."""
    players = tuple(ranked)
    candidates: list[str | None] = [None]
    if len(players) % 2:
        by_need = sorted(range(len(players)), key=lambda i: (byes.get(players[i], 0), -i))
        candidates = [players[i] for i in by_need]
    for resting in candidates:
        rest = tuple(p for p in players if p != resting)
        found = _pair_down(rest, met)
        if found is not None:
            pairings = [_home_first(a, b, homes) for a, b in found]
            return pairings + ([Pairing(resting, None)] if resting is not None else [])
    raise SwissPairingImpossible(
        f"No se puede armar la ronda {round_no} sin repetir un cruce: armala a mano "
        "(con los cruces que decida el organizador)"
    )


def _home_first(a: str, b: str, homes: Mapping[str, int]) -> Pairing:
    return Pairing(b, a) if homes.get(a, 0) > homes.get(b, 0) else Pairing(a, b)


def _pair_down(players: tuple[str, ...], met: Set[frozenset[str]]) -> list[tuple[str, str]] | None:
    failed: set[tuple[str, ...]] = set()

    def go(rest: tuple[str, ...]) -> list[tuple[str, str]] | None:
        if not rest:
            return []
        if rest in failed:
            return None
        top = rest[0]
        for j in range(1, len(rest)):
            if frozenset((top, rest[j])) in met:
                continue
            tail = go(rest[1:j] + rest[j + 1 :])
            if tail is not None:
                return [(top, rest[j]), *tail]
        failed.add(rest)
        return None

    return go(players)


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
