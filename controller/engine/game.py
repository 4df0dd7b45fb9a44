"""The state of one game of truco and the rules that move it.

``Game`` follows python-chess's ``Board``: ``push`` applies a legal action or raises
``IllegalActionError`` with the refusal code (leaving the state unchanged), ``pop``
undoes, ``legal_actions`` is a lazy view, and ``outcome()`` says whether the game is won.

``Game`` is the façade: the score, the hands and their dealers, undo. The play of a hand
lives in ``HandPlay`` objects (``hand.py``), built of one state object per phase (truco,
envido, flor, telling): one for a normal hand, three for a pica-pica hand (one per pica,
RULES.md section 8b). Legality has one source: the phase that has the floor judges any
action (``refusal``: a code in the order of RULES.md section 11, or ``None`` when it is
legal), and ``push``, ``is_legal`` and ``refusal`` ask it; ``legal_actions`` lists the
actions that phase accepts (its own quick listing, which the property tests check against
the refusals over random positions: the list is exactly the actions refused with ``None``).

Internally cards are small integers (``Card.index``) and actions are interned objects
with an integer ``code``, so a push costs no copying. Undo restores what was saved, in
constant time per action, as python-chess's ``pop`` does: each object an action changes
(the board, the deal, a play, a phase) declares its changing fields once
(``hand.Saved.SAVED``: values replaced, never changed in place) and saves them on the
hand's trail before it changes them (``hand.Trail``); ``pop`` puts them back through the
same generic path (``hand.undo_action``). A deal undone returns to the previous hand's
own objects, kept with its log. ``copy()`` replays the history.

>>> from controller.engine import Action, Card, Game
>>> g = Game()
>>> g.deal({0: [Card.from_str(c) for c in "7C 6C 3E".split()],
...         1: [Card.from_str(c) for c in "2O 1B 4B".split()]})
>>> g.push(Action.from_str("0 envido")); g.push(Action.from_str("1 quiero"))
>>> g.score
(2, 0)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from .actions import K_SHOW, Action, Kind
from .cards import CARDS, Card
from .errors import IllegalActionError, RefusalCode, TrucoError
from .hand import FLOR_KINDS, NO_TRAIL, Board, Deal, HandPlay, Telling, Trail, undo_action
from .results import Award, HandResult, Outcome
from .rules import HouseRules
from .view import SeatView, seat_views

__all__ = [
    "Game",
    "HandInProgressError",
    "HandPlay",
    "LegalActions",
    "NoHandError",
    "PicaPicaHandError",
    "Telling",
]

class HandInProgressError(TrucoError):
    """A new hand was dealt before the current one ended."""


class NoHandError(TrucoError):
    """Nothing to undo."""


class PicaPicaHandError(TrucoError):
    """A question about the hand's one play asked of a pica-pica hand, which has three
    (ask the seat's: ``play_of(seat)``, ``turn_of(seat)``, or ``turns``)."""


class _HandLog:
    """A hand: its deal, its actions and awards, what they overwrote (its trail), and its
    plays (kept: undoing the next hand's deal returns to them)."""

    __slots__ = (
        "actions",
        "awards",
        "cards",
        "deal",
        "dealer",
        "mano",
        "number",
        "pica",
        "play_of",
        "plays",
        "start",
        "trail",
    )

    def __init__(
        self,
        number: int,
        dealer: int,
        mano: int,
        cards: tuple[tuple[int, ...] | None, ...],
        start: tuple[int, int, int | None, int],
        pica: bool,
    ) -> None:
        self.number = number
        self.dealer = dealer
        self.mano = mano
        self.cards = cards
        self.start = start  # score 0, score 1, winner, next dealer: before this hand
        self.pica = pica  # a pica-pica hand
        self.actions: list[Action] = []
        self.awards: tuple[Award, ...] = ()  # kept when the next hand is dealt
        self.trail: Trail = []
        self.deal: Deal | None = None
        self.plays: tuple[HandPlay, ...] = ()
        self.play_of: tuple[HandPlay, ...] = ()


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
        self._initial = (score[0], score[1], None, n - 1 if dealer is None else dealer)
        self._orders = tuple(tuple((m + i) % n for i in range(n)) for m in range(n))
        self._hands: list[_HandLog] = []
        self._legal: list[Action] | None = None
        # every seat's view, and the legal list it was read with (see ``view``)
        self._views: tuple[SeatView, ...] = ()
        self._views_legal: list[Action] | None = None
        self._restore(self._initial)
        self._clear_hand()

    # ------------------------------------------------------------------ state plumbing

    def _restore(self, snap: tuple[int, int, int | None, int]) -> None:
        self._board = Board(self.rules.target, (snap[0], snap[1]), snap[2])
        self._next_dealer = snap[3]
        self._live = False

    def _clear_hand(self) -> None:
        n = self._n
        self._log: _HandLog | None = None
        self._dealer = -1
        self._mano = -1
        self._deal = Deal([None] * n, self._flor_on, {})
        play = HandPlay(self.rules, self._board, self._deal, self._orders[0])
        play.live = False
        self._plays: tuple[HandPlay, ...] = (play,)
        self._play_of: tuple[HandPlay, ...] = (play,) * n

    def _invalidate(self) -> None:
        self._legal = None

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
        if self._board.winner is not None:
            raise IllegalActionError(None, RefusalCode.GAME_OVER)
        if self._live:
            raise HandInProgressError("the current hand has not ended")
        n = self._n
        if dealer is not None and not 0 <= dealer < n:
            raise ValueError(f"no seat {dealer} at a table of {n}")
        cards: list[tuple[int, ...] | None] = [None] * n
        owner: dict[int, int] = {}  # each card read: its seat
        for seat, seat_cards in (hands or {}).items():
            if not 0 <= seat < n:
                raise ValueError(f"no seat {seat} at a table of {n}")
            if len(seat_cards) != 3:
                raise ValueError(f"seat {seat} must be dealt 3 cards, not {len(seat_cards)}")
            first, second, third = seat_cards
            cards[seat] = (first.index, second.index, third.index)
            owner[first.index] = owner[second.index] = owner[third.index] = seat
        if len(owner) != 3 * (n - cards.count(None)):
            raise ValueError("a card dealt twice")
        dealer = self._next_dealer if dealer is None else dealer
        self._start_hand(dealer, tuple(cards), owner)

    def _is_pica_pica(self) -> bool:
        """The next hand is a pica-pica hand (RULES.md section 8b)."""
        rules = self.rules
        if not rules.pica_pica or self._n != 6:
            return False
        if self._hands and self._hands[-1].pica:
            return False
        low, high = rules.pica_window
        lead = max(self._board.score)
        return low <= lead <= high

    def _start_hand(
        self, dealer: int, cards: tuple[tuple[int, ...] | None, ...], owner: dict[int, int]
    ) -> None:
        n = self._n
        board = self._board
        snap = (board.score[0], board.score[1], board.winner, self._next_dealer)
        pica = self._is_pica_pica()
        for old in self._plays:
            old.trail = NO_TRAIL  # its hand is over: no cycle through the trail outlives it
        if self._log is not None:
            self._log.awards = board.awards  # its hand is over: its awards are final
        mano = (dealer + 1) % n
        log = _HandLog(len(self._hands) + 1, dealer, mano, cards, snap, pica)
        self._hands.append(log)
        self._log = log
        board.awards = ()
        self._dealer = dealer
        self._mano = mano
        self._next_dealer = (dealer + 1) % n
        deal = self._deal = Deal(cards, self._flor_on, owner)
        rules = self.rules
        if pica:
            plays = tuple(
                HandPlay(rules, board, deal, ((mano + i) % n, (mano + i + 3) % n), pica=True)
                for i in range(3)
            )
            play_of = [plays[0]] * n
            for p in plays:
                for s in p.order:
                    play_of[s] = p
            self._plays, self._play_of = plays, tuple(play_of)
        else:
            play = HandPlay(rules, board, deal, self._orders[mano])
            self._plays, self._play_of = (play,), (play,) * n
        log.deal, log.plays, log.play_of = deal, self._plays, self._play_of
        for play in self._plays:
            play.trail = log.trail
        self._live = True
        self._invalidate()

    def push(self, action: Action) -> None:
        """Apply ``action`` or raise ``IllegalActionError`` (the state is then unchanged)."""
        refusal = self._show_refusal(action) if action.kind is K_SHOW else self._explain(action)
        if refusal is not None:
            raise IllegalActionError(action, refusal)
        log = self._log
        assert log is not None
        log.actions.append(action)
        log.trail.append(None)  # where this action's entries start
        play = self._play_of[action.seat]
        play.apply(action)
        if not play.live:
            self._hand_end()
        self._legal = None

    def _hand_end(self) -> None:
        """A play ended: the hand ends when its last play ends (a won game stops it where
        it is, still in progress)."""
        plays = self._plays
        self._live = len(plays) > 1 and any(p.live for p in plays)

    def push_str(self, text: str) -> Action:
        """Parse ``"S ACTION"`` and push it; returns the action."""
        action = Action.from_str(text)
        self.push(action)
        return action

    def pop(self) -> Action | None:
        """Undo the last action (``None`` returned when it was a deal, which is undone):
        what it overwrote is restored, in constant time (no replay)."""
        if not self._hands:
            raise NoHandError("nothing to undo")
        log = self._hands[-1]
        if log.actions:
            action = log.actions.pop()
            undo_action(log.trail)
            self._live = any(p.live for p in self._plays)
            self._invalidate()
            return action
        self._hands.pop()
        if self._hands:
            self._resume(self._hands[-1], log.start)
        else:
            self._restore(self._initial)
            self._clear_hand()
        self._invalidate()
        return None

    def _resume(self, log: _HandLog, end: tuple[int, int, int | None, int]) -> None:
        """Back to the end of ``log``'s hand (``end``: the score and next dealer then)."""
        board = self._board
        board.score = (end[0], end[1])
        board.winner = end[2]
        board.awards = log.awards
        self._next_dealer = end[3]
        self._log = log
        self._dealer = log.dealer
        self._mano = log.mano
        assert log.deal is not None
        self._deal = log.deal
        self._plays, self._play_of = log.plays, log.play_of
        for play in log.plays:
            play.trail = log.trail  # its hand is the current one again
        self._live = any(p.live for p in log.plays)

    def copy(self) -> Game:
        """An independent game in the same state, with the same undo history (its hands
        replayed from the start)."""
        other = Game(self.rules, score=self.initial_score, dealer=self.first_dealer)
        for dealer, deal, actions in self.history():
            other.deal({s: cs for s, cs in enumerate(deal) if cs is not None}, dealer=dealer)
            for action in actions:
                other.push(action)
        return other

    # ------------------------------------------------------------------ public API: queries

    @property
    def legal_actions(self) -> LegalActions:
        """Every legal action now, for every seat (``show`` is not listed: see ``is_legal``)."""
        return LegalActions(self)

    def legal_list(self) -> list[Action]:
        """The legal actions as a list (shared; do not modify)."""
        legal = self._legal
        if legal is None:
            legal = []
            if self._live and self._board.winner is None:
                for play in self._plays:
                    if play.live:  # the phase with the floor lists the legal actions
                        play.floor().legal(play, legal)
            self._legal = legal
        return legal

    def is_legal(self, action: Action) -> bool:
        return self.refusal(action) is None

    def refusal(self, action: Action) -> RefusalCode | None:
        """``None`` if ``action`` is legal, else the code the table would refuse it with."""
        if action.kind is K_SHOW:
            return self._show_refusal(action)
        return self._explain(action)

    def _show_refusal(self, action: Action) -> RefusalCode | None:
        if self._board.winner is not None:
            return RefusalCode.GAME_OVER
        s = action.seat
        if not self._live or (s < self._n and not self._play_of[s].live):
            return RefusalCode.HAND_OVER
        if s >= self._n:
            return RefusalCode.NOT_YOUR_TURN
        return self._deal.show_refusal(s, action.cards)

    def _explain(self, a: Action) -> RefusalCode | None:
        """The refusal of ``a`` (not a ``show``) in the priority order of RULES.md section
        11, ``None`` when it is legal: the game and hand checks, then the seat's play."""
        if self._board.winner is not None:
            return RefusalCode.GAME_OVER
        s = a.seat
        if not self._live or (s < self._n and not self._play_of[s].live):
            return RefusalCode.HAND_OVER
        if a.kind in FLOR_KINDS and not self._flor_on:
            return RefusalCode.FLOR_DISABLED
        if s >= self._n:
            return RefusalCode.NOT_YOUR_TURN
        return self._play_of[s].explain(a)

    def view(self, seat: int) -> SeatView:
        """What ``seat`` may see and do now (never another seat's hidden cards); in a
        pica-pica hand, of the seat's own pica."""
        if not 0 <= seat < self._n:
            raise ValueError(f"no seat {seat} at a table of {self._n}")
        return self.views()[seat]

    def views(self) -> tuple[SeatView, ...]:
        """Every seat's ``view``, in seat order, read once per state (``seat_views``)."""
        # Kept per state: the legal list is made afresh after every push, pop and deal,
        # so it is the same object exactly as long as the state is unchanged (held here,
        # its identity cannot be reused).
        legal = self.legal_list()
        if self._views_legal is not legal:
            self._views = seat_views(self)
            self._views_legal = legal
        return self._views

    def outcome(self) -> Outcome | None:
        winner = self._board.winner
        if winner is None:
            return None
        return Outcome(winner, self.score)

    def is_game_over(self) -> bool:
        return self._board.winner is not None

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
        return self._board.score

    @property
    def winner(self) -> int | None:
        return self._board.winner

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

    # ---- the plays of the hand

    @property
    def pica_pica(self) -> bool:
        """The current hand is a pica-pica hand (section 8b)."""
        return bool(self._hands) and self._hands[-1].pica

    @property
    def plays(self) -> tuple[HandPlay, ...]:
        """The plays of the current hand: one, or a pica-pica hand's three picas."""
        return self._plays

    def play_of(self, seat: int) -> HandPlay:
        """The play ``seat`` takes part in: the whole hand, or its pica."""
        return self._play_of[seat]

    def pica_live(self, seat: int) -> bool:
        """``seat``'s play (its pica in a pica-pica hand) is still going on."""
        return self._live and self._play_of[seat].live

    def turn_of(self, seat: int) -> int | None:
        """Whose turn it is to play a card in ``seat``'s play (``None`` once it ended)."""
        play = self._play_of[seat]
        return play.turn if self._live and play.live else None

    @property
    def turns(self) -> tuple[int, ...]:
        """The seats whose turn it is to play a card: one per play still going on (a
        pica-pica hand's picas in order from the mano's), none between hands."""
        if not self._live:
            return ()
        return tuple([p.turn for p in self._plays if p.live])

    def _the_play(self) -> HandPlay:
        """The hand's one play; a pica-pica hand has three: ``PicaPicaHandError``."""
        plays = self._plays
        if len(plays) > 1:
            raise PicaPicaHandError(
                "a pica-pica hand has three picas: ask play_of(seat), turn_of(seat) or turns"
            )
        return plays[0]

    # The hand-level properties below describe the hand's one play. A pica-pica hand has
    # three, one per pica: there they raise ``PicaPicaHandError`` rather than answer for
    # one pica (each seat's is ``play_of(seat)``, with the same names; ``turn_of(seat)``).

    @property
    def turn(self) -> int | None:
        """The seat whose turn it is to play a card (``None`` between hands)."""
        play = self._the_play()
        return play.turn if self._live and play.live else None

    @property
    def baza(self) -> int:
        """The current baza, 0..2."""
        return self._the_play().baza

    @property
    def baza_results(self) -> tuple[int | None, ...]:
        """Winning team of each finished baza of this hand (``None`` for parda)."""
        return self._the_play().baza_results

    @property
    def table_cards(self) -> tuple[tuple[int, Card], ...]:
        """(seat, card) played in the current baza, in play order."""
        return self._the_play().table_cards

    @property
    def played_bazas(self) -> tuple[tuple[tuple[int, Card], ...], ...]:
        """The cards of each finished baza of this hand."""
        return self._the_play().played_bazas

    def hand_of(self, seat: int) -> tuple[Card, ...] | None:
        """The cards dealt to ``seat`` this hand, if the table read them."""
        cs = self._deal.cards[seat]
        return None if cs is None else tuple(CARDS[c] for c in cs)

    def cards_in_hand(self, seat: int) -> tuple[Card, ...] | None:
        """The cards ``seat`` still holds, if known."""
        cs = self._deal.cards[seat]
        played = self._deal.played
        return None if cs is None else tuple(CARDS[c] for c in cs if not played >> c & 1)

    def cards_in_hands(self) -> tuple[tuple[Card, ...] | None, ...]:
        """``cards_in_hand`` of every seat, in seat order."""
        deal = self._deal
        played = deal.played
        # plain loops: a comprehension a seat is a call a seat (once per state: every
        # seat's view)
        hands: list[tuple[Card, ...] | None] = []
        for cs in deal.cards:
            if cs is None:
                hands.append(None)
                continue
            held: list[Card] = []
            for c in cs:
                if not played >> c & 1:
                    held.append(CARDS[c])
            hands.append(tuple(held))
        return tuple(hands)

    def seen_cards(self, seat: int) -> tuple[Card, ...]:
        """The cards of ``seat`` the table has seen this hand (played or shown)."""
        return tuple(CARDS[c] for c in self._deal.seen[seat])

    @property
    def truco_level(self) -> int:
        """Accepted truco level: 0 none, 1 truco, 2 retruco, 3 vale cuatro."""
        return self._the_play().truco_level

    @property
    def hand_value(self) -> int:
        return self._the_play().hand_value

    @property
    def truco_pending(self) -> tuple[int, int] | None:
        """(level called, caller's team) of a truco call awaiting its answer."""
        return self._the_play().truco_pending

    @property
    def raise_team(self) -> int | None:
        """The team that may raise the truco next (after an accepted truco)."""
        return self._the_play().raise_team

    @property
    def envido_chain(self) -> tuple[Kind, ...]:
        return self._the_play().envido_chain

    @property
    def envido_pending(self) -> int | None:
        """The team that made the envido call awaiting an answer."""
        return self._the_play().envido_pending

    @property
    def envido_result(self) -> tuple[int, int] | None:
        """(seat, points) that won the envido: only the winner's points are public."""
        return self._the_play().envido_result

    @property
    def flor_result(self) -> tuple[int, int] | None:
        return self._the_play().flor_result

    @property
    def flor_announced(self) -> tuple[int, ...]:
        return self._the_play().flor_announced

    @property
    def flor_pending(self) -> int | None:
        """The team that must answer a contraflor or contraflor al resto."""
        return self._the_play().flor_pending

    @property
    def flor_call(self) -> Kind | None:
        """The flor raise awaiting an answer (contraflor or contraflor al resto)."""
        return self._the_play().flor_call

    @property
    def flor_course_team(self) -> int | None:
        """The team whose first flor action is awaited (a flor was called against it)."""
        return self._the_play().flor_course_team

    @property
    def flor_open(self) -> bool:
        """A flor was called and is not settled yet (announcements or answers awaited)."""
        return self._the_play().flor_open

    @property
    def telling(self) -> Telling | None:
        return self._the_play().telling

    @property
    def awards(self) -> tuple[Award, ...]:
        """This hand's awards so far."""
        return self._board.awards if self._log is not None else ()

    @property
    def hands(self) -> tuple[HandResult, ...]:
        return tuple(
            HandResult(
                h.number,
                h.dealer,
                h.mano,
                self._board.awards if h is self._log else h.awards,
                h.pica,
            )
            for h in self._hands
        )

    @property
    def move_stack(self) -> tuple[Action, ...]:
        """The whole game's actions so far, every hand's in order (as python-chess's
        ``move_stack`` is the whole game's moves; the deals are in ``history()``)."""
        return tuple([a for h in self._hands for a in h.actions])

    @property
    def hand_actions(self) -> tuple[Action, ...]:
        """The current hand's actions so far (``pop`` undoes the last; with none, it
        undoes the deal)."""
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
        deal = self._deal
        return (
            self._board.score,
            self._board.winner,
            self._next_dealer,
            self._live,
            len(self._hands),
            self._dealer,
            self.pica_pica,
            tuple(deal.cards),
            tuple(tuple(s) for s in deal.seen),
            deal.played,
            tuple(sorted(deal.owner.items())),
            tuple(p.key() for p in self._plays),
            self._board.awards if self._log else (),
        )


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
            and action.kind is not K_SHOW
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
