"""The table: hardware events in, engine actions and seat screens out.

``Table`` is what sits between the physical table and the engine. It takes the events
the hardware layer delivers (button presses and holds, tags arriving on and leaving a
seat's reader, a node going away) and turns them into actions for the engine, reads the
deal, keeps each seat's transient messages (refusals, announcements), and writes the
game record one statement at a time through ``on_record``.

It does no I/O and starts no threads: the service's event loop calls ``handle`` with
each event in order, and reads ``screen(seat)`` to redraw. The clock is injected.

Reading the deal (``DealReading``):

- ``seats``: after the deal each player taps their three cards on their own reader;
  play starts when every seat has three cards read.
- ``dealer``: the dealer taps every card on the dealer's own reader as it is dealt, in
  deal order (one card to each seat from the mano on, three rounds).
- ``none``: the table does not read the deal; hands are unknown and envido and flor
  are declared and proven by showing cards.

Holding *mazo* on the dealer's pad while the deal is being read starts play at once;
seats whose three cards were not read play with hands unknown (a broken reader, a
missing tag).
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..engine import Action, Card, Game, HouseRules, IllegalActionError, Kind, RefusalCode
from ..engine.results import Award, Reason
from ..hal.events import (
    ButtonHeld,
    ButtonPressed,
    Heartbeat,
    LinkEvent,
    NodeConnected,
    NodeDisconnected,
    TagArrived,
    TagConflict,
    TagLeft,
)
from ..notices import (
    CardAlreadyRead,
    CardInAnotherHand,
    DealStarted,
    GameWon,
    LinkNotice,
    Notice,
    NotTheDealer,
    RefereeCalled,
    Refusal,
    Scored,
    TableNotice,
)
from ..render.screen import MatchCard
from .claims import Claim, penalty_notes, show_requests, unproven_claims
from .controls import (
    Button,
    Mode,
    SeatInput,
    on_hold,
    on_press,
    on_show_tap,
    start_number_entry,
)

__all__ = ["DealReading", "Message", "Phase", "Table", "TableResult", "link_notice"]

MESSAGE_SECONDS = 3.0
REFEREE_NOTICE_S = 6.0  # how long every seat shows that the referee was called
# tuples, not unions: an ``isinstance`` of a union made at every call costs 4x as much
_BUTTONS = (ButtonPressed, ButtonHeld)
_LINK = (NodeConnected, NodeDisconnected)


class DealReading(enum.Enum):
    SEATS = "seats"
    DEALER = "dealer"
    NONE = "none"


class Phase(enum.Enum):
    WAITING = "waiting"  # before a hand (the first, or after one ended)
    DEALING = "dealing"  # the deal is being read
    PLAYING = "playing"
    OVER = "over"


@dataclass(frozen=True, slots=True)
class Message:
    """A transient notice on a seat's display (worded by ``controller.render.notices``)."""

    notice: Notice
    until: float
    refusal: bool = False


@dataclass(frozen=True, slots=True)
class TableResult:
    """What became of the last action a seat tried."""

    action: Action
    code: RefusalCode | None


CardLookup = Callable[[bytes], Card | None]
#: which enrolled deck a tag belongs to (``DeckRegistry.deck_of``); None: unknown
DeckOf = Callable[[bytes], object | None]


def link_notice(event: NodeConnected | NodeDisconnected | Heartbeat) -> LinkNotice | None:
    """What a seat is told when its node comes, goes, or reports its reader missing."""
    if isinstance(event, NodeDisconnected):
        if event.reason == "closed":
            return None  # the table software is shutting down
        return LinkNotice.SILENT if event.reason == "silent" else LinkNotice.UNPLUGGED
    if isinstance(event, NodeConnected):
        return LinkNotice.CONNECTED
    return None if event.reader_ok else LinkNotice.READER_MISSING


def _hand_awards(game: Game, hand: int) -> tuple[Award, ...]:
    """The awards of hand ``hand`` (1-based) so far: of the hand being played, without
    ``Game.hands`` making a result for every hand of the game."""
    return game.awards if hand == game.hand_number else game.hands[hand - 1].awards


