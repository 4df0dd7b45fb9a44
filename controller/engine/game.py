"""The state of one game of truco and the rules that move it.

``Game`` follows python-chess's ``Board``: ``push`` applies a legal action or raises
``IllegalActionError`` with the refusal code (leaving the state unchanged), ``pop``
undoes, ``legal_actions`` is a lazy view, and ``outcome()`` says whether the game is won.

Legality has one source: ``_generate`` lists every legal action of the current state
(for every seat: truco may be called out of turn). ``push``, ``is_legal`` and the view
all consult that list; ``_diagnose`` only explains, with the RULES.md section 11 code,
why an action that is not in it was refused.

Internally cards are small integers (``Card.index``) and actions are interned objects
with an integer ``code``, so a push costs no copying. Undo replays the current hand from
its start (a hand is at most a few dozen actions), like restoring a table after a power
cut is replaying its transcript.

>>> from controller.engine import Action, Card, Game
>>> g = Game()
>>> g.deal({0: [Card.from_str(c) for c in "7C 6C 3E".split()],
...         1: [Card.from_str(c) for c in "2O 1B 4B".split()]})
>>> g.push(Action.from_str("0 envido")); g.push(Action.from_str("1 quiero"))
>>> g.score
(2, 0)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter

from .actions import ACTION_TABLE, DECLARE_SLOT, KIND_SLOT, Action, Kind
from .cards import CARDS, STRENGTH, SUIT_OF, Card, envido_of_indices, flor_of_indices
from .errors import IllegalActionError, RefusalCode, TrucoError
from .results import Award, HandResult, Outcome, Reason
from .rules import Claims, Falta, HouseRules
from .view import SeatView, seat_view

__all__ = ["Game", "HandInProgressError", "LegalActions", "NoHandError", "Telling"]

# Kind members as module constants: an Enum attribute lookup costs ten times more.
_K_CONTRAFLOR = Kind.CONTRAFLOR
_K_CONTRAFLOR_AL_RESTO = Kind.CONTRAFLOR_AL_RESTO
_K_CON_FLOR_ME_ACHICO = Kind.CON_FLOR_ME_ACHICO
_K_DECLARE = Kind.DECLARE
_K_ENVIDO = Kind.ENVIDO
_K_FALTA_ENVIDO = Kind.FALTA_ENVIDO
_K_FLOR = Kind.FLOR
_K_MAZO = Kind.MAZO
_K_NO_QUIERO = Kind.NO_QUIERO
_K_PLAY = Kind.PLAY
_K_QUIERO = Kind.QUIERO
_K_REAL_ENVIDO = Kind.REAL_ENVIDO
_K_RETRUCO = Kind.RETRUCO
_K_SHOW = Kind.SHOW
_K_SON_BUENAS = Kind.SON_BUENAS
_K_TRUCO = Kind.TRUCO
_K_VALE_CUATRO = Kind.VALE_CUATRO

_TRUCO_VALUE = (1, 2, 3, 4)
_CODE_OF = attrgetter("code")
_TRUCO_KINDS = (_K_TRUCO, _K_RETRUCO, _K_VALE_CUATRO)
_LEVEL_OF = {_K_TRUCO: 1, _K_RETRUCO: 2, _K_VALE_CUATRO: 3}
_ENV_E, _ENV_R, _ENV_F = 0, 1, 2
_ENVIDO_KINDS = (_K_ENVIDO, _K_REAL_ENVIDO, _K_FALTA_ENVIDO)
_ENV_OF = {_K_ENVIDO: _ENV_E, _K_REAL_ENVIDO: _ENV_R, _K_FALTA_ENVIDO: _ENV_F}
_ENV_VALUE = (2, 3, 0)
_FLOR_KINDS = (_K_FLOR, _K_CONTRAFLOR, _K_CONTRAFLOR_AL_RESTO, _K_CON_FLOR_ME_ACHICO)
_ANSWERS = (_K_QUIERO, _K_NO_QUIERO, _K_CON_FLOR_ME_ACHICO)

# Flor course, set by the other team's first flor action.
# _COURSE_BACKED: a contraflor or al resto refused; its points are fixed, announcements go on.
_COURSE_NONE, _COURSE_FLOR, _COURSE_ACHICO, _COURSE_CONTRA, _COURSE_RESTO, _COURSE_BACKED = range(6)
# Flor state.
_FLOR_NONE, _FLOR_OPEN, _FLOR_CLOSED = range(3)

_ENVIDO_RANGE = tuple(range(8)) + tuple(range(20, 34))
_FLOR_RANGE = tuple(range(20, 39))

_KS = KIND_SLOT
_S_QUIERO = _KS + _K_QUIERO
_S_NO_QUIERO = _KS + _K_NO_QUIERO
_S_MAZO = _KS + _K_MAZO
_S_FLOR = _KS + _K_FLOR
_S_ACHICO = _KS + _K_CON_FLOR_ME_ACHICO
_S_CONTRA = _KS + _K_CONTRAFLOR
_S_RESTO = _KS + _K_CONTRAFLOR_AL_RESTO
_S_SON_BUENAS = _KS + _K_SON_BUENAS
_S_TRUCO = (0, _KS + _K_TRUCO, _KS + _K_RETRUCO, _KS + _K_VALE_CUATRO)
_S_ENVIDO = {
    _ENV_E: _KS + _K_ENVIDO,
    _ENV_R: _KS + _K_REAL_ENVIDO,
    _ENV_F: _KS + _K_FALTA_ENVIDO,
}
_ALL_ENVIDO_SLOTS = (_S_ENVIDO[_ENV_E], _S_ENVIDO[_ENV_R], _S_ENVIDO[_ENV_F])


#: Actions listed together: every seat's truco, a team's raise, a seat's three envido calls.
_TRUCO_ACTIONS = {n: tuple(ACTION_TABLE[s][_S_TRUCO[1]] for s in range(n)) for n in (2, 4, 6)}
_RAISE_ACTIONS = {
    n: tuple(
        {lvl: tuple(ACTION_TABLE[s][_S_TRUCO[lvl]] for s in range(team, n, 2)) for lvl in (2, 3)}
        for team in (0, 1)
    )
    for n in (2, 4, 6)
}
_ENVIDO_ACTIONS = tuple(tuple(row[slot] for slot in _ALL_ENVIDO_SLOTS) for row in ACTION_TABLE)

#: (envido, flor) points of a dealt hand, by its card indices: computed once per hand shape.
_POINTS: dict[tuple[int, ...], tuple[int, int | None]] = {}
_POINTS_FLOR: dict[tuple[int, ...], tuple[int, int | None]] = {}


class HandInProgressError(TrucoError):
    """A new hand was dealt before the current one ended."""


class NoHandError(TrucoError):
    """Nothing to undo."""


@dataclass(frozen=True, slots=True)
class Telling:
    """The public state of a telling of points (claims=declared, or hands unknown)."""

    kind: str  # "envido" or "flor"
    declarations: tuple[tuple[int, int | None], ...]  # (seat, points or None for son buenas)
    next_seat: int | None
    best_seat: int | None


class _Telling:
    __slots__ = ("best", "best_seat", "conceded", "declared", "history", "kind", "order")

    def __init__(self, kind: str, order: tuple[int, ...]) -> None:
        self.kind = kind
        self.order = order  # seats in play order from the mano
        self.declared: dict[int, int] = {}
        self.conceded: set[int] = set()
        self.best = -1
        self.best_seat = -1
        self.history: list[tuple[int, int | None]] = []


class _HandLog:
    __slots__ = ("actions", "awards", "cards", "dealer", "mano", "number", "start")

    def __init__(
        self,
        number: int,
        dealer: int,
        mano: int,
        cards: tuple[tuple[int, ...] | None, ...],
        start: tuple[int, int, int | None, int],
    ) -> None:
        self.number = number
        self.dealer = dealer
        self.mano = mano
        self.cards = cards
        self.start = start  # score 0, score 1, winner, next dealer: before this hand
        self.actions: list[Action] = []
        self.awards: list[Award] = []


class Game:
    """One game of truco under fixed house rules.

    ``score`` starts a resumed game from a score (both below the target); ``dealer`` sets
    the first hand's dealer (default: the last seat, so seat 0 is the first mano).
    """

    def __init__(
        self,
        rules: HouseRules | None = None,
        *,
        score: tuple[int, int] = (0, 0),
        dealer: int | None = None,
    ) -> None:
        self.rules = rules = rules if rules is not None else HouseRules()
        n = rules.players
        if len(score) != 2 or not all(0 <= s < rules.target for s in score):
            raise ValueError(f"a starting score must be two numbers from 0 to {rules.target - 1}")
        if dealer is not None and not 0 <= dealer < n:
            raise ValueError(f"no seat {dealer} at a table of {n}")
        self._n = n
        self._flor_on = rules.flor
        self._target = rules.target
        self._initial = (score[0], score[1], None, n - 1 if dealer is None else dealer)
        self._team_seats = (tuple(range(0, n, 2)), tuple(range(1, n, 2)))
        self._orders = tuple(tuple((m + i) % n for i in range(n)) for m in range(n))
        self._hands: list[_HandLog] = []
        self._legal: list[Action] | None = None
        self._legal_codes: set[int] | None = None
        self._restore(self._initial)
        self._clear_hand()

    # ------------------------------------------------------------------ state plumbing

    def _restore(self, snap: tuple[int, int, int | None, int]) -> None:
        self._score = [snap[0], snap[1]]
        self._winner: int | None = snap[2]
        self._next_dealer = snap[3]
        self._live = False

    def _clear_hand(self) -> None:
        n = self._n
        self._log: _HandLog | None = None
        self._dealer = -1
        self._mano = -1
        self._order: tuple[int, ...] = ()
        self._cards: list[tuple[int, ...] | None] = [None] * n
        self._all_known = False
        self._env: list[int] = [0] * n
        self._flor: list[int | None] = [None] * n
        self._points_ready = True
        self._seen: list[list[int]] = [[] for _ in range(n)]
        self._owner: dict[int, int] = {}
        self._played: set[int] = set()
        self._nplayed = [0] * n
        self._baza = 0
        self._table: list[tuple[int, int]] = []
        self._bazas: list[int] = []  # team that won each baza, -1 parda
        self._baza_cards: list[tuple[tuple[int, int], ...]] = []
        self._leader = -1
        self._turn = -1
        # truco
        self._t_level = 0
        self._t_pending = 0
        self._t_caller = -1
        self._t_raiser = -1
        # envido
        self._e_done = False
        self._e_chain: list[int] = []
        self._e_pending = False
        self._e_caller = -1
        self._e_result: tuple[int, int] | None = None
        # telling
        self._tell: _Telling | None = None
        # flor
        self._f_state = _FLOR_NONE
        self._f_first = -1
        self._f_ann: list[int] = []
        self._f_course = _COURSE_NONE
        self._f_accepted = False
        self._f_answer = -1
        self._f_raiser = -1
        self._f_resto_before = 0
        self._f_backed = -1
        self._f_backdown = 0
        self._f_result: tuple[int, int] | None = None
        self._tapada = [False] * n
        self._deferred: list[tuple[str, int, tuple[int, ...], int, int, int]] = []

    def _invalidate(self) -> None:
        self._legal = None
        self._legal_codes = None

    # ------------------------------------------------------------------ public API: hands

    def deal(
        self,
        hands: Mapping[int, Sequence[Card]] | None = None,
        *,
        dealer: int | None = None,
    ) -> None:
        """Start the next hand; ``hands`` are the cards read at the deal (seat -> 3 cards).

        Seats left out are played with hands unknown. Raises ``IllegalActionError``
        (``game_over``) after the game is won, ``HandInProgressError`` while a hand is on,
        ``ValueError`` for an impossible deal.
        """
        if self._winner is not None:
            raise IllegalActionError(None, RefusalCode.GAME_OVER)
        if self._live:
            raise HandInProgressError("the current hand has not ended")
        n = self._n
        if dealer is not None and not 0 <= dealer < n:
            raise ValueError(f"no seat {dealer} at a table of {n}")
        cards: list[tuple[int, ...] | None] = [None] * n
        dealt = 0
        for seat, seat_cards in (hands or {}).items():
            if not 0 <= seat < n:
                raise ValueError(f"no seat {seat} at a table of {n}")
            idx = tuple([c.index for c in seat_cards])
            if len(idx) != 3:
                raise ValueError(f"seat {seat} must be dealt 3 cards, not {len(idx)}")
            cards[seat] = idx
            dealt += 3
        if dealt and len({c for cs in cards if cs is not None for c in cs}) != dealt:
            raise ValueError("a card dealt twice")
        self._start_hand(self._next_dealer if dealer is None else dealer, tuple(cards))

    def _start_hand(self, dealer: int, cards: tuple[tuple[int, ...] | None, ...]) -> None:
        n = self._n
        snap = (self._score[0], self._score[1], self._winner, self._next_dealer)
        self._clear_hand()
        mano = (dealer + 1) % n
        log = _HandLog(len(self._hands) + 1, dealer, mano, cards, snap)
        self._hands.append(log)
        self._log = log
        self._dealer = dealer
        self._mano = mano
        self._next_dealer = (dealer + 1) % n
        self._order = self._orders[mano]
        self._cards = list(cards)
        self._all_known = None not in cards
        self._points_ready = False  # envido and flor points: worked out when first needed
        self._leader = self._turn = mano
        self._live = True
        self._invalidate()

    def push(self, action: Action) -> None:
        """Apply ``action`` or raise ``IllegalActionError`` (the state is then unchanged)."""
        code = action.code
        if action.kind is _K_SHOW:
            refusal = self._show_refusal(action)
            if refusal is not None:
                raise IllegalActionError(action, refusal)
        else:
            codes = self._legal_codes
            if codes is None:
                codes = self._codes()
            if code not in codes:
                raise IllegalActionError(action, self._diagnose(action))
        log = self._log
        assert log is not None
        log.actions.append(action)
        self._apply(action)
        self._legal = None
        self._legal_codes = None

    def push_str(self, text: str) -> Action:
        """Parse ``"S ACTION"`` and push it; returns the action."""
        action = Action.from_str(text)
        self.push(action)
        return action

    def pop(self) -> Action | None:
        """Undo the last action (``None`` returned when it was a deal, which is undone)."""
        if not self._hands:
            raise NoHandError("nothing to undo")
        log = self._hands[-1]
        if log.actions:
            action = log.actions.pop()
            self._replay_hand(log)
            return action
        self._hands.pop()
        if self._hands:
            self._replay_hand(self._hands[-1])
        else:
            self._restore(self._initial)
            self._clear_hand()
        self._invalidate()
        return None

    def _replay_hand(self, log: _HandLog) -> None:
        actions = list(log.actions)
        self._restore(log.start)
        self._hands.pop()
        self._start_hand(log.dealer, log.cards)
        assert self._log is not None
        for a in actions:
            self._log.actions.append(a)
            self._apply(a)
        self._invalidate()

    # ------------------------------------------------------------------ public API: queries

    @property
    def legal_actions(self) -> LegalActions:
        """Every legal action now, for every seat (``show`` is not listed: see ``is_legal``)."""
        return LegalActions(self)

    def legal_list(self) -> list[Action]:
        """The legal actions as a list (shared; do not modify)."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._generate()
        return legal

    def _codes(self) -> set[int]:
        codes = self._legal_codes = set(map(_CODE_OF, self.legal_list()))
        return codes

    def is_legal(self, action: Action) -> bool:
        if action.kind is _K_SHOW:
            return self._show_refusal(action) is None
        codes = self._legal_codes
        if codes is None:
            codes = self._codes()
        return action.code in codes

    def refusal(self, action: Action) -> RefusalCode | None:
        """``None`` if ``action`` is legal, else the code the table would refuse it with."""
        if action.kind is _K_SHOW:
            return self._show_refusal(action)
        return None if self.is_legal(action) else self._diagnose(action)

    def view(self, seat: int) -> SeatView:
        """What ``seat`` may see and do now (never another seat's hidden cards)."""
        if not 0 <= seat < self._n:
            raise ValueError(f"no seat {seat} at a table of {self._n}")
        return seat_view(self, seat)

    def outcome(self) -> Outcome | None:
        if self._winner is None:
            return None
        return Outcome(self._winner, (self._score[0], self._score[1]))

    def is_game_over(self) -> bool:
        return self._winner is not None

    @property
    def initial_score(self) -> tuple[int, int]:
        """The score the game started (or resumed) from."""
        return (self._initial[0], self._initial[1])

    @property
    def first_dealer(self) -> int:
        return self._initial[3]

    @property
    def players(self) -> int:
        return self._n

    @property
    def score(self) -> tuple[int, int]:
        return (self._score[0], self._score[1])

    @property
    def winner(self) -> int | None:
        return self._winner

    @property
    def hand_in_progress(self) -> bool:
        return self._live

    @property
    def hand_number(self) -> int:
        return len(self._hands)

    @property
    def dealer(self) -> int | None:
        """This hand's dealer (``None`` before the first hand)."""
        return self._dealer if self._hands else None

    @property
    def next_dealer(self) -> int:
        return self._next_dealer

    @property
    def mano(self) -> int | None:
        return self._mano if self._hands else None

    @property
    def turn(self) -> int | None:
        """The seat whose turn it is to play a card (``None`` between hands)."""
        return self._turn if self._live else None

    @property
    def baza(self) -> int:
        """The current baza, 0..2."""
        return self._baza

    @property
    def baza_results(self) -> tuple[int | None, ...]:
        """Winning team of each finished baza of this hand (``None`` for parda)."""
        return tuple(None if r < 0 else r for r in self._bazas)

    @property
    def table_cards(self) -> tuple[tuple[int, Card], ...]:
        """(seat, card) played in the current baza, in play order."""
        return tuple((s, CARDS[c]) for s, c in self._table)

    @property
    def played_bazas(self) -> tuple[tuple[tuple[int, Card], ...], ...]:
        """The cards of each finished baza of this hand."""
        return tuple(tuple((s, CARDS[c]) for s, c in b) for b in self._baza_cards)

    def hand_of(self, seat: int) -> tuple[Card, ...] | None:
        """The cards dealt to ``seat`` this hand, if the table read them."""
        cs = self._cards[seat]
        return None if cs is None else tuple(CARDS[c] for c in cs)

    def cards_in_hand(self, seat: int) -> tuple[Card, ...] | None:
        """The cards ``seat`` still holds, if known."""
        cs = self._cards[seat]
        return None if cs is None else tuple(CARDS[c] for c in cs if c not in self._played)

    def seen_cards(self, seat: int) -> tuple[Card, ...]:
        """The cards of ``seat`` the table has seen this hand (played or shown)."""
        return tuple(CARDS[c] for c in self._seen[seat])

    @property
    def truco_level(self) -> int:
        """Accepted truco level: 0 none, 1 truco, 2 retruco, 3 vale cuatro."""
        return self._t_level

    @property
    def hand_value(self) -> int:
        return _TRUCO_VALUE[self._t_level]

    @property
    def truco_pending(self) -> tuple[int, int] | None:
        """(level called, caller's team) of a truco call awaiting its answer."""
        return (self._t_pending, self._t_caller) if self._t_pending else None

    @property
    def raise_team(self) -> int | None:
        """The team that may raise the truco next (after an accepted truco)."""
        return self._t_raiser if self._t_raiser >= 0 and self._t_level < 3 else None

    @property
    def envido_chain(self) -> tuple[Kind, ...]:
        return tuple(_ENVIDO_KINDS[c] for c in self._e_chain)

    @property
    def envido_pending(self) -> int | None:
        """The team that made the envido call awaiting an answer."""
        return self._e_caller if self._e_pending else None

    @property
    def envido_result(self) -> tuple[int, int] | None:
        """(seat, points) that won the envido: only the winner's points are public."""
        return self._e_result

    @property
    def flor_result(self) -> tuple[int, int] | None:
        return self._f_result

    @property
    def flor_announced(self) -> tuple[int, ...]:
        return tuple(self._f_ann)

    @property
    def flor_pending(self) -> int | None:
        """The team that must answer a contraflor or contraflor al resto."""
        return self._f_answer if self._f_answer >= 0 else None

    @property
    def flor_call(self) -> Kind | None:
        """The flor raise awaiting an answer (contraflor or contraflor al resto)."""
        if self._f_answer < 0:
            return None
        return _K_CONTRAFLOR if self._f_course == _COURSE_CONTRA else _K_CONTRAFLOR_AL_RESTO

    @property
    def flor_course_team(self) -> int | None:
        """The team whose first flor action is awaited (a flor was called against it)."""
        if (
            self._f_state == _FLOR_OPEN
            and self._f_course == _COURSE_NONE
            and self._f_answer < 0
            and self._tell is None
        ):
            return 1 - self._f_first
        return None

    @property
    def flor_open(self) -> bool:
        """A flor was called and is not settled yet (announcements or answers awaited)."""
        return self._f_state == _FLOR_OPEN

    @property
    def telling(self) -> Telling | None:
        t = self._tell
        if t is None:
            return None
        nxt = self._next_declarer(t)
        return Telling(
            t.kind,
            tuple(t.history),
            nxt if nxt >= 0 else None,
            t.best_seat if t.best_seat >= 0 else None,
        )

    @property
    def awards(self) -> tuple[Award, ...]:
        """This hand's awards so far."""
        return tuple(self._log.awards) if self._log is not None else ()

    @property
    def hands(self) -> tuple[HandResult, ...]:
        return tuple(HandResult(h.number, h.dealer, h.mano, tuple(h.awards)) for h in self._hands)

    @property
    def move_stack(self) -> tuple[Action, ...]:
        """This hand's actions so far."""
        return tuple(self._log.actions) if self._log is not None else ()

    def history(
        self,
    ) -> Iterator[tuple[int, tuple[tuple[Card, ...] | None, ...], tuple[Action, ...]]]:
        """(dealer, deal, actions) of every hand so far: enough to rebuild the game."""
        for h in self._hands:
            deal = tuple(None if c is None else tuple(CARDS[i] for i in c) for c in h.cards)
            yield h.dealer, deal, tuple(h.actions)

    def state_key(self) -> tuple[object, ...]:
        """Everything that determines the game from here on, for comparing states."""
        t = self._tell
        tell = None
        if t is not None:
            tell = (
                t.kind,
                t.order,
                tuple(sorted(t.declared.items())),
                tuple(sorted(t.conceded)),
                t.best,
                t.best_seat,
                tuple(t.history),
            )
        return (
            tuple(self._score),
            self._winner,
            self._next_dealer,
            self._live,
            len(self._hands),
            self._dealer,
            tuple(self._cards),
            tuple(tuple(s) for s in self._seen),
            tuple(sorted(self._played)),
            self._baza,
            tuple(self._table),
            tuple(self._bazas),
            self._leader,
            self._turn,
            self._t_level,
            self._t_pending,
            self._t_caller,
            self._t_raiser,
            self._e_done,
            tuple(self._e_chain),
            self._e_pending,
            self._e_caller,
            self._e_result,
            tell,
            self._f_state,
            self._f_first,
            tuple(self._f_ann),
            self._f_course,
            self._f_accepted,
            self._f_answer,
            self._f_raiser,
            self._f_resto_before,
            self._f_backed,
            self._f_backdown,
            self._f_result,
            tuple(self._tapada),
            tuple(self._deferred),
            tuple(self._log.awards) if self._log else (),
        )

    # ------------------------------------------------------------------ helpers

    def _points(self) -> None:
        self._points_ready = True
        flor_on = self._flor_on
        points = _POINTS_FLOR if flor_on else _POINTS
        for s, cs in enumerate(self._cards):
            if cs is not None:
                pts = points.get(cs)
                if pts is None:
                    pts = points[cs] = (envido_of_indices(cs, flor=flor_on), flor_of_indices(cs))
                self._env[s], self._flor[s] = pts

    @property
    def _env_pts(self) -> list[int]:
        """Each seat's envido points (hands known)."""
        if not self._points_ready:
            self._points()
        return self._env

    @property
    def _flor_pts(self) -> list[int | None]:
        """Each seat's flor points, None without a flor (hands known)."""
        if not self._points_ready:
            self._points()
        return self._flor

    def _can_flor(self, s: int) -> bool:
        """``s`` may hold a flor: known to hold one, or not known not to."""
        cs = self._cards[s]
        if cs is not None:
            return self._flor_pts[s] is not None
        seen = self._seen[s]
        return not seen or len({SUIT_OF[c] for c in seen}) == 1

    def _may_announce(self, s: int) -> bool:
        return (
            self._nplayed[s] == 0
            and s not in self._f_ann
            and (s & 1) != self._f_backed
            and self._can_flor(s)
        )

    def _flor_awaited(self) -> list[int]:
        """Known flor holders who must still announce before play resumes."""
        return [
            s
            for s in range(self._n)
            if self._flor_pts[s] is not None
            and self._cards[s] is not None
            and self._nplayed[s] == 0
            and s not in self._f_ann
            and (s & 1) != self._f_backed
        ]

    def _flor_blocking(self) -> bool:
        return self._f_state == _FLOR_OPEN and (self._f_answer >= 0 or bool(self._flor_awaited()))

    def _flor_late_window(self) -> bool:
        """Flor open only for late announcements by seats whose hands are unknown."""
        return self._f_state == _FLOR_OPEN and self._tell is None and not self._flor_blocking()

    def _envido_window(self, s: int) -> bool:
        """``s`` may start an envido on its own initiative (turn aside)."""
        return (
            self._baza == 0
            and not self._e_done
            and self._f_state == _FLOR_NONE
            and self._t_level == 0
            and self._nplayed[s] == 0
        )

    def _available(self, s: int) -> list[int]:
        """Cards ``s`` may play."""
        played = self._played
        cs = self._cards[s]
        if cs is not None:
            return [c for c in cs if c not in played]
        seen = self._seen[s]
        if len(seen) >= 3:
            return [c for c in seen if c not in played]
        owner = self._owner
        return [c for c in range(40) if c not in played and owner.get(c, s) == s]

    def _auto_claims(self) -> bool:
        return self.rules.claims is Claims.AUTO and self._all_known

    def _next_declarer(self, t: _Telling) -> int:
        best_team = t.best_seat & 1 if t.best_seat >= 0 else -1
        participants = self._f_ann if t.kind == "flor" else None
        for s in t.order:
            if participants is not None and s not in participants:
                continue
            if s in t.declared or s in t.conceded or (s & 1) == best_team:
                continue
            return s
        return -1

    def _envido_raises(self) -> tuple[int, ...]:
        chain = self._e_chain
        if not chain:
            return (_ENV_E, _ENV_R, _ENV_F)
        last = chain[-1]
        if last == _ENV_E:
            return (_ENV_E, _ENV_R, _ENV_F) if chain.count(_ENV_E) == 1 else (_ENV_R, _ENV_F)
        if last == _ENV_R:
            return (_ENV_F,)
        return ()

    def _falta(self, winner: int) -> int:
        t, h = self._target, self.rules.half
        a, b = self._score
        lead = a if a > b else b
        both_malas = a < h and b < h
        f = self.rules.falta
        if f is Falta.TO_WIN:
            return t - lead
        if f is Falta.MALAS_BUENAS:
            return h - lead if both_malas else t - lead
        if f is Falta.LOSER_BASED:
            low = self._score[1 - winner]
            return h - low if low < h else t - low
        # GAME_IN_MALAS
        return t - self._score[winner] if both_malas else t - self._score[1 - winner]

    def _envido_stake(self, winner: int) -> int:
        chain = self._e_chain
        if _ENV_F in chain:
            return self._falta(winner)
        return sum(_ENV_VALUE[c] for c in chain)

    def _flor_stake(self) -> int:
        count = len(self._f_ann)
        course = self._f_course
        if course == _COURSE_FLOR:
            return 3 * count
        if course == _COURSE_CONTRA:
            return 6
        # accepted contraflor al resto
        lead = max(self._score)
        return self._target - lead + 3 * count

    def _best_of(self, seats: Iterable[int], points: Sequence[int | None]) -> int:
        best_seat, best = -1, -1
        for s in self._order:
            if s in seats:
                p = points[s]
                assert p is not None
                if p > best:
                    best, best_seat = p, s
        return best_seat

    def _award(self, team: int, points: int, reason: Reason) -> None:
        if self._winner is not None or points <= 0:
            return
        assert self._log is not None
        self._log.awards.append(Award(team, points, reason))
        self._score[team] += points
        if self._score[team] >= self._target:
            self._winner = team

    # ------------------------------------------------------------------ generation

    def _generate(self) -> list[Action]:
        if self._winner is not None or not self._live:
            return []
        out: list[Action] = []
        add = out.append
        table = ACTION_TABLE
        n = self._n
        tell = self._tell
        if tell is not None:
            if tell.kind == "flor" and not tell.history:
                for s in range(n):
                    if self._cards[s] is None and self._may_announce(s):
                        add(table[s][_S_FLOR])
            s = self._next_declarer(tell)
            row = table[s]
            rng = _FLOR_RANGE if tell.kind == "flor" else _ENVIDO_RANGE
            best = tell.best
            for v in rng:
                if v > best:
                    add(row[DECLARE_SLOT + v])
            if tell.best_seat >= 0:
                add(row[_S_SON_BUENAS])
            return out

        if self._e_pending:
            answering = self._team_seats[1 - self._e_caller]
            raises = self._envido_raises()
            flor = self._flor_on and self._f_state == _FLOR_NONE
            for s in answering:
                row = table[s]
                add(row[_S_QUIERO])
                add(row[_S_NO_QUIERO])
                for r in raises:
                    add(row[_S_ENVIDO[r]])
                if flor and self._nplayed[s] == 0 and self._can_flor(s):
                    add(row[_S_FLOR])
            return out

        if self._f_state == _FLOR_OPEN and self._flor_blocking():
            self._gen_flor(out)
            return out

        late = self._f_state == _FLOR_OPEN and self._flor_late_window()
        t_pending = self._t_pending
        if t_pending:
            caller = self._t_caller
            primero = t_pending == 1 and self._baza == 0
            envido = primero and not self._e_done and self._f_state == _FLOR_NONE
            flor = primero and self._flor_on and self._f_state == _FLOR_NONE
            implicit = self.rules.implicit_quiero
            for s in self._team_seats[1 - caller]:
                row = table[s]
                add(row[_S_QUIERO])
                add(row[_S_NO_QUIERO])
                if t_pending < 3:
                    add(row[_S_TRUCO[t_pending + 1]])
                add(row[_S_MAZO])
                if envido:
                    for slot in _ALL_ENVIDO_SLOTS:
                        add(row[slot])
                if flor and self._nplayed[s] == 0 and self._can_flor(s):
                    add(row[_S_FLOR])
                if implicit and s == self._turn:
                    for c in self._available(s):
                        add(row[c])
            if late:
                self._gen_late_flor(out)
            return out

        t = self._turn
        row = table[t]
        cs = self._cards[t]
        if cs is not None:
            played = self._played
            for c in cs:
                if c not in played:
                    add(row[c])
        else:
            for c in self._available(t):
                add(row[c])
        add(row[_S_MAZO])
        if self._baza == 0 and self._envido_window(t):
            out.extend(_ENVIDO_ACTIONS[t])
        if (
            self._flor_on
            and self._f_state == _FLOR_NONE
            and self._baza == 0
            and self._nplayed[t] == 0
            and self._can_flor(t)
        ):
            add(row[_S_FLOR])
        level = self._t_level
        if level == 0:
            out.extend(_TRUCO_ACTIONS[n])
        elif level < 3:
            out.extend(_RAISE_ACTIONS[n][self._t_raiser][level + 1])
        if late:
            self._gen_late_flor(out)
        return out

    def _gen_late_flor(self, out: list[Action]) -> None:
        other = 1 - self._f_first
        for s in range(self._n):
            if self._cards[s] is None and self._may_announce(s):
                row = ACTION_TABLE[s]
                out.append(row[_S_FLOR])
                if (s & 1) == other and self._f_course == _COURSE_NONE:
                    out.append(row[_S_ACHICO])
                    out.append(row[_S_CONTRA])
                    out.append(row[_S_RESTO])

    def _gen_flor(self, out: list[Action]) -> None:
        add = out.append
        answer = self._f_answer
        if answer >= 0:
            for s in self._team_seats[answer]:
                row = ACTION_TABLE[s]
                add(row[_S_QUIERO])
                add(row[_S_NO_QUIERO])
                add(row[_S_ACHICO])
                if self._f_course == _COURSE_CONTRA:
                    add(row[_S_RESTO])
        other = 1 - self._f_first
        for s in range(self._n):
            if self._may_announce(s):
                row = ACTION_TABLE[s]
                add(row[_S_FLOR])
                if (s & 1) == other and self._f_course == _COURSE_NONE:
                    add(row[_S_ACHICO])
                    add(row[_S_CONTRA])
                    add(row[_S_RESTO])

    # ------------------------------------------------------------------ refusal codes

    def _card_refusal(self, s: int, c: int) -> RefusalCode | None:
        if c in self._played or self._owner.get(c, s) != s:
            return RefusalCode.CARD_ALREADY_PLAYED
        cs = self._cards[s]
        if cs is not None:
            if c not in cs:
                return RefusalCode.CARD_NOT_IN_HAND
        elif len(self._seen[s]) >= 3 and c not in self._seen[s]:
            return RefusalCode.CARD_NOT_IN_HAND
        return None

    def _show_refusal(self, action: Action) -> RefusalCode | None:
        if self._winner is not None:
            return RefusalCode.GAME_OVER
        if not self._live:
            return RefusalCode.HAND_OVER
        s = action.seat
        if s >= self._n:
            return RefusalCode.NOT_YOUR_TURN
        seen = set(self._seen[s])
        for card in action.cards:
            c = card.index
            owner = self._owner.get(c, s)
            if owner != s:
                return RefusalCode.CARD_ALREADY_PLAYED
            cs = self._cards[s]
            if cs is not None and c not in cs:
                return RefusalCode.CARD_NOT_IN_HAND
            seen.add(c)
        if len(seen) > 3:
            return RefusalCode.CARD_NOT_IN_HAND
        return None

    def _diagnose(self, a: Action) -> RefusalCode:
        """The refusal code for an action the generator did not list.

        ``_explain`` finds it in the priority order of the rules; the property tests check
        that it always does. Should it ever not (a bug), the table still refuses the action
        rather than fail: ``call_pending``.
        """
        return self._explain(a) or RefusalCode.CALL_PENDING

    def _explain(self, a: Action) -> RefusalCode | None:
        R = RefusalCode
        k, s = a.kind, a.seat
        team = s & 1
        if self._winner is not None:
            return R.GAME_OVER
        if not self._live:
            return R.HAND_OVER
        if k in _FLOR_KINDS and not self._flor_on:
            return R.FLOR_DISABLED
        if s >= self._n:
            return R.NOT_YOUR_TURN
        tell = self._tell
        if tell is not None:
            if k is _K_DECLARE or k is _K_SON_BUENAS:
                return R.BAD_DECLARATION
            if k is _K_FLOR and tell.kind == "flor" and not tell.history and not self._all_known:
                return self._flor_call_refusal(s)
            return R.CALL_PENDING
        if k is _K_DECLARE or k is _K_SON_BUENAS:
            return R.BAD_DECLARATION

        if self._e_pending:
            if team == self._e_caller:
                return R.CALL_PENDING
            if k in _ENVIDO_KINDS:
                return R.RAISE_NOT_ALLOWED
            if k is _K_FLOR:
                if self._nplayed[s]:
                    return R.ENVIDO_CLOSED
                return R.NO_FLOR
            return R.CALL_PENDING

        if self._f_state == _FLOR_OPEN and self._flor_blocking():
            return self._flor_phase_refusal(a)

        if k is _K_FLOR and self._f_state == _FLOR_OPEN:
            # late announcement window (hands unknown)
            return self._flor_call_refusal(s)

        if self._t_pending:
            if team == self._t_caller:
                return R.CALL_PENDING
            if k is _K_TRUCO:
                return R.CALL_PENDING
            if k in _TRUCO_KINDS:
                return R.RAISE_NOT_ALLOWED
            if k in _ENVIDO_KINDS:
                if self._t_pending != 1:
                    return R.CALL_PENDING
                return R.ENVIDO_CLOSED
            if k is _K_FLOR:
                if self._t_pending != 1:
                    return R.CALL_PENDING
                if self._baza or self._nplayed[s] or self._f_state != _FLOR_NONE:
                    return R.ENVIDO_CLOSED
                return R.NO_FLOR
            if k is _K_PLAY and self.rules.implicit_quiero:
                if s != self._turn:
                    return R.NOT_YOUR_TURN
                assert a.card is not None
                return self._card_refusal(s, a.card.index) or R.CALL_PENDING
            return R.CALL_PENDING

        if k in _ANSWERS:
            return R.NO_PENDING_CALL
        if k in _TRUCO_KINDS or k is _K_CONTRAFLOR or k is _K_CONTRAFLOR_AL_RESTO:
            return R.RAISE_NOT_ALLOWED
        if k in _ENVIDO_KINDS:
            if not self._envido_window(s):
                return R.ENVIDO_CLOSED
            return R.NOT_YOUR_TURN
        if k is _K_FLOR:
            return self._flor_call_refusal(s)
        if k is _K_MAZO:
            return R.NOT_YOUR_TURN
        if k is _K_PLAY:
            if s != self._turn:
                return R.NOT_YOUR_TURN
            assert a.card is not None
            refusal = self._card_refusal(s, a.card.index)
            if refusal is not None:
                return refusal
        return None

    def _flor_call_refusal(self, s: int) -> RefusalCode:
        """Why ``s`` may not call or announce a flor now (no call pending)."""
        R = RefusalCode
        if self._f_state == _FLOR_CLOSED or self._baza or self._nplayed[s]:
            return R.ENVIDO_CLOSED
        if self._f_state == _FLOR_OPEN:
            if s in self._f_ann or (s & 1) == self._f_backed:
                return R.ENVIDO_CLOSED
        elif s != self._turn:
            return R.NOT_YOUR_TURN
        if not self._can_flor(s):
            return R.NO_FLOR
        return R.ENVIDO_CLOSED

    def _flor_phase_refusal(self, a: Action) -> RefusalCode:
        R = RefusalCode
        k, s = a.kind, a.seat
        team = s & 1
        answer = self._f_answer
        if k is _K_FLOR:
            return self._flor_call_refusal(s)
        if k in _ANSWERS:
            if answer < 0:
                if (
                    k is _K_CON_FLOR_ME_ACHICO
                    and team != self._f_first
                    and self._f_course == _COURSE_NONE
                ):
                    return self._flor_call_refusal(s)
                return R.CALL_PENDING
            return R.CALL_PENDING  # the answering team's answers are legal: wrong team
        if k is _K_CONTRAFLOR or k is _K_CONTRAFLOR_AL_RESTO:
            if answer >= 0:
                if team != answer:
                    return R.CALL_PENDING
                return R.RAISE_NOT_ALLOWED
            if team == self._f_first:
                return R.CALL_PENDING
            if self._f_course != _COURSE_NONE:
                return R.RAISE_NOT_ALLOWED
            return self._flor_call_refusal(s)
        return R.CALL_PENDING

    # ------------------------------------------------------------------ application

    def _apply(self, a: Action) -> None:
        k, s = a.kind, a.seat
        team = s & 1
        if k is _K_SHOW:
            self._see(s, [c.index for c in a.cards])
            return
        if k is _K_DECLARE or k is _K_SON_BUENAS:
            self._declare(s, a.number)
            return
        if k in _FLOR_KINDS or (self._f_state == _FLOR_OPEN and self._f_answer >= 0):
            self._apply_flor(a)
            return
        if self._f_state == _FLOR_OPEN and self._tell is None:
            self._close_flor_window()
        if k is _K_PLAY:
            if self._t_pending:
                self._accept_truco(team)
            assert a.card is not None
            self._play(s, a.card.index)
            return
        if self._e_pending:
            if k is _K_QUIERO:
                self._accept_envido()
            elif k is _K_NO_QUIERO:
                chain = self._e_chain
                pts = 1 if len(chain) == 1 else sum(_ENV_VALUE[c] for c in chain[:-1])
                self._e_pending = False
                self._award(self._e_caller, pts, Reason.ENVIDO)
            else:
                self._e_chain.append(_ENV_OF[k])
                self._e_caller = team
            return
        if k in _ENVIDO_KINDS:
            self._e_done = True
            self._e_pending = True
            self._e_chain = [_ENV_OF[k]]
            self._e_caller = team
            return
        if k in _TRUCO_KINDS:
            if self._t_pending:
                self._accept_truco(team)
            self._t_pending = _LEVEL_OF[k]
            self._t_caller = team
            return
        if k is _K_QUIERO:
            self._accept_truco(team)
            return
        if k is _K_NO_QUIERO:
            level = self._t_pending
            self._t_pending = 0
            self._finish_hand([(self._t_caller, _TRUCO_VALUE[level - 1], Reason.TRUCO)])
            return
        if k is _K_MAZO:
            other = 1 - team
            awards = [(other, _TRUCO_VALUE[self._t_level], Reason.MAZO)]
            if (
                self.rules.mazo_envido_point
                and self._baza == 0
                and not self._e_done
                and self._f_state == _FLOR_NONE
            ):
                awards.append((other, 1, Reason.MAZO_ENVIDO))
            self._t_pending = 0
            self._finish_hand(awards)
            return
        raise AssertionError(f"unhandled action {a}")

    def _accept_truco(self, team: int) -> None:
        self._t_level = self._t_pending
        self._t_pending = 0
        self._t_raiser = team

    def _see(self, s: int, cards: Iterable[int]) -> None:
        seen = self._seen[s]
        for c in cards:
            if c not in seen:
                seen.append(c)
                self._owner[c] = s
        if (
            self._flor_on
            and self._cards[s] is None
            and len(seen) == 3
            and not self._tapada[s]
            and s not in self._f_ann
            and (s & 1) != self._f_backed
            and flor_of_indices(seen) is not None
        ):
            self._tapada[s] = True
            self._award(1 - (s & 1), 3, Reason.PENALTY)

    def _play(self, s: int, c: int) -> None:
        if (
            self._flor_on
            and self._nplayed[s] == 0
            and self._flor_pts[s] is not None
            and s not in self._f_ann
            and (s & 1) != self._f_backed
        ):
            self._tapada[s] = True
            self._award(1 - (s & 1), 3, Reason.PENALTY)
        self._played.add(c)
        self._nplayed[s] += 1
        self._table.append((s, c))
        self._see(s, (c,))
        if self._winner is not None:
            return
        n = self._n
        if len(self._table) < n:
            self._turn = (s + 1) % n
            return
        # the baza is complete
        best = -1
        top: list[int] = []
        for seat, card in self._table:
            st = STRENGTH[card]
            if st > best:
                best, top = st, [seat]
            elif st == best:
                top.append(seat)
        teams = {seat & 1 for seat in top}
        if len(teams) == 1:
            result = top[0] & 1
            self._leader = top[0]
        else:
            result = -1
        self._bazas.append(result)
        self._baza_cards.append(tuple(self._table))
        self._table = []
        self._baza += 1
        self._turn = self._leader
        winner = self._hand_winner()
        if winner is not None:
            self._finish_hand([(winner, _TRUCO_VALUE[self._t_level], Reason.TRUCO)])

    def _hand_winner(self) -> int | None:
        r = self._bazas
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
            if r[0] < 0 and r[1] < 0:
                return self._mano & 1
            return r[0]
        return None

    def _finish_hand(self, awards: list[tuple[int, int, Reason]]) -> None:
        if self._f_state == _FLOR_OPEN and self._tell is None and not self._flor_blocking():
            self._close_flor_window()
        for kind, team, seats, value, points, penalty in self._deferred:
            if kind == "envido":
                # only seen cards prove: nothing seen proves nothing, not even a 0
                seen = self._seen[seats[0]]
                proven = bool(seen) and envido_of_indices(seen, flor=self._flor_on) == value
            elif kind == "flor":
                proven = flor_of_indices(self._seen[seats[0]]) == value
            else:  # a set of flores, each must be shown
                proven = all(
                    self._cards[x] is not None or flor_of_indices(self._seen[x]) is not None
                    for x in seats
                )
            if proven:
                self._award(team, points, Reason.ENVIDO if kind == "envido" else Reason.FLOR)
            else:
                self._award(1 - team, penalty, Reason.PENALTY)
        self._deferred = []
        for team, points, reason in awards:
            self._award(team, points, reason)
        self._live = False
        self._t_pending = 0

    # ---- envido

    def _accept_envido(self) -> None:
        self._e_pending = False
        if self._auto_claims():
            seat = self._best_of(range(self._n), self._env_pts)
            self._e_result = (seat, self._env_pts[seat])
            self._award(seat & 1, self._envido_stake(seat & 1), Reason.ENVIDO)
        else:
            self._tell = _Telling("envido", self._order)

    # ---- telling

    def _declare(self, s: int, number: int | None) -> None:
        t = self._tell
        assert t is not None
        t.history.append((s, number))
        if number is None:
            t.conceded.add(s)
        else:
            t.declared[s] = number
            if self._cards[s] is not None:
                actual = self._env_pts[s] if t.kind == "envido" else self._flor_pts[s]
                if number != actual:
                    self._tell = None
                    other = 1 - (s & 1)
                    if t.kind == "envido":
                        self._award(other, self._envido_stake(other), Reason.PENALTY)
                    else:
                        self._f_state = _FLOR_CLOSED
                        self._award(other, self._flor_stake(), Reason.PENALTY)
                    return
            t.best, t.best_seat = number, s
        if self._next_declarer(t) < 0:
            self._tell = None
            seat, value = t.best_seat, t.best
            team = seat & 1
            if t.kind == "envido":
                self._e_result = (seat, value)
                points, penalty = self._envido_stake(team), self._envido_stake(1 - team)
            else:
                self._f_result = (seat, value)
                self._f_state = _FLOR_CLOSED
                points = penalty = self._flor_stake()
            if self._cards[seat] is not None:
                self._award(team, points, Reason.ENVIDO if t.kind == "envido" else Reason.FLOR)
            else:
                self._deferred.append((t.kind, team, (seat,), value, points, penalty))

    # ---- flor

    def _apply_flor(self, a: Action) -> None:
        k, s = a.kind, a.seat
        team = s & 1
        if self._f_state == _FLOR_NONE:
            # a first flor: on the caller's turn, or answering an envido or a plain truco
            if self._e_pending:
                self._e_pending = False
            self._e_done = True
            self._f_state = _FLOR_OPEN
            self._f_first = team
            self._f_ann = [s]
        elif self._f_answer >= 0 and k in (_K_QUIERO, _K_NO_QUIERO, _K_CON_FLOR_ME_ACHICO):
            self._f_answer = -1
            if k is _K_QUIERO:
                self._f_accepted = True
            else:
                # Only the backing team is excused; the other team's flores are still
                # announced, then the flor resolves at these points (decision 14).
                self._f_backdown = 4 if self._f_course == _COURSE_CONTRA else self._f_resto_before
                self._f_backed = team
                self._f_course = _COURSE_BACKED
        elif k is _K_CONTRAFLOR_AL_RESTO and self._f_answer >= 0:
            # answering a contraflor; a holder who had not announced announces with it
            if s not in self._f_ann and self._nplayed[s] == 0 and self._can_flor(s):
                self._f_ann.append(s)
            self._f_course = _COURSE_RESTO
            self._f_resto_before = 6
            self._f_raiser = team
            self._f_answer = 1 - team
        elif k is _K_FLOR:
            self._f_ann.append(s)
            if team != self._f_first and self._f_course == _COURSE_NONE:
                self._f_course = _COURSE_FLOR
        elif k is _K_CON_FLOR_ME_ACHICO:
            self._f_course = _COURSE_ACHICO
            self._f_backed = team
        elif k is _K_CONTRAFLOR:
            self._f_ann.append(s)
            self._f_course = _COURSE_CONTRA
            self._f_raiser = team
            self._f_answer = 1 - team
        elif k is _K_CONTRAFLOR_AL_RESTO:
            self._f_ann.append(s)
            self._f_course = _COURSE_RESTO
            self._f_resto_before = 4
            self._f_raiser = team
            self._f_answer = 1 - team
        self._flor_progress()

    def _flor_progress(self) -> None:
        if self._f_answer >= 0 or self._tell is not None or self._flor_awaited():
            return
        course = self._f_course
        compare = course == _COURSE_FLOR or (
            course in (_COURSE_CONTRA, _COURSE_RESTO) and self._f_accepted
        )
        if compare:
            if self._auto_claims():
                seat = self._best_of(self._f_ann, self._flor_pts)
                points = self._flor_pts[seat]
                assert points is not None
                self._f_result = (seat, points)
                self._f_state = _FLOR_CLOSED
                self._award(seat & 1, self._flor_stake(), Reason.FLOR)
            else:
                self._tell = _Telling("flor", self._order)
            return
        if not self._all_known:
            return  # unknown hands: open for late announcements until play resumes
        self._close_flor_window()

    def _close_flor_window(self) -> None:
        """Resolve a flor that needs no comparison (none answered, con flor me achico, or a
        contraflor or al resto refused)."""
        if self._f_course == _COURSE_BACKED:
            self._f_state = _FLOR_CLOSED
            self._settle_flor_set(self._f_raiser, self._f_backdown)
            return
        first = self._f_first
        count = sum(1 for x in self._f_ann if (x & 1) == first)
        points = 3 * count + (1 if self._f_course == _COURSE_ACHICO else 0)
        self._f_state = _FLOR_CLOSED
        self._settle_flor_set(first, points)

    def _settle_flor_set(self, team: int, points: int) -> None:
        seats = tuple(x for x in self._f_ann if (x & 1) == team)
        if all(self._cards[x] is not None for x in seats):
            self._award(team, points, Reason.FLOR)
        else:
            self._deferred.append(("flores", team, seats, 0, points, points))


class LegalActions:
    """A lazy view of the legal actions (``in``, iteration, ``count()``, ``len``)."""

    __slots__ = ("_game",)

    def __init__(self, game: Game) -> None:
        self._game = game

    def __iter__(self) -> Iterator[Action]:
        return iter(list(self._game.legal_list()))

    def __contains__(self, action: object) -> bool:
        return (
            isinstance(action, Action)
            and action.kind is not _K_SHOW
            and self._game.is_legal(action)
        )

    def count(self) -> int:
        return len(self._game.legal_list())

    def __len__(self) -> int:
        return self.count()

    def __bool__(self) -> bool:
        return bool(self._game.legal_list())

    def for_seat(self, seat: int) -> list[Action]:
        return [a for a in self._game.legal_list() if a.seat == seat]

    def __repr__(self) -> str:
        return f"<LegalActions ({', '.join(str(a) for a in self)})>"
