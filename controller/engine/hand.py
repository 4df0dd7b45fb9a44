"""One hand's play, built of one small state object per phase.

A ``HandPlay`` is the play of a hand between some seats: every seat in a normal hand, or
the two seats of one pica in a pica-pica hand (RULES.md section 8b), which holds three.
It is built of the phases of a hand, each a state object that lists its legal actions,
judges any action (its refusal, ``None`` exactly when legal) and applies its actions:

- ``TrucoPhase``: the truco ladder; has the floor while a truco call awaits its answer;
- ``EnvidoPhase``: the envido chain; has the floor while an envido call awaits its answer;
- ``FlorPhase``: the flor, its announcements, course and raises; has the floor while
  announcements or an answer are awaited (hands known);
- ``TellingPhase``: the telling of points (declared claims, or hands unknown);
- ``FreePlay``: no call awaits an answer: cards, mazo and calls on one's own initiative.

Each phase reads and writes only its own fields; phases talk to each other only through
the hand's narrow interface (``HandPlay``'s methods: ``sung``, ``start_telling``,
``told``, ``cancel_envido`` and the like; ``tests/engine/test_phases.py`` walks the code to
check it). The bazas (turn, table, results) and the cards (``Deal``) are the hand's.
``HandPlay.floor`` is the only place that says which phase has the floor; legal actions
and refusals ask that phase, and ``apply`` sends each action to the phase it belongs to.
Flor refusals are all decided by ``FlorPhase``: the phase with the floor hands it the
flor's actions with what it knows (whose call is pending, whether a flor may answer it).
Points go to a ``Board`` shared by the game.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from types import FunctionType
from typing import Any, ClassVar, Final

from .actions import (
    ACTION_TABLE,
    DECLARE_SLOT,
    K_CON_FLOR_ME_ACHICO,
    K_CONTRAFLOR,
    K_CONTRAFLOR_AL_RESTO,
    K_DECLARE,
    K_ENVIDO,
    K_FALTA_ENVIDO,
    K_FLOR,
    K_MAZO,
    K_NO_QUIERO,
    K_PLAY,
    K_QUIERO,
    K_REAL_ENVIDO,
    K_RETRUCO,
    K_SHOW,
    K_SON_BUENAS,
    K_TRUCO,
    K_VALE_CUATRO,
    KIND_SLOT,
    Action,
    Kind,
    team_of,
)
from .cards import CARDS, STRENGTH, SUIT_OF, Card, envido_of_indices, flor_of_indices
from .errors import RefusalCode
from .results import Award, Reason
from .rules import Claims, Falta, HouseRules

__all__ = ["Board", "Deal", "FreePlay", "HandPlay", "Saved", "Telling", "Trail", "undo_action"]


class Saved:
    """An object that actions change, and undo puts back: the board, the deal, a play,
    a phase. The fields that actions change are declared once, in the class's ``SAVED``,
    and hold values that are replaced, never changed in place (numbers, tuples,
    frozensets, ``None``, enum members, or an object saved on its own, such as a play's
    telling): the state of an object is the tuple of those values, as python-chess's
    ``_BoardState`` is a board's.

    ``save`` is the one way onto the trail (``Trail``): before changing a declared field,
    an object saves all of them (one entry), and ``undo_action`` puts an action's entries
    back, newest first. Both go through the reader and writer made from ``SAVED``
    (``_accessors``): no entry has a width to count and no undo is written by hand.
    ``tests/engine/test_undo.py`` checks that every field hand.py changes after building
    an object is declared, and that none is changed in place.
    """

    __slots__ = ()

    SAVED: ClassVar[tuple[str, ...]] = ()

    def save(self, trail: Trail) -> None:
        """The declared fields, about to be overwritten, as one entry on the trail."""
        read, write = _ACCESSORS[type(self)]
        trail.append((write, self, read(self)))

    def save_part(self, trail: Trail, part: Part) -> None:
        """Some of the declared fields (``part``, made by ``_part`` from a subset of
        ``SAVED``), about to be overwritten, as one entry: for a hot action that changes
        few of them (a card played)."""
        read, write = part
        trail.append((write, self, read(self)))


#: A reader of an object's declared fields (a tuple of their values), and their writer.
_Read = Callable[[Any], tuple[Any, ...]]
_Write = Callable[[Any, tuple[Any, ...]], None]

#: The reader and the writer of a part of a class's ``SAVED`` (``_part``).
Part = tuple[_Read, _Write]

#: What one ``save`` put on the trail: the class's writer, the object, the values.
Entry = tuple[_Write, Saved, tuple[Any, ...]]

#: What the actions of a hand overwrote, in order: ``None`` marks where an action starts,
#: then one entry per ``Saved.save``. A pop restores what its action overwrote, never a
#: replay. Only the current hand's plays hold the trail (``Game`` detaches a hand's plays
#: when the next is dealt), so the trail's references to them make no cycle that outlives
#: their hand.
Trail = list[Entry | None]

#: The trail of a play whose hand is over: nothing is written there.
NO_TRAIL: Trail = []


def undo_action(trail: Trail) -> None:
    """Every object the last action changed, back as it was (its entries, newest first,
    back to the action's mark)."""
    entry = trail.pop()
    while entry is not None:
        write, obj, values = entry
        write(obj, values)
        entry = trail.pop()


def _accessors(names: tuple[str, ...]) -> tuple[_Read, _Write]:
    """The reader and the writer of the fields ``names``, made from them as
    ``dataclasses`` makes a class's ``__init__``: plain attribute reads and writes. The
    compiled build (its classes' fields read from outside through descriptors either
    way) reads them quicker with ``operator.attrgetter``, one C call; the pure build
    quicker with the made function (attrgetter looks each name up: three times slower)."""
    assert names and all(
        all(part.isidentifier() for part in name.split(".")) for name in names
    ), names
    fields = "".join(f"obj.{name}, " for name in names)
    source = (
        f"def read(obj):\n    return ({fields})\n"
        f"def write(obj, values):\n    ({fields}) = values\n"
    )
    made: dict[str, Any] = {}
    exec(source, made)  # the source is made from the class's own field names, checked above
    read: _Read = made["read"]
    if _COMPILED and len(names) > 1:
        read = attrgetter(*names)
    return read, made["write"]


def _is_python_function() -> None:
    """A probe: a plain Python function in the pure build, a native one compiled."""


#: This module is the compiled build (mypyc makes its functions native).
_COMPILED: Final = not isinstance(_is_python_function, FunctionType)


#: Each saved class's reader and writer of its ``SAVED`` fields: filled below the classes.
_ACCESSORS: Final[dict[type, tuple[_Read, _Write]]] = {}

#: Every award made so far, by (team, points, reason, pica): an award is a value, so one
#: instance serves every hand that scores the same (a few hundred at most: two teams,
#: points up to the target, six reasons, seven picas).
_AWARDS: Final[dict[tuple[int, int, Reason, int | None], Award]] = {}

R = RefusalCode

TRUCO_VALUE: Final[tuple[int, ...]] = (1, 2, 3, 4)
_TRUCO_KINDS: Final[tuple[Kind, ...]] = (K_TRUCO, K_RETRUCO, K_VALE_CUATRO)
_LEVEL_OF: Final = {K_TRUCO: 1, K_RETRUCO: 2, K_VALE_CUATRO: 3}
_ENVIDO_KINDS: Final[tuple[Kind, ...]] = (K_ENVIDO, K_REAL_ENVIDO, K_FALTA_ENVIDO)
#: What each envido call adds to the chain's points (a falta's is worked out: ``falta``).
_ENV_VALUE: Final[dict[Kind, int]] = {K_ENVIDO: 2, K_REAL_ENVIDO: 3, K_FALTA_ENVIDO: 0}
FLOR_KINDS: Final[tuple[Kind, ...]] = (
    K_FLOR,
    K_CONTRAFLOR,
    K_CONTRAFLOR_AL_RESTO,
    K_CON_FLOR_ME_ACHICO,
)
_ANSWERS: Final[tuple[Kind, ...]] = (K_QUIERO, K_NO_QUIERO, K_CON_FLOR_ME_ACHICO)
#: What free play hands to the flor to judge: the flor's calls, and the answers (which in
#: free play answer nothing, or wait for an open flor's course).
_FREE_FLOR_KINDS: Final[tuple[Kind, ...]] = (*FLOR_KINDS, K_QUIERO, K_NO_QUIERO)

#: The most an envido or a flor scores in a pica (section 8b); also a falta's value there.
PICA_CAP: Final = 6



class FlorState(enum.Enum):
    """Where the hand's flor stands."""

    NONE = "none"  # no flor called
    OPEN = "open"  # called: announcements, the other team's course, answers awaited
    CLOSED = "closed"  # settled (or set to be proven at the end of the play)


class FlorCourse(enum.Enum):
    """The course of the flor, set by the other team's first flor action (section 6)."""

    NONE = "none"  # not set yet
    FLOR = "flor"  # a flor: the flores compared
    ACHICO = "achico"  # con flor me achico
    CONTRA = "contraflor"
    RESTO = "contraflor al resto"
    BACKED = "backed"  # a contraflor or al resto refused: its points fixed, the other
    # team's announcements go on


# The members under module names (an enum attribute costs five times a module name).
_COURSE_NONE: Final = FlorCourse.NONE
_COURSE_FLOR: Final = FlorCourse.FLOR
_COURSE_ACHICO: Final = FlorCourse.ACHICO
_COURSE_CONTRA: Final = FlorCourse.CONTRA
_COURSE_RESTO: Final = FlorCourse.RESTO
_COURSE_BACKED: Final = FlorCourse.BACKED
_FLOR_NONE: Final = FlorState.NONE
_FLOR_OPEN: Final = FlorState.OPEN
_FLOR_CLOSED: Final = FlorState.CLOSED

_NO_SEATS: Final[frozenset[int]] = frozenset()

_ENVIDO_RANGE: Final = tuple(range(8)) + tuple(range(20, 34))
_FLOR_RANGE: Final = tuple(range(20, 39))
_ENVIDO_SET: Final = frozenset(_ENVIDO_RANGE)
_FLOR_SET: Final = frozenset(_FLOR_RANGE)

_KS: Final = KIND_SLOT
_S_QUIERO: Final = _KS + K_QUIERO
_S_NO_QUIERO: Final = _KS + K_NO_QUIERO
_S_MAZO: Final = _KS + K_MAZO
_S_FLOR: Final = _KS + K_FLOR
_S_ACHICO: Final = _KS + K_CON_FLOR_ME_ACHICO
_S_CONTRA: Final = _KS + K_CONTRAFLOR
_S_RESTO: Final = _KS + K_CONTRAFLOR_AL_RESTO
_S_SON_BUENAS: Final = _KS + K_SON_BUENAS
_S_TRUCO: Final[tuple[int, ...]] = (0, _KS + K_TRUCO, _KS + K_RETRUCO, _KS + K_VALE_CUATRO)

#: A seat's three envido calls, listed together.
_ENVIDO_ACTIONS: Final = tuple(tuple(row[_KS + k] for k in _ENVIDO_KINDS) for row in ACTION_TABLE)

#: (envido, flor) points of a dealt hand, by its card indices: computed once per hand shape.
_POINTS: Final[dict[tuple[int, ...], tuple[int, int | None]]] = {}
_POINTS_FLOR: Final[dict[tuple[int, ...], tuple[int, int | None]]] = {}


class _SeatActions:
    """Actions listed together for one set of seats: every seat's truco, a team's raises."""

    __slots__ = ("raises", "truco")

    def __init__(self, seats: tuple[int, ...]) -> None:
        self.truco = tuple(ACTION_TABLE[s][_S_TRUCO[1]] for s in seats)
        self.raises = tuple(
            {
                lvl: tuple(ACTION_TABLE[s][_S_TRUCO[lvl]] for s in seats if team_of(s) == team)
                for lvl in (2, 3)
            }
            for team in (0, 1)
        )


class _Layout:
    """What a play's seats fix: sorted seats, teams, next seat, the calls listed together."""

    __slots__ = ("actions", "n", "next_seat", "seats", "team_seats")

    def __init__(self, order: tuple[int, ...], players: int) -> None:
        self.n = len(order)
        self.seats = seats = tuple(sorted(order))
        # indexed by team: typed as a tuple of any length (the compiled build would box a
        # pair at every lookup)
        self.team_seats: tuple[tuple[int, ...], ...] = (
            tuple(s for s in seats if team_of(s) == 0),
            tuple(s for s in seats if team_of(s) == 1),
        )
        nxt = [-1] * players
        for i, s in enumerate(order):
            nxt[s] = order[(i + 1) % len(order)]
        self.next_seat = tuple(nxt)
        self.actions = _SeatActions(seats)


#: Layouts by (play order, players at the table): worked out once.
_LAYOUTS: Final[dict[tuple[tuple[int, ...], int], _Layout]] = {}


@dataclass(frozen=True, slots=True)
class Telling:
    """The public state of a telling of points (claims=declared, or hands unknown)."""

    kind: str  # "envido" or "flor"
    declarations: tuple[tuple[int, int | None], ...]  # (seat, points or None for son buenas)
    next_seat: int | None
    best_seat: int | None


class Board(Saved):
    """The game's score, shared by the plays of a hand: their awards are added here
    (``HandPlay.award``)."""

    __slots__ = ("awards", "score", "target", "winner")

    SAVED = ("score", "winner", "awards")

    def __init__(self, target: int, score: tuple[int, int], winner: int | None) -> None:
        self.target = target
        self.score = score
        self.winner = winner
        self.awards: tuple[Award, ...] = ()  # the current hand's


class Deal(Saved):
    """The cards of one hand, shared by its plays: dealt (when read), seen and played."""

    __slots__ = ("all_known", "cards", "env", "flor", "flor_on", "owner", "played", "ready", "seen")

    SAVED = ("seen", "owner", "played")

    def __init__(
        self, cards: Sequence[tuple[int, ...] | None], flor_on: bool, owner: dict[int, int]
    ) -> None:
        n = len(cards)
        self.cards = list(cards)
        self.all_known = None not in cards
        self.flor_on = flor_on
        self.env: list[int] = [0] * n
        self.flor: list[int | None] = [None] * n
        self.ready = False  # envido and flor points: worked out when first needed
        #: each seat's cards seen (played or shown), in the order seen
        self.seen: tuple[tuple[int, ...], ...] = ((),) * n
        #: the seat each card is known to belong to: read at the deal (``owner``, the
        #: deal's own), played or shown (replaced by a copy when a card is added)
        self.owner = owner
        #: the cards played: bit ``c`` set once card ``c`` is played
        self.played = 0

    def _points(self) -> None:
        self.ready = True
        flor_on = self.flor_on
        points = _POINTS_FLOR if flor_on else _POINTS
        for s, cs in enumerate(self.cards):
            if cs is not None:
                pts = points.get(cs)
                if pts is None:
                    pts = points[cs] = (envido_of_indices(cs, flor=flor_on), flor_of_indices(cs))
                self.env[s], self.flor[s] = pts

    @property
    def env_pts(self) -> list[int]:
        """Each seat's envido points (hands known)."""
        if not self.ready:
            self._points()
        return self.env

    @property
    def flor_pts(self) -> list[int | None]:
        """Each seat's flor points, None without a flor (hands known)."""
        if not self.ready:
            self._points()
        return self.flor

    def can_flor(self, s: int) -> bool:
        """``s`` may hold a flor: known to hold one, or not known not to."""
        if self.cards[s] is not None:
            return self.flor_pts[s] is not None
        seen = self.seen[s]
        return not seen or len({SUIT_OF[c] for c in seen}) == 1

    def available(self, s: int) -> list[int]:
        """Cards ``s`` may play."""
        played = self.played
        cs = self.cards[s]
        if cs is not None:
            return [c for c in cs if not played >> c & 1]
        seen = self.seen[s]
        if len(seen) >= 3:
            return [c for c in seen if not played >> c & 1]
        owner = self.owner
        return [c for c in range(40) if not played >> c & 1 and owner.get(c, s) == s]

    def card_refusal(self, s: int, c: int) -> RefusalCode | None:
        """Why ``s`` may not play card ``c``: played already; or not ``s``'s (hands known,
        or read at the deal or shown in another seat's hand: section 11), or a fourth."""
        if self.played >> c & 1:
            return R.CARD_ALREADY_PLAYED
        if self.owner.get(c, s) != s:
            return R.CARD_NOT_IN_HAND
        cs = self.cards[s]
        if cs is not None:
            if c not in cs:
                return R.CARD_NOT_IN_HAND
        elif len(self.seen[s]) >= 3 and c not in self.seen[s]:
            return R.CARD_NOT_IN_HAND
        return None

    def show_refusal(self, s: int, cards: Iterable[Card]) -> RefusalCode | None:
        """Why ``s`` may not show ``cards``: one another seat played, or one not ``s``'s
        (as for a card played), or more than three cards of ``s`` seen."""
        seen = set(self.seen[s])
        cs = self.cards[s]
        played = self.played
        for card in cards:
            c = card.index
            owner = self.owner.get(c, s)
            if owner != s:
                return R.CARD_ALREADY_PLAYED if played >> c & 1 else R.CARD_NOT_IN_HAND
            if cs is not None and c not in cs:
                return R.CARD_NOT_IN_HAND
            seen.add(c)
        if len(seen) > 3:
            return R.CARD_NOT_IN_HAND
        return None


class _Phase(Saved):
    """What the phase with the floor answers: its legal actions, and for any action its
    refusal (``None`` exactly for the actions ``legal`` lists: the property tests check
    the two agree over random positions). Every phase overrides both: a base class, not a
    Protocol, so that the compiled build calls them directly."""

    __slots__ = ()

    def legal(self, h: HandPlay, out: list[Action]) -> None:
        raise NotImplementedError

    def refusal(self, h: HandPlay, a: Action) -> RefusalCode | None:
        raise NotImplementedError


# ---------------------------------------------------------------------------- truco


class TrucoPhase(_Phase):
    """The truco ladder: ``level`` accepted, a ``pending`` call and who may raise next."""

    __slots__ = ("caller", "level", "pending", "raiser")

    SAVED = ("level", "pending", "caller", "raiser")

    def __init__(self) -> None:
        self.level = 0  # accepted: 0 none, 1 truco, 2 retruco, 3 vale cuatro
        self.pending = 0  # level called and awaiting its answer
        self.caller = -1  # team of the pending call
        self.raiser = -1  # team that may raise next

    def key(self) -> tuple[int, ...]:
        return (self.level, self.pending, self.caller, self.raiser)

    def calls(self, h: HandPlay, out: list[Action]) -> None:
        """Truco calls open in free play: truco by anyone, or the accepting team's raise."""
        level = self.level
        if level == 0:
            out.extend(h.seat_actions.truco)
        elif level < 3:
            out.extend(h.seat_actions.raises[self.raiser][level + 1])

    def legal(self, h: HandPlay, out: list[Action]) -> None:
        """A call awaits its answer: the challenged team's answers (el envido está primero)."""
        table = ACTION_TABLE
        pending = self.pending
        primero = pending == 1 and h.baza == 0
        envido = primero and not h.sung()
        flor_call = primero and h.rules.flor and not h.flor_called()
        implicit = h.rules.implicit_quiero
        deal = h.deal
        for s in h.team_seats[1 - self.caller]:
            row = table[s]
            out.append(row[_S_QUIERO])
            out.append(row[_S_NO_QUIERO])
            if pending < 3:
                out.append(row[_S_TRUCO[pending + 1]])
            out.append(row[_S_MAZO])
            if envido:
                out.extend(_ENVIDO_ACTIONS[s])
            if flor_call and not h.seats_played >> s & 1 and deal.can_flor(s):
                out.append(row[_S_FLOR])
            if implicit and s == h.turn:
                for c in deal.available(s):
                    out.append(row[c])
        h.late_flor(out)

    def refusal(self, h: HandPlay, a: Action) -> RefusalCode | None:
        k, s = a.kind, a.seat
        if k in FLOR_KINDS:  # a flor answering a truco (el envido está primero)
            return h.flor_refusal_answering(a, self.caller, self.pending == 1)
        if team_of(s) == self.caller:
            return R.CALL_PENDING
        if k is K_QUIERO or k is K_NO_QUIERO or k is K_MAZO:
            return None
        if k in _TRUCO_KINDS:
            if k is K_TRUCO:
                return R.CALL_PENDING
            return None if _LEVEL_OF[k] == self.pending + 1 else R.RAISE_NOT_ALLOWED
        primero = self.pending == 1 and h.baza == 0
        if k in _ENVIDO_KINDS:
            if primero and not h.sung():
                return None
            return R.CALL_PENDING if self.pending != 1 else R.ENVIDO_CLOSED
        if k is K_PLAY and h.rules.implicit_quiero:
            if s != h.turn:
                return R.NOT_YOUR_TURN
            assert a.card is not None
            return h.deal.card_refusal(s, a.card.index)
        return R.CALL_PENDING

    def apply(self, h: HandPlay, a: Action) -> None:
        k = a.kind
        team = team_of(a.seat)
        self.save(h.trail)
        if k is K_QUIERO:
            self._accept(team)
        elif k is K_NO_QUIERO:
            level = self.pending
            self.pending = 0
            h.finish([(self.caller, TRUCO_VALUE[level - 1], Reason.TRUCO)])
        else:  # a call, or a raise that accepts the pending call
            if self.pending:
                self._accept(team)
            self.pending = _LEVEL_OF[k]
            self.caller = team

    def accept(self, h: HandPlay, team: int) -> None:
        """The pending call accepted (a card played in answer: implicit quiero)."""
        self.save(h.trail)
        self._accept(team)

    def _accept(self, team: int) -> None:
        self.level = self.pending
        self.pending = 0
        self.raiser = team

    def stop(self, h: HandPlay) -> None:
        """The play ended: no call awaits an answer."""
        self.save(h.trail)
        self.pending = 0

    def call_refusal(self, k: Kind, s: int) -> RefusalCode | None:
        """A truco call or raise while no call is pending: ``None`` when it is open."""
        level = self.level
        if level == 0:
            return None if k is K_TRUCO else R.RAISE_NOT_ALLOWED
        # nothing above vale cuatro: at level 3 no call is level + 1
        ok = team_of(s) == self.raiser and _LEVEL_OF[k] == level + 1
        return None if ok else R.RAISE_NOT_ALLOWED


# ---------------------------------------------------------------------------- envido


class EnvidoPhase(_Phase):
    """The envido chain: ``done`` once played, the ``chain`` and a ``pending`` call."""

    __slots__ = ("caller", "chain", "done", "pending", "result")

    SAVED = ("done", "pending", "caller", "result", "chain")

    def __init__(self) -> None:
        self.done = False
        self.chain: tuple[Kind, ...] = ()
        self.pending = False
        self.caller = -1
        self.result: tuple[int, int] | None = None  # (seat, points) of the winner

    def key(self) -> tuple[object, ...]:
        return (self.done, self.chain, self.pending, self.caller, self.result)

    def window(self, h: HandPlay, s: int) -> bool:
        """``s`` may start an envido on its own initiative (turn aside)."""
        return (
            h.baza == 0
            and not self.done
            and not h.flor_called()
            and not h.truco_accepted()
            and not h.seats_played >> s & 1
        )

    def raises(self) -> tuple[Kind, ...]:
        chain = self.chain
        if not chain:
            return _ENVIDO_KINDS
        last = chain[-1]
        if last is K_ENVIDO:
            return _ENVIDO_KINDS if chain.count(K_ENVIDO) == 1 else _ENVIDO_KINDS[1:]
        if last is K_REAL_ENVIDO:
            return _ENVIDO_KINDS[2:]
        return ()

    def legal(self, h: HandPlay, out: list[Action]) -> None:
        """An envido call awaits its answer."""
        raises = self.raises()
        flor = h.rules.flor and not h.flor_called()
        for s in h.team_seats[1 - self.caller]:
            row = ACTION_TABLE[s]
            out.append(row[_S_QUIERO])
            out.append(row[_S_NO_QUIERO])
            for r in raises:
                out.append(row[_KS + r])
            if flor and not h.seats_played >> s & 1 and h.deal.can_flor(s):
                out.append(row[_S_FLOR])

    def refusal(self, h: HandPlay, a: Action) -> RefusalCode | None:
        k, s = a.kind, a.seat
        if k in FLOR_KINDS:  # a flor answering the envido
            return h.flor_refusal_answering(a, self.caller, True)
        if team_of(s) == self.caller:
            return R.CALL_PENDING
        if k is K_QUIERO or k is K_NO_QUIERO:
            return None
        if k in _ENVIDO_KINDS:
            return None if k in self.raises() else R.RAISE_NOT_ALLOWED
        return R.CALL_PENDING

    def apply(self, h: HandPlay, a: Action) -> None:
        k = a.kind
        team = team_of(a.seat)
        self.save(h.trail)
        if not self.pending:  # a call opens the chain
            self.done = True
            self.pending = True
            self.chain = (k,)
            self.caller = team
        elif k is K_QUIERO:
            self.pending = False
            if h.auto_claims():
                env = h.deal.env_pts
                seat = h.best_of(h.order, env)
                self.result = (seat, env[seat])
                h.award(team_of(seat), self.stake(h, team_of(seat)), Reason.ENVIDO)
            else:
                h.start_telling("envido")
        elif k is K_NO_QUIERO:
            chain = self.chain
            pts = 1 if len(chain) == 1 else sum(_ENV_VALUE[c] for c in chain[:-1])
            self.pending = False
            h.award(self.caller, min(pts, h.cap), Reason.ENVIDO)
        else:  # a raise
            self.chain += (k,)
            self.caller = team

    def cancel(self, h: HandPlay) -> None:
        """A flor answered the pending envido: the envido is over (a flor called closes
        the envido for the rest of the hand through ``HandPlay.sung``)."""
        self.save(h.trail)
        self.pending = False

    def told(self, h: HandPlay, seat: int, value: int) -> None:
        """The telling ended: ``seat``'s ``value`` is best."""
        self.save(h.trail)
        self.result = (seat, value)
        team = team_of(seat)
        h.claim("envido", seat, value, self.stake(h, team), self.stake(h, 1 - team))

    def told_false(self, h: HandPlay, team: int) -> None:
        """A false declaration: the points at stake to ``team``, the other one."""
        h.award(team, self.stake(h, team), Reason.PENALTY)

    def stake(self, h: HandPlay, winner: int) -> int:
        """What the accepted chain is worth to ``winner`` (capped in a pica)."""
        chain = self.chain
        if K_FALTA_ENVIDO in chain:
            return PICA_CAP if h.pica is not None else h.falta(winner)
        return min(sum(_ENV_VALUE[c] for c in chain), h.cap)


# ---------------------------------------------------------------------------- telling


class TellingPhase(_Phase):
    """A telling of points: seats declare in play order from the mano (section 5)."""

    __slots__ = ("best", "best_seat", "kind", "order", "spoken")

    SAVED = ("best", "best_seat", "spoken")

    def __init__(self, kind: str, order: tuple[int, ...]) -> None:
        self.kind = kind
        self.order = order  # seats in play order from the mano
        #: (seat, its points or None for son buenas) of each seat that spoke, in order
        self.spoken: tuple[tuple[int, int | None], ...] = ()
        self.best = -1
        self.best_seat = -1

    def key(self) -> tuple[object, ...]:
        return (self.kind, self.order, self.spoken, self.best, self.best_seat)

    def next_declarer(self, h: HandPlay) -> int:
        best_team = team_of(self.best_seat) if self.best_seat >= 0 else -1
        participants = h.flor_participants() if self.kind == "flor" else None
        for s in self.order:
            if participants is not None and s not in participants:
                continue
            if team_of(s) == best_team or any(x == s for x, _ in self.spoken):
                continue
            return s
        return -1

    def public(self, h: HandPlay) -> Telling:
        nxt = self.next_declarer(h)
        return Telling(
            self.kind,
            self.spoken,
            nxt if nxt >= 0 else None,
            self.best_seat if self.best_seat >= 0 else None,
        )

    def legal(self, h: HandPlay, out: list[Action]) -> None:
        if self.kind == "flor" and not self.spoken:
            # a flor telling starts with the first declaration: late flores until then
            # (only seats whose hands are unknown can be left: a known holder is awaited
            # before a telling starts)
            for s in h.seats:
                if h.may_announce_flor(s):
                    out.append(ACTION_TABLE[s][_S_FLOR])
        row = ACTION_TABLE[self.next_declarer(h)]
        best = self.best
        for v in _FLOR_RANGE if self.kind == "flor" else _ENVIDO_RANGE:
            if v > best:
                out.append(row[DECLARE_SLOT + v])
        if self.best_seat >= 0:
            out.append(row[_S_SON_BUENAS])

    def refusal(self, h: HandPlay, a: Action) -> RefusalCode | None:
        k, s = a.kind, a.seat
        if k is K_DECLARE or k is K_SON_BUENAS:
            if s != self.next_declarer(h):
                return R.BAD_DECLARATION
            if k is K_SON_BUENAS:
                return None if self.best_seat >= 0 else R.BAD_DECLARATION
            number = a.number
            in_range = _FLOR_SET if self.kind == "flor" else _ENVIDO_SET
            ok = number is not None and number in in_range and number > self.best
            return None if ok else R.BAD_DECLARATION
        if k in FLOR_KINDS:  # late flores before a flor telling's first declaration
            return h.flor_refusal_telling(a, self.kind == "flor" and not self.spoken)
        return R.CALL_PENDING

    def apply(self, h: HandPlay, a: Action) -> None:
        s, number = a.seat, a.number
        self.save(h.trail)
        self.spoken += ((s, number),)
        if number is not None:
            deal = h.deal
            if deal.cards[s] is not None:
                actual = deal.env_pts[s] if self.kind == "envido" else deal.flor_pts[s]
                if number != actual:  # a false declaration: the other team's penalty
                    h.told_false(self.kind, 1 - team_of(s))
                    return
            self.best, self.best_seat = number, s
        if self.next_declarer(h) < 0:
            self._resolve(h)

    def _resolve(self, h: HandPlay) -> None:
        h.told(self.kind, self.best_seat, self.best)


# ---------------------------------------------------------------------------- flor


class FlorPhase(_Phase):
    """The flor: announcements, the other team's course, its raises and answers."""

    __slots__ = (
        "accepted",
        "ann",
        "answer",
        "backdown",
        "backed",
        "course",
        "first",
        "raiser",
        "resto_before",
        "result",
        "state",
        "tapada",
    )

    SAVED = (
        "state",
        "first",
        "course",
        "accepted",
        "answer",
        "raiser",
        "resto_before",
        "backed",
        "backdown",
        "result",
        "tapada",
        "ann",
    )

    def __init__(self) -> None:
        self.state = _FLOR_NONE
        self.first: int | None = None  # team that called the first flor
        self.ann: tuple[int, ...] = ()  # seats that announced, in order
        self.course = _COURSE_NONE
        self.accepted = False  # a contraflor or al resto was accepted
        self.answer: int | None = None  # team that must answer a contraflor or al resto
        self.raiser: int | None = None  # team of the last flor raise
        self.resto_before = 0  # what a refused al resto is worth
        self.backed: int | None = None  # team that backed down (excused from announcing)
        self.backdown = 0  # points of a refused contraflor or al resto
        self.result: tuple[int, int] | None = None
        self.tapada = _NO_SEATS  # replaced, never changed (a frozenset)

    def key(self) -> tuple[object, ...]:
        return (
            self.state,
            self.first,
            self.ann,
            self.course,
            self.accepted,
            self.answer,
            self.raiser,
            self.resto_before,
            self.backed,
            self.backdown,
            self.result,
            tuple(sorted(self.tapada)),
        )

    def may_announce(self, h: HandPlay, s: int) -> bool:
        return (
            not h.seats_played >> s & 1
            and s not in self.ann
            and team_of(s) != self.backed
            and h.deal.can_flor(s)
        )

    def awaited(self, h: HandPlay) -> list[int]:
        """Known flor holders who must still announce before play resumes."""
        deal = h.deal
        pts = deal.flor_pts
        return [
            s
            for s in h.seats
            if pts[s] is not None
            and deal.cards[s] is not None
            and not h.seats_played >> s & 1
            and s not in self.ann
            and team_of(s) != self.backed
        ]

    def blocking(self, h: HandPlay) -> bool:
        """Play is suspended: an answer or a known holder's announcement is awaited."""
        return self.answer is not None or bool(self.awaited(h))

    @property
    def course_team(self) -> int | None:
        """The team whose first flor action is awaited (a flor was called against it)."""
        first = self.first
        if self.state is _FLOR_OPEN and self.course is _COURSE_NONE and self.answer is None:
            assert first is not None  # set with the first flor
            return 1 - first
        return None

    @property
    def call(self) -> Kind | None:
        """The flor raise awaiting an answer (contraflor or contraflor al resto)."""
        if self.answer is None:
            return None
        return K_CONTRAFLOR if self.course is _COURSE_CONTRA else K_CONTRAFLOR_AL_RESTO

    def starts(self, h: HandPlay, s: int) -> bool:
        """``s`` may call the hand's first flor on its own turn."""
        return (
            h.rules.flor
            and self.state is _FLOR_NONE
            and h.baza == 0
            and not h.seats_played >> s & 1
            and h.deal.can_flor(s)
        )

    def _announcements(self, h: HandPlay, out: list[Action], unknown_only: bool) -> None:
        first = self.first
        other = None if first is None else 1 - first
        cards = h.deal.cards
        for s in h.seats:
            if (not unknown_only or cards[s] is None) and self.may_announce(h, s):
                row = ACTION_TABLE[s]
                out.append(row[_S_FLOR])
                if team_of(s) == other and self.course is _COURSE_NONE:
                    out.append(row[_S_ACHICO])
                    out.append(row[_S_CONTRA])
                    out.append(row[_S_RESTO])

    def late(self, h: HandPlay, out: list[Action]) -> None:
        """Late announcements by seats whose hands are unknown, while play goes on (asked
        by free play and a pending truco only: no telling then, nothing blocking)."""
        self._announcements(h, out, True)

    def legal(self, h: HandPlay, out: list[Action]) -> None:
        """Play is suspended: the answer to a raise, and the awaited announcements."""
        answer = self.answer
        if answer is not None:
            for s in h.team_seats[answer]:
                row = ACTION_TABLE[s]
                out.append(row[_S_QUIERO])
                out.append(row[_S_NO_QUIERO])
                out.append(row[_S_ACHICO])
                if self.course is _COURSE_CONTRA:
                    out.append(row[_S_RESTO])
        self._announcements(h, out, False)

    # ---- every flor refusal is decided here: with the floor (``refusal``), and for the
    # phase that has it (free play, a pending truco or envido, a telling)

    def free_refusal(self, h: HandPlay, a: Action) -> RefusalCode | None:
        """A flor action, or an answer, in free play: a flor on one's own turn, late
        announcements (hands unknown); until play resumes and the other team sets the
        course, the calling team's answers and raises wait (section 6)."""
        k, s = a.kind, a.seat
        if self.state is _FLOR_OPEN and self.late_ok(h, a):
            return None
        if k is K_FLOR:
            return None if s == h.turn and self.starts(h, s) else self.call_refusal(h, s)
        if self.waits_for_course(team_of(s)):
            return R.CALL_PENDING
        if k is K_CONTRAFLOR or k is K_CONTRAFLOR_AL_RESTO:
            return R.RAISE_NOT_ALLOWED
        return R.NO_PENDING_CALL  # quiero, no quiero, con flor me achico: nothing to answer

    def answering_refusal(
        self, h: HandPlay, a: Action, caller: int, may_answer: bool
    ) -> RefusalCode | None:
        """A flor action while ``caller``'s truco or envido awaits its answer: a first
        flor answers it (``may_answer``: an envido, or a plain truco in the first baza),
        late announcements go on (hands unknown); anything else waits."""
        k, s = a.kind, a.seat
        if self.state is _FLOR_OPEN:
            if self.late_ok(h, a):
                return None
            if k is K_FLOR:
                return self.call_refusal(h, s)
        if k is not K_FLOR or team_of(s) == caller or not may_answer:
            return R.CALL_PENDING
        if h.baza or h.seats_played >> s & 1 or self.state is not _FLOR_NONE:
            return R.ENVIDO_CLOSED
        return None if h.deal.can_flor(s) else R.NO_FLOR

    def telling_refusal(self, h: HandPlay, a: Action, late: bool) -> RefusalCode | None:
        """A flor action during a telling: only a late flor (hands unknown) before a flor
        telling's first declaration (``late``)."""
        s = a.seat
        if a.kind is K_FLOR and late and not h.known:
            return None if self.may_announce(h, s) else self.call_refusal(h, s)
        return R.CALL_PENDING

    def call_refusal(self, h: HandPlay, s: int) -> RefusalCode:
        """Why ``s`` may not call or announce a flor now (no call pending). A seat that
        has announced, saying ``flor`` again while the exchange is open, is ``call_pending``
        (section 6: nothing new to announce, the exchange awaits others; section 11 puts
        the pending-call checks before the window's)."""
        if self.state is _FLOR_OPEN and s in self.ann:
            return R.CALL_PENDING
        if self.state is _FLOR_CLOSED or h.baza or h.seats_played >> s & 1:
            return R.ENVIDO_CLOSED
        if self.state is _FLOR_OPEN:
            if team_of(s) == self.backed:
                return R.ENVIDO_CLOSED
        elif s != h.turn:
            return R.NOT_YOUR_TURN
        if not h.deal.can_flor(s):
            return R.NO_FLOR
        return R.ENVIDO_CLOSED

    def refusal(self, h: HandPlay, a: Action) -> RefusalCode | None:
        k, s = a.kind, a.seat
        team = team_of(s)
        answer = self.answer
        if k is K_FLOR:
            return None if self.may_announce(h, s) else self.call_refusal(h, s)
        if k in _ANSWERS:
            if answer is not None and team == answer:
                return None
            if (
                answer is None
                and k is K_CON_FLOR_ME_ACHICO
                and team != self.first
                and self.course is _COURSE_NONE
            ):
                return None if self.may_announce(h, s) else self.call_refusal(h, s)
            # only announcements awaited, or the answering team's answers are legal
            return R.CALL_PENDING
        if k is K_CONTRAFLOR or k is K_CONTRAFLOR_AL_RESTO:
            if answer is not None:
                if team != answer:
                    return R.CALL_PENDING
                legal = k is K_CONTRAFLOR_AL_RESTO and self.course is _COURSE_CONTRA
                return None if legal else R.RAISE_NOT_ALLOWED
            if team == self.first:
                return R.CALL_PENDING
            if self.course is not _COURSE_NONE:
                return R.RAISE_NOT_ALLOWED
            return None if self.may_announce(h, s) else self.call_refusal(h, s)
        return R.CALL_PENDING

    def late_ok(self, h: HandPlay, a: Action) -> bool:
        """``a`` is a late announcement (or the other team's course set with one) that
        ``late`` lists while play goes on with the flor open (hands unknown)."""
        k, s = a.kind, a.seat
        if h.deal.cards[s] is not None or not self.may_announce(h, s):
            return False
        if k is K_FLOR:
            return True
        return (
            (k is K_CON_FLOR_ME_ACHICO or k is K_CONTRAFLOR or k is K_CONTRAFLOR_AL_RESTO)
            and team_of(s) != self.first
            and self.course is _COURSE_NONE
        )

    def apply(self, h: HandPlay, a: Action) -> None:
        k, s = a.kind, a.seat
        team = team_of(s)
        self.save(h.trail)
        if self.state is _FLOR_NONE:
            # a first flor: on the caller's turn, or answering an envido or a plain truco
            h.cancel_envido()
            self.state = _FLOR_OPEN
            self.first = team
            self.ann = (s,)
        elif self.answer is not None and k in _ANSWERS:
            self.answer = None
            if k is K_QUIERO:
                self.accepted = True
            else:
                # Only the backing team is excused; the other team's flores are still
                # announced, then the flor resolves at these points (decision 14).
                self.backdown = 4 if self.course is _COURSE_CONTRA else self.resto_before
                self.backed = team
                self.course = _COURSE_BACKED
        elif k is K_CONTRAFLOR_AL_RESTO and self.answer is not None:
            # answering a contraflor; a holder who had not announced announces with it
            if self.may_announce(h, s):
                self.ann += (s,)
            self._raise(_COURSE_RESTO, team, 6)
        elif k is K_FLOR:
            self.ann += (s,)
            if team != self.first and self.course is _COURSE_NONE:
                self.course = _COURSE_FLOR
        elif k is K_CON_FLOR_ME_ACHICO:
            self.course = _COURSE_ACHICO
            self.backed = team
        else:  # the other team's course: contraflor or contraflor al resto
            self.ann += (s,)
            if k is K_CONTRAFLOR:
                self._raise(_COURSE_CONTRA, team, 0)
            else:
                self._raise(_COURSE_RESTO, team, 4)
        self.progress(h)

    def _raise(self, course: FlorCourse, team: int, resto_before: int) -> None:
        self.course = course
        self.resto_before = resto_before
        self.raiser = team
        self.answer = 1 - team

    def progress(self, h: HandPlay) -> None:
        """Resolve the flor once nothing more is awaited (hands known)."""
        if self.answer is not None or h.telling_on() or self.awaited(h):
            return
        course = self.course
        if course is _COURSE_FLOR or (
            course in (_COURSE_CONTRA, _COURSE_RESTO) and self.accepted
        ):
            if h.auto_claims():
                pts = h.deal.flor_pts
                seat = h.best_of(self.ann, pts)
                points = pts[seat]
                assert points is not None
                self.result = (seat, points)
                self.state = _FLOR_CLOSED
                h.award(team_of(seat), self.stake(h), Reason.FLOR)
            else:
                h.start_telling("flor")
            return
        if h.known:
            self.close(h)
        # unknown hands: open for late announcements until play resumes

    def close(self, h: HandPlay) -> None:
        """Resolve a flor that needs no comparison (none answered, con flor me achico, or a
        contraflor or al resto refused)."""
        self.save(h.trail)
        self.state = _FLOR_CLOSED
        if self.course is _COURSE_BACKED:
            raiser = self.raiser
            assert raiser is not None  # the course is backed only after a raise
            self._settle(h, raiser, self.backdown)
            return
        first = self.first
        assert first is not None  # closed only once open
        count = sum(1 for x in self.ann if team_of(x) == first)
        self._settle(h, first, 3 * count + (1 if self.course is _COURSE_ACHICO else 0))

    def _settle(self, h: HandPlay, team: int, points: int) -> None:
        seats = tuple(x for x in self.ann if team_of(x) == team)
        if all(h.deal.cards[x] is not None for x in seats):
            h.award(team, points, Reason.FLOR)
        else:
            h.defer(("flores", team, seats, 0, points, points))

    def stake(self, h: HandPlay) -> int:
        """What a compared flor is worth (a contraflor al resto: 6 in a pica)."""
        course = self.course
        if course is _COURSE_FLOR:
            return 3 * len(self.ann)
        if course is _COURSE_CONTRA or h.pica is not None:
            return 6
        # accepted contraflor al resto
        return h.board.target - max(h.board.score) + 3 * len(self.ann)

    def told(self, h: HandPlay, seat: int, value: int) -> None:
        """The telling ended: ``seat``'s flor of ``value`` is best."""
        self.save(h.trail)
        self.result = (seat, value)
        self.state = _FLOR_CLOSED
        points = self.stake(h)
        h.claim("flor", seat, value, points, points)

    def told_false(self, h: HandPlay, team: int) -> None:
        """A false declaration: the points at stake to ``team``, the other one."""
        self.save(h.trail)
        self.state = _FLOR_CLOSED
        h.award(team, self.stake(h), Reason.PENALTY)

    def waits_for_course(self, team: int) -> bool:
        """The flor is open and ``team`` called it: the other team's course is awaited."""
        return self.state is _FLOR_OPEN and team == self.first and self.course is _COURSE_NONE

    def tapada_check(self, h: HandPlay, s: int) -> None:
        """A holder who plays (or shows) without having announced: 3 to the other team."""
        self.save(h.trail)
        self.tapada = self.tapada | {s}
        h.award(1 - team_of(s), 3, Reason.PENALTY)

    def owes(self, s: int) -> bool:
        """``s`` has not announced and its team has not backed down."""
        return s not in self.ann and team_of(s) != self.backed and s not in self.tapada


# ---------------------------------------------------------------------------- free play


class FreePlay(_Phase):
    """Free play: no call awaits an answer. The turn's cards and mazo, calls on one's own
    initiative, anyone's truco (the bazas themselves are the hand's: ``HandPlay.play``)."""

    __slots__ = ()

    def legal(self, h: HandPlay, out: list[Action]) -> None:
        t = h.turn
        row = ACTION_TABLE[t]
        deal = h.deal
        cs = deal.cards[t]
        if cs is not None:
            played = deal.played
            for c in cs:
                if not played >> c & 1:
                    out.append(row[c])
        else:
            for c in deal.available(t):
                out.append(row[c])
        out.append(row[_S_MAZO])
        if h.baza == 0:
            if h.envido_window(t):
                out.extend(_ENVIDO_ACTIONS[t])
            if h.rules.flor and h.flor_starts(t):
                out.append(row[_S_FLOR])
        h.truco_calls(out)
        h.late_flor(out)

    def refusal(self, h: HandPlay, a: Action) -> RefusalCode | None:
        k, s = a.kind, a.seat
        if k in _FREE_FLOR_KINDS:
            return h.flor_refusal_free(a)
        if k is K_PLAY:
            if s != h.turn:
                return R.NOT_YOUR_TURN
            assert a.card is not None
            return h.deal.card_refusal(s, a.card.index)
        if k is K_MAZO:
            return None if s == h.turn else R.NOT_YOUR_TURN
        if k in _TRUCO_KINDS:
            return h.truco_call_refusal(k, s)
        if k in _ENVIDO_KINDS:
            if h.envido_window(s):
                return None if s == h.turn else R.NOT_YOUR_TURN
            return R.ENVIDO_CLOSED
        return R.NOT_YOUR_TURN


_FREE_PLAY: Final = FreePlay()


# ---------------------------------------------------------------------------- the hand


def hand_winner_of(bazas: Sequence[int], mano_team: int) -> int | None:
    """The hand's winning team by the parda table (section 3) from its bazas' results
    (each a team, or -1 for a parda), ``None`` while undecided."""
    r = bazas
    if len(r) == 2:
        a, b = r
        if a == b and a >= 0:
            return a
        if a < 0 and b >= 0:
            return b
        if a >= 0 and b < 0:
            return a
        return None
    if len(r) == 3:
        if r[2] >= 0:
            return r[2]
        # a third baza follows a parda first baza only after a parda second: three
        # pardas go to the mano's team, else the first baza won decides
        return mano_team if r[0] < 0 else r[0]
    return None


class HandPlay(Saved):
    """The play of one hand between ``order``'s seats (play order from its mano).

    A normal hand has one, over every seat; a pica-pica hand three, one per pica, whose
    ``pica`` is its mano seat. Scores go to the shared ``board``.
    """

    __slots__ = (
        "baza",
        "baza_cards",
        "bazas",
        "board",
        "cap",
        "deal",
        "deferred",
        "envido",
        "flor",
        "known",
        "leader",
        "live",
        "mano",
        "n",
        "next_seat",
        "order",
        "pica",
        "rules",
        "seat_actions",
        "seats",
        "seats_played",
        "table",
        "team_seats",
        "tell",
        "trail",
        "truco",
        "turn",
    )

    SAVED = (
        "live",
        "baza",
        "leader",
        "turn",
        "tell",
        "seats_played",
        "table",
        "bazas",
        "baza_cards",
        "deferred",
    )

    #: What ``play`` changes, saved as one entry (a part of ``SAVED``, and of the deal's
    #: ``SAVED`` through ``deal.``): a card, and a card that completes a baza.
    CARD_PART: ClassVar[tuple[str, ...]] = (
        "turn",
        "seats_played",
        "table",
        "deal.played",
        "deal.seen",
        "deal.owner",
    )
    BAZA_PART: ClassVar[tuple[str, ...]] = (*CARD_PART, "leader", "bazas", "baza_cards", "baza")
    #: What ``finish`` changes (the awards are the board's, saved by the board).
    FINISH_PART: ClassVar[tuple[str, ...]] = ("live", "deferred")

    def __init__(
        self,
        rules: HouseRules,
        board: Board,
        deal: Deal,
        order: tuple[int, ...],
        pica: bool = False,
    ) -> None:
        self.rules = rules
        #: the hand's trail, set by the game (``NO_TRAIL`` before, and once the next hand
        #: is dealt)
        self.trail = NO_TRAIL
        self.board = board
        self.deal = deal
        self.order = order
        players = len(deal.cards)
        layout = _LAYOUTS.get((order, players))
        if layout is None:
            layout = _LAYOUTS[order, players] = _Layout(order, players)
        self.n = layout.n
        self.mano = order[0]
        self.pica = order[0] if pica else None
        self.cap = PICA_CAP if pica else 1 << 30
        self.seats = layout.seats
        self.team_seats = layout.team_seats
        self.next_seat = layout.next_seat
        self.seat_actions = layout.actions
        cards = deal.cards
        self.known = deal.all_known or all(cards[s] is not None for s in order)
        self.live = True
        self.seats_played = 0  # bit ``s`` set once seat ``s`` has played a card
        self.baza = 0
        self.table: tuple[tuple[int, int], ...] = ()  # (seat, card) of this baza
        self.bazas: tuple[int, ...] = ()  # team that won each baza, -1 parda
        self.baza_cards: tuple[tuple[tuple[int, int], ...], ...] = ()
        self.leader = self.turn = order[0]
        self.truco = TrucoPhase()
        self.envido = EnvidoPhase()
        self.flor = FlorPhase()
        self.tell: TellingPhase | None = None
        self.deferred: tuple[tuple[str, int, tuple[int, ...], int, int, int], ...] = ()

    def key(self) -> tuple[object, ...]:
        return (
            self.order,
            self.live,
            self.seats_played,
            self.baza,
            self.table,
            self.bazas,
            self.leader,
            self.turn,
            self.truco.key(),
            self.envido.key(),
            self.flor.key(),
            None if self.tell is None else self.tell.key(),
            self.deferred,
        )

    # ---- the cascade: which phase has the floor

    def floor(self) -> _Phase:
        """The phase whose legal actions and refusals hold now."""
        telling = self.tell
        if telling is not None:
            return telling
        envido = self.envido
        if envido.pending:
            return envido
        flor = self.flor
        if flor.state is _FLOR_OPEN and flor.blocking(self):
            return flor
        truco = self.truco
        if truco.pending:
            return truco
        return _FREE_PLAY

    def explain(self, a: Action) -> RefusalCode | None:
        """Why ``a`` (of a seat of this live play) is refused, ``None`` when it is legal:
        the phase with the floor judges it (declarations belong to a telling)."""
        floor = self.floor()
        k = a.kind
        if (k is K_DECLARE or k is K_SON_BUENAS) and floor is not self.tell:
            return R.BAD_DECLARATION
        return floor.refusal(self, a)

    def apply(self, a: Action) -> None:
        """Apply a legal action: each kind to the phase it belongs to."""
        k, s = a.kind, a.seat
        flor = self.flor
        if k is K_PLAY:  # (never legal in a telling or while the flor awaits an answer)
            if flor.state is _FLOR_OPEN:
                flor.close(self)  # play resumes: late announcements are over
            truco = self.truco
            if truco.pending:  # implicit quiero
                truco.accept(self, team_of(s))
            assert a.card is not None
            self.play(s, a.card.index)
            return
        if k is K_SHOW:
            self.see(s, [c.index for c in a.cards])
            return
        if k is K_DECLARE or k is K_SON_BUENAS:
            telling = self.tell
            assert telling is not None
            telling.apply(self, a)
            return
        if k in FLOR_KINDS or (flor.state is _FLOR_OPEN and flor.answer is not None):
            flor.apply(self, a)
            return
        if flor.state is _FLOR_OPEN and self.tell is None:
            flor.close(self)  # play resumes: late announcements are over
        if self.envido.pending or k in _ENVIDO_KINDS:
            self.envido.apply(self, a)
        elif k is K_MAZO:
            self.mazo(team_of(s))
        else:
            self.truco.apply(self, a)

    # ---- the hand's interface to its phases: they talk to each other only through it

    def sung(self) -> bool:
        """An envido or a flor has been played this hand."""
        return self.envido.done or self.flor.state is not _FLOR_NONE

    def flor_called(self) -> bool:
        return self.flor.state is not _FLOR_NONE

    def truco_accepted(self) -> bool:
        return self.truco.level > 0

    def telling_on(self) -> bool:
        return self.tell is not None

    def start_telling(self, kind: str) -> None:
        self.save(self.trail)
        self.tell = TellingPhase(kind, self.order)

    def told(self, kind: str, seat: int, value: int) -> None:
        """A telling ended with ``seat``'s ``value`` best: its phase scores it."""
        self.save(self.trail)
        self.tell = None
        if kind == "envido":
            self.envido.told(self, seat, value)
        else:
            self.flor.told(self, seat, value)

    def told_false(self, kind: str, team: int) -> None:
        """A telling ended with a false declaration: ``team``'s penalty."""
        self.save(self.trail)
        self.tell = None
        if kind == "envido":
            self.envido.told_false(self, team)
        else:
            self.flor.told_false(self, team)

    def claim(self, kind: str, seat: int, value: int, points: int, penalty: int) -> None:
        """``seat``'s winning claim: scored now (hand known) or proven at the end."""
        team = team_of(seat)
        if self.deal.cards[seat] is not None:
            self.award(team, points, Reason.ENVIDO if kind == "envido" else Reason.FLOR)
        else:
            self.defer((kind, team, (seat,), value, points, penalty))

    def defer(self, claim: tuple[str, int, tuple[int, ...], int, int, int]) -> None:
        """A claim to prove when the play ends (its seats' hands unknown)."""
        self.save(self.trail)
        self.deferred += (claim,)

    def cancel_envido(self) -> None:
        self.envido.cancel(self)

    def envido_window(self, s: int) -> bool:
        return self.envido.window(self, s)

    def truco_calls(self, out: list[Action]) -> None:
        self.truco.calls(self, out)

    def truco_call_refusal(self, k: Kind, s: int) -> RefusalCode | None:
        return self.truco.call_refusal(k, s)

    def flor_participants(self) -> tuple[int, ...]:
        return self.flor.ann

    def flor_starts(self, s: int) -> bool:
        return self.flor.starts(self, s)

    def may_announce_flor(self, s: int) -> bool:
        return self.flor.may_announce(self, s)

    def flor_refusal_free(self, a: Action) -> RefusalCode | None:
        return self.flor.free_refusal(self, a)

    def flor_refusal_answering(
        self, a: Action, caller: int, may_answer: bool
    ) -> RefusalCode | None:
        return self.flor.answering_refusal(self, a, caller, may_answer)

    def flor_refusal_telling(self, a: Action, late: bool) -> RefusalCode | None:
        return self.flor.telling_refusal(self, a, late)

    def late_flor(self, out: list[Action]) -> None:
        """Late flor announcements while play goes on (hands unknown)."""
        flor = self.flor
        if flor.state is _FLOR_OPEN:
            flor.late(self, out)

    # ---- the bazas

    def play(self, s: int, c: int) -> None:
        flor = self.flor
        deal = self.deal
        if (
            self.rules.flor
            and not self.seats_played >> s & 1
            and deal.flor_pts[s] is not None
            and flor.owes(s)
        ):
            flor.tapada_check(self, s)
        all_seen = deal.seen
        seen = all_seen[s]
        shown = c in seen
        owned = not shown and deal.owner.get(c) == s  # known to be ``s``'s: owners stay
        # one entry for all the card changes (the baza's fields too when it completes it)
        self.save_part(self.trail, _BAZA_PART if len(self.table) + 1 == self.n else _CARD_PART)
        deal.played |= 1 << c
        self.seats_played |= 1 << s
        self.table = table = self.table + ((s, c),)  # noqa: RUF005 (quicker compiled)
        if owned:  # as ``_add_seen``, with no owner to change
            seen_now = list(all_seen)
            seen_now[s] = seen + (c,)  # noqa: RUF005 (as above)
            deal.seen = tuple(seen_now)
            if len(seen) == 2:
                self._tapada_seen(s)
        elif not shown:
            self._add_seen(s, (c,))
        elif len(seen) == 3:
            self._tapada_seen(s)
        if self.board.winner is not None:
            return
        if len(table) < self.n:
            self.turn = self.next_seat[s]
            return
        # the baza is complete (saved with the card)
        best = -1
        top: list[int] = []
        for seat, card in table:
            st = STRENGTH[card]
            if st > best:
                best, top = st, [seat]
            elif st == best:
                top.append(seat)
        if len(top) == 1 or len({team_of(seat) for seat in top}) == 1:
            result = team_of(top[0])
            self.leader = top[0]
        else:
            result = -1
        self.bazas += (result,)
        self.baza_cards += (table,)
        self.table = ()
        self.baza += 1
        self.turn = self.leader
        winner = self.hand_winner()
        if winner is not None:
            self.finish([(winner, TRUCO_VALUE[self.truco.level], Reason.TRUCO)])

    def see(self, s: int, cards: Iterable[int]) -> None:
        """Cards of ``s`` seen (played or shown). With ``s``'s hand unknown, a flor not
        announced is tapada once its three cards have been seen and ``s`` has played its
        first card (cards shown before it, to prove a claim, make no tapada: section 6)."""
        self.deal.save(self.trail)
        self._seen(s, cards)

    def _seen(self, s: int, cards: Iterable[int]) -> None:
        """``s``'s ``cards`` seen (the deal saved by the caller)."""
        seen = self.deal.seen[s]
        new = tuple([c for c in cards if c not in seen])
        if new:
            self._add_seen(s, new)
        elif len(seen) == 3:
            self._tapada_seen(s)

    def _add_seen(self, s: int, new: tuple[int, ...]) -> None:
        """Cards of ``s`` seen for the first time (the deal saved by the caller)."""
        deal = self.deal
        owner = deal.owner
        for c in new:
            if owner.get(c) != s:  # cards first known by being seen: a new owner dict
                owner = deal.owner = dict(owner)
                for card in new:
                    owner[card] = s
                break
        all_seen = deal.seen
        seen = all_seen[s] + new
        deal.seen = all_seen[:s] + (seen,) + all_seen[s + 1 :]  # noqa: RUF005 (as above)
        if len(seen) == 3:
            self._tapada_seen(s)

    def _tapada_seen(self, s: int) -> None:
        """``s``'s three cards seen: a flor not announced is tapada once ``s`` has played
        (hand unknown)."""
        deal = self.deal
        seen = deal.seen[s]
        if (
            self.seats_played >> s & 1
            and self.rules.flor
            and deal.cards[s] is None
            and self.flor.owes(s)
            and flor_of_indices(seen) is not None
        ):
            self.flor.tapada_check(self, s)

    def hand_winner(self) -> int | None:
        return hand_winner_of(self.bazas, team_of(self.mano))

    def mazo(self, team: int) -> None:
        other = 1 - team
        awards = [(other, TRUCO_VALUE[self.truco.level], Reason.MAZO)]
        if (
            self.rules.mazo_envido_point
            and self.baza == 0
            and not self.envido.done
            and self.flor.state is _FLOR_NONE
        ):
            awards.append((other, 1, Reason.MAZO_ENVIDO))
        self.finish(awards)

    def finish(self, awards: list[tuple[int, int, Reason]]) -> None:
        """The play ends: deferred claims are checked, then the hand's points."""
        flor = self.flor
        if flor.state is _FLOR_OPEN and self.tell is None and not flor.blocking(self):
            flor.close(self)
        deal = self.deal
        self.save_part(self.trail, _FINISH_PART)
        for kind, team, seats, value, points, penalty in self.deferred:
            if kind == "envido":
                # only seen cards prove: nothing seen proves nothing, not even a 0
                seen = deal.seen[seats[0]]
                proven = bool(seen) and envido_of_indices(seen, flor=self.rules.flor) == value
            elif kind == "flor":
                proven = flor_of_indices(deal.seen[seats[0]]) == value
            else:  # a set of flores, each must be shown
                proven = all(
                    deal.cards[x] is not None or flor_of_indices(deal.seen[x]) is not None
                    for x in seats
                )
            if proven:
                self.award(team, points, Reason.ENVIDO if kind == "envido" else Reason.FLOR)
            else:
                self.award(1 - team, penalty, Reason.PENALTY)
        self.deferred = ()
        for team, points, reason in awards:
            self.award(team, points, reason)
        self.live = False
        if self.truco.pending:  # a mazo while a truco call awaited its answer
            self.truco.stop(self)

    def award(self, team: int, points: int, reason: Reason) -> None:
        """Score ``points`` for ``team`` on the board, marked with this play's pica;
        nothing counts once the game is won."""
        board = self.board
        if board.winner is not None or points <= 0:
            return
        board.save(self.trail)
        key = (team, points, reason, self.pica)
        award = _AWARDS.get(key)
        if award is None:  # made once: a frozen dataclass's __init__ costs more than this
            award = _AWARDS[key] = Award(team, points, reason, self.pica)
        board.awards += (award,)
        a, b = board.score
        board.score = score = (a + points, b) if team == 0 else (a, b + points)
        if score[team] >= board.target:
            board.winner = team

    # ---- shared helpers

    def auto_claims(self) -> bool:
        return self.rules.claims is Claims.AUTO and self.known

    def best_of(self, seats: Iterable[int], points: Sequence[int | None]) -> int:
        """The seat with the most points, ties to the first in play order from the mano."""
        best_seat, best = -1, -1
        members = set(seats)
        for s in self.order:
            if s in members:
                p = points[s]
                assert p is not None
                if p > best:
                    best, best_seat = p, s
        return best_seat

    def falta(self, winner: int) -> int:
        """A falta envido's value to ``winner`` (section 5), scores as they stand."""
        rules = self.rules
        t, h = rules.target, rules.half
        score = self.board.score
        a, b = score
        lead = a if a > b else b
        both_malas = a < h and b < h
        f = rules.falta
        if f is Falta.TO_WIN:
            return t - lead
        if f is Falta.MALAS_BUENAS:
            return h - lead if both_malas else t - lead
        if f is Falta.LOSER_BASED:
            low = score[1 - winner]
            return h - low if low < h else t - low
        # GAME_IN_MALAS
        return t - score[winner] if both_malas else t - score[1 - winner]

    # ---- public state (what a seat of this play may see)

    @property
    def baza_results(self) -> tuple[int | None, ...]:
        # lists, not generators, made into tuples: read once per state (the views)
        return tuple([None if r < 0 else r for r in self.bazas])

    @property
    def table_cards(self) -> tuple[tuple[int, Card], ...]:
        return tuple([(s, CARDS[c]) for s, c in self.table])

    @property
    def played_bazas(self) -> tuple[tuple[tuple[int, Card], ...], ...]:
        return tuple(tuple((s, CARDS[c]) for s, c in b) for b in self.baza_cards)

    @property
    def truco_level(self) -> int:
        return self.truco.level

    @property
    def hand_value(self) -> int:
        """What the play is worth now (its accepted truco level's points)."""
        return TRUCO_VALUE[self.truco.level]

    @property
    def truco_pending(self) -> tuple[int, int] | None:
        t = self.truco
        return (t.pending, t.caller) if t.pending else None

    @property
    def raise_team(self) -> int | None:
        t = self.truco
        return t.raiser if t.raiser >= 0 and t.level < 3 else None

    @property
    def envido_chain(self) -> tuple[Kind, ...]:
        return self.envido.chain

    @property
    def envido_pending(self) -> int | None:
        e = self.envido
        return e.caller if e.pending else None

    @property
    def flor_pending(self) -> int | None:
        return self.flor.answer

    @property
    def flor_course_team(self) -> int | None:
        return self.flor.course_team if self.tell is None else None

    @property
    def flor_open(self) -> bool:
        return self.flor.state is _FLOR_OPEN

    @property
    def telling(self) -> Telling | None:
        t = self.tell
        return None if t is None else t.public(self)

    @property
    def envido_result(self) -> tuple[int, int] | None:
        """(seat, points) that won the envido: only the winner's points are public."""
        return self.envido.result

    @property
    def flor_result(self) -> tuple[int, int] | None:
        return self.flor.result

    @property
    def flor_announced(self) -> tuple[int, ...]:
        return self.flor.ann

    @property
    def flor_call(self) -> Kind | None:
        """The flor raise awaiting an answer (contraflor or contraflor al resto)."""
        return self.flor.call

    @property
    def awards(self) -> tuple[Award, ...]:
        """The awards this play has scored so far in the current hand."""
        return tuple(a for a in self.board.awards if a.pica == self.pica)


def _saved_classes(cls: type[Saved]) -> list[type[Saved]]:
    """``cls`` and every class below it."""
    found = [cls]
    for sub in cls.__subclasses__():
        found.extend(_saved_classes(sub))
    return found


for _cls in _saved_classes(Saved):
    if _cls.SAVED:
        _ACCESSORS[_cls] = _accessors(_cls.SAVED)


def _part(cls: type[Saved], names: tuple[str, ...], **through: type[Saved]) -> Part:
    """The reader and the writer of ``names``, some of ``cls``'s ``SAVED``, or, written
    ``field.name``, some of the ``SAVED`` of the object in ``cls``'s ``field`` (its class
    given as ``field=``): one entry for a change to both."""
    for name in names:
        field, _, inner = name.rpartition(".")
        owner = through[field] if field else cls
        assert inner in owner.SAVED, (cls, name)
    return _accessors(names)


_CARD_PART: Final = _part(HandPlay, HandPlay.CARD_PART, deal=Deal)
_BAZA_PART: Final = _part(HandPlay, HandPlay.BAZA_PART, deal=Deal)
_FINISH_PART: Final = _part(HandPlay, HandPlay.FINISH_PART)
