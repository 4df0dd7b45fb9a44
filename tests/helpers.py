"""What many test files share: waiting for an event, a clock moved by hand, cards from
text, an HTTP answer whatever its status, a server shut at the end, collecting a seat
link's events.

Fixtures live in the ``conftest.py`` of the folder whose tests use them; plain helpers
(functions and classes a test calls) live here. No test may fail because the machine is
slow, so every wait here waits for the event itself, with a generous bound, and never
lets a fixed sleep decide whether a test passes.
"""

from __future__ import annotations

import contextlib
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from http.server import HTTPServer
from typing import TYPE_CHECKING

from controller.engine import Card

if TYPE_CHECKING:
    from controller.hal.events import LinkEvent

#: how long a test waits for something that should happen, before it says it did not
PATIENCE = 120.0


def wait_until(predicate: Callable[[], object], timeout: float = PATIENCE) -> bool:
    """Whether ``predicate()`` came true within ``timeout`` seconds (asked once more at
    the end). It is asked again after 1 ms, then ever less often, up to every 20 ms: a
    quick event is seen at once and a slow one costs the machine little."""
    deadline = time.monotonic() + timeout
    pause = 0.001
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(pause)
        pause = min(pause * 2, 0.02)
    return bool(predicate())


def cards(text: str) -> list[Card]:
    """``"7C 6C 3E"`` as cards."""
    return [Card.from_str(c) for c in text.split()]


class Clock:
    """A clock that moves only when a test moves it (``clock.now += 0.6``)."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def http_answer(request: urllib.request.Request) -> tuple[int, dict[str, str], bytes]:
    """The status, headers and body of an HTTP answer, a refusal (4xx, 5xx) included."""
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            return int(r.status), dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return int(e.code), dict(e.headers), e.read()


@contextlib.contextmanager
def serving(server: HTTPServer) -> Iterator[int]:
    """The port of ``server`` (already serving on a thread of its own: ``serve_http``,
    ``serve_league``); shut down and closed at the end."""
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


class LinkEvents:
    """A seat link's ``on_event``: collects each event (and its seat, in ``seats``) and
    lets a test wait for one."""

    def __init__(self) -> None:
        self.items: list[LinkEvent] = []
        self.seats: list[int] = []
        self._cond = threading.Condition()

    def __call__(self, seat: int, event: LinkEvent) -> None:
        with self._cond:
            self.items.append(event)
            self.seats.append(seat)
            self._cond.notify_all()

    def wait_for(
        self, predicate: Callable[[LinkEvent], bool], timeout: float = PATIENCE, after: int = 0
    ) -> LinkEvent:
        """The first event from ``after`` on (see :meth:`mark`) that ``predicate`` takes,
        waiting for it to come; an AssertionError naming the events if none comes."""
        deadline = time.monotonic() + timeout
        with self._cond:
            seen = after
            while True:
                for event in self.items[seen:]:
                    if predicate(event):
                        return event
                seen = max(seen, len(self.items))
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out; events so far: {self.items}")
                self._cond.wait(left)

    def of(self, kind: type) -> list[LinkEvent]:
        with self._cond:
            return [e for e in self.items if isinstance(e, kind)]

    def mark(self) -> int:
        """How many events came so far: ``wait_for(..., after=mark)`` looks only later."""
        with self._cond:
            return len(self.items)
