"""The table service's event loop: one queue in, the record and the displays out.

The loop reads as four steps (``TableService.step``), over and over:

1. **wait** in its ``SeatBus`` (``bus``) until something comes or the first timer is due:
   the seat nodes' serial links are read and parsed there, on the loop's thread, and
   their events posted to the queue as they come; hardware threads (GPIO pads, SPI card
   readers) and the tournament link's network thread ``post`` (or ``call_soon``) from
   their own threads, which rings the queue's bell in the same wait;
2. **handle a batch** of events (at most ``BATCH``), in order: the ``Table`` turns each
   into an action for the engine (accepted or refused); an accepted action is appended
   to ``current.truco`` and synced to disk, and shown at once;
3. **run what is due** on the timer heap (``controller.table.timers``: one heap, one
   clock): the next deal, the won game's result held, the disk tried again, the
   watchdog's ping, a banner's end, a refusal window closing;
4. **redraw** every seat whose screen changed.

What happens at a time is an entry on the heap. The control folder's look rides on the
turns the loop makes anyway (an entry that bounds no wait: an event, a node's heartbeat,
another timer or the tick runs it), at most every ``CONTROL_READ_S``, and at once on a
quiet turn; it never wakes the loop by itself.
Restarting is replaying the record; the watchdog is pinged from this loop, so a stuck
loop gets the service restarted by systemd.

Table-level controls (docs in README "Running a table"):

- On the pads: hold *mazo*, then hold *no quiero* (within 3 s) at one seat asks to undo
  the last action; a seat of the other team confirms with *quiero* (*no quiero* cancels).
  Hold *mazo*, then hold *truco*: a new game, confirmed the same way
  (``controller.table.chord.ControlCombo``).
- Hold *quiero* and *no quiero* together (``controller.table.chord``): the seat calls the
  referee. Every seat is told, the call goes to the listeners (``RefereeCall``: the
  tournament's publisher sends it to the desk) and, under the tournament profile, the
  record keeps it as a comment (``# llamado al árbitro: asiento 1``). It plays nothing,
  and cancels a table control waiting for its confirmation: the referee decides.
- From the command line (``truco-table control``): a command file dropped into the
  state directory's ``control/`` folder (``controller.table.commands``): ``undo``,
  ``new-game``, ``rules KEY=VALUE ...`` (house rules for the next game). No socket is
  opened.
"""

from __future__ import annotations

import gc
import logging
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import cast

from PIL import Image

from ..engine import Game, HouseRules
from ..hal.display import Display
from ..hal.events import ButtonHeld, ButtonPressed, LinkEvent, TagArrived, TagLeft
from ..hal.seatbus import SeatBus
from ..notices import (
    ActionUndone,
    AskConfirm,
    Notice,
    RecordDamaged,
    TableAlert,
    TableNotice,
)
from ..render.screen import (
    MatchCard,
    ScreenContent,
    SeatScreen,
    contents_differ,
    render_content,
    render_pages,
    render_screen,
    render_tiles,
    screen_content,
    warm_score_tiles,
)
from ..transcript import TranscriptError, parse, replay, write
from .answers import NOTHING_TO_UNDO, ControlAnswers, mark
from .chord import COMBO_S, ControlCombo, RefereeChord
from .collector import QuietCollector
from .commands import CONTROL_READ_S, CommandFolder, drop_command, new_command_id
from .faults import SeatWatch
from .inbox import Inbox
from .notify import Notifier, flood_status
from .outgoing import OUTGOING_REFUSALS, Outgoing
from .refusals import REFUSAL_COUNT_MARK, REFUSAL_WINDOW_S, RefusalLimit
from .screens import screen_for, screens_for
from .store import ArchivePolicy, GameStore
from .table import DealReading, Phase, Table, TableResult
from .timers import CallQueue, Timers

__all__ = [
    "CONTROL_READ_S",
    "OUTGOING_REFUSALS",
    "REFEREE_CALL_MARK",
    "Accepted",
    "Finished",
    "NewGame",
    "RefereeCall",
    "Refused",
    "ServiceConfig",
    "ServiceEvent",
    "TableService",
    "Undone",
    "drop_command",
    "freeze_heap",
    "new_command_id",
]


log = logging.getLogger(__name__)

