"""The table service's event loop: one queue in, the record and the displays out.

The loop waits in its ``SeatBus`` (``bus``): the seat nodes' serial links are read and
parsed there, on the loop's thread, and their events posted to the queue as they come;
hardware threads (GPIO pads, SPI card readers) and the tournament link's network thread
``post`` (or ``call_soon``) from their own threads, which rings the queue's bell in the
same wait. The loop takes the events in order and, for each one: the ``Table`` turns it
into an action for the engine (accepted or refused); an accepted action is appended to
``current.truco`` and synced to disk; then every seat whose screen changed is redrawn.
Restarting is replaying the record; the watchdog is pinged from this loop, so a stuck
loop gets the service restarted by systemd.

Table-level controls (docs in README "Running a table"):

- On the pads: hold *mazo*, then hold *no quiero* (within 3 s) at one seat asks to undo
  the last action; a seat of the other team confirms with *quiero* (*no quiero* cancels).
  Hold *mazo*, then hold *truco*: a new game, confirmed the same way.
- Hold *quiero* and *no quiero* together (``controller.table.chord``): the seat calls the
  referee. Every seat is told, the call goes to the listeners (``RefereeCall``: the
  tournament's publisher sends it to the desk) and, under the tournament profile, the
  record keeps it as a comment (``# llamado al árbitro: asiento 1``). It plays nothing,
  and cancels a table control waiting for its confirmation: the referee decides.
- From the command line (``truco-table control``): a command file dropped into the
  state directory's ``control/`` folder: ``undo``, ``new-game``, ``rules KEY=VALUE ...``
  (house rules for the next game). No socket is opened.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import re
import sys
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

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
    render_content,
    render_pages,
    render_screen,
    screen_content,
    warm_score_tiles,
)
from ..transcript import TranscriptError, parse, replay, write
from .answers import NOTHING_TO_UNDO, Answer, ControlAnswers, answer_in_record, mark
from .chord import RefereeChord
from .faults import SeatWatch
from .inbox import Inbox
from .notify import Notifier, flood_status
from .screens import screen_for, screens_for
from .store import ArchivePolicy, Disk, GameStore, fsync_dir
from .table import DealReading, Phase, Table, TableResult

__all__ = [
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

COMBO_S = 3.0
RETRY_S = 1.0  # a disk that refused the record is tried again this often
FLOOD_LOG_S = 10.0  # a flooding seat's drops are logged at most this often
SWITCH_INTERVAL_S = 0.0005  # the interpreter's thread switch while the loop runs
BATCH = 64  # events handled between two redraws (a flood never starves the displays)
DAMAGE_NOTICE_S = 60.0
#: a won tournament game's result stays on the seats this long before what comes next
RESULT_HOLD_S = 20.0
#: The record's comment for a referee call (tournament profile), before the seat's number.
REFEREE_CALL_MARK = "# llamado al árbitro: asiento "
_COMBOS = {("mazo", "no_quiero"): "undo", ("mazo", "truco"): "new-game"}
#: the events a player makes (counted in ``handled``), and the pads' (tuples: an
#: ``isinstance`` of a union made afresh at every call costs four times as much)
_COUNTED = (ButtonHeld, ButtonPressed, TagArrived, TagLeft)
_BUTTONS = (ButtonHeld, ButtonPressed)
_CONTROL_SETTLED_NS = 2_000_000_000
#: While the table is busy (players act, the nodes acknowledge what they were sent), the
#: control folder is looked at (an ``os.stat``) at most this often: a ``truco-table
#: control`` command waits this long at most, and an event does not pay a system call for
#: it. A quiet turn of the loop (its wait ran out, or brought only a heartbeat or a node
#: coming or going) looks at once.
CONTROL_READ_S = 0.05
#: A turn that brought only what posts nothing (a node's DACK), or only a player's events
#: that changed nothing (a card lifted off its reader), skips the housekeeping if it ran
#: this recently: a node flooding display answers, or a reader flooding tag events,
#: never starves the watchdog's ping
HOUSEKEEPING_S = 0.05
#: A seat's refusals beyond ``REFUSAL_BURST`` in ``REFUSAL_WINDOW_S`` (a stuck button)
#: are counted, not told one by one: one record comment (tournament profile) and one log
#: line per seat and window say how many (``# rechazos sin anotar: asiento 1, 4995
#: (not_your_turn 4995)``).
#: a second service stopped at the lock is said on every seat this long
SECOND_RUN_NOTICE_S = 30.0
REFUSAL_BURST = 5
REFUSAL_WINDOW_S = 10.0
REFUSAL_COUNT_MARK = "# rechazos sin anotar: asiento "
#: refusals kept for the listeners while the record is not durable (the rest dropped,
#: counted in ``refusals_unsent``); a repeated referee call is coalesced
OUTGOING_REFUSALS = 256
CONTROLS_REMEMBERED = 1024  # command ids kept in memory (beyond the record's own marks)
#: what a command's id may be (``truco-table control --id``): a file name in control/
COMMAND_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


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
        self.config = config
        self.deck_of = deck_of
        self.rules = config.rules
        self.lookup = lookup
        self.displays = list(displays)
        self.notifier = notifier or Notifier(None)
        self.clock = clock
        self.events = Inbox()
        if store is None and config.state_dir is not None:
            store = GameStore(config.state_dir, policy=config.archive)
        self.store = store
        self._next_retry = float("-inf")
        self._outgoing: list[ServiceEvent] = []  # events waiting for the record to be durable
        self._outgoing_refusals = 0  # of them, refusals (bounded: OUTGOING_REFUSALS)
        self.refusals_unsent = 0  # refusals dropped from the outgoing queue (disk refusing)
        # per seat: (when its refusal window began, refusals told in it)
        self._refusal_window: dict[int, tuple[float, int]] = {}
        self._refusals_untold: dict[int, Counter[str]] = {}  # per seat, by code
        self.refusals_untold = 0  # refusals counted, not told one by one (since the start)
        self.control_dir = config.state_dir / "control" if config.state_dir is not None else None
        self.next_rules: HouseRules | None = None
        self._controls_seen: int | None = None  # the control folder's mtime when last listed
        self._controls_next = float("-inf")  # the next look at it (time.monotonic)
        self._kept = float("-inf")  # the last housekeeping (time.monotonic)
        #: the command files applied lately, by id, and what was done (a retry is
        #: answered, not applied again)
        self._controls_applied: OrderedDict[str, Answer] = OrderedDict()
        #: the answers ``truco-table control`` reads (served from memory: issue 45)
        self.answers = ControlAnswers(config.control_answers)
        self._controls_stuck: set[str] = set()  # command files the card will not delete
        self._control_said: str | None = None  # what the command being applied did
        self._shown: list[ScreenContent | None] = [None] * len(self.displays)
        self._screens: list[SeatScreen | None] = [None] * len(self.displays)  # as drawn
        self._shown_until = float("inf")  # when the first message on a screen expires
        self._damage_until: float | None = None  # the damage alert's end (ready())
        self._played = False  # an accepted statement in this batch: redraw now
        self._drops_reported: dict[int, int] = {}  # the inbox's drops told so far
        self._next_drop_report = float("-inf")
        self._last_ping = float("-inf")
        self._won_at: float | None = None
        self._combo: tuple[int, str, float] | None = None  # (seat, first hold, when)
        self._asking: tuple[str, int] | None = None  # (command, team that must confirm)
        self._chord = RefereeChord()
        self.referee_calls = 0
        self.display_errors = 0
        self._ready = False
        self.handled = 0  # button and tag events handled (the mock table counts them)
        self.on_record = on_record
        #: called on the loop's thread with every ServiceEvent (publishers, the tournament)
        self.listeners: list[Callable[[ServiceEvent], None]] = []
        #: the tournament match the seats show before the next game (``set_match``)
        self.match_card: MatchCard | None = None
        self.match_waiting = False  # a tournament table with no chico to play
        self._calls: deque[Callable[[], None]] = deque()  # call_soon's, for the loop
        self._calls_lock = threading.Lock()
        self._bus: SeatBus | None = None
        self._record_lines: list[str] = []
        #: each seat's hardware faults and the seat test (``controller.table.faults``)
        self.watch = SeatWatch(config.rules.players, clock=clock, deck_of=deck_of, lookup=lookup)
        self.watch.tell = self._tell_test
        self.watch.tell_all = self._tell_everyone
        self.table = self._new_table(game if game is not None else self._restore())

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
        self._hand_over_at: float | None = float("-inf") if table.phase is Phase.WAITING else None
        return table

    def ready(self) -> None:
        """Hardware up and game restored: draw every screen and tell systemd."""
        damage = self.store.damage if self.store is not None else None
        if damage is not None:
            self.tell_all(RecordDamaged(damage.kept), seconds=DAMAGE_NOTICE_S)
            # and a lasting alert for as long: no notice, prompt or deal hides it
            self.table.alerts["damage"] = RecordDamaged(damage.kept)
            self._damage_until = self.clock() + DAMAGE_NOTICE_S
        self._housekeeping()  # e.g. start reading the first deal
        self.redraw(force=True)
        self._ready = True
        self.notifier.ready(f"hand {self.table.game.hand_number}, score {self.table.game.score}")
        self.ping()

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

    def post(self, seat: int, event: LinkEvent) -> None:
        """Called by the seat links (on the loop's thread, in its wait) and by hardware
        threads (a pad, a reader); a flooding seat's excess is dropped (``Inbox``)."""
        self.events.put(seat, event)

    def step(self, wait: float) -> int:
        """Handle queued events (waiting up to ``wait`` s for the first in the bus, which
        reads the seat nodes meanwhile; at most ``BATCH`` of them); returns how many."""
        done = 0
        events, bus = self.events, self.bus  # the bus (and the bell) before listening
        woken = True  # by something that came, not by the wait running out
        if not events.listen() and not self._calls:  # nothing to do yet: wait for it
            woken = bus.wait(wait) > 0
        item = events.get()
        if (
            item is None
            and woken
            and not self._calls
            and time.monotonic() - self._kept < HOUSEKEEPING_S
        ):
            # only what posts nothing came (a node's display acknowledgement, heard by its
            # panel's port): nothing for the table, which was kept a moment ago
            return 0
        if item is not None and (
            self._calls or self._hand_over_at is not None or self._won_at is not None
        ):
            # a deal (or a new game) due now is started, a call handed over is run, before
            # the taps are read; otherwise the housekeeping after the events is enough
            self._housekeeping()
        changed = False
        touched = False  # an event of the batch changed something (or a deal started)
        self._played = False
        counted = self.handled
        while item is not None:
            if self._handle(*item):
                changed = touched = True
            done += 1
            if self._deal_if_due():  # a hand ended in this batch: its next deal's taps count
                changed = touched = True
            if self._played:  # an action played is shown at once, not after the batch
                self._played = False
                self.redraw()
                changed = False  # shown: only what comes after it is redrawn again
            item = events.get() if done < BATCH else None
        # busy: a player's event handled (or a wake's call run): the control folder
        # waits its turn
        busy = self.handled != counted or (woken and not done)
        if (
            not busy
            or touched
            or not done
            or self._calls
            or time.monotonic() - self._kept >= HOUSEKEEPING_S
        ):
            self._housekeeping(busy=busy)
        # else only a player's events that changed nothing came (a card lifted off a
        # reader): nothing for the housekeeping, which ran a moment ago
        if done and (changed or self._screens_stale(disk=touched)):
            self.redraw()
        return done

    def _screens_stale(self, *, disk: bool = True) -> bool:
        """Whether a screen would change with no event: a message shown has expired, or
        (``disk``) the disk alert came or went. A turn whose events changed nothing
        wrote no record and ran no housekeeping: the disk's state it left as it was."""
        return self.clock() > self._shown_until or (disk and self._disk_alert())

    def run(self, should_stop: Callable[[], bool]) -> None:
        tick = min(self.config.watchdog_s or 1.0, 1.0)
        # A flooding hardware thread (a stuck button, a bad cable) holds the interpreter
        # until it is made to switch: every time the loop waits (for an event, an fsync)
        # it would wait that long again to go on. Switching sooner bounds what a flood
        # costs another seat's action (bench/flood.py).
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
        while not should_stop():
            self.step(tick)

    def _handle(self, seat: int, event: LinkEvent) -> bool:
        """Handles one event; False when no screen can have changed."""
        try:
            if isinstance(event, _COUNTED):
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

    def _after_event(self) -> None:
        game = self.table.game
        if self.table.phase is Phase.WAITING and self._hand_over_at is None:
            self._hand_over_at = self.clock()
        if game.winner is not None and self._won_at is None:
            self._won_at = self.clock()
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
                    f"archivado como {target}"
                    if target
                    else "se archiva cuando el disco lo permita",
                )
                self._deliver()

    def _deal_if_due(self) -> bool:
        delay = self.config.next_deal_after_s
        if self.table.phase is not Phase.WAITING:
            self._hand_over_at = None
        elif (
            delay is not None
            and self._hand_over_at is not None
            and self.clock() - self._hand_over_at >= delay
        ):
            self._hand_over_at = None
            self.table.new_hand()
            return True
        return False

    def call_soon(self, call: Callable[[], None]) -> None:
        """Run ``call`` on the loop's thread at its next turn (thread-safe: the tournament
        link's network thread hands the desk's assignment over this way); the screens
        are redrawn after it."""
        with self._calls_lock:
            self._calls.append(call)
        self.events.wake()

    def _run_calls(self) -> bool:
        if not self._calls:  # read without the lock: a call added now wakes the next get
            return False
        with self._calls_lock:
            calls, self._calls = self._calls, deque()
        for call in calls:
            try:
                call()
            except Exception:  # a failing call must never stop the table
                log.exception("call_soon: falló %r", call)
        return bool(calls)

    def set_match(self, card: MatchCard | None, *, waiting: bool = False) -> None:
        """The match the seats show before the next game (``None``: none; ``waiting``:
        none yet, the seats say the table waits for the organiser); on the loop's thread
        (``call_soon`` from another)."""
        self.match_card, self.match_waiting = card, waiting and card is None
        self.table.match, self.table.waiting = card, self.match_waiting

    def _housekeeping(self, busy: bool = True) -> None:
        """What the loop does between events; ``busy``: the table is not quiet (the
        control folder then waits for ``CONTROL_READ_S`` since it was last looked at)."""
        now = self._kept = time.monotonic()
        called = self._run_calls()
        if self.events.dropped and self.clock() >= self._next_drop_report:
            self._report_drops()
        if self._refusal_window:
            self._tell_refusal_counts(due_only=True)
        if self._deal_if_due() or called or self.watch.tick():
            self.redraw()
        self.ping()
        if not busy or now >= self._controls_next:
            self._controls_next = now + CONTROL_READ_S
            try:
                self._read_controls()
            except OSError as error:  # a failing state directory never stops the table
                log.error("control: no puedo leer %s: %s", self.control_dir, error)
        alerted = False
        if self.store is not None and self.store.pending and self.clock() >= self._next_retry:
            self._next_retry = self.clock() + RETRY_S
            if self.store.flush():
                self._deliver()
            alerted = self._disk_alert()
        if self._damage_until is not None and self.clock() >= self._damage_until:
            self._damage_until = None
            alerted = self.table.alerts.pop("damage", None) is not None or alerted
        if alerted:  # the disk alert came or went, the damage notice ended: at once
            self.redraw()
        held = self._won_at is not None and self.clock() - self._won_at >= RESULT_HOLD_S
        if held and not self.table.show_next:  # the result was read: what comes next
            self.table.show_next = True
            self.redraw()
        after = self.config.new_game_after_s
        if self._won_at is not None and after is not None and self.clock() - self._won_at >= after:
            self.new_game()

    def _report_drops(self) -> None:
        """A flooding seat's dropped events: one journal line a seat and ``FLOOD_LOG_S``,
        and the service's status (``systemctl status``, ``truco-table doctor``)."""
        self._next_drop_report = self.clock() + FLOOD_LOG_S
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

    def ping(self) -> None:
        if self.config.watchdog_s is None or not self._ready:
            return
        now = self.clock()
        if now - self._last_ping >= self.config.watchdog_s:
            self._last_ping = now
            self.notifier.watchdog()

    # ------------------------------------------------------------------ the record

    def _emit(self, event: ServiceEvent) -> None:
        """Tell the listeners, in order, once what the event says is in the record.

        While the disk refuses, the queue stays bounded: refusals past
        ``OUTGOING_REFUSALS`` are dropped (counted), a referee call repeating the one
        before it is coalesced; what remains is the game's own events."""
        if self.store is not None and self.store.pending:
            if isinstance(event, Refused):
                if self._outgoing_refusals >= OUTGOING_REFUSALS:
                    self.refusals_unsent += 1
                    if self.refusals_unsent == 1 or self.refusals_unsent % 10_000 == 0:
                        log.warning(
                            "%d rechazos sin mandar: el registro todavía no está en el disco",
                            self.refusals_unsent,
                        )
                    return
                self._outgoing_refusals += 1
            elif isinstance(event, RefereeCall) and self._outgoing[-1:] == [event]:
                return
        self._outgoing.append(event)
        self._deliver()

    def _deliver(self) -> None:
        if self.store is not None and self.store.pending:
            return  # the disk has not taken the record yet: the desk hears it later
        outgoing, self._outgoing = self._outgoing, []
        self._outgoing_refusals = 0
        for event in outgoing:
            for listener in self.listeners:
                try:
                    listener(event)
                except Exception:  # a listener must never stop the table
                    log.exception("falló un oyente con %s", type(event).__name__)

    def _refused(self, seat: int, action: object, code: object) -> None:
        text = None if action is None else str(action)
        value = getattr(code, "value", str(code))
        now = self.clock()
        start, told = self._refusal_window.get(seat, (now, 0))
        if now - start >= REFUSAL_WINDOW_S:
            self._tell_refusal_count(seat)
            start, told = now, 0
        if told >= REFUSAL_BURST:  # a stuck button: counted, told once the window ends
            self._refusals_untold.setdefault(seat, Counter())[value] += 1
            self.refusals_untold += 1
            return
        self._refusal_window[seat] = (start, told + 1)
        self._emit(Refused(seat, text, value))
        if self.config.record_refusals:
            self._record(
                f"# rechazado: {text or f'{seat} (carta desconocida)'} ({value})", accepted=False
            )

    def _tell_refusal_count(self, seat: int) -> None:
        """The refusals of ``seat`` counted in its last window: one log line and, under
        the tournament profile, one record comment."""
        self._refusal_window.pop(seat, None)
        counts = self._refusals_untold.pop(seat, None)
        if not counts:
            return
        total = sum(counts.values())
        codes = " ".join(f"{code} {n}" for code, n in counts.most_common())
        log.warning(
            "asiento %d: %d rechazos más en %g s (%s)", seat, total, REFUSAL_WINDOW_S, codes
        )
        if self.config.record_refusals:
            self._record(f"{REFUSAL_COUNT_MARK}{seat}, {total} ({codes})", accepted=False)

    def _tell_refusal_counts(self, *, due_only: bool) -> None:
        now = self.clock()
        for seat, (start, _) in list(self._refusal_window.items()):
            if not due_only or now - start >= REFUSAL_WINDOW_S:
                self._tell_refusal_count(seat)

    def _record(self, line: str, accepted: bool = True) -> None:
        """One statement: written whole and synced, then told to the listeners (the
        displays are redrawn after the event)."""
        if accepted and self._refusals_untold:  # the count first: it came before
            self._tell_refusal_counts(due_only=False)
        self._record_lines.extend(line.split("\n"))
        if self.on_record is not None:
            self.on_record(line)
        if self.store is not None:
            if self.store.append(line) and self._outgoing and not accepted:
                self._deliver()  # the disk took the record again with this line
            self._disk_alert()
        if accepted:
            self._played = True
            game = self.table.game if hasattr(self, "table") else None
            if game is not None:
                self._emit(Accepted(line, game.score, game.hand_number))

    def _disk_alert(self) -> bool:
        """Shows or clears the table's disk alert; True if that changed it."""
        problem = self.store.problem if self.store is not None else None
        if not hasattr(self, "table"):  # a record line written while the table is made
            return False
        alerts = self.table.alerts
        if problem:
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
        elif self._chord.hold(seat, event.name, now):
            self.call_referee(seat)
            return True
        if self._asking is not None and isinstance(event, ButtonPressed):
            command, team = self._asking
            if seat % 2 == team and event.name in ("quiero", "no_quiero"):
                self._asking = None
                if event.name == "quiero":
                    self.command(command)
                else:
                    self.tell_all(TableNotice.CANCELLED)
                return True
        if not isinstance(event, ButtonHeld):
            return False
        table = self.table
        if table.phase is Phase.DEALING and seat == table.hand_dealer and event.name == "mazo":
            # the dealer's hold that starts play (Table._hold) is not the first half of
            # a table control: the dealer's next hold (truco, no quiero) is a call's menu
            self._combo = None
            return False
        if self._combo is not None:
            first_seat, first, when = self._combo
            wanted = _COMBOS.get((first, event.name))
            if first_seat == seat and now - when <= COMBO_S and wanted is not None:
                self._combo = None
                self.table.inputs[seat].reset()
                self._asking = (wanted, 1 - seat % 2)
                self.tell_all(AskConfirm(wanted), seconds=COMBO_S * 3)
                return True
        self._combo = (seat, event.name, now) if event.name == "mazo" else None
        return False

    def call_referee(self, seat: int) -> None:
        """Seat ``seat`` calls the referee (the pad's chord, or the mock table's key)."""
        self.referee_calls += 1
        self._combo = None
        if self._asking is not None:  # an undo or new game waiting: the referee decides
            self._asking = None
        log.info("el asiento %d llamó al árbitro", seat)
        self.table.referee_called(seat)
        if self.config.record_refusals:
            self._record(f"{REFEREE_CALL_MARK}{seat}", accepted=False)
        self._emit(RefereeCall(seat))

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
        if command == "seat-test" and args in (("on",), ("off",)):
            self.watch.set_test(args[0] == "on")  # not a move: nothing in the record
            return True
        if command == "second-run" and len(args) == 1 and args[0].isdigit():
            self.watch.second_run(int(args[0]))  # a second `run` stopped at the lock
            return True
        log.error("control: orden desconocida %r", command)
        return False

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
            self._control_said = text
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
        for i in range(len(self._record_lines) - 1, -1, -1):
            if self._record_lines[i].strip() == str(action):
                self._record_lines[i] = f"# deshecho por el árbitro: {self._record_lines[i]}"
                break
        if self.store is not None:
            lines = self.store.lines
            for i in range(len(lines) - 1, -1, -1):
                if lines[i].strip() == str(action):
                    lines[i] = f"# deshecho por el árbitro: {lines[i]}"
                    break
            if control is not None:  # with the undo, in one atomic rewrite
                lines.append(mark(control, f"deshecho: {action}"))
            self.store.rewrite(lines)
            self._disk_alert()
        self.table.phase = Phase.PLAYING
        self.table.deal = {}
        self._hand_over_at = None
        self.table.last = TableResult(action, None) if action is not None else None
        if control is not None:
            self._control_said = f"deshecho: {action}"
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
        self._won_at = None
        alerts = self.table.alerts  # lasting: they outlive the game
        self.table = self._new_table(None)
        self.table.alerts.update(alerts)
        self._shown = [None] * len(self.displays)
        self._screens = [None] * len(self.displays)
        log.info("partido nuevo: %s", self.rules.to_line())
        self._emit(NewGame(self.rules.to_line()))
        self.redraw()

    def _read_controls(self) -> None:
        folder = self.control_dir
        if folder is None:
            return
        # The folder is listed only when its mtime moved (a command file was renamed
        # into it), or while that mtime is recent: the file system's clock is coarse
        # (a few ms), so a file landing in the same tick as the last listing is not
        # missed.
        try:
            mtime = os.stat(folder).st_mtime_ns
        except OSError:
            return
        if mtime == self._controls_seen and time.time_ns() - mtime > _CONTROL_SETTLED_NS:
            return
        self._controls_seen = mtime
        # ``<id>.taken``: claimed before a restart (applied unless the record says so)
        for path in sorted([*folder.glob("*.taken"), *folder.glob("*.cmd")]):
            self._controls_seen = None  # until this file is gone: listed again next time
            self._take_control(path)

    def _take_control(self, path: Path) -> None:
        """One command file: claimed (renamed ``<id>.taken``: ``truco-table control``
        cannot withdraw it any more), applied unless its id was applied before,
        answered (``controller.table.answers``: what was done, in memory and in the
        record), then deleted. Whether the disk takes the record or not: the command
        is applied in memory, as every action is, and its id is remembered (and noted
        in the record), so a retry carrying the same id is answered, not applied
        again. A file the card will not let it rename is claimed in the answers first,
        and applied only if it is still there after that (the command line withdraws a
        command it sees no answer to, and then reads the answers again)."""
        command_id = path.stem
        renamed = path.suffix != ".cmd"
        if path.suffix == ".cmd":
            taken = path.with_suffix(".taken")
            try:
                os.replace(path, taken)
                renamed = True
            except FileNotFoundError:
                return  # withdrawn by ``truco-table control`` (its --wait ran out)
            except OSError as e:  # a refusing card: applied from where it is
                if command_id not in self._controls_stuck:
                    log.error("control: no puedo tomar %s: %s", path, e)
                taken = path
            path = taken
        try:
            words = path.read_text(encoding="utf-8", errors="replace").split()
        except OSError as e:
            if command_id not in self._controls_stuck:
                self._controls_stuck.add(command_id)
                log.error("control: no puedo leer %s: %s", path, e)
            return
        answer = self._applied_before(command_id)
        if words and answer is None:
            if not renamed and self.answers.path is not None:
                self.answers.put(command_id, Answer("claimed", "la mesa lo está aplicando"))
                if not path.exists():  # withdrawn before the claim was said: not applied
                    self.answers.put(command_id, Answer("withdrawn", "retirado: no se hizo"))
                    return
            log.info("control %s: %s", command_id, " ".join(words))
            self._control_said = None
            applied = self.command(words[0], *words[1:], control=command_id)
            said = self._control_said
            durable = self.store is None or not self.store.pending
            if said is None and applied:  # a control that writes nothing in the record
                answer = Answer("done", "hecho", durable)
            elif said is None:
                answer = Answer("refused", f"no se pudo: {' '.join(words)}", durable)
            else:
                state = "done" if applied or said != NOTHING_TO_UNDO else "nothing"
                answer = Answer(state, said, durable)
            self._remember_control(command_id, answer)
        if answer is not None:
            if answer.state != "refused" and self.store is not None and not answer.durable:
                answer = Answer(answer.state, answer.text, not self.store.pending)
            if self.answers.get(command_id) != answer:
                self.answers.put(command_id, answer)
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as e:
            if command_id not in self._controls_stuck:  # said once, not at every turn
                self._controls_stuck.add(command_id)
                log.error("control: no puedo borrar %s: %s", path, e)

    def _applied_before(self, command_id: str) -> Answer | None:
        """What was done with ``command_id`` if it was applied before (in memory, or
        noted in the record); None if it was not."""
        answer = self._controls_applied.get(command_id)
        if answer is not None or self.store is None:
            return answer
        return answer_in_record(self.store.lines, command_id)

    def _remember_control(self, command_id: str, answer: Answer) -> None:
        self._controls_applied[command_id] = answer
        while len(self._controls_applied) > CONTROLS_REMEMBERED:
            self._controls_applied.popitem(last=False)

    def tell_all(self, notice: Notice, seconds: float = 3.0) -> None:
        self.table.tell_all(notice, seconds=seconds)

    # ------------------------------------------------------------------ displays

    def screen(self, seat: int) -> Image.Image:
        return render_screen(screen_for(self.table, seat))

    def redraw(self, force: bool = False) -> None:
        """Redraws every seat whose screen's content changed (every seat if ``force``)."""
        self._disk_alert()
        table = self.table
        # a record restored with fewer seats than the configuration: the extra stay dark
        displays = self.displays[: table.rules.players]
        for seat, (display, screen) in enumerate(
            zip(displays, screens_for(table, len(displays)), strict=True)
        ):
            drawn = self._screens[seat]
            # A view of another game state (the engine's views are kept per state) is
            # not compared field by field: the contents below say whether it shows.
            if not force and drawn is not None and screen.view is drawn.view and screen == drawn:
                continue
            content = screen_content(screen)
            if not force and content == self._shown[seat]:
                self._screens[seat] = screen
                continue
            # Panels that take frames in their own page layout (every one the table
            # builds) get them joined from the renderer's cached tiles; no pixel is drawn.
            show_pages = getattr(display, "show_pages", None)
            try:
                if show_pages is not None:
                    show_pages(render_pages(content))
                else:
                    display.show(render_content(content))
            except Exception as error:  # a broken display never stops the table
                self.display_errors += 1
                if self.display_errors == 1 or self.display_errors % 100 == 0:
                    log.warning("asiento %d: falló la pantallita: %s", seat, error)
                continue
            self._shown[seat] = content
            self._screens[seat] = screen
        self._shown_until = min(
            [m.until for m in table.messages if m] + [n[1] for n in table.notices if n],
            default=float("inf"),
        )

    def transcript(self) -> str:
        return write(self.table.game)

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
        self.answers.close()
        if self._bus is not None:
            self._bus.close()
        self.notifier.stopping()


