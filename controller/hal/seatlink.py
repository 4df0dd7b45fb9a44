"""The Pi's side of the seat node link (one Pico per seat, over USB serial).

Each seat's node speaks the line protocol in ``firmware/PROTOCOL.md``, encoded and
decoded by ``controller.hal.frames``; the nodes are found by USB serial number by
``controller.hal.node_finder``. This module is the link around them:

* :class:`SeatLink` owns one serial port (opened exclusively: a second program
  on the same node, such as ``truco-table enroll`` while the service runs, is
  refused at once), reads it when its :class:`~controller.hal.seatbus.SeatBus`
  finds it readable (on the table service's loop, or on a thread of its own when
  started alone), validates every frame, answers heartbeats, notices when the
  node goes away (unplugged or silent), reopens the port when it comes back,
  and hands every event to
  ``on_event(seat, event)``.  Each opening is a new session: what the node sent
  before it answered this session's ``HELLO`` is stale (a button pressed while
  the service was down) and is dropped.  A node that fell into the MicroPython
  REPL is soft-reset back into its firmware. What it writes, it writes through its
  writing half (``controller.hal.link_writer``).
* :func:`status_message` gives the one-line English text an operator's terminal
  shows for a link event (``truco-table enroll``); a seat's display shows the typed
  notices of ``controller.notices`` instead.

The events themselves live in ``controller.hal.events``.

Nothing a node sends can crash the link (or the loop that reads it): bad
checksums, gaps in sequence numbers, garbage and over-long lines are counted in
:attr:`SeatLink.stats` and logged once per connection.
"""

from __future__ import annotations

import functools
import logging
import os
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, cast

import serial

from .events import (
    PROTOCOL_VERSION,
    PROTOCOL_VERSIONS,
    ButtonHeld,
    ButtonPressed,
    ButtonStuck,
    DisplayAck,
    DisplayLost,
    Heartbeat,
    Hello,
    LinkEvent,
    NodeConnected,
    NodeDisconnected,
    NodeEvent,
    PanelReport,
    TagArrived,
    TagConflict,
    TagLeft,
)
from .frames import (
    CALLBACK_ERRORS,
    GARBAGE,
    MAX_FRAME,
    REPL_RESETS,
    SEQ_MODULO,
    STALE,
    VERSION,
    VERSIONS_SAID_ES,
    FrameDecoder,
)
from .link_writer import LinkWriter, SerialPort
from .node_finder import DEFAULT_BY_ID_DIR, port_for_serial
from .seatbus import SeatBus

__all__ = ["REPL_RECOVERY", "EventCallback", "SeatLink", "status_message"]

log = logging.getLogger(__name__)


# What the Pi sends a node that sits in the MicroPython REPL instead of its firmware:
# Ctrl-C twice (stop whatever runs), Ctrl-B (leave the raw REPL, as mpremote leaves
# it), Ctrl-D (soft reset: MicroPython runs main.py again).  To running firmware these
# bytes are one bad line, counted and ignored.
REPL_RECOVERY: Final = b"\r\x03\x03\x02\x04"
# Text the REPL prints (its banner, prompts, a traceback): seeing one of these, the
# Pi sends REPL_RECOVERY at once instead of waiting for the node to stay silent.
_REPL_SIGNS: Final = (b">>>", b"MicroPython ", b"Traceback", b"raw REPL")


def status_message(event: LinkEvent) -> str | None:
    """The operator's one-line text for a link event (``truco-table enroll``), or None.

    >>> status_message(NodeDisconnected("/dev/truco-seat0", "unplugged"))
    'Reader unplugged - reconnecting...'
    """
    if isinstance(event, NodeDisconnected):
        if event.reason == "closed":
            return None  # the table software is shutting down
        if event.reason == "silent":
            return "Reader not answering - reconnecting..."
        return "Reader unplugged - reconnecting..."
    if isinstance(event, NodeConnected):
        return "Reader connected"
    if isinstance(event, Heartbeat) and not event.reader_ok:
        return "Card reader not found - check its cable"
    return None


# -- the link ----------------------------------------------------------------------------