RETRY_S = 1.0  # a disk that refused the record is tried again this often
FLOOD_LOG_S = 10.0  # a flooding seat's drops are logged at most this often
SWITCH_INTERVAL_S = 0.0005  # the interpreter's thread switch while the loop runs
BATCH = 64  # events handled between two redraws (a flood never starves the displays)
DAMAGE_NOTICE_S = 60.0
#: a won tournament game's result stays on the seats this long before what comes next
RESULT_HOLD_S = 20.0
#: The record's comment for a referee call (tournament profile), before the seat's number.
REFEREE_CALL_MARK = "# llamado al árbitro: asiento "
#: the events a player makes (counted in ``handled``: their exact types, one look in a
#: set, no call), and the pads' (a tuple: an ``isinstance`` of a union made afresh at
#: every call costs four times as much)
_COUNTED = frozenset({ButtonHeld, ButtonPressed, TagArrived, TagLeft})
_BUTTONS = (ButtonHeld, ButtonPressed)
#: a second service stopped at the lock is said on every seat this long
SECOND_RUN_NOTICE_S = 30.0
#: the timer heap's keys (one pending entry each)
_DEAL, _RESULT, _NEW_GAME, _RETRY, _DAMAGE, _PING, _DROPS, _EXPIRY, _CONTROLS = (
    "deal", "result", "new-game", "retry", "damage", "ping", "drops", "expiry", "controls"
)  # fmt: skip
#: a seat's message's end (``Message.until``) and its reader notice's (``(notice, end)``)
_UNTIL, _END = attrgetter("until"), itemgetter(1)


@dataclass(frozen=True, slots=True)
class Accepted:
    """A statement added to the game record (an action, or a hand and its deal)."""

    text: str
    score: tuple[int, int]
    hand: int


@dataclass(frozen=True, slots=True)
class Refused:
    seat: int
    action: str | None  # None: an unknown tag
    code: str


@dataclass(frozen=True, slots=True)
class Finished:
    """A game won; ``record`` is its whole transcript as kept on disk."""

    record: str
    winner: int
    score: tuple[int, int]


@dataclass(frozen=True, slots=True)
class NewGame:
    rules: str  # the table line


@dataclass(frozen=True, slots=True)
class Undone:
    """The referee's undo took back ``text`` (the action, as in the record)."""

    text: str
    score: tuple[int, int]
    hand: int


@dataclass(frozen=True, slots=True)
class RefereeCall:
    """Seat ``seat`` called the referee on its pad."""

    seat: int


ServiceEvent = Accepted | Refused | Finished | NewGame | Undone | RefereeCall


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    rules: HouseRules
    deal_reading: DealReading = DealReading.SEATS
    state_dir: Path | None = None
    watchdog_s: float | None = None  # ping interval (half of systemd's WatchdogSec)
    new_game_after_s: float | None = None  # start a new game this long after one is won
    # Tournament profile: refusals and referee calls are written into the record as comments.
    record_refusals: bool = False
    # Start reading the next deal this long after a hand ends (at once for the first hand);
    # None: only when told (``table.new_hand()``), as the mock table's dealer does.
    next_deal_after_s: float | None = None
    archive: ArchivePolicy = field(default_factory=ArchivePolicy)
    # where the answers to ``truco-table control`` go (``controller.table.answers``): the
    # runtime folder's controls.json, in memory; None: in memory only (and the record)
    control_answers: Path | None = None


