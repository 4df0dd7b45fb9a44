"""The service's inbox: events in order per seat, seats in turn, a wake that ends a wait
at once, and a loop that sleeps until a hardware thread posts."""

from __future__ import annotations

import threading
import time

from hypothesis import given, settings
from hypothesis import strategies as st

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


class ModelInbox:
    """The inbox as its docstring says it queues: a queue a seat, seats in turn, a seat
    that is full drops (what the loop's own puts must keep, with no lock taken)."""

    def __init__(self, per_seat: int) -> None:
        self.per_seat = per_seat
        self.queues: dict[int, list[LinkEvent]] = {}
        self.order: list[int] = []
        self.dropped: dict[int, int] = {}

    def put(self, seat: int, event: LinkEvent) -> bool:
        q = self.queues.setdefault(seat, [])
        droppable = isinstance(event, ButtonPressed)
        if len(q) >= (self.per_seat if droppable else 4 * self.per_seat):
            self.dropped[seat] = self.dropped.get(seat, 0) + 1
            return False
        if not q:
            self.order.append(seat)
        q.append(event)
        return True

    def get(self) -> tuple[int, LinkEvent] | None:
        if not self.order:
            return None
        seat = self.order.pop(0)
        q = self.queues[seat]
        event = q.pop(0)
        if q:
            self.order.append(seat)
        return seat, event


def put_from_another_thread(inbox: Inbox, seat: int, event: LinkEvent) -> bool:
    taken: list[bool] = []
    thread = threading.Thread(target=lambda: taken.append(inbox.put(seat, event)))
    thread.start()
    thread.join()
    return taken[0]


#: who puts or gets, for which seat, a press (else a card lifted): what the loop's
#: thread, another thread and the loop's gets do, in any order
_STEPS = st.lists(
    st.tuples(st.sampled_from(["loop", "other", "get"]), st.integers(0, 2), st.booleans()),
    max_size=40,
)


@settings(max_examples=80, deadline=None)
@given(per_seat=st.integers(1, 3), steps=_STEPS)
def test_the_loops_own_puts_queue_as_another_threads_do(
    per_seat: int, steps: list[tuple[str, int, bool]]
) -> None:
    """The loop's thread puts the seat links' events with no lock (its next event, when
    nothing is queued): what comes out, in which order, and what is dropped, is what
    queued events give, whichever thread put each."""
    inbox, model = Inbox(per_seat=per_seat), ModelInbox(per_seat)
    assert not inbox.listen()  # this thread is the loop's
    for n, (who, seat, press) in enumerate(steps):
        event: LinkEvent = ButtonPressed(f"b{n}") if press else TagLeft(bytes([n]) * 4)
        if who == "get":
            assert inbox.get() == model.get()
        elif who == "loop":
            assert inbox.put(seat, event) == model.put(seat, event)
        else:
            assert put_from_another_thread(inbox, seat, event) == model.put(seat, event)
        assert len(inbox) == sum(len(q) for q in model.queues.values())
    assert inbox.listen() == bool(model.order)
    while (item := model.get()) is not None:
        assert inbox.get() == item
    assert inbox.get() is None and len(inbox) == 0
    assert dict(inbox.dropped) == model.dropped


def test_the_loops_own_put_rings_no_bell_and_a_wait_then_ends_at_once() -> None:
    inbox = Inbox()
    bus = SeatBus()
    bus.watch(inbox.bell(), inbox.ring_heard)
    try:
        assert not inbox.listen()
        inbox.put(4, TagLeft(b"\x01" * 4))  # as a seat link does, in the loop's wait
        assert bus.wait(0) == 0  # no byte in the bell
        assert inbox.listen()  # the loop does not wait: its event is there
        assert inbox.get() == (4, TagLeft(b"\x01" * 4)) and inbox.get() is None
    finally:
        bus.close()


@settings(max_examples=80, deadline=None)
@given(per_seat=st.integers(1, 3), steps=_STEPS)
def test_an_event_handled_at_once_is_never_handled_before_one_that_came_earlier(
    per_seat: int, steps: list[tuple[str, int, bool]]
) -> None:
    """``at_once`` (the loop's: a card lifted handled in the wait that read it) is
    offered only what the loop's own thread puts with nothing queued; what it takes is
    not queued, and the rest comes out as queued events do."""
    handled: list[tuple[int, LinkEvent]] = []
    model = ModelInbox(per_seat)
    loop = threading.get_ident()

    def at_once(seat: int, event: LinkEvent) -> bool:
        assert threading.get_ident() == loop
        assert not model.order and len(inbox) == 0  # nothing came before it, unhandled
        if type(event) is not TagLeft:
            return False
        handled.append((seat, event))
        return True

    inbox = Inbox(per_seat=per_seat, at_once=at_once)
    assert not inbox.listen()  # this thread is the loop's
    for n, (who, seat, press) in enumerate(steps):
        event: LinkEvent = ButtonPressed(f"b{n}") if press else TagLeft(bytes([n]) * 4)
        if who == "get":
            assert inbox.get() == model.get()
        elif who == "other":
            assert put_from_another_thread(inbox, seat, event) == model.put(seat, event)
        else:
            now = not model.order and not press  # nothing queued, a card lifted
            took = inbox.put(seat, event)
            if now:
                assert took and handled[-1] == (seat, event)
            else:
                assert took == model.put(seat, event)  # queued, or dropped as queued
        assert len(inbox) == sum(len(q) for q in model.queues.values())
    while (item := model.get()) is not None:
        assert inbox.get() == item
    assert inbox.get() is None and len(inbox) == 0