EventCallback = Callable[[int, LinkEvent], None]


#: what the seat's NodePort hears, and what only it hears (tuples: an ``isinstance`` of a
#: union made afresh at every event costs about four times as much)
_FOR_DISPLAY = (DisplayAck, DisplayLost, PanelReport, Heartbeat, NodeConnected, NodeDisconnected)
_DISPLAY_ONLY = (PanelReport, DisplayAck, DisplayLost)
#: what only the table hears (a card, a button): ``on_event`` at once, nothing looked at
_TABLE_ONLY = frozenset({TagArrived, TagLeft, TagConflict, ButtonPressed, ButtonHeld, ButtonStuck})
#: what a connected link only delivers (not a HELLO nor a heartbeat, which it answers)
_PLAIN = frozenset(
    {
        TagArrived,
        TagLeft,
        TagConflict,
        ButtonPressed,
        ButtonHeld,
        ButtonStuck,
        DisplayAck,
        DisplayLost,
        PanelReport,
    }
)


class SeatLink(LinkWriter):
    """One seat node's serial link, kept alive by a :class:`~controller.hal.seatbus.SeatBus`.

    ``port`` is a pyserial URL or device path (``/dev/truco-seat0``,
    ``loop://``, a pty path) or a callable returning the current path (None
    while the node is unplugged), e.g. ``port_for_serial("e661...")``.

    The link is a state machine the bus drives: its port opened (again, with a
    doubling backoff, while it cannot be), HELLO every ``hello_interval`` until the
    node answers, what the node sends read and parsed when the bus finds it readable,
    a node gone silent for ``heartbeat_timeout`` dropped and reopened.

    ``on_event(seat, event)`` is called on the bus's thread for every node event and
    for NodeConnected / NodeDisconnected; keep it quick.  ``start(bus)`` puts the link
    on a bus someone waits on (the table service's loop); ``start()`` alone runs it on
    a thread of its own (a private bus). ``close()`` stops it (and joins that thread).
    """

    def __init__(
        self,
        seat: int,
        port: str | Callable[[], str | None],
        on_event: EventCallback,
        *,
        baudrate: int = 115200,
        heartbeat_timeout: float = 3.5,
        hello_interval: float = 1.0,
        backoff_initial: float = 0.25,
        backoff_max: float = 5.0,
        read_timeout: float = 0.25,
        repl_after: float = 2.5,
    ) -> None:
        super().__init__(seat)
        self._port_spec = port
        self._on_event = on_event
        self.baudrate = baudrate
        self.heartbeat_timeout = heartbeat_timeout
        self.hello_interval = hello_interval
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.read_timeout = read_timeout  # how often a port with no descriptor is polled
        self.repl_after = repl_after  # unanswered this long after opening: try REPL_RECOVERY
        self.decoder = FrameDecoder(on_reject=self._log_reject)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None  # the private bus's, after start()
        #: when the bus next runs this link's timers (monotonic seconds)
        self.due = float("inf")
        self._backoff = backoff_initial
        self._next_open = float("-inf")
        # this session's timers (see _timers)
        self._opened = self._last_rx = 0.0
        self._last_hello: float | None = None  # None: greet at once (no version switch)
        self._heard_at_hello = 0  # valid frames when the last HELLO went out
        self._last_recovery: float | None = None  # the last REPL recovery this session
        self._recovery_wait = repl_after
        self._warned_silent = False
        self._connected = False
        self._port_name = ""
        self._hello: Hello | None = None
        self._last_failure: str | None = None
        self._logged_rejects: set[str] = set()
        self._callback_failed = False
        self._session_id = random.randrange(SEQ_MODULO)
        self._answered = False  # the node answered this session's HELLO
        self._repl_seen = False  # a rejected line looked like the MicroPython REPL
        self._busy: str | None = None
        # The protocol version offered in this session's HELLO (the newest first; a node
        # that does not take it, one of protocol 2, is offered the older one), and the
        # one the node answered with: what the display frames are made for.
        self._offer = PROTOCOL_VERSION
        self._protocol = PROTOCOL_VERSION
        # The seat's NodePort (controller.hal.node_display), when the node drives the
        # seat's panel: it gets the display events (which never reach on_event) and
        # NodeConnected and Heartbeat.
        self.display_listener: Callable[[LinkEvent], None] | None = None

    @classmethod
    def for_serial(
        cls,
        seat: int,
        serial_number: str,
        on_event: EventCallback,
        by_id_dir: Path = DEFAULT_BY_ID_DIR,
        **options: Any,
    ) -> SeatLink:
        """A link to the node with this USB serial number, wherever it is plugged in."""
        return cls(seat, port_for_serial(serial_number, by_id_dir), on_event, **options)

    # -- public API --------------------------------------------------------------------
    @property
    def connected(self) -> bool:
        """True while the node is talking to us."""
        return self._connected

    @property
    def hello(self) -> Hello | None:
        """The node's last HELLO (firmware version, stored seat, serial), if any."""
        return self._hello

    @property
    def stats(self) -> dict[str, int]:
        """Counters: frames, seq_gap, callback_errors, stale, repl_resets, reject reasons."""
        return self.decoder.stats

    @property
    def protocol(self) -> int:
        """The protocol version the node answered this session's HELLO with (2 to 5)."""
        return self._protocol

    @property
    def busy(self) -> str | None:
        """Why the port could not be had, while another program holds it (else None)."""
        return self._busy

    @property
    def session(self) -> int:
        """The session number of this opening, or of the next one while closed.

        The Pi's HELLO carries it and the node's answer echoes it; every opening of
        the port takes a new one.
        """
        return self._session_id

    def start(self, bus: SeatBus | None = None) -> None:
        """Put the link on ``bus`` (whoever waits in it reads the node); with no bus, on
        a private one waited on by a thread of its own. It opens the port and keeps it
        open."""
        if self._bus is not None:
            raise RuntimeError("SeatLink already started")
        if bus is None:
            own = SeatBus()
            self._bus = own
            own.add(self)
            own.start(name=f"seatlink-{self.seat}")
            self._thread = own.thread
            return
        self._bus = bus
        bus.add(self)

    def close(self, timeout: float = 5.0) -> None:
        """Close the port (NodeDisconnected "closed" if the node was connected) and take
        the link off its bus; a private bus's thread is stopped and joined."""
        self._stop.set()
        bus = self._bus
        if bus is None:
            return
        if self._thread is not None:
            bus.close(timeout)
        else:
            bus.remove(self)

    def __enter__(self) -> SeatLink:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def soft_reset(self) -> bool:
        """Bring a node back from the MicroPython REPL (``REPL_RECOVERY``)."""
        # counted before the bytes leave: whoever hears them already sees the count (counted
        # after the write, a node's answer could come before it)
        if not self._write_raw(REPL_RECOVERY, before=lambda: self.decoder.count(REPL_RESETS)):
            return False
        log.warning("asiento %d: el nodo está en su REPL: se le mandó un reinicio", self.seat)
        return True

    # -- events ----------------------------------------------------------------------------
    def _deliver(self, event: LinkEvent) -> None:
        listener = self.display_listener
        if listener is not None and isinstance(event, _FOR_DISPLAY):
            try:
                listener(event)
            except Exception:
                self.decoder.count(CALLBACK_ERRORS)
                log.exception(
                    "asiento %d: falló el puerto de la pantallita con %r", self.seat, event
                )
        if isinstance(event, _DISPLAY_ONLY):
            return  # the panel's business, not the table's
        try:
            self._on_event(self.seat, event)
        except Exception:
            self._callback_failed_with(event)

    def _callback_failed_with(self, event: LinkEvent) -> None:
        """``on_event`` raised (in an ``except`` block): counted, logged the first time."""
        self.decoder.count(CALLBACK_ERRORS)
        if not self._callback_failed:
            self._callback_failed = True
            log.exception("asiento %d: on_event falló con %r", self.seat, event)

    def _log_reject(self, reason: str, line: bytes) -> None:
        if reason == GARBAGE and any(sign in line for sign in _REPL_SIGNS):
            self._repl_seen = True
        if reason in self._logged_rejects:
            log.debug("seat %d: rejected %s frame %r", self.seat, reason, line[:MAX_FRAME])
        else:
            self._logged_rejects.add(reason)
            log.warning(
                "asiento %d: se rechazó un mensaje (%s): %r (los que sigan solo se cuentan)%s",
                self.seat,
                reason,
                line[:MAX_FRAME],
                "; el nodo habla otro protocolo que "
                f"{VERSIONS_SAID_ES}: actualizá su firmware "
                "(firmware/README.md)"
                if reason == VERSION
                else "",
            )

    def _note_failure(self, message: str) -> None:
        if message != self._last_failure:
            self._last_failure = message
            log.warning("asiento %d: %s (reintentando sin avisar)", self.seat, message)
        else:
            log.debug("seat %d: %s", self.seat, message)

    def _resolve(self) -> str | None:
        spec = self._port_spec
        return spec if isinstance(spec, str) else spec()

    # -- the state machine, driven by the bus ------------------------------------------
    def tick(self, now: float) -> None:
        """The bus's call when ``due`` has come: open the port when its backoff is
        over, run the session's timers, and set ``due`` to the next one."""
        if self._stop.is_set():
            self.due = float("inf")
            return
        if self._serial is None:
            if now < self._next_open:
                self.due = self._next_open
                return
            self._open(now)
            if self._serial is None:
                self.due = self._next_open
                return
        if self._fd is None and not self._poll():  # a port with no descriptor: polled
            self.due = self._next_open
            return
        reason = self._timers(now)
        if reason is not None:
            self._end(reason, now)
            self.due = self._next_open
            return
        self.due = self._next_due(now)

    def shut(self) -> None:
        """The bus lets the link go (``close``): the port closed, the link stopped."""
        self._stop.set()
        self.due = float("inf")
        if self._serial is not None:
            self._end("closed", time.monotonic())

    def _open(self, now: float) -> None:
        name = self._resolve()
        if name is None:
            self._note_failure("node not plugged in")
            self._retry_later(now)
            return
        try:
            port = cast(
                SerialPort,
                serial.serial_for_url(
                    name,
                    baudrate=self.baudrate,
                    timeout=self.read_timeout,
                    write_timeout=1.0,
                    exclusive=True,  # one program per node: frames never split
                ),
            )
        except (serial.SerialException, OSError, ValueError) as error:
            if "exclusively lock" in str(error):
                self._busy = f"{name} is in use by another program"
            self._note_failure(f"cannot open {name}: {error}")
            self._retry_later(now)
            return
        self._busy = None
        self._backoff = self.backoff_initial
        self._begin(port, name, now)

    def _retry_later(self, now: float) -> None:
        self._next_open = now + self._backoff
        self._backoff = min(self._backoff * 2, self.backoff_max)

    def _begin(self, port: SerialPort, name: str, now: float) -> None:
        """A new session on the opened ``port``."""
        self.decoder.reset()
        self._logged_rejects.clear()
        with self._write_lock:
            self._serial = port
            self._out.clear()
            self._tx_seq = 0
            self._answered = False
            self._repl_seen = False
            self._offer = PROTOCOL_VERSION
        self._port_name = name
        log.debug("seat %d: opened %s (session %d)", self.seat, name, self._session_id)
        self._opened = self._last_rx = now
        self._last_hello = None
        self._heard_at_hello = 0
        self._last_recovery = None
        self._recovery_wait = self.repl_after
        self._warned_silent = False
        fd = getattr(port, "fd", None)
        if isinstance(fd, int) and self._bus is not None:
            self._fd = fd
            self._bus.watch(fd, functools.partial(self._readable, fd))

    def _timers(self, now: float) -> str | None:
        """The session's timers at ``now``; why it ends, if it does."""
        connected = self._connected
        if not connected and (
            self._last_hello is None or now - self._last_hello >= self.hello_interval
        ):
            heard = self.decoder.frames
            if self._last_hello is not None and heard != self._heard_at_hello:
                # Unanswered while the node's firmware talks: it does not take this
                # version (a node of protocol 2 is sent HELLO 2), or the other one (a
                # mistaken guess, both versions in turn).
                self._offer = self._other_version(self._offer)
            self._heard_at_hello, self._last_hello = heard, now
            if not self.send("HELLO", str(self._offer), str(self._session_id)):
                return "unplugged"
        # Not in the REPL while the firmware sends valid frames (a node that does not
        # take the offered version is no reason to reset it).
        in_repl = self._repl_seen or (
            not connected
            and now - self._opened >= self.repl_after
            and now - self._last_rx >= self.repl_after
        )
        last = self._last_recovery
        if in_repl and (last is None or now - last >= self._recovery_wait):
            self._repl_seen = False
            if last is not None:  # it did not help yet: try less often
                self._recovery_wait = min(self._recovery_wait * 2, 30.0)
            self._last_recovery = now
            self._last_hello = None  # greet the restarted firmware at once
            if not self.soft_reset():
                return "unplugged"
        quiet = now - self._last_rx >= self.heartbeat_timeout
        if connected and quiet:
            return "silent"
        if not connected and quiet and not self._warned_silent:
            self._warned_silent = True
            self._note_failure(f"{self._port_name} is open but the node says nothing")
        return None

    def _next_due(self, now: float) -> float:
        """When the session's timers are next due (a frame read since only makes one
        come early: it is looked at again then)."""
        due = now + self.read_timeout if self._fd is None else float("inf")
        if self._connected:
            due = min(due, self._last_rx + self.heartbeat_timeout)
        else:
            hello = self._last_hello
            due = min(due, now if hello is None else hello + self.hello_interval)
            if not self._warned_silent:
                due = min(due, self._last_rx + self.heartbeat_timeout)
        if self._repl_seen or not self._connected:
            repl = now if self._repl_seen else max(self._opened, self._last_rx) + self.repl_after
            if self._last_recovery is not None:
                repl = max(repl, self._last_recovery + self._recovery_wait)
            due = min(due, repl)
        return due

    def _readable(self, fd: int) -> None:
        """The bus found the port readable: what came is read and parsed, its events
        handled (on the bus's thread)."""
        if fd != self._fd:
            return  # a session that ended in this same wait
        try:
            data = os.read(fd, 4096)
        except BlockingIOError:
            return
        except OSError as error:
            log.debug("seat %d: read failed: %s", self.seat, error)
            self._lost()
            return
        if not data:  # readable but nothing: the device went away
            log.debug("seat %d: the port reports readiness to read but returned no data", self.seat)
            self._lost()
            return
        if self._connected and not self._repl_seen:
            # a display update's DACK alone in the read (the commonest on a node's panel),
            # or a button's or a card's frame alone: delivered as _take -> _handle would
            event = self.decoder.lone_frame(data)
            if event is not None:
                self._last_rx = time.monotonic()
                kind = type(event)
                if kind in _TABLE_ONLY:  # a card, a button: to the table, as _deliver does
                    try:
                        self._on_event(self.seat, event)
                    except Exception:
                        self._callback_failed_with(event)
                elif kind in _PLAIN:
                    self._deliver(event)
                else:
                    self._took(event)
                return
        self._take(data)

    def _poll(self) -> bool:
        """A port with no file descriptor (``loop://``): what it holds now; False when
        the session ended."""
        port = self._serial
        if port is None:
            return False
        try:
            waiting = port.in_waiting
            data = port.read(waiting) if waiting else b""
        except (serial.SerialException, OSError) as error:
            log.debug("seat %d: read failed: %s", self.seat, error)
            self._end("unplugged", time.monotonic())
            return False
        if data:
            self._take(data)
        return self._serial is not None

    def _lost(self) -> None:
        now = time.monotonic()
        self._end("unplugged", now)
        self.due = self._next_open

    def _take(self, data: bytes) -> None:
        decoder = self.decoder
        before = decoder.frames
        events = decoder.feed(data)
        if decoder.frames != before:
            self._last_rx = time.monotonic()
        for event in events:
            self._took(event)
            if self._serial is None:
                return  # closed meanwhile (a callback's close)
        if self._repl_seen:
            self.due = 0.0  # the REPL recovery at once

    def _took(self, event: NodeEvent) -> None:
        """One event read, handled (a HELLO that asks to be offered again: at once)."""
        if self._handle(event):
            self._last_hello = None  # offer the node's version at once
            self.due = 0.0

    def _end(self, reason: str, now: float) -> None:
        """The session is over (``reason``: unplugged, silent, closed): the port closed,
        NodeDisconnected delivered if the node was connected, the next opening planned."""
        with self._write_lock:
            port = self._serial
            self._serial = None
            self._out.clear()  # the session's bytes: the next one starts afresh
            previous = self._session_id  # the next opening is another session
            while self._session_id == previous:
                self._session_id = random.randrange(SEQ_MODULO)
        fd, self._fd = self._fd, None
        if fd is not None and self._bus is not None:
            self._bus.unwatch(fd)
        if port is not None:
            try:
                port.close()
            except Exception as error:  # a vanished device may fail to close
                log.debug("seat %d: close failed: %s", self.seat, error)
        self._next_open = now + self.backoff_initial if reason == "silent" else now
        if self._connected:
            self._connected = False
            if self._stop.is_set():
                reason = "closed"
            level = logging.INFO if reason == "closed" else logging.WARNING
            name = self._port_name
            log.log(level, "seat %d: node on %s disconnected (%s)", self.seat, name, reason)
            self._deliver(NodeDisconnected(name, reason))

    @staticmethod
    def _other_version(version: int) -> int:
        versions = PROTOCOL_VERSIONS
        return versions[(versions.index(version) - 1) % len(versions)]

    def _handle(self, event: NodeEvent) -> bool:
        """Take one event; True when the HELLO should be sent again at once (a node's
        HELLO before its answer names an older version than the one offered, or is its
        firmware's greeting after a soft reset)."""
        if self._connected and type(event) in _PLAIN:  # most of them: straight on
            self._deliver(event)
            return False
        if not self._answered:
            # Until the node answers this session's HELLO, what it says was sent
            # before (buffered while nobody listened): stale, never played.
            if not isinstance(event, Hello) or event.session != self._session_id:
                self.decoder.count(STALE)
                if isinstance(event, Hello) and event.protocol < self._offer:
                    self._offer = event.protocol
                    return True
                # the firmware's own greeting after the soft reset this link sent (the
                # HELLO sent with it may have gone to the restarting interpreter): at once
                return (
                    isinstance(event, Hello)
                    and event.session is None
                    and self._last_recovery is not None
                )
            self._answered = True
        elif isinstance(event, Hello) and event.session not in (None, self._session_id):
            self.decoder.count(STALE)  # an answer to an earlier session's HELLO
            return False
        if isinstance(event, Hello):
            self._protocol = min(event.protocol, PROTOCOL_VERSION)
            if self._protocol < PROTOCOL_VERSION and event.session is not None:
                log.info(
                    "asiento %d: el nodo %s (firmware %s) habla el protocolo %d: su pantallita "
                    "recibe los mensajes del protocolo %d (actualizá su firmware: son más rápidos)",
                    self.seat,
                    event.serial,
                    event.firmware,
                    self._protocol,
                    self._protocol,
                )
        if not self._connected:
            self._connected = True
            self._repl_seen = False  # its firmware answered: not in the REPL (an echo was)
            self._last_failure = None
            log.info("asiento %d: nodo conectado en %s", self.seat, self._port_name)
            self._deliver(NodeConnected(self._port_name))
        if isinstance(event, Heartbeat):
            self.send("HB")
        elif isinstance(event, Hello):
            self._hello = event
            if event.seat is not None and event.seat != self.seat:
                # the table's fault watch says it to the owner (controller.table.faults)
                log.debug(
                    "seat %d: node %s says it is seat %d (check the pin map)",
                    self.seat,
                    event.serial,
                    event.seat,
                )
        self._deliver(event)
        return False