class TableService:
    """The loop around one ``Table`` (see the module docstring)."""

    def __init__(
        self,
        config: ServiceConfig,
        lookup: Callable[[bytes], object],
        displays: Sequence[Display],
        *,
        notifier: Notifier | None = None,
        clock: Callable[[], float] = time.monotonic,
        game: Game | None = None,
        on_record: Callable[[str], None] | None = None,
        store: GameStore | None = None,
        deck_of: Callable[[bytes], object | None] | None = None,
    ) -> None:
        self.config, self.rules, self.lookup, self.deck_of = config, config.rules, lookup, deck_of
        self.displays = list(displays)
        self.notifier = notifier or Notifier(None)
        self.timers = Timers(clock)  # all that is done at a time rather than on an event
        self.events = Inbox(at_once=self._at_once)  # a card lifted: handled in the wait
        self._calls = CallQueue()  # call_soon's, for the loop
        self.store = store = store if store is not None else _store_of(config)
        self.outgoing: Outgoing[ServiceEvent] = Outgoing(
            self._durable, lambda e: isinstance(e, Refused), lambda e: isinstance(e, RefereeCall)
        )
        self.refusals, self.collector = RefusalLimit(), QuietCollector(self.timers, self._ran)
        folder = config.state_dir / "control" if config.state_dir is not None else None
        self.commands = CommandFolder(folder, ControlAnswers(config.control_answers), store)
        self.next_rules: HouseRules | None = None
        self._shown: list[ScreenContent | None] = [None] * len(self.displays)
        self._screens: list[SeatScreen | None] = [None] * len(self.displays)  # as drawn
        self._stale = self._played = self._ready = False  # see redraw, _handle_batch, ready
        self._drops_reported: dict[int, int] = {}  # the inbox's drops told so far
        self._combo, self._chord = ControlCombo(), RefereeChord()
        self.referee_calls = self.display_errors = self.handled = 0  # handled: a player's
        self.on_record = on_record
        self.match_card: MatchCard | None = None  # shown before the next game (set_match)
        self.match_waiting = False  # a tournament table with no chico to play
        self._bus: SeatBus | None = None
        self._record_lines: list[str] = []
        self.watch = self._seat_watch(clock)
        self.table = self._new_table(game if game is not None else self._restore())

    def _seat_watch(self, clock: Callable[[], float]) -> SeatWatch:
        """Each seat's hardware faults and the seat test (``controller.table.faults``)."""
        watch = SeatWatch(
            self.config.rules.players, clock=clock, deck_of=self.deck_of, lookup=self.lookup
        )
        watch.tell, watch.tell_all, watch.wake_at = (
            self._tell_test,
            self._tell_everyone,
            self._watch_at,
        )
        return watch

    def _ran(self) -> int:
        """The players' events handled so far (the collector's quiet test)."""
        return self.handled

    @property
    def listeners(self) -> list[Callable[[ServiceEvent], None]]:
        """Called on the loop's thread with every ServiceEvent once the record holds it
        (publishers, the tournament): ``controller.table.outgoing``."""
        return self.outgoing.listeners

    @property
    def refusals_unsent(self) -> int:
        """Refusals dropped from the outgoing queue (the disk refusing)."""
        return self.outgoing.refusals_unsent

    def _durable(self) -> bool:
        return self.store is None or not self.store.pending

    @property
    def clock(self) -> Callable[[], float]:
        """The service's one clock (the timer heap's); set another (tests do): every
        pending timer keeps its delay."""
        return self.timers.clock

    @clock.setter
    def clock(self, clock: Callable[[], float]) -> None:
        self.timers.clock = clock

    @property
    def refusals_untold(self) -> int:
        """Refusals counted, not told one by one (since the start)."""
        return self.refusals.untold

    # ------------------------------------------------------------------ start-up

    def _restore(self) -> Game | None:
        if self.store is None:
            return None
        lines = self.store.restore()
        while lines:
            try:
                result = replay(parse("\n".join(lines) + "\n"))
                break
            except TranscriptError as e:  # past the store's checks: cut there, keep aside
                lines = self.store.cut(e.line, e.message)
        else:
            return None
        game = result.game
        log.info(
            "se retomó la mano %d, %d a %d, de %s", game.hand_number, *game.score, self.store.path
        )
        if game.winner is not None:
            self.store.archive()
            return None
        return game

    def _new_table(self, game: Game | None) -> Table:
        if game is None and self.store is not None:
            header = [self.rules.to_line()]
            self.store.rewrite(header)
        table = Table(
            game.rules if game is not None else self.rules,
            self.lookup,  # type: ignore[arg-type]
            deal_reading=self.config.deal_reading,
            game=game,
            clock=self.clock,
            on_record=self._record,
            on_refusal=self._refused,
            deck_of=self.deck_of,
        )
        self._record_lines = write(table.game).splitlines()
        table.match, table.waiting = self.match_card, self.match_waiting
        self.watch.attach(table)  # its faults' lines on the seats, its cards' refusals
        self.rules = table.rules
        # Every score's tile drawn now (some 10 ms, cached): a hand's end, when every
        # seat shows two new scores, then draws nothing.
        warm_score_tiles(table.rules.target)
        for key in (_DEAL, _RESULT, _NEW_GAME):
            self.timers.cancel(key)
        if table.phase is Phase.WAITING and self.config.next_deal_after_s is not None:
            self.timers.schedule(float("-inf"), self._deal, _DEAL)  # the first deal: now
        return table

    def ready(self) -> None:
        """Hardware up and game restored: draw every screen and tell systemd."""
        damage = self.store.damage if self.store is not None else None
        if damage is not None:
            self.tell_all(RecordDamaged(damage.kept), seconds=DAMAGE_NOTICE_S)
            # and a lasting alert for as long: no notice, prompt or deal hides it
            self.table.alerts["damage"] = RecordDamaged(damage.kept)
            self.timers.after(DAMAGE_NOTICE_S, self._damage_over, _DAMAGE)
        self._run_due()  # e.g. start reading the first deal
        self._look_at_controls()
        self.redraw(force=True)
        self._ready = True
        self.notifier.ready(f"hand {self.table.game.hand_number}, score {self.table.game.score}")
        self.ping()  # and every ``watchdog_s`` from now on

    # ------------------------------------------------------------------ the loop

    @property
    def bus(self) -> SeatBus:
        """What the loop waits in: the seat links' ports (``Hardware.start`` adds them)
        and the queue's bell; made on first use."""
        bus = self._bus
        if bus is None:
            bus = self._bus = SeatBus()
            bus.watch(self.events.bell(), self.events.ring_heard)
        return bus

    @property
    def post(self) -> Callable[[int, LinkEvent], None]:
        """``post(seat, event)``: called by the seat links (on the loop's thread, in its
        wait) and by hardware threads (a pad, a reader); a flooding seat's excess is
        dropped (``Inbox``). The inbox's ``put`` itself: what ``Hardware.start`` is given
        calls it with no frame of the service's between."""
        # (its answer, whether the event was queued, is the inbox's business)
        return cast("Callable[[int, LinkEvent], None]", self.events.put)

    def run(self, should_stop: Callable[[], bool]) -> None:
        tick = min(self.config.watchdog_s or 1.0, 1.0)
        # A flooding hardware thread (a stuck button, a bad cable) holds the interpreter
        # until it is made to switch: every time the loop waits (for an event, an fsync)
        # it would wait that long again to go on. Switching sooner bounds what a flood
        # costs another seat's action (bench/flood.py).
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
        while not should_stop():
            self.step(tick)

    def step(self, wait: float) -> int:
        """One turn of the loop: wait (up to ``wait`` s, less if a timer is due sooner),
        handle a batch of events, run what is due, redraw; returns the events handled."""
        # A turn is run on every event: what is only looked at here is read as attributes
        # (the calls waiting, the drops), and the timers are one ``run_due`` each (a look
        # at the heap's top when nothing is due).
        self._wait(wait)
        if self._calls.waiting:
            self._run_calls()
        done = self._handle_batch()
        if self.events.dropped and not self.timers.pending(_DROPS):
            self._report_drops()  # the first drops at once, then every FLOOD_LOG_S
        if not done:  # a batch ran what was due after its last event
            self.timers.run_due()
        if self._stale:
            self.redraw()
        if self.collector.due:  # on a quiet turn: the collector's pass
            self.collector.collect()
        return done

    def _wait(self, wait: float) -> None:
        """Wait in the bus until an event, a call or the first timer. A wait that ran its
        whole length with nothing heard is a quiet moment: the control folder is looked
        at at once (on other turns at most every ``CONTROL_READ_S``, by an entry that
        rides on them: ``_look_at_controls``)."""
        if self.events.listen() or self._calls.waiting:
            return
        timeout = self.timers.timeout(wait)
        bus = self._bus
        if bus is None:
            bus = self.bus
        if bus.wait(timeout) == 0 and timeout == wait:
            self._look_at_controls()

    def _handle_batch(self) -> int:
        """Up to ``BATCH`` queued events, in order; what is due runs before the first and
        after each (the deal due as a hand ends in this batch counts the next taps, and
        is drawn with the hand's end). An action played is shown at once, not after the
        batch."""
        events, timers, done = self.events, self.timers, 0
        item = events.get()
        if item is not None:
            timers.run_due()
        while item is not None:
            self._played = False
            if self._handle(*item):
                self._stale = True
            done += 1
            timers.run_due()
            if self._played:
                self.redraw()
            item = events.get() if done < BATCH else None
        return done

    def _handle(self, seat: int, event: LinkEvent) -> bool:
        """Handles one event; False when no screen can have changed."""
        try:
            if type(event) in _COUNTED:
                self.handled += 1
            faulted, taken = self.watch.event(seat, event)
            if taken:  # the seat test's button or card, a stuck button: nothing played
                return faulted
            if isinstance(event, _BUTTONS) and self._control(seat, event):
                return True
            if not self.table.handle(seat, event):
                return faulted
            self._after_event()
            return True
        except Exception:  # one bad event must never stop the table
            log.exception("asiento %d: no pude atender %r", seat, event)
            self.table.tell(seat, TableNotice.INTERNAL_ERROR, refusal=True)
            return True

    def _at_once(self, seat: int, event: LinkEvent) -> bool:
        """A card lifted, read in the loop's wait with nothing queued, no call waiting,
        no timer due and no seat test under way (the inbox's ``at_once``): the table is
        told there and then, as ``_handle`` would tell it in a turn that ran nothing
        before it, and no turn of the loop is spent on it (it changes no screen). False
        for any other event, or at another moment: it is queued."""
        if (
            type(event) is not TagLeft
            or self.watch.test_until is not None
            or self._calls.waiting
            or not self.timers.quiet()
        ):
            return False
        self.handled += 1
        try:
            self.table.handle(seat, event)
        except Exception:  # as _handle: one bad event must never stop the table
            log.exception("asiento %d: no pude atender %r", seat, event)
            self.table.tell(seat, TableNotice.INTERNAL_ERROR, refusal=True)
            self._stale = True
        return True

    def _after_event(self) -> None:
        """A hand ended: its next deal timed; a game won: told, archived, its result
        held on the seats (``RESULT_HOLD_S``), then the next game if so configured."""
        table, timers = self.table, self.timers
        if table.phase is not Phase.WAITING:
            timers.cancel(_DEAL)
        elif self.config.next_deal_after_s is not None and not timers.pending(_DEAL):
            timers.after(self.config.next_deal_after_s, self._deal, _DEAL)
        if table.game.winner is not None and not (table.show_next or timers.pending(_RESULT)):
            timers.after(RESULT_HOLD_S, self._result_held, _RESULT)
            if self.config.new_game_after_s is not None:
                timers.after(self.config.new_game_after_s, self.new_game, _NEW_GAME)
            self._won()

    def _won(self) -> None:
        game = self.table.game
        assert game.winner is not None
        record = "\n".join(self._record_lines) + "\n"
        if self.store is not None:
            record = self.store.text()
        self._emit(Finished(record, game.winner, game.score))
        if self.store is not None:
            target = self.store.archive()
            log.info(
                "partido ganado por el equipo %d, %s; registro %s",
                game.winner,
                game.score,
                f"archivado como {target}" if target else "se archiva cuando el disco lo permita",
            )
            self._deliver()

    def call_soon(self, call: Callable[[], None]) -> None:
        """Run ``call`` on the loop's thread at its next turn (thread-safe: the tournament
        link's network thread hands the desk's assignment over this way); the screens
        are redrawn after it."""
        self._calls.add(call)
        self.events.wake()

    def _run_calls(self) -> None:
        self._calls.run()
        self._stale = True

    def set_match(self, card: MatchCard | None, *, waiting: bool = False) -> None:
        """The match the seats show before the next game (``None``: none; ``waiting``:
        none yet, the seats say the table waits for the organiser); on the loop's thread
        (``call_soon`` from another)."""
        self.match_card, self.match_waiting = card, waiting and card is None
        self.table.match, self.table.waiting = card, self.match_waiting

    # ------------------------------------------------------------------ the timers

    def _run_due(self) -> None:
        self.timers.run_due()

    def _deal(self) -> None:
        """The next hand's deal (``next_deal_after_s`` after the last hand ended)."""
        if self.table.phase is Phase.WAITING:
            self.table.new_hand()
            self._stale = True

    def _result_held(self) -> None:
        """The won game's result was read: the seats show what comes next."""
        if not self.table.show_next:
            self.table.show_next = True
            self._stale = True

    def _damage_over(self) -> None:
        if self.table.alerts.pop("damage", None) is not None:
            self._stale = True

    def _watch_at(self, when: float) -> None:
        """The fault watch has something to end at ``when`` (a card fault, the seat test)."""
        self.timers.schedule(when, self._watch_tick)

    def _watch_tick(self) -> None:
        if self.watch.tick():
            self._stale = True

    def _expired(self) -> None:
        """A banner's or a reader notice's time is up: the seats drawn again."""
        self._stale = True

    def _retry(self) -> None:
        """The disk refused the record: tried again every ``RETRY_S`` until it takes it."""
        store = self.store
        if store is None or not store.pending:
            return
        self.timers.after(RETRY_S, self._retry, _RETRY)
        if store.flush():
            self._deliver()
        if self._disk_alert():  # the disk alert came or went: at once
            self._stale = True

    def _ping(self) -> None:
        assert self.config.watchdog_s is not None
        self.timers.after(self.config.watchdog_s, self._ping, _PING)
        self.notifier.watchdog()

    def ping(self) -> None:
        """The watchdog pinged now (it is pinged every ``watchdog_s`` by the loop)."""
        if self.config.watchdog_s is not None and self._ready:
            self._ping()

    def _look_at_controls(self) -> None:
        # the next look rides on a turn the loop makes anyway (an event, a heartbeat, a
        # timer, the tick) at least ``CONTROL_READ_S`` from now: it never wakes the loop
        self.timers.after(CONTROL_READ_S, self._look_at_controls, _CONTROLS, wake=False)
        try:
            self._read_controls()
        except OSError as error:  # a failing state directory never stops the table
            log.error("control: no puedo leer %s: %s", self.commands.folder, error)

    def _read_controls(self) -> None:
        self.commands.look(self._apply_command)

    def _report_drops(self) -> None:
        """A flooding seat's dropped events: one journal line a seat and ``FLOOD_LOG_S``,
        and the service's status (``systemctl status``, ``truco-table doctor``)."""
        self.timers.after(FLOOD_LOG_S, self._report_drops, _DROPS)
        dropped = self.events.dropped_counts()
        for seat, total in sorted(dropped.items()):
            new = total - self._drops_reported.get(seat, 0)
            if new:
                log.warning(
                    "asiento %d: se descartaron %d eventos (¿un botón trabado o un nodo que "
                    "inunda?), %d desde el arranque",
                    seat,
                    new,
                    total,
                )
        if dropped != self._drops_reported:
            self.notifier.status(flood_status(dropped))
        self._drops_reported = dropped

    # ------------------------------------------------------------------ the record

    def _emit(self, event: ServiceEvent) -> None:
        """Tell the listeners, in order, once what the event says is in the record."""
        self.outgoing.emit(event)

    def _deliver(self) -> None:
        self.outgoing.deliver()

    def _refused(self, seat: int, action: object, code: object) -> None:
        text = None if action is None else str(action)
        value = getattr(code, "value", str(code))
        refusals = self.refusals
        if refusals.opens(seat):
            key = ("refusals", seat)
            self.timers.after(REFUSAL_WINDOW_S, lambda: self._tell_refusal_count(seat), key)
        if not refusals.admit(seat, value):  # a stuck button: counted, told at the window's end
            return
        self._emit(Refused(seat, text, value))
        if self.config.record_refusals:
            self._record(
                f"# rechazado: {text or f'{seat} (carta desconocida)'} ({value})", accepted=False
            )

    def _tell_refusal_count(self, seat: int) -> None:
        """The refusals of ``seat`` counted in its last window: one log line and, under
        the tournament profile, one record comment."""
        self.timers.cancel(("refusals", seat))
        counts = self.refusals.close(seat)
        if not counts:
            return
        total = sum(counts.values())
        codes = " ".join(f"{code} {n}" for code, n in counts.most_common())
        log.warning(
            "asiento %d: %d rechazos más en %g s (%s)", seat, total, REFUSAL_WINDOW_S, codes
        )
        if self.config.record_refusals:
            self._record(f"{REFUSAL_COUNT_MARK}{seat}, {total} ({codes})", accepted=False)

    def _record(self, line: str, accepted: bool = True) -> None:
        """One statement: written whole and synced, then told to the listeners (the
        displays are redrawn after the event)."""
        if accepted and self.refusals.counting:  # the count first: it came before
            for seat in self.refusals.seats():
                self._tell_refusal_count(seat)
        self._record_lines.extend(line.split("\n"))
        if self.on_record is not None:
            self.on_record(line)
        if self.store is not None:
            if self.store.append(line) and self.outgoing.queue and not accepted:
                self._deliver()  # the disk took the record again with this line
            self._disk_alert()
        if accepted:
            self._played = True
            game = self.table.game if hasattr(self, "table") else None
            if game is not None:
                self._emit(Accepted(line, game.score, game.hand_number))

    def _disk_alert(self) -> bool:
        """Shows or clears the table's disk alert; True if that changed it. A record
        the disk refused is tried again (``_retry``) from now on."""
        store = self.store
        if store is None or not hasattr(self, "table"):  # a line written as the table is made
            return False
        if store.pending and not self.timers.pending(_RETRY):
            self.timers.schedule(float("-inf"), self._retry, _RETRY)
        alerts = self.table.alerts
        if store.problem:
            if alerts.get("disk") is TableAlert.NO_DISK:
                return False
            alerts["disk"] = TableAlert.NO_DISK
            return True
        return alerts.pop("disk", None) is not None

    # ------------------------------------------------------------------ controls

    def _control(self, seat: int, event: ButtonHeld | ButtonPressed) -> bool:
        """Table-level button combinations; True when the event was one."""
        now = self.clock()
        if isinstance(event, ButtonPressed):
            self._chord.press(seat)
            command = self._combo.answer(seat, event.name)
            if command:
                self.command(command)
            elif command == "":
                self.tell_all(TableNotice.CANCELLED)
            return command is not None
        if self._chord.hold(seat, event.name, now):
            self.call_referee(seat)
            return True
        table = self.table
        if table.phase is Phase.DEALING and seat == table.hand_dealer and event.name == "mazo":
            # the dealer's hold that starts play (Table._hold) is not the first half of
            # a table control: the dealer's next hold (truco, no quiero) is a call's menu
            self._combo.forget()
            return False
        command = self._combo.hold(seat, event.name, now)
        if command is None:
            return False
        table.inputs[seat].reset()
        self.tell_all(AskConfirm(command), seconds=COMBO_S * 3)
        return True

    def call_referee(self, seat: int) -> None:
        """Seat ``seat`` calls the referee (the pad's chord, or the mock table's key)."""
        self.referee_calls += 1
        self._combo.cancel()  # an undo or new game waiting: the referee decides
        log.info("el asiento %d llamó al árbitro", seat)
        self.table.referee_called(seat)
        if self.config.record_refusals:
            self._record(f"{REFEREE_CALL_MARK}{seat}", accepted=False)
        self._emit(RefereeCall(seat))

    def _apply_command(self, command: str, args: tuple[str, ...], control: str) -> bool:
        return self.command(command, *args, control=control)

    def command(self, command: str, *args: str, control: str | None = None) -> bool:
        """Run a table control: ``undo``, ``new-game`` or ``rules KEY=VALUE ...``.

        ``control``: the id of the command file that asked for it; the record notes it
        (``# control <id>``) so that the same command is never applied twice."""
        if command == "undo":
            return self.undo(control)
        if command == "new-game":
            game = self.table.game
            fresh = game.hand_number == 0 and not game.move_stack and self.next_rules is None
            if not (control is not None and fresh):  # a file applied again after a cut
                self.new_game()
            self._note_control(control, "partido nuevo")
            return True
        if command == "rules":
            return self._next_rules(args, control)
        if command == "seat-test" and args in (("on",), ("off",)):
            self.watch.set_test(args[0] == "on")  # not a move: nothing in the record
            return True
        if command == "second-run" and len(args) == 1 and args[0].isdigit():
            self.watch.second_run(int(args[0]))  # a second `run` stopped at the lock
            return True
        log.error("control: orden desconocida %r", command)
        return False

    def _next_rules(self, args: tuple[str, ...], control: str | None) -> bool:
        try:
            self.next_rules = HouseRules.from_options(dict(a.split("=", 1) for a in args))
        except ValueError as e:
            log.error("control: reglas de la casa que no sirven %s: %s", " ".join(args), e)
            return False
        line = self.next_rules.to_line()
        log.info("reglas de la casa del próximo partido: %s", line)
        if self.table.game.hand_number == 0:
            self.new_game()
            self._note_control(control, f"partido nuevo con las reglas {line}")
        else:
            self._note_control(control, f"reglas para el próximo partido: {line}")
        return True

    def _tell_everyone(self, notice: Notice) -> None:
        """A line on every seat for a while, that the deal does not hide."""
        for seat in range(self.table.rules.players):
            self.table.tell(seat, notice, refusal=True, seconds=SECOND_RUN_NOTICE_S)
        self.redraw()

    def _tell_test(self, seat: int, notice: Notice) -> None:
        """The seat test's line on a seat: shown as a refusal is (the deal does not
        hide it)."""
        self.table.tell(seat, notice, refusal=True)

    def _note_control(self, control: str | None, text: str) -> None:
        if control is not None:
            self.commands.said = text
            if self.store is not None:
                self.store.append(mark(control, text))
                self._disk_alert()

    def undo(self, control: str | None = None) -> bool:
        """The referee's undo of the last action; the record keeps it as a comment.

        ``control``: the command file that asked for it, noted in the record so that a
        power cut before the file is deleted does not undo a second action."""
        game = self.table.game
        if not game.hand_actions or game.winner is not None:
            self.tell_all(TableNotice.NOTHING_TO_UNDO)
            self._note_control(control, NOTHING_TO_UNDO)
            return False
        action = game.pop()
        _strike(self._record_lines, str(action))
        if self.store is not None:
            lines = self.store.lines
            _strike(lines, str(action))
            if control is not None:  # with the undo, in one atomic rewrite
                lines.append(mark(control, f"deshecho: {action}"))
            self.store.rewrite(lines)
            self._disk_alert()
        self.table.phase = Phase.PLAYING
        self.table.deal = {}
        self.timers.cancel(_DEAL)
        self.table.last = TableResult(action, None) if action is not None else None
        if control is not None:
            self.commands.said = f"deshecho: {action}"
        self.tell_all(ActionUndone(str(action)))
        log.info("deshacer: %s", action)
        self._emit(Undone(str(action), game.score, game.hand_number))
        self.redraw()
        return True

    def new_game(self) -> None:
        game = self.table.game
        if self.store is not None and (game.hand_number > 0 or game.move_stack):
            self.store.archive()  # now, or when the disk takes it again
        if self.next_rules is not None:
            self.rules, self.next_rules = self.next_rules, None
        alerts = self.table.alerts  # lasting: they outlive the game
        self.table = self._new_table(None)
        self.table.alerts.update(alerts)
        self._shown = [None] * len(self.displays)
        self._screens = [None] * len(self.displays)
        log.info("partido nuevo: %s", self.rules.to_line())
        self._emit(NewGame(self.rules.to_line()))
        self.redraw()

    def tell_all(self, notice: Notice, seconds: float = 3.0) -> None:
        self.table.tell_all(notice, seconds=seconds)

    # ------------------------------------------------------------------ displays

    def screen(self, seat: int) -> Image.Image:
        return render_screen(screen_for(self.table, seat))

    def redraw(self, force: bool = False) -> None:
        """Redraws every seat whose screen's content changed (every seat if ``force``);
        the first message's end is timed then (``_expired``)."""
        self._stale = False
        self.collector.arm()  # play made objects: a pass once the table is quiet
        self._disk_alert()
        table = self.table
        # a record restored with fewer seats than the configuration: the extra stay dark
        displays = self.displays[: table.rules.players]
        shown, drawn_screens = self._shown, self._screens
        for seat, screen in enumerate(screens_for(table, len(displays))):
            # The screen made of the same arguments is the same object (``screens_for``
            # compared them): any other is not compared field by field again (a new one
            # of the same view was made because its arguments differ); the contents
            # below say whether it shows.
            if screen is drawn_screens[seat] and not force:
                continue
            content = screen_content(screen)
            if force or contents_differ(content, shown[seat]):
                if not self._show(seat, displays[seat], content):
                    continue
                shown[seat] = content
            drawn_screens[seat] = screen
        # the first message's end, timed (none on most redraws: no list made then)
        messages, notices = table.messages, table.notices
        if any(messages) or any(notices):
            # the messages' and notices' ends read in C code (``map``), not a seat at a time
            ends = chain(map(_UNTIL, filter(None, messages)), map(_END, filter(None, notices)))
            until = min(ends)
            if self.timers.when(_EXPIRY) != until:
                self.timers.schedule(until, self._expired, _EXPIRY)
        else:
            self.timers.cancel(_EXPIRY)

    def _show(self, seat: int, display: Display, content: ScreenContent) -> bool:
        """One seat's new content on its panel; False if the panel failed."""
        # Panels that take frames in their own page layout (every one the table
        # builds) get them joined from the renderer's cached tiles; no pixel is drawn.
        # A seat node's takes the tiles themselves and sends only the changed ones.
        try:
            show_tiles = getattr(display, "show_tiles", None)
            tiles = render_tiles(content) if show_tiles is not None else None
            if show_tiles is not None and tiles is not None:
                show_tiles(tiles)
            elif (show_pages := getattr(display, "show_pages", None)) is not None:
                show_pages(render_pages(content))
            else:
                display.show(render_content(content))
        except Exception as error:  # a broken display never stops the table
            self.display_errors += 1
            if self.display_errors == 1 or self.display_errors % 100 == 0:
                log.warning("asiento %d: falló la pantallita: %s", seat, error)
            return False
        return True

    def transcript(self) -> str:
        return write(self.table.game)

    def close(self) -> None:
        self.collector.close()
        if self.store is not None:
            self.store.close()
        self.commands.answers.close()
        if self._bus is not None:
            self._bus.close()
        self.notifier.stopping()


