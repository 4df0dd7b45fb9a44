"""The service's inbox: events in order per seat, seats in turn, a wake that ends a wait
at once, and a loop that sleeps until a hardware thread posts."""

from __future__ import annotations

import threading
import time

from controller.hal.events import ButtonPressed, Heartbeat, LinkEvent, TagLeft
from controller.hal.seatbus import SeatBus
from controller.table.inbox import Inbox


def wait_get(inbox: Inbox, timeout: float) -> tuple[int, LinkEvent] | None:
    """The next event, waiting up to ``timeout`` s for one (or a wake) as the service's
    loop does: in a ``SeatBus`` that hears the inbox's bell (``TableService.step``)."""
    bus = SeatBus()
    bus.watch(inbox.bell(), inbox.ring_heard)
    try:
        if not inbox.listen():
            bus.wait(timeout)
        return inbox.get()
    finally:
        bus.close()


def test_seats_take_turns_and_each_keeps_its_order() -> None:
    inbox = Inbox()
    for name in ("truco", "envido", "quiero"):
        inbox.put(0, ButtonPressed(name))
    inbox.put(1, ButtonPressed("mazo"))
    got = [inbox.get() for _ in range(4)]
    assert got == [
        (0, ButtonPressed("truco")),
        (1, ButtonPressed("mazo")),
        (0, ButtonPressed("envido")),
        (0, ButtonPressed("quiero")),
    ]
    assert inbox.get() is None and len(inbox) == 0


def test_a_full_seat_drops_and_counts_without_ringing_for_the_dropped() -> None:
    inbox = Inbox(per_seat=2)
    assert [inbox.put(3, ButtonPressed("truco")) for _ in range(4)] == [True, True, False, False]
    assert inbox.dropped[3] == 2
    assert inbox.put(3, TagLeft(b"\x04" * 7))  # a card leaving is kept longer
    assert [inbox.get() for _ in range(3)] == [
        (3, ButtonPressed("truco")),
        (3, ButtonPressed("truco")),
        (3, TagLeft(b"\x04" * 7)),
    ]
    assert wait_get(inbox, 0.05) is None  # no token left for what was dropped


def test_a_wait_ends_when_another_thread_posts() -> None:
    inbox = Inbox()
    timer = threading.Timer(0.05, inbox.put, (2, Heartbeat(1, 0, True)))
    timer.start()
    try:
        start = time.monotonic()
        assert wait_get(inbox, 5.0) == (2, Heartbeat(1, 0, True))
        assert time.monotonic() - start < 2.5
    finally:
        timer.cancel()


def test_a_wake_ends_one_wait_and_wakes_do_not_pile_up() -> None:
    inbox = Inbox()
    timer = threading.Timer(0.05, inbox.wake)
    timer.start()
    try:
        start = time.monotonic()
        assert wait_get(inbox, 5.0) is None
        assert time.monotonic() - start < 2.5
    finally:
        timer.cancel()
    for _ in range(3):  # the loop's call_soon from several threads before it looks
        inbox.wake()
    assert wait_get(inbox, 1.0) is None  # one wake for all three
    inbox.put(0, ButtonPressed("quiero"))
    assert wait_get(inbox, 1.0) == (0, ButtonPressed("quiero"))  # not a stale wake


def test_events_queued_before_a_wake_are_not_lost() -> None:
    inbox = Inbox()
    inbox.put(0, ButtonPressed("truco"))
    inbox.wake()
    inbox.put(1, ButtonPressed("quiero"))
    got = [inbox.get() for _ in range(4)]
    assert [g for g in got if g is not None] == [
        (0, ButtonPressed("truco")),
        (1, ButtonPressed("quiero")),
    ]
    assert got.count(None) == 2  # the wake, and nothing more
