"""A seat's eight-button pad wired straight to the Pi's GPIO header (two-seat tables).

Four- and six-seat tables read each seat's pad on its seat node, whose firmware
debounces the contacts and reports ``PRESS``/``HOLD`` (``controller.hal.seatlink``).
On a two-seat table built with ``kind = "gpio"`` (``hardware/pinmap-gpio.toml``) the
buttons go to the Pi itself, and this module does the node's job on the Pi, with the
same rules and the same timings, and hands the table the same events:

* a short press (down, then up before the hold time) is reported once, when the
  button is let go, as :class:`~controller.hal.events.ButtonPressed`;
* keeping a button down for ``hold_s`` (800 ms) reports
  :class:`~controller.hal.events.ButtonHeld` once, at that moment, and its release
  reports nothing more;
* a contact that chatters for less than ``debounce_s`` (20 ms) is ignored, and a
  press that bounces counts once;
* a button down for ``stuck_s`` (10 s: a line shorted to ground, a jammed key) reports
  :class:`~controller.hal.events.ButtonStuck` once, and its release after that
  ``ButtonStuck(name, stuck=False)``: the node's ``STUCK`` and ``FREED``, which the
  table shows on the seat and the doctor reports (``SeatFault.PAD_STUCK``).

Precisely (as in ``firmware/seatnode/debounce.py``): a new contact state counts once
it has lasted ``debounce_s``; the hold time runs from the moment the contact closed
for good (the last bounce of the press), and a press is short if its release counts
(``debounce_s`` after the last bounce of the release) before the hold time is up.

Wiring
------
Each button connects its GPIO to GND when pressed; the Pi's internal pull-up holds
it high otherwise, so no resistors are needed (active low). BCM GPIO numbers, with
physical header pins in brackets (``hardware/wiring.md``, section 3):

============== ============== ==============
button         seat 0         seat 1
============== ============== ==============
truco          GPIO4 (7)      GPIO26 (37)
envido         GPIO17 (11)    GPIO12 (32)
real_envido    GPIO27 (13)    GPIO16 (36)
falta_envido   GPIO22 (15)    GPIO20 (38)
flor           GPIO5 (29)     GPIO21 (40)
quiero         GPIO6 (31)     GPIO23 (16)
no_quiero      GPIO13 (33)    GPIO24 (18)
mazo           GPIO19 (35)    GPIO18 (12)
common GND     GND (39)       GND (34)
============== ============== ==============

These are the defaults of ``pinmap-gpio.toml`` (:data:`DEFAULT_PINS`).

How it works
------------
:class:`Debouncer` is the decision logic for one contact, pure and clock-driven:
it is fed raw samples (:meth:`~Debouncer.update`, the firmware's exact rule) or raw
edges (:meth:`~Debouncer.edge`) with timestamps, is told when time passes
(:meth:`~Debouncer.advance`), and says when it next needs to be asked
(:meth:`~Debouncer.next_deadline`).

:class:`GpioPad` owns one real ``gpiozero.Button`` per button (``pull_up=True``,
``bounce_time=None``: the debouncing is ours). gpiozero's ``when_pressed`` and
``when_released`` callbacks time-stamp every raw edge with ``clock`` and feed it
to that button's debouncer. The decisions that need time to pass (a contact settling,
the hold time running out) are taken by one small timer thread per pad, which sleeps
on a condition until the earliest pending deadline (or indefinitely while no button
is moving) and is woken by every edge: no polling. Events are delivered, in time
order, from that thread, or from :meth:`GpioPad.poll` when a caller uses it.

Example, with gpiozero's mock pins and a hand-driven clock (on the Pi, leave out
``pin_factory`` and ``clock``; the pad's thread calls :meth:`~GpioPad.poll` by itself):

>>> from gpiozero.pins.mock import MockFactory
>>> from controller.hal.gpio_pad import DEFAULT_PINS, GpioPad
>>> factory = MockFactory()
>>> now = 10.0
>>> def clock() -> float:
...     return now
>>> got = []
>>> pad = GpioPad(0, DEFAULT_PINS[0], lambda seat, event: got.append((seat, event)),
...               pin_factory=factory, clock=clock)
>>> truco = factory.pin(4)          # GPIO4: seat 0's truco button
>>> truco.drive_low()               # pressed: the contact pulls the pin to GND
>>> now = 10.2; truco.drive_high()  # let go 200 ms later
>>> now = 10.25; pad.poll()         # 50 ms later: the release has settled
>>> got
[(0, ButtonPressed(name='truco'))]
>>> pad.close()

The same with the real clock: keeping ``mazo`` down for a second reports one hold.

>>> import time
>>> got.clear()
>>> with GpioPad(0, DEFAULT_PINS[0], lambda seat, event: got.append((seat, event)),
...              pin_factory=factory) as pad:
...     factory.pin(19).drive_low(); time.sleep(1.0); factory.pin(19).drive_high()
>>> got
[(0, ButtonHeld(name='mazo'))]
>>> factory.reset()
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Final, Literal

from gpiozero import Button, Factory

from .callbacks import deliver
from .events import ButtonHeld, ButtonPressed, ButtonStuck
from .frames import BUTTONS

__all__ = [
    "BUTTONS",
    "DEBOUNCE_S",
    "DEFAULT_PINS",
    "FREED",
    "HOLD",
    "HOLD_S",
    "PRESS",
    "STUCK",
    "STUCK_S",
    "ButtonHeld",
    "ButtonPressed",
    "ButtonStuck",
    "Debouncer",
    "GpioPad",
    "PadEvent",
    "PadEventCallback",
]

log = logging.getLogger(__name__)

DEBOUNCE_S: Final = 0.020
HOLD_S: Final = 0.800
STUCK_S: Final = 10.0  # firmware/seatnode/debounce.py's STUCK_MS

PRESS: Final = "PRESS"
HOLD: Final = "HOLD"
STUCK: Final = "STUCK"
FREED: Final = "FREED"
Decision = Literal["PRESS", "HOLD", "STUCK", "FREED"]

PadEvent = ButtonPressed | ButtonHeld | ButtonStuck
PadEventCallback = Callable[[int, PadEvent], None]

# hardware/pinmap-gpio.toml's [[gpio.seat]] buttons (BCM numbers).
DEFAULT_PINS: Final[Mapping[int, Mapping[str, int]]] = {
    0: {
        "truco": 4,
        "envido": 17,
        "real_envido": 27,
        "falta_envido": 22,
        "flor": 5,
        "quiero": 6,
        "no_quiero": 13,
        "mazo": 19,
    },
    1: {
        "truco": 26,
        "envido": 12,
        "real_envido": 16,
        "falta_envido": 20,
        "flor": 21,
        "quiero": 23,
        "no_quiero": 24,
        "mazo": 18,
    },
}


class Debouncer:
    """Debounce and long press for one contact, driven by the caller's clock.

    Times are plain numbers in any one unit (seconds for :class:`GpioPad`,
    milliseconds to compare with the firmware), shared by ``debounce``, ``hold``,
    ``stuck`` (a press that long is a stuck button: ``STUCK``, then ``FREED`` at its
    release; None: never) and every timestamp. Time never runs backwards here: an
    earlier timestamp than one already seen counts as that one.

    * :meth:`update` takes one raw *sample* and applies the seat node firmware's rule
      exactly: a changed value is taken to have changed at that sample.
    * :meth:`edge` takes a raw *edge*: the contact changed at ``now`` and had its
      previous value until then, so the decisions due before ``now`` are taken first,
      at their own time. Fed every edge, this agrees with the firmware sampling
      continuously.
    * :meth:`advance` lets time pass to ``now`` with the contact unchanged.
    * :meth:`next_deadline` is the earliest time at which :meth:`advance` could decide
      something (None: nothing will happen until the next edge).
    """

    __slots__ = (
        "_down_since",
        "_now",
        "_raw",
        "_raw_since",
        "debounce",
        "held",
        "hold",
        "pressed",
        "stuck",
        "stuck_after",
    )

    def __init__(
        self, debounce: float = DEBOUNCE_S, hold: float = HOLD_S, stuck: float | None = None
    ) -> None:
        if not debounce >= 0:
            raise ValueError(f"debounce must be >= 0, not {debounce!r}")
        if not hold >= 0:
            raise ValueError(f"hold must be >= 0, not {hold!r}")
        if stuck is not None and not stuck > hold:  # the firmware's HOLD comes first
            raise ValueError(f"stuck must be > hold, not {stuck!r}")
        self.debounce = debounce
        self.hold = hold
        self.stuck_after = stuck  # a press this long is a stuck button (STUCK; None: never)
        self.pressed = False  # the debounced state
        self.held = False  # HOLD reported for the current press
        self.stuck = False  # STUCK reported for the current press (FREED at its release)
        self._raw: bool | None = None  # last raw value seen (None: none yet)
        self._raw_since: float = 0  # when the raw value last changed
        self._down_since: float = 0  # when the current press closed for good
        self._now: float | None = None  # the latest time seen

    @property
    def raw(self) -> bool | None:
        """The last raw contact state seen (True = closed), None before the first."""
        return self._raw

    def _clamp(self, now: float) -> float:
        if self._now is not None and now < self._now:
            return self._now
        self._now = now
        return now

    def update(self, raw: bool, now: float) -> Decision | None:
        """Take one raw sample (True = contact closed); return PRESS, HOLD, STUCK,
        FREED or None."""
        now = self._clamp(now)
        raw = bool(raw)
        if self._raw is None or raw != self._raw:
            self._raw = raw
            self._raw_since = now
        if raw != self.pressed and now >= self._raw_since + self.debounce:
            self.pressed = raw
            if raw:
                self._down_since = self._raw_since
                self.held = False
            elif self.stuck:
                self.stuck = False
                return FREED
            elif not self.held:
                return PRESS
        if self.pressed and not self.held and now >= self._down_since + self.hold:
            self.held = True
            return HOLD
        if (
            self.stuck_after is not None
            and self.held
            and not self.stuck
            and self.pressed
            and now >= self._down_since + self.stuck_after
        ):
            self.stuck = True
            return STUCK
        return None

    def next_deadline(self) -> float | None:
        """When the contact settles, the hold time or the stuck time runs out,
        whichever is first."""
        if self._raw is None:
            return None
        due: float | None = None
        if self._raw != self.pressed:
            due = self._raw_since + self.debounce
        if self.pressed and not self.held:
            hold_due = self._down_since + self.hold
            if due is None or hold_due < due:
                due = hold_due
        elif self.pressed and not self.stuck and self.stuck_after is not None:
            stuck_due = self._down_since + self.stuck_after
            if due is None or stuck_due < due:
                due = stuck_due
        return due

    def advance(self, now: float) -> list[tuple[float, Decision]]:
        """Let time pass up to ``now`` included; return the (time due, decision) pairs."""
        return self._run_to(now, inclusive=True)

    def edge(self, raw: bool, now: float) -> list[tuple[float, Decision]]:
        """The raw contact became ``raw`` at ``now``; return the (time due, decision) pairs.

        A first call (no value seen yet) is the initial state, as a first sample.
        """
        if self._now is not None and now < self._now:
            now = self._now
        decisions = self._run_to(now, inclusive=False)
        decision = self.update(raw, now)
        if decision is not None:
            decisions.append((now, decision))
        return decisions

    def _run_to(self, now: float, *, inclusive: bool) -> list[tuple[float, Decision]]:
        decisions: list[tuple[float, Decision]] = []
        raw = self._raw
        # Every step settles the contact or ends the hold or the stuck time; without an
        # edge there are at most three (settle a press, its hold, its stuck), so this ends.
        for _ in range(4):
            due = self.next_deadline()
            if raw is None or due is None or due > now or (due == now and not inclusive):
                break
            decision = self.update(raw, due)
            if decision is not None:
                decisions.append((due, decision))
        self._clamp(now)
        return decisions


def _check_pins(pins: Mapping[str, int]) -> dict[str, int]:
    """The pin map in BUTTONS order; ValueError naming the key for anything wrong."""
    by_pin: dict[int, str] = {}
    for name, pin in pins.items():
        if name not in BUTTONS:
            raise ValueError(f"unknown button {name!r} (the buttons are {', '.join(BUTTONS)})")
        if type(pin) is not int or pin < 0:
            raise ValueError(f"button {name!r}: pin must be a BCM GPIO number, not {pin!r}")
        if pin in by_pin:
            raise ValueError(f"buttons {by_pin[pin]!r} and {name!r} are both on GPIO{pin}")
        by_pin[pin] = name
    missing = [name for name in BUTTONS if name not in pins]
    if missing:
        raise ValueError(f"no pin for button(s) {', '.join(map(repr, missing))}")
    return {name: pins[name] for name in BUTTONS}


class GpioPad:
    """One seat's eight buttons on the Pi's GPIO, reporting like a seat node.

    ``pins`` maps each of the eight button names (``frames.BUTTONS``) to its BCM
    GPIO number; all eight are needed, each on its own pin (ValueError naming the
    key otherwise). ``on_event(seat, event)`` receives a ``ButtonPressed(name)``,
    ``ButtonHeld(name)`` or ``ButtonStuck(name, stuck)``, the same events a seat
    node's ``SeatLink`` delivers (``stuck_s``: the node's stuck time).

    ``pin_factory`` is gpiozero's: None means gpiozero's default (the
    ``GPIOZERO_PIN_FACTORY`` environment variable, else lgpio on a Pi 5), as for
    every gpiozero device. ``clock`` gives the time in seconds (``time.monotonic``);
    a test may drive it by hand and call :meth:`poll` after moving it.

    A button already down when the pad is made counts as pressed from then on, as
    on a seat node that starts with a button down.

    ``on_event`` runs on the pad's own thread (or in :meth:`poll`'s caller), never on
    gpiozero's callback thread and never twice at once; it should return quickly.
    An exception it raises is logged (the first with its traceback), counted in
    :attr:`callback_errors`, and does not stop the pad. It may call :meth:`close`.

    The pad starts at once. :meth:`close` (or leaving a ``with`` block) stops the
    thread and releases the pins; no ``on_event`` call happens after it returns.
    """

    def __init__(
        self,
        seat: int,
        pins: Mapping[str, int],
        on_event: PadEventCallback,
        *,
        pin_factory: Factory | None = None,
        clock: Callable[[], float] = time.monotonic,
        debounce_s: float = DEBOUNCE_S,
        hold_s: float = HOLD_S,
        stuck_s: float = STUCK_S,
    ) -> None:
        if type(seat) is not int or seat < 0:
            raise ValueError(f"seat must be a seat number, not {seat!r}")
        if not 0 <= debounce_s < hold_s:
            raise ValueError(
                f"need 0 <= debounce_s < hold_s (got debounce_s={debounce_s!r}, hold_s={hold_s!r})"
            )
        if not hold_s < stuck_s:
            raise ValueError(f"need hold_s < stuck_s (got hold_s={hold_s!r}, stuck_s={stuck_s!r})")
        self.stuck_s = stuck_s
        self.seat = seat
        self.debounce_s = debounce_s
        self.hold_s = hold_s
        self.callback_errors = 0
        self._pins = _check_pins(pins)
        self._on_event = on_event
        self._clock = clock
        self._debouncers = {name: Debouncer(debounce_s, hold_s, stuck_s) for name in self._pins}
        # _cond guards the debouncers, _pending and _closed; _deliver_lock serialises
        # the calls to on_event (held while they run, so that close() can wait for them).
        self._cond = threading.Condition(threading.Lock())
        self._deliver_lock = threading.RLock()
        self._delivering: int | None = None  # ident of the thread running on_event
        self._pending: list[tuple[float, str, Decision]] = []
        self._closed = False
        self._buttons: dict[str, Button] = {}
        self._thread: threading.Thread | None = None
        try:
            for name, pin in self._pins.items():
                # hold_time=0: gpiozero's own hold machinery is unused, and its thread
                # would otherwise sit out a 1 s hold_time before close() can stop it.
                self._buttons[name] = Button(
                    pin, pull_up=True, bounce_time=None, hold_time=0, pin_factory=pin_factory
                )
            with self._cond:
                now = self._clock()
                for name, button in self._buttons.items():
                    button.when_pressed = partial(self._on_edge, name, True)
                    button.when_released = partial(self._on_edge, name, False)
                    self._debouncers[name].edge(bool(button.is_pressed), now)
        except BaseException:
            self._close_buttons()
            raise
        self._thread = threading.Thread(target=self._run, name=f"gpio-pad-{seat}", daemon=True)
        self._thread.start()

    # -- public API --------------------------------------------------------------------
    @property
    def pins(self) -> dict[str, int]:
        """Button name -> BCM GPIO number, in ``BUTTONS`` order."""
        return dict(self._pins)

    @property
    def pressed(self) -> frozenset[str]:
        """The buttons down now (debounced)."""
        with self._cond:
            return frozenset(name for name, deb in self._debouncers.items() if deb.pressed)

    @property
    def closed(self) -> bool:
        return self._closed

    def poll(self) -> None:
        """Take every decision due by ``clock()`` now and deliver the events.

        The pad's thread does this on time by itself; call it when ``clock`` is
        driven by hand (tests, simulations). When it returns, every event due by then
        has been delivered, by this call or by the pad's thread.
        """
        self._flush()

    def close(self, timeout: float = 2.0) -> None:
        """Stop the thread and release the pins. Idempotent; may be called from on_event."""
        with self._cond:
            self._closed = True
            self._pending.clear()
            self._cond.notify_all()
        thread = self._thread
        if self._delivering != threading.get_ident():
            # Wait for a running on_event to return: none starts after this.
            with self._deliver_lock:
                pass
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout)
        # else: inside on_event; the thread stops once that returns.
        self._close_buttons()

    def __enter__(self) -> GpioPad:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<GpioPad seat {self.seat} {state} {self._pins}>"

    # -- internals ---------------------------------------------------------------------
    def _close_buttons(self) -> None:
        with self._cond:
            buttons = list(self._buttons.values())
            self._buttons.clear()
        # Each Button has a gpiozero HoldThread (unused here) that looks for its stop
        # flag every 0.1 s, and Button.close() waits for it: raise the flag and wake
        # the thread, so that close() does not take 0.1 s per button.
        for button in buttons:
            hold_thread = getattr(button, "_hold_thread", None)
            stopping = getattr(hold_thread, "stopping", None)
            holding = getattr(hold_thread, "holding", None)
            if isinstance(stopping, threading.Event) and isinstance(holding, threading.Event):
                stopping.set()
                holding.set()
        for button in buttons:
            try:
                button.close()  # drops the when_pressed/when_released callbacks too
            except Exception as error:
                log.debug("seat %d: closing %r failed: %s", self.seat, button, error)

    def _on_edge(self, name: str, closed: bool) -> None:
        """gpiozero's callback (its thread): the raw contact of ``name`` changed."""
        now = self._clock()  # before waiting for the lock, to time the edge well
        with self._cond:
            if self._closed:
                return
            # Decisions due before the edge first (the timer may be late), for all
            # the buttons in time order; then the edge itself.
            self._advance(now, inclusive=False)
            for due, decision in self._debouncers[name].edge(closed, now):
                self._pending.append((due, name, decision))
            self._cond.notify()  # new deadline, or events to deliver

    def _advance(self, now: float, *, inclusive: bool) -> None:
        """Take every decision due by ``now``, all buttons merged in time order."""
        while True:
            first: tuple[float, str] | None = None
            for name, deb in self._debouncers.items():
                due = deb.next_deadline()
                if due is not None and (first is None or due < first[0]):
                    first = (due, name)
            if first is None:
                return
            due, name = first
            if due > now or (due == now and not inclusive):
                return
            for at, decision in self._debouncers[name].advance(due):
                self._pending.append((at, name, decision))

    def _next_deadline(self) -> float | None:
        deadlines = [deb.next_deadline() for deb in self._debouncers.values()]
        return min((d for d in deadlines if d is not None), default=None)

    def _flush(self) -> None:
        """Take the decisions due now and deliver all pending events, in order."""
        with self._deliver_lock:
            with self._cond:
                if self._closed:
                    return
                self._advance(self._clock(), inclusive=True)
                batch, self._pending = self._pending, []
            outer, self._delivering = self._delivering, threading.get_ident()
            try:
                for due, name, decision in batch:
                    if self._closed:
                        return
                    self._deliver(due, name, decision)
            finally:
                self._delivering = outer

    def _deliver(self, due: float, name: str, decision: Decision) -> None:
        event: PadEvent
        if decision == PRESS:
            event = ButtonPressed(name)
        elif decision == HOLD:
            event = ButtonHeld(name)
        else:  # the node's STUCK and FREED (the table's fault watch says them)
            event = ButtonStuck(name, decision == STUCK)
        if log.isEnabledFor(logging.DEBUG):
            late_ms = (self._clock() - due) * 1000
            log.debug("seat %d: %r (%.1f ms after due)", self.seat, event, late_ms)
        self.callback_errors = deliver(log, self.seat, self._on_event, event, self.callback_errors)

    def _run(self) -> None:
        """The timer thread: deliver events, sleep until the next deadline or edge."""
        try:
            while True:
                self._flush()
                with self._cond:
                    if self._closed:
                        return
                    if self._pending:
                        continue
                    deadline = self._next_deadline()
                    if deadline is None:
                        self._cond.wait()
                    else:
                        delay = deadline - self._clock()
                        if delay > 0:
                            self._cond.wait(delay)
        except Exception:  # a bug here must not pass silently
            log.exception("asiento %d: falló el hilo de la botonera GPIO", self.seat)