def _store_of(config: ServiceConfig) -> GameStore | None:
    """The record's store in the configured state folder (None: no record kept)."""
    if config.state_dir is None:
        return None
    return GameStore(config.state_dir, policy=config.archive)


def _strike(lines: list[str], action: str) -> None:
    """The last line that is ``action`` made the undo's comment (in place)."""
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].strip() == action:
            lines[i] = f"# deshecho por el árbitro: {lines[i]}"
            return


def freeze_heap() -> None:
    """Take what the started service holds (modules, fonts, the score tiles drawn at
    start-up, the restored game) out of the cyclic garbage collector's generations
    (``gc.freeze``, after a collection): a full collection then walks only what play
    made since, not the whole heap. The collector's full pass runs inside whichever
    event makes its allocations pass the threshold: over the start-up heap it cost one
    event 13-37 ms of CPU on the development machine (some 0.1-0.2 s on a Pi 4, the
    panels late by as much); with it frozen, none came in six six-seat games
    (``bench/table_inprocess.py``). Process-wide: ``truco-table run`` calls it once, after
    ``ready()``; a library or a test never does. The young generation's passes are then
    the ``QuietCollector``'s (``controller.table.collector``), on the quiet turns."""
    gc.collect()
    gc.freeze()
    log.info(
        "memoria del arranque congelada: %d objetos fuera de las pasadas completas del recolector",
        gc.get_freeze_count(),
    )
