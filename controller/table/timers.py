"""The service loop's timers: one heap on one clock.

Everything the table service does at a time rather than on an event (the next deal a
while after a hand ends, the won game's result held on the seats, the disk tried again,
the watchdog's ping, a banner's end, a seat's refusal window closing, the control
folder looked at) is one entry here: ``schedule(when, callback)``. The loop waits in its
bus until the first entry is due (``next_due``) and runs what is due (``run_due``) after
each event; nothing is checked on every wake-up.

An entry scheduled with ``wake=False`` *rides*: it bounds no wait, and runs at the first
``run_due`` once it is due, on a turn the loop makes anyway (an event, a node's
heartbeat, another entry, the tick). The control folder's look is one: a timer that woke
the loop cost a wake after every event at a bar's pace, for an ``os.stat``.

An entry may have a *key*: scheduling a key again replaces its pending entry (one deal
timer, one retry timer), ``cancel(key)`` drops it, ``pending(key)`` says whether it is
there. Entries without a key are never replaced. A cancelled or replaced entry stays in
the heap until it comes to the top, then is skipped (no search, no re-heapify).

The clock is injected (``time.monotonic`` in the service); setting ``clock`` to another
one (tests do) keeps every pending entry's delay, measured on the old clock.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
from collections import deque
from collections.abc import Callable, Hashable

__all__ = ["CallQueue", "Timers"]

log = logging.getLogger(__name__)

_NEVER = float("inf")


class _Entry:
    __slots__ = ("callback", "key", "live", "when")

    def __init__(self, when: float, callback: Callable[[], None], key: Hashable | None) -> None:
        self.when, self.callback, self.key, self.live = when, callback, key, True


class Timers:
    """A heap of ``(when, order, entry)`` on ``clock`` (see the module docstring)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._heap: list[tuple[float, int, _Entry]] = []
        self._riders: list[tuple[float, int, _Entry]] = []  # ``wake=False``: bound no wait
        self._keyed: dict[Hashable, _Entry] = {}
        self._order = itertools.count()  # equal times run in the order scheduled
        # no entry of either heap, live or not, is due before this (``run_due``'s look
        # when nothing is due: one reading of the clock); an entry cancelled or run may
        # leave it earlier than the first live one, never later
        self._first = _NEVER

    @property
    def clock(self) -> Callable[[], float]:
        return self._clock

    @clock.setter
    def clock(self, clock: Callable[[], float]) -> None:
        shift = clock() - self._clock()
        self._clock = clock
        self._heap = [(when + shift, n, e) for when, n, e in self._heap]
        self._riders = [(when + shift, n, e) for when, n, e in self._riders]
        for _, _, entry in (*self._heap, *self._riders):
            entry.when += shift
        heapq.heapify(self._heap)
        heapq.heapify(self._riders)
        self._first = self._earliest()

    def schedule(
        self,
        when: float,
        callback: Callable[[], None],
        key: Hashable | None = None,
        *,
        wake: bool = True,
    ) -> None:
        """Run ``callback`` once ``clock()`` reaches ``when`` (at once if it has);
        ``key``: replaces the pending entry of that key, if any; ``wake`` False: the
        entry rides (it bounds no wait: it runs on the first turn after ``when``)."""
        entry = _Entry(when, callback, key)
        if when < self._first:
            self._first = when
        if key is not None:
            old = self._keyed.get(key)
            if old is not None:
                old.live = False
            self._keyed[key] = entry
        if wake:
            heapq.heappush(self._heap, (when, next(self._order), entry))
            return
        riders = self._riders
        while riders and not riders[0][2].live:  # (the waking heap's are dropped by waits)
            heapq.heappop(riders)
        heapq.heappush(riders, (when, next(self._order), entry))

    def after(
        self,
        seconds: float,
        callback: Callable[[], None],
        key: Hashable | None = None,
        *,
        wake: bool = True,
    ) -> None:
        self.schedule(self._clock() + seconds, callback, key, wake=wake)

    def cancel(self, key: Hashable) -> None:
        entry = self._keyed.pop(key, None)
        if entry is not None:
            entry.live = False

    def pending(self, key: Hashable) -> bool:
        return key in self._keyed

    def when(self, key: Hashable) -> float | None:
        entry = self._keyed.get(key)
        return None if entry is None else entry.when

    def next_due(self) -> float | None:
        """When the first live entry that wakes the loop is due; None if there is none
        (the riders bound no wait)."""
        heap = self._heap
        while heap and not heap[0][2].live:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def timeout(self, longest: float) -> float:
        """How long the loop may wait: ``longest``, less when the first live entry that
        wakes the loop is due sooner, 0 when one is due now (``next_due`` and one reading
        of the clock)."""
        heap = self._heap
        while heap and not heap[0][2].live:
            heapq.heappop(heap)
        if not heap:
            return longest
        left = heap[0][0] - self._clock()
        if left >= longest:
            return longest
        return left if left > 0.0 else 0.0

    def quiet(self) -> bool:
        """Whether nothing can be due now: ``run_due`` would run nothing (its own first
        look, one reading of the clock; False now and then when an entry was cancelled,
        never True when one is due)."""
        return self._clock() < self._first

    def due(self) -> bool:
        """Whether an entry is due now, a rider too (``run_due`` would run it): a look at
        each heap's top and the clock."""
        now = self._clock()
        return any(heap and heap[0][0] <= now for heap in (self._heap, self._riders))

    def run_due(self) -> int:
        """Run every entry due now, in time order (one a callback schedules for later
        than this pass's reading of the clock waits for the next pass); returns how
        many ran. A callback that raises is logged: a
        timer never stops the table."""
        now = self._clock()
        if now < self._first:  # most turns: nothing is due
            return 0
        heap, ran, riders = self._heap, 0, self._riders
        while riders and riders[0][0] <= now:  # due: run in time order with the rest
            heapq.heappush(heap, heapq.heappop(riders))
        while heap and heap[0][0] <= now:
            _, _, entry = heapq.heappop(heap)
            if not entry.live:
                continue
            entry.live = False
            if entry.key is not None and self._keyed.get(entry.key) is entry:
                del self._keyed[entry.key]
            ran += 1
            try:
                entry.callback()
            except Exception:
                log.exception("falló un temporizador: %r", entry.callback)
        self._first = self._earliest()
        return ran

    def _earliest(self) -> float:
        """When the first entry of either heap (live or not) is due."""
        heap, riders = self._heap, self._riders
        first = heap[0][0] if heap else _NEVER
        if riders and riders[0][0] < first:
            first = riders[0][0]
        return first

    def __len__(self) -> int:
        return sum(1 for _, _, e in (*self._heap, *self._riders) if e.live)


class CallQueue:
    """Calls handed to the loop from other threads (``TableService.call_soon``: the
    tournament link's network thread), run on the loop's thread at its next turn.

    ``waiting`` is the calls not run yet: the loop reads it without the lock (a call added
    meanwhile wakes it) and with no method call (the loop looks at every turn)."""

    def __init__(self) -> None:
        self.waiting: deque[Callable[[], None]] = deque()
        self._lock = threading.Lock()

    def __bool__(self) -> bool:  # read without the lock: a call added now wakes the loop
        return bool(self.waiting)

    def add(self, call: Callable[[], None]) -> None:
        with self._lock:
            self.waiting.append(call)

    def run(self) -> None:
        with self._lock:
            calls, self.waiting = self.waiting, deque()
        for call in calls:
            try:
                call()
            except Exception:  # a failing call must never stop the table
                log.exception("call_soon: falló %r", call)
