"""Best play with the cards face up: which team wins the bazas from here.

The broadcast view shows, after every action, which team would win the hand's bazas if
every seat played its best with every card face up (RULES.md section 13, decision 25):
an exact search over the cards left, with nothing but cards played (no calls, no mazo),
partners playing as one, each team playing to win the hand (not to win more bazas).

A hand always has a winner (section 3: a parda is settled by the parda table, three
pardas go to the mano's team), so the search answers one team, never a tie. Cards of
equal truco strength in one hand are interchangeable for the bazas, so the search tries
one of each; positions reached twice are looked up, not searched again.

Pure: a function of the position given, no I/O, no clock, no randomness.

>>> from controller.engine.cards import Card
>>> c = Card.from_str
>>> p = Position(
...     order=(0, 1), hands=((c("1E"), c("4C"), c("5C")), (c("3O"), c("3B"), c("4B"))),
...     table=(), bazas=(), leader=0, value=1)
>>> best_play(p).team  # seat 0 leads its 4C: the 1E and the 5C take the next two
0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from .cards import STRENGTH, Card
from .hand import TRUCO_VALUE, HandPlay, hand_winner_of

__all__ = ["BestPlay", "Position", "best_play", "position_of"]

#: Seats at most at a table (the search's tables are sized for it).
_MAX_SEATS: Final = 6


@dataclass(frozen=True, slots=True)
class Position:
    """The cards of a hand in play, face up.

    ``order`` is the play order from the mano (the hand's seats, or one pica's two);
    ``hands[seat]`` the cards ``seat`` still holds (indexed by seat number, empty for a
    seat not in ``order``); ``table`` the (seat, card) played in the current baza;
    ``bazas`` the team that won each finished baza (``None`` for a parda); ``leader`` the
    seat that led (or leads) the current baza; ``value`` the points at stake (the last
    accepted truco call's, 1 with none).
    """

    order: tuple[int, ...]
    hands: tuple[tuple[Card, ...], ...]
    table: tuple[tuple[int, Card], ...]
    bazas: tuple[int | None, ...]
    leader: int
    value: int

    def __post_init__(self) -> None:
        n = len(self.order)
        if n not in (2, 4, 6) or len(set(self.order)) != n:
            raise ValueError(f"a hand is played by 2, 4 or 6 seats, not {self.order}")
        if any(not 0 <= s < len(self.hands) for s in self.order):
            raise ValueError("every seat of the order needs its hand")
        if self.leader not in self.order:
            raise ValueError(f"seat {self.leader} does not play this hand")
        if _decided(self.bazas, self.order[0] & 1) is not None:
            raise ValueError("the hand is already decided")
        if len(self.table) >= n:
            raise ValueError("a complete baza is not on the table")
        expected = 3 - len(self.bazas)
        on_table = {s for s, _ in self.table}
        for s in self.order:
            if len(self.hands[s]) != expected - (s in on_table):
                raise ValueError(f"seat {s} holds {len(self.hands[s])} cards, not {expected}")
        seen: list[Card] = [c for s in self.order for c in self.hands[s]]
        seen += [c for _, c in self.table]
        if len(set(seen)) != len(seen):
            raise ValueError("a card is in two places")

    @property
    def turn(self) -> int:
        """The seat whose card comes next."""
        if not self.table:
            return self.leader
        i = self.order.index(self.table[-1][0])
        return self.order[(i + 1) % len(self.order)]


@dataclass(frozen=True, slots=True)
class BestPlay:
    """What best play with the cards face up gives.

    ``team`` wins the hand's bazas (and ``value`` points); ``line`` is one best play to
    the hand's end, (seat, card) in order: the winners play a card that keeps the hand
    theirs, the losers (who lose whatever they play) their strongest card. ``choices``
    lists, for each card the seat to play holds, the team that wins if it plays it.
    """

    team: int
    value: int
    line: tuple[tuple[int, Card], ...]
    choices: tuple[tuple[Card, int], ...]


def _decided(bazas: Sequence[int | None], mano_team: int) -> int | None:
    """The hand's winner by the parda table (section 3), ``None`` while undecided."""
    return hand_winner_of([-1 if b is None else b for b in bazas], mano_team)


#: A search state: every seat's strengths left (strongest first, by seat), the bazas'
#: results (-1 parda), the current baza's leader, the seat to play, the cards on the
#: table, the top strength there, the teams holding it (bits) and its first seat.
_State = tuple[tuple[tuple[int, ...], ...], tuple[int, ...], int, int, int, int, int, int]


class _Search:
    """One search: the seats' order and the positions it has already judged."""

    __slots__ = ("mano_team", "memo", "n", "next_seat")

    def __init__(self, order: tuple[int, ...]) -> None:
        self.n = len(order)
        nxt = [0] * _MAX_SEATS
        for i, s in enumerate(order):
            nxt[s] = order[(i + 1) % len(order)]
        self.next_seat = tuple(nxt)
        self.mano_team = order[0] & 1
        self.memo: dict[_State, int] = {}

    def step(self, state: _State, strength: int) -> _State | int:
        """The state after the seat to play plays a card of ``strength``, or the team
        that wins the hand when that card decides it."""
        hands, bazas, leader, seat, count, top, topteams, topfirst = state
        held = hands[seat]
        i = held.index(strength)
        hands = (*hands[:seat], held[:i] + held[i + 1 :], *hands[seat + 1 :])
        team = seat & 1
        if strength > top:
            top, topteams, topfirst = strength, 1 << team, seat
        elif strength == top:
            topteams |= 1 << team
        count += 1
        if count < self.n:
            return (hands, bazas, leader, self.next_seat[seat], count, top, topteams, topfirst)
        # the baza is complete: one team on top wins it (its first seat leads), else parda
        if topteams == 3:
            result = -1
        else:
            result = topfirst & 1
            leader = topfirst
        bazas = (*bazas, result)
        winner = _decided(bazas, self.mano_team)
        if winner is not None:
            return winner
        return (hands, bazas, leader, leader, 0, -1, 0, -1)

    def after(self, state: _State, strength: int) -> int:
        """The team that wins the hand with best play after the seat to play plays a
        card of ``strength``."""
        nxt = self.step(state, strength)
        return nxt if isinstance(nxt, int) else self.win(nxt)

    def win(self, state: _State) -> int:
        """The team that wins the hand from ``state`` with best play."""
        found = self.memo.get(state)
        if found is not None:
            return found
        team = state[3] & 1
        result = 1 - team
        for strength in _moves(state[0][state[3]], state[5]):
            if self.after(state, strength) == team:
                result = team
                break
        self.memo[state] = result
        return result


def _moves(held: tuple[int, ...], top: int) -> list[int]:
    """The distinct strengths ``held`` can play, the likeliest winners first: the
    weakest card that beats the table, then the others strongest first."""
    distinct = sorted(set(held), reverse=True)
    beating = [s for s in distinct if s > top]
    first = beating[-1] if beating else distinct[-1]
    return [first] + [s for s in distinct if s != first]


def _by_strength(cards: Sequence[Card]) -> list[Card]:
    """Strongest first (cards of one strength in deck order)."""
    return sorted(cards, key=lambda c: (-STRENGTH[c.index], c.index))


def best_play(position: Position) -> BestPlay:
    """Which team wins the bazas from ``position`` with best play, cards face up."""
    order = position.order
    search = _Search(order)
    hands = tuple(
        tuple(sorted((STRENGTH[c.index] for c in cs), reverse=True)) if s in order else ()
        for s, cs in enumerate(position.hands)
    ) + ((),) * (_MAX_SEATS - len(position.hands))
    bazas = tuple(-1 if b is None else b for b in position.bazas)
    top, topteams, topfirst = -1, 0, -1
    for s, c in position.table:
        st = STRENGTH[c.index]
        if st > top:
            top, topteams, topfirst = st, 1 << (s & 1), s
        elif st == top:
            topteams |= 1 << (s & 1)
    turn = position.turn
    state: _State = (
        hands,
        bazas,
        position.leader,
        turn,
        len(position.table),
        top,
        topteams,
        topfirst,
    )
    team = search.win(state)
    choices = tuple(
        (card, search.after(state, STRENGTH[card.index]))
        for card in _by_strength(position.hands[turn])
    )
    return BestPlay(team, position.value, _line(search, position, state, team), choices)


def _line(
    search: _Search, position: Position, state: _State, team: int
) -> tuple[tuple[int, Card], ...]:
    """One best play from ``state`` to the hand's end (``BestPlay.line``)."""
    cards = [list(cs) for cs in position.hands]
    line: list[tuple[int, Card]] = []
    while True:
        seat = state[3]
        held = _by_strength(cards[seat])
        card = held[0]  # the losers' strongest card
        if seat & 1 == team:  # a card that keeps the hand: the first the search tries
            strength = next(
                st for st in _moves(state[0][seat], state[5]) if search.after(state, st) == team
            )
            card = next(c for c in held if STRENGTH[c.index] == strength)
        line.append((seat, card))
        cards[seat].remove(card)
        nxt = search.step(state, STRENGTH[card.index])
        if isinstance(nxt, int):
            return tuple(line)
        state = nxt


def position_of(play: HandPlay) -> Position | None:
    """The position of a play still going on whose seats' cards were all read at the
    deal (``None`` otherwise: with a hand unknown there is nothing to search)."""
    if not play.live:
        return None
    dealt = play.deal.cards
    played = play.deal.played
    hands: list[tuple[Card, ...]] = []
    for s in range(len(dealt)):
        cs = dealt[s]
        if s in play.order:
            if cs is None:
                return None
            hands.append(tuple(Card.from_index(c) for c in cs if not played >> c & 1))
        else:
            hands.append(())
    return Position(
        order=play.order,
        hands=tuple(hands),
        table=play.table_cards,
        bazas=play.baza_results,
        leader=play.leader,
        value=TRUCO_VALUE[play.truco_level],
    )