def freeze_heap() -> None:
    """Take what the started service holds (modules, fonts, the score tiles drawn at
    start-up, the restored game) out of the cyclic garbage collector's generations
    (``gc.freeze``, after a collection): a full collection then walks only what play
    made since, not the whole heap. The collector's full pass runs inside whichever
    event makes its allocations pass the threshold: over the start-up heap it cost one
    event 13-37 ms of CPU on the development machine (some 0.1-0.2 s on a Pi 4, the
    panels late by as much); with it frozen, none came in six six-seat games
    (``bench/table_inprocess.py``). Process-wide: ``truco-table run`` calls it once, after
    ``ready()``; a library or a test never does."""
    gc.collect()
    gc.freeze()
    log.info(
        "memoria del arranque congelada: %d objetos fuera de las pasadas completas del recolector",
        gc.get_freeze_count(),
    )


def new_command_id() -> str:
    return f"{time.time_ns()}-{os.getpid()}"


def drop_command(state_dir: Path, *words: str, command_id: str | None = None) -> Path:
    """What ``truco-table control`` does: an atomic command file ``<id>.cmd`` for the
    service (a retry gives the same ``command_id``: the table applies it once)."""
    name = command_id if command_id is not None else new_command_id()
    if not COMMAND_ID_RE.fullmatch(name):
        raise ValueError(f"a command id is letters, digits, '-', '_' or '.' (not {name!r})")
    control = state_dir / "control"
    if not control.is_dir():
        control.mkdir(parents=True, exist_ok=True)
        fsync_dir(state_dir)
    tmp = control / f"{name}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, (" ".join(words) + "\n").encode("utf-8"))
        os.fsync(fd)  # a command said to be pending survives a power cut
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    target = control / f"{name}.cmd"
    os.replace(tmp, target)
    Disk().fsync_dir(control)  # raises: the caller says the command is not on the card
    return target
