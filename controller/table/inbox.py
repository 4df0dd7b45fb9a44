"""The service's event queue: bounded per seat, read round-robin.

Hardware threads (one per seat node, the GPIO pads) ``put`` their events; the service's
loop ``get``s them. A node that floods the table (a stuck button, a broken firmware, a
bad cable sending 18,000 valid frames a second) must neither grow the table's memory nor
delay another seat's genuine action:

- Each seat has its own queue of at most ``per_seat`` presses, holds and taps; past that,
  that seat's new presses, holds and taps are dropped and counted (``dropped``). Events
  that change what the table believes about the hardware (a card leaving the reader, the
  node going or coming back, its heartbeat) are kept up to ``4 * per_seat``, then
  dropped and counted too.
- ``get`` takes one event from each seat in turn, so an action waits behind at most one
  event of every other seat.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter, deque

from ..hal.seatlink import ButtonHeld, ButtonPressed, LinkEvent, TagArrived

__all__ = ["Inbox"]

PER_SEAT = 64
FLOOD_PAUSE_S = 0.0002  # a thread whose seat's queue is full waits this long...
FLOOD_PAUSE_EVERY = 16  # ...every this many of its events dropped
_DROPPABLE = (ButtonPressed, ButtonHeld, TagArrived)
_EVENT, _WAKE = True, False  # the bell's tokens: an event queued, a wake


class Inbox:
    """Per-seat bounded queues (see the module docstring). Thread-safe.

    The queues are kept under a plain lock; the loop waits on a bell (a C
    ``SimpleQueue``) that holds one token per event queued, and one for a wake: a
    ``put`` and a ``get`` are a lock and a token each, not a ``threading.Condition``'s
    waiter lock made, waited on and released in Python on both threads."""

    def __init__(self, per_seat: int = PER_SEAT) -> None:
        self.per_seat = per_seat
        self._queues: dict[int, deque[LinkEvent]] = {}
        self._order: deque[int] = deque()  # seats with events, in turn
        self._lock = threading.Lock()
        self._bell: queue.SimpleQueue[bool] = queue.SimpleQueue()
        self._size = 0
        self._wake_rung = False  # a wake token is in the bell (wakes do not pile up)
        #: events dropped per seat (a flood), since the start
        self.dropped: Counter[int] = Counter()

    def put(self, seat: int, event: LinkEvent) -> bool:
        """Queue one event; False (and counted) when the seat's queue is full. The
        flooding thread then yields the interpreter for ``FLOOD_PAUSE_S`` every
        ``FLOOD_PAUSE_EVERY`` drops (its own seat's excess is dropped anyway), so the
        loop and the other seats' threads are not kept waiting for it."""
        with self._lock:
            q = self._queues.get(seat)
            if q is None:
                q = self._queues[seat] = deque()
            limit = self.per_seat if isinstance(event, _DROPPABLE) else 4 * self.per_seat
            full = len(q) >= limit
            if full:
                self.dropped[seat] += 1
                pause = self.dropped[seat] % FLOOD_PAUSE_EVERY == 0
            else:
                if not q:
                    self._order.append(seat)
                q.append(event)
                self._size += 1
        if not full:
            self._bell.put(_EVENT)  # after the event: a token always finds its event
        elif pause:
            time.sleep(FLOOD_PAUSE_S)
        return not full

    def wake(self) -> None:
        """End a ``get`` waiting now (or the next one) at once, with no event: the loop
        has something else to do (the service's ``call_soon``)."""
        with self._lock:
            if self._wake_rung:
                return
            self._wake_rung = True
        self._bell.put(_WAKE)

    def get(self, timeout: float = 0.0) -> tuple[int, LinkEvent] | None:
        """The next event, one seat after another; None if none came within ``timeout``
        (or ``wake`` was called)."""
        try:
            token = self._bell.get(True, timeout) if timeout > 0 else self._bell.get_nowait()
        except queue.Empty:
            return None
        with self._lock:
            if token is _WAKE:
                self._wake_rung = False
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
        return self._size
