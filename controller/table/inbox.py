"""The service's event queue: bounded per seat, read round-robin.

The seat links ``put`` their events on the service loop's own thread (they are read in
its wait, ``controller.hal.seatbus``); the GPIO pads and card readers, and the
tournament link's ``call_soon``, from threads of their own. The loop ``get``s them. A
node that floods the table (a stuck button, a broken firmware, a bad cable sending
18,000 valid frames a second) must neither grow the table's memory nor delay another
seat's genuine action:

- Each seat has its own queue of at most ``per_seat`` presses, holds and taps; past that,
  that seat's new presses, holds and taps are dropped and counted (``dropped``). Events
  that change what the table believes about the hardware (a card leaving the reader, the
  node going or coming back, its heartbeat) are kept up to ``4 * per_seat``, then
  dropped and counted too.
- ``get`` takes one event from each seat in turn, so an action waits behind at most one
  event of every other seat.

The loop waits on the inbox's *bell*, a pipe's read end (``bell()``), in the same
``select`` as the seat nodes' ports: a ``put`` or ``wake`` from another thread writes
one byte to it when the loop may be waiting (one until the loop has heard it: a flood
does not write a byte an event); a ``put`` on the loop's own thread only appends.

The commonest event is a seat node's frame read in the loop's wait, alone: the loop's
own thread puts it and gets it at once. Such a ``put``, when nothing is queued, takes
no lock: the event is held as the loop's *next* (``_next``, which only the loop's
thread touches), and ``get`` hands it out first, with no lock either unless another
thread queued events meanwhile. What the queues hold and in which order they are got
is the same as if it had been queued: it counts in its seat's queue for the flood
limit, and once it is taken its seat's next event waits its turn behind the other
seats' (as a seat's does after each event it had first in line). ``get`` is the loop's
(the thread that ``listen``s).

Such a ``put`` is first offered to ``at_once`` when the loop set one: the loop handles
there and then an event that changes no screen (a card lifted off a reader), in the
wait that read it, and it is not queued at all. Only the loop's own thread, with
nothing queued, offers it, so no event is handled before one that came earlier.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import weakref
from collections import Counter, deque
from collections.abc import Callable

from ..hal.events import ButtonHeld, ButtonPressed, LinkEvent, TagArrived

__all__ = ["Inbox"]

PER_SEAT = 64
FLOOD_PAUSE_S = 0.0002  # a thread whose seat's queue is full waits this long...
FLOOD_PAUSE_EVERY = 16  # ...every this many of its events dropped
_DROPPABLE = (ButtonPressed, ButtonHeld, TagArrived)


def _close_fds(*fds: int) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


class Inbox:
    """Per-seat bounded queues (see the module docstring). Thread-safe.

    The queues are kept under a plain lock. The thread that last asked for events
    (``listen``, ``get``) is the loop's: a ``put`` or ``wake`` from any other rings the
    bell, once until the loop drains it (``ring_heard``)."""

    def __init__(
        self, per_seat: int = PER_SEAT, at_once: Callable[[int, LinkEvent], bool] | None = None
    ) -> None:
        self.per_seat = per_seat
        self._queues: dict[int, deque[LinkEvent]] = {}
        self._order: deque[int] = deque()  # seats with events, in turn
        self._lock = threading.Lock()
        self._size = 0
        self._woken = False  # a wake is pending (wakes do not pile up)
        self._rung = False  # a byte is in the bell, not yet drained
        self._loop: int | None = None  # the loop's thread (threading.get_ident)
        # the event the loop's own thread put while nothing was queued, got first (only
        # the loop's thread reads or writes it: no lock)
        self._next: tuple[int, LinkEvent] | None = None
        self._bell_r = self._bell_w = -1  # the pipe, made when the loop first waits
        #: events dropped per seat (a flood), since the start
        self.dropped: Counter[int] = Counter()
        #: the loop's: an event its own thread puts with nothing queued is offered to it
        #: first; True: handled there and then, not queued (see the module docstring)
        self.at_once = at_once

    # -- the bell ----------------------------------------------------------------------
    def bell(self) -> int:
        """The descriptor the loop waits on (readable once a post or wake came from
        another thread); made on the first call."""
        with self._lock:
            if self._bell_r < 0:
                self._bell_r, self._bell_w = os.pipe()
                os.set_blocking(self._bell_r, False)
                os.set_blocking(self._bell_w, False)
                weakref.finalize(self, _close_fds, self._bell_r, self._bell_w)
            return self._bell_r

    def ring_heard(self) -> None:
        """The bell was readable: empty it (the loop then looks at the queues)."""
        with contextlib.suppress(OSError):
            os.read(self._bell_r, 4096)
        with self._lock:  # after the read: a put from now on rings again
            self._rung = False

    def _ring(self) -> None:
        with contextlib.suppress(OSError):  # full (it cannot be: one byte a wait) or closed
            os.write(self._bell_w, b"\x01")

    # -- in ------------------------------------------------------------------------------
    def put(self, seat: int, event: LinkEvent) -> bool:
        """Queue one event; False (and counted) when the seat's queue is full. A thread
        other than the loop's then yields the interpreter for ``FLOOD_PAUSE_S`` every
        ``FLOOD_PAUSE_EVERY`` drops (its own seat's excess is dropped anyway), so the
        loop and the other seats' threads are not kept waiting for it."""
        if (
            self._next is None
            and not self._size
            and threading.get_ident() == self._loop
            and self.per_seat > 0
        ):
            # the loop's own thread, nothing queued (a seat node's frame read in its wait):
            # handled at once if it changes no screen, else the next event, no lock taken
            # (another thread's put now queues behind it)
            at_once = self.at_once
            if at_once is None or not at_once(seat, event):
                self._next = (seat, event)
            return True
        ring = pause = False
        with self._lock:
            q = self._queues.get(seat)
            if q is None:
                q = self._queues[seat] = deque()
            limit = self.per_seat if isinstance(event, _DROPPABLE) else 4 * self.per_seat
            held = self._next  # the loop's next event counts in its seat's queue
            full = len(q) + (held is not None and held[0] == seat) >= limit
            if full:
                self.dropped[seat] += 1
                pause = self.dropped[seat] % FLOOD_PAUSE_EVERY == 0
            else:
                if not q:
                    self._order.append(seat)
                q.append(event)
                self._size += 1
                # after the event: the loop that hears the bell finds it
                if not self._rung and self._bell_w >= 0:
                    ring = self._rung = threading.get_ident() != self._loop
        if ring:
            self._ring()
        elif pause and threading.get_ident() != self._loop:
            time.sleep(FLOOD_PAUSE_S)
        return not full

    def wake(self) -> None:
        """End the loop's wait under way now (or its next one) at once, with no event:
        the loop has something else to do (the service's ``call_soon``)."""
        ring = False
        with self._lock:
            if self._woken:
                return
            self._woken = True
            if not self._rung and self._bell_w >= 0:
                ring = self._rung = threading.get_ident() != self._loop
        if ring:
            self._ring()

    # -- out -----------------------------------------------------------------------------
    def listen(self) -> bool:
        """The calling thread is the loop's from now on (its own puts only append);
        True when an event or a wake is waiting already (the loop must not wait), the
        wake then taken."""
        self._loop = threading.get_ident()
        if self._size or self._next is not None:
            return True
        if not self._woken:  # a wake from now on rings the bell: the wait hears it
            return False
        with self._lock:
            woken, self._woken = self._woken, False
            return woken

    def get(self) -> tuple[int, LinkEvent] | None:
        """The next event, one seat after another; None if none is queued (a wake then
        taken too). The loop waits for them in its ``SeatBus``, which hears the bell.
        On the loop's thread."""
        held = self._next
        if held is not None:  # put first, by the loop's own thread
            self._next = None
            if self._size:  # queued behind it meanwhile: its seat's next waits its turn
                with self._lock:
                    order, seat = self._order, held[0]
                    if seat in order and order[-1] != seat:
                        order.remove(seat)
                        order.append(seat)
            return held
        if not self._size and not self._woken:  # nothing (a put now rings or is the loop's)
            return None
        with self._lock:
            if not self._size:
                self._woken = False
                return None
            seat = self._order.popleft()
            q = self._queues[seat]
            event = q.popleft()
            self._size -= 1
            if q:
                self._order.append(seat)
            return seat, event

    def dropped_counts(self) -> dict[int, int]:
        """``dropped`` as it is now (a copy: the hardware threads go on counting)."""
        with self._lock:
            return dict(self.dropped)

    def __len__(self) -> int:
        return self._size + (self._next is not None)