class Table:
    """One table's referee state (see the module docstring)."""

    def __init__(
        self,
        rules: HouseRules,
        lookup: CardLookup,
        *,
        deal_reading: DealReading = DealReading.SEATS,
        score: tuple[int, int] = (0, 0),
        game: Game | None = None,
        clock: Callable[[], float] = time.monotonic,
        on_record: Callable[[str], None] | None = None,
        on_refusal: Callable[[int, Action | None, RefusalCode], None] | None = None,
        deck_of: DeckOf | None = None,
    ) -> None:
        self.game = game if game is not None else Game(rules, score=score)
        self.rules = self.game.rules
        self.lookup = lookup
        self.deck_of = deck_of
        #: the deck this hand is played with (its first card read); one hand, one deck
        self.hand_deck: object | None = None
        self.deal_reading = deal_reading
        self.clock = clock
        self.on_record = on_record
        self.on_refusal = on_refusal
        #: told of a card of no enrolled deck (False) or of another deck than the
        #: hand's (True), with its seat and tag: the service's fault watch
        self.on_foreign_card: Callable[[int, bytes, bool], None] | None = None
        n = self.rules.players
        self.inputs = [SeatInput() for _ in range(n)]
        self.messages: list[Message | None] = [None] * n
        self.notices: list[tuple[Notice, float] | None] = [None] * n
        self.on_reader: list[set[bytes]] = [set() for _ in range(n)]
        self.node_ok = [True] * n
        self.reader_ok = [True] * n  # the node's last heartbeat: its reader chip answers
        #: lasting warnings for every seat (a full disk), shown when no message is
        self.alerts: dict[str, Notice] = {}  # lasting, table-wide: a full disk, damage
        #: each seat's own lasting warning (its reader missing, a button stuck, another
        #: seat's panel gone: ``controller.table.faults``), before the table-wide ones
        self.seat_alerts: list[Notice | None] = [None] * n
        self.deal: dict[int, list[Card]] = {}
        self.hand_dealer: int | None = None
        self.last: TableResult | None = None
        #: (hand number, index of the award in that hand) -> its detail: why a penalty
        self.notes: dict[tuple[int, int], str] = {}
        self.events = 0
        #: the tournament match this table was assigned (shown before its game starts)
        self.match: MatchCard | None = None
        #: a tournament table with no chico to play: its seats say it waits for the desk
        self.waiting = False
        #: the won game's result was held long enough: the seats show what comes next
        self.show_next = False
        self.phase = (
            Phase.OVER
            if self.game.winner is not None
            else (Phase.PLAYING if self.game.hand_in_progress else Phase.WAITING)
        )

    # ------------------------------------------------------------------ hands

    def new_hand(self, dealer: int | None = None) -> None:
        """The next hand: read its deal (or start at once when the table reads none)."""
        if self.game.winner is not None or self.game.hand_in_progress:
            return
        self.hand_dealer = self.game.next_dealer if dealer is None else dealer
        self.deal = {}
        self.hand_deck = None
        for inp in self.inputs:
            inp.reset()
        if self.deal_reading is DealReading.NONE:
            self._start_play()
        else:
            self.phase = Phase.DEALING
            self.tell_all(DealStarted(self.hand_dealer, self.deal_reading is DealReading.DEALER))

    def start_play(self) -> None:
        """End the deal reading now; unread seats play with hands unknown."""
        if self.phase is Phase.DEALING:
            self._start_play()

    def _start_play(self) -> None:
        assert self.hand_dealer is not None
        hands = {s: cards for s, cards in self.deal.items() if len(cards) == 3}
        default = self.game.next_dealer
        self.game.deal(hands, dealer=self.hand_dealer)
        self.phase = Phase.PLAYING
        block = [f"dealer {self.hand_dealer}"] if self.hand_dealer != default else []
        block.append("hand")
        block.extend(f"deal {s}: " + " ".join(str(c) for c in hands[s]) for s in sorted(hands))
        self._record("\n".join(block))  # one write: the hand and its deal, or nothing
        self.deal = {}

    # ------------------------------------------------------------------ events

    def handle(self, seat: int, event: LinkEvent) -> bool:
        """One hardware event from ``seat``'s pad or reader. False when it changed
        nothing any screen shows: a card lifted off a reader, a card still lying on it,
        an unknown button or seat (the service then redraws nothing)."""
        self.events += 1
        if not 0 <= seat < self.rules.players:
            return False
        if type(event) is TagLeft:  # half a card's events, and they show nothing: at once
            self.on_reader[seat].discard(event.uid)
            return False
        if isinstance(event, _BUTTONS):
            try:
                button = Button(event.name)
            except ValueError:
                return False
            if isinstance(event, ButtonPressed):
                self._press(seat, button)
            else:
                self._hold(seat, button)
            return True
        if isinstance(event, TagArrived):
            return self._tag(seat, event.uid)
        if isinstance(event, TagConflict):
            # Several cards on the reader at once: none is read, the player is told.
            self.notices[seat] = (LinkNotice.ONE_CARD, self.clock() + MESSAGE_SECONDS)
            return True
        if isinstance(event, Heartbeat):
            # the reader's state, said on the seat as a lasting alert (``seat_alerts``,
            # which the deal does not hide) by the service's fault watch
            if event.reader_ok == self.reader_ok[seat]:
                return False
            self.reader_ok[seat] = event.reader_ok
            return False
        if isinstance(event, _LINK):
            self.node_ok[seat] = isinstance(event, NodeConnected)
            # the node forgot its reader's card (and may have missed its leaving): the
            # next time that card is laid on the reader it is a tap
            self.on_reader[seat].clear()
            notice = link_notice(event)
            if notice is not None:
                lasting = not self.node_ok[seat]
                self.tell(seat, notice, seconds=3600.0 if lasting else MESSAGE_SECONDS)
            return True
        return False

    def _press(self, seat: int, button: Button) -> None:
        action = on_press(self.game, seat, button, self.inputs[seat])
        if action is not None:
            self.attempt(action)

    def _hold(self, seat: int, button: Button) -> None:
        if self.phase is Phase.DEALING and button is Button.MAZO and seat == self.hand_dealer:
            self.start_play()
            return
        on_hold(self.game, seat, button, self.inputs[seat])

    def _tag(self, seat: int, uid: bytes) -> bool:
        told = self.notices[seat] is not None
        self.notices[seat] = None  # one card alone on the reader now
        if uid in self.on_reader[seat]:
            return told  # still lying on the reader: one tap (its notice gone, if any)
        self.on_reader[seat].add(uid)
        card = self.lookup(uid)
        if card is None:
            self._refuse(seat, None, RefusalCode.UNKNOWN_CARD)
            if self.on_foreign_card is not None:
                self.on_foreign_card(seat, uid, False)
            return True
        if self.deck_of is not None and self.phase in (Phase.DEALING, Phase.PLAYING):
            deck = self.deck_of(uid)
            if self.hand_deck is None:
                self.hand_deck = deck
            elif deck is not self.hand_deck:  # another enrolled deck's card: not this hand's
                self.tell(seat, TableNotice.OTHER_DECK, refusal=True)
                if self.on_refusal is not None:
                    self.on_refusal(seat, None, RefusalCode.UNKNOWN_CARD)
                if self.on_foreign_card is not None:
                    self.on_foreign_card(seat, uid, True)
                return True
        if self.phase is Phase.DEALING:
            self._deal_tap(seat, card)
        elif not on_show_tap(self.inputs[seat], card):
            self.attempt(Action(seat, Kind.PLAY, card=card))
        return True

    def _deal_tap(self, seat: int, card: Card) -> None:
        n = self.rules.players
        if self.deal_reading is DealReading.DEALER:
            assert self.hand_dealer is not None  # set by new_hand before the deal is read
            if seat != self.hand_dealer:
                self.tell(seat, NotTheDealer(self.hand_dealer), refusal=True)
                return
            count = sum(len(c) for c in self.deal.values())
            order = [(self.hand_dealer + 1 + i) % n for i in range(n)]
            if any(card in cs for cs in self.deal.values()):
                self.tell(seat, CardAlreadyRead(card), refusal=True)
                return
            target = order[count % n]
        else:
            target = seat
            for other, cs in self.deal.items():
                if card in cs:
                    if other != seat:
                        self.tell(seat, CardInAnotherHand(card), refusal=True)
                    return
            if len(self.deal.get(seat, [])) >= 3:
                self.tell(seat, TableNotice.HAND_FULL, refusal=True)
                return
        self.deal.setdefault(target, []).append(card)
        if all(len(self.deal.get(s, [])) == 3 for s in range(n)):
            self._start_play()

    # ------------------------------------------------------------------ actions

    def attempt(self, action: Action) -> RefusalCode | None:
        """Try ``action`` at the table: pushed and recorded, or refused and shown."""
        code: RefusalCode | None
        if self.phase in (Phase.WAITING, Phase.DEALING) and self.game.winner is None:
            code = RefusalCode.HAND_OVER
        else:
            before = len(self.game.awards) if self.game.hand_in_progress else 0
            hand = self.game.hand_number
            claims = unproven_claims(self.game)
            try:
                self.game.push(action)
            except IllegalActionError as e:
                code = e.code
            else:
                code = None
                self._record(str(action))
                self._note_penalties(action, hand, before, claims)
                self._after(action, hand, before)
        if code is not None:
            self._refuse(action.seat, action, code)
        self.last = TableResult(action, code)
        return code

    def _note_penalties(
        self, action: Action, hand: int, before: int, claims: tuple[Claim, ...]
    ) -> None:
        game = self.game
        if not hand:
            return
        awards = _hand_awards(game, hand)[before:]
        ended = not game.hand_in_progress or game.hand_number != hand
        notes = penalty_notes(action, awards, claims, game, ended)
        for i, note in enumerate(notes):
            if note is not None:
                self.notes[(hand, before + i)] = note

    def award_note(self, hand: int, index: int) -> str | None:
        """Why award ``index`` of hand ``hand`` was given, when the reason alone does not
        say (a penalty: flor tapada, tanto mal cantado, a claim not shown)."""
        return self.notes.get((hand, index))

    def show_requests(self) -> frozenset[int]:
        """Seats asked to show their cards now (an unproven claim near the hand's end)."""
        return show_requests(self.game)

    def _after(self, action: Action, hand: int, before: int) -> None:
        game = self.game
        awards = _hand_awards(game, hand)[before:] if hand else ()
        for i, award in enumerate(awards):
            self._announce(award, self.award_note(hand, before + i))
        for seat, inp in enumerate(self.inputs):
            if inp.mode is Mode.NORMAL and game.play_of(seat).telling is not None:
                start_number_entry(game, seat, inp)
        if game.winner is not None:
            self.phase = Phase.OVER
            self.tell_all(GameWon(game.winner, game.score), seconds=3600.0)
        elif not game.hand_in_progress:
            self.phase = Phase.WAITING

    def _announce(self, award: Award, note: str | None = None) -> None:
        game = self.game
        best = None
        play = game.play_of(award.pica if award.pica is not None else 0)  # the award's pica
        if award.reason is Reason.ENVIDO:
            best = play.envido_result
        elif award.reason is Reason.FLOR:
            best = play.flor_result
        self.tell_all(Scored(award.points, award.team, award.reason, best, note))

    def _refuse(self, seat: int, action: Action | None, code: RefusalCode) -> None:
        self.tell(seat, Refusal(code), refusal=True)
        if action is None:
            self.last = None
        if self.on_refusal is not None:
            self.on_refusal(seat, action, code)

    # ------------------------------------------------------------------ messages

    def tell(
        self, seat: int, notice: Notice, *, refusal: bool = False, seconds: float = MESSAGE_SECONDS
    ) -> None:
        self.messages[seat] = Message(notice, self.clock() + seconds, refusal)

    def tell_all(self, notice: Notice, seconds: float = MESSAGE_SECONDS) -> None:
        for seat in range(self.rules.players):
            self.tell(seat, notice, seconds=seconds)

    def referee_called(self, seat: int) -> None:
        """Seat ``seat`` called the referee: every seat is told in a banner, as a refusal
        is shown (the caller sees the call was heard, the others that play waits for the
        referee, whoever's turn it is); the menu the chord's first hold opened is closed."""
        self.inputs[seat].reset()
        for other in range(self.rules.players):
            self.tell(other, RefereeCalled(seat), refusal=True, seconds=REFEREE_NOTICE_S)

    def alert(self, seat: int) -> Notice | None:
        """A lasting warning for the seat: its node unplugged, or a table-wide alert."""
        if not self.node_ok[seat]:
            return LinkNotice.UNPLUGGED
        own = self.seat_alerts[seat]
        return own if own is not None else next(iter(self.alerts.values()), None)

    def notice(self, seat: int) -> Notice | None:
        """The seat's reader notice (``LinkNotice.ONE_CARD``), if it has not expired."""
        current = self.notices[seat]
        if current is not None and current[1] < self.clock():
            self.notices[seat] = current = None
        return current[0] if current is not None else None

    def message(self, seat: int) -> Message | None:
        """The seat's current message, if it has not expired."""
        m = self.messages[seat]
        if m is not None and m.until < self.clock():
            self.messages[seat] = m = None
        return m

    def _record(self, line: str) -> None:
        if self.on_record is not None:
            self.on_record(line)
