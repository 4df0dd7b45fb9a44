"""The seat bus: seat links read by the thread that waits in it (the table service's
loop), their timers run by its waits, and other threads' posts waking it at once."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.hal import seatbus
from controller.hal.events import (
    ButtonPressed,
    Hello,
    LinkEvent,
    NodeConnected,
    NodeDisconnected,
)
from controller.hal.mock import MockNode
from controller.hal.seatbus import SeatBus
from controller.hal.seatlink import SeatLink
from controller.table.inbox import Inbox

from .simnode import SimNode

SERIAL = "e6614103e7ab1234"
FAST = {"heartbeat_timeout": 0.6, "hello_interval": 0.2, "backoff_initial": 0.05,
        "backoff_max": 0.2, "read_timeout": 0.02}  # fmt: skip


class Heard:
    """on_event's calls, with the thread each came on."""

    def __init__(self) -> None:
        self.events: list[LinkEvent] = []
        self.threads: set[int] = set()

    def __call__(self, seat: int, event: LinkEvent) -> None:
        self.events.append(event)
        self.threads.add(threading.get_ident())

    def of(self, kind: type) -> list[LinkEvent]:
        return [e for e in self.events if isinstance(e, kind)]


def wait_in(bus: SeatBus, done: Callable[[], bool], timeout: float = 120.0) -> None:
    """This thread waits in the bus (as the service's loop does) until ``done``."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "timed out"
        bus.wait(0.05)


def link_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(("seatlink", "seatbus"))]


@contextlib.contextmanager
def a_node_and_its_link() -> Iterator[tuple[MockNode, Heard, SeatLink]]:
    """A mock node on its pty and a link to it, not started; both closed at the end."""
    node = MockNode(0, heartbeat_s=0.1)
    node.start()
    heard = Heard()
    link = SeatLink(0, node.path, heard, **FAST)  # type: ignore[arg-type]
    try:
        yield node, heard, link
    finally:
        link.close()
        node.close()


@pytest.fixture(params=["epoll", "selectors"])
def bus(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[SeatBus]:
    """A bus waiting in ``epoll`` (Linux, the Pi) and one in ``selectors``' default (a
    developer's Mac)."""
    if request.param == "selectors":
        monkeypatch.setattr(seatbus, "_poller", seatbus._Selector)
    made = SeatBus()
    yield made
    made.close()


@pytest.mark.parametrize("poller", [seatbus._Epoll, seatbus._Selector])
def test_the_pollers_read_readiness_alike(poller: Callable[[], seatbus._Epoll]) -> None:
    """What a descriptor is ready for, as the bus reads it, in ``epoll`` and in
    ``selectors``: data to read, room to write (only while asked for), a hang-up."""
    ready = poller()

    def woken(timeout: float = 0) -> list[tuple[int, str]]:
        """Who each ready descriptor wakes: its reader, its writer (if it has one)."""
        reads, writes = ready.READABLE, ready.WRITABLE
        return sorted(
            (fd, ("r" if events & reads else "") + ("w" if events & writes else ""))
            for fd, events in ready.poll(timeout)
        )

    r, w = os.pipe()
    try:
        ready.register(r, seatbus.READ)
        with pytest.raises(KeyError):
            ready.register(r, seatbus.READ)
        assert woken() == []
        os.write(w, b"x")
        assert woken() == [(r, "r")]
        ready.register(w, seatbus.READ)
        assert ready.events(w) == seatbus.READ
        assert woken() == [(r, "r")]  # the write end: no data, and no room asked for
        ready.modify(w, seatbus.READ | seatbus.WRITE)
        assert ready.events(w) == seatbus.READ | seatbus.WRITE
        assert woken() == sorted([(r, "r"), (w, "w")])
        ready.unregister(w)
        with pytest.raises(KeyError):
            ready.modify(w, seatbus.READ)
        with pytest.raises(KeyError):
            ready.unregister(w)
        os.read(r, 1)
        assert woken(0.001) == []
        os.close(w)
        w = -1
        assert [fd for fd, who in woken() if "r" in who] == [r]  # the hang-up: read (EOF)
    finally:
        ready.close()
        os.close(r)
        if w >= 0:
            os.close(w)


def test_a_nodes_frame_is_handled_on_the_waiting_thread_with_no_link_thread(
    bus: SeatBus,
) -> None:
    with a_node_and_its_link() as (node, heard, link):
        link.start(bus)
        wait_in(bus, lambda: link.connected and bool(heard.of(Hello)))
        node.press("truco")
        wait_in(bus, lambda: ButtonPressed("truco") in heard.events)
        assert heard.threads == {threading.get_ident()}
        assert link_threads() == []
    assert not link.connected
    assert heard.of(NodeDisconnected) == [NodeDisconnected(node.path, "closed")]


def test_a_silent_node_is_dropped_and_reconnected_by_the_bus(bus: SeatBus, tmp_path: Path) -> None:
    node = SimNode(tmp_path, serial=SERIAL, seat=1)
    node.plug()
    heard = Heard()
    link = SeatLink.for_serial(1, SERIAL, heard, by_id_dir=tmp_path, **FAST)
    try:
        link.start(bus)
        wait_in(bus, lambda: link.connected)
        node.silent = True
        wait_in(bus, lambda: bool(heard.of(NodeDisconnected)))
        assert heard.of(NodeDisconnected) == [NodeDisconnected(str(node.link), "silent")]
        assert not link.connected
        node.silent = False
        wait_in(bus, lambda: len(heard.of(NodeConnected)) == 2)
        assert link.connected and link_threads() == []
        assert heard.threads == {threading.get_ident()}
    finally:
        link.close()
        node.unplug()


def test_a_wait_ends_at_the_next_deadline_a_hello_repeated(bus: SeatBus) -> None:
    """A node that never answers is greeted every ``hello_interval``: the bus's wait
    ends at that deadline, not at its own timeout."""
    master, slave = os.openpty()
    os.set_blocking(master, False)
    link = SeatLink(0, os.ttyname(slave), Heard(), **FAST)  # type: ignore[arg-type]
    try:
        link.start(bus)
        bus.wait(0.0)  # opened, first HELLO
        heard = b""
        started = time.monotonic()
        while heard.count(b" HELLO ") < 3:
            bus.wait(30.0)
            assert time.monotonic() - started < 2.0
            with contextlib.suppress(BlockingIOError):
                heard += os.read(master, 1024)
        assert 0.3 <= time.monotonic() - started < 1.5  # two intervals of 0.2 s
    finally:
        link.close()
        os.close(master)
        os.close(slave)


def test_an_absent_node_is_retried_with_backoff_by_the_waits(bus: SeatBus, tmp_path: Path) -> None:
    heard = Heard()
    link = SeatLink.for_serial(0, SERIAL, heard, by_id_dir=tmp_path, **FAST)
    link.start(bus)
    node = SimNode(tmp_path, serial=SERIAL, seat=0)
    try:
        for _ in range(5):
            bus.wait(0.1)
        assert not link.connected
        node.plug()
        started = time.monotonic()
        wait_in(bus, lambda: link.connected)
        assert time.monotonic() - started < 1.0  # the backoff is at most 0.2 s
    finally:
        link.close()
        node.unplug()
    assert heard.of(NodeConnected) and link_threads() == []


def test_a_post_from_another_thread_ends_the_wait_at_once(bus: SeatBus) -> None:
    inbox = Inbox()
    bus.watch(inbox.bell(), inbox.ring_heard)
    assert not inbox.listen()  # this thread is the loop's
    timer = threading.Timer(0.05, inbox.put, (3, ButtonPressed("mazo")))
    timer.start()
    try:
        started = time.monotonic()
        bus.wait(5.0)
        assert time.monotonic() - started < 1.0
        assert inbox.get() == (3, ButtonPressed("mazo"))
    finally:
        timer.cancel()


def test_a_put_on_the_loops_own_thread_only_appends(bus: SeatBus) -> None:
    inbox = Inbox()
    bell = inbox.bell()
    rung: list[bool] = []

    def heard() -> None:
        rung.append(True)
        inbox.ring_heard()

    bus.watch(bell, heard)
    assert not inbox.listen()
    inbox.put(0, ButtonPressed("truco"))  # on the loop's thread: no byte in the bell
    bus.wait(0.0)
    assert rung == []
    other = threading.Thread(target=inbox.put, args=(1, ButtonPressed("quiero")))
    other.start()
    other.join()
    for _ in range(3):  # many puts before the loop hears: one byte
        threading.Thread(target=inbox.put, args=(1, ButtonPressed("envido"))).start()
    time.sleep(0.05)
    bus.wait(0.0)
    assert rung == [True]
    with pytest.raises(BlockingIOError):  # drained by ring_heard
        os.read(bell, 10)
    assert len(inbox) == 5


def test_closing_a_link_from_another_thread_while_the_bus_waits(bus: SeatBus) -> None:
    with a_node_and_its_link() as (node, heard, link):
        link.start(bus)
        wait_in(bus, lambda: link.connected)

        def loop() -> None:
            for _ in range(20):
                bus.wait(0.05)

        waiting = threading.Thread(target=loop)
        waiting.start()
        link.close()
        waiting.join()
        assert not link.connected and bus.members == ()
        assert heard.of(NodeDisconnected) == [NodeDisconnected(node.path, "closed")]


def test_a_link_started_alone_runs_on_a_thread_of_its_own() -> None:
    """``start()`` with no bus: today's API (enroll, the tests), a private bus's thread."""
    with a_node_and_its_link() as (_node, heard, link):
        link.start()
        deadline = time.monotonic() + 5
        while not link.connected:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert link_threads() == ["seatlink-0"]
        assert threading.get_ident() not in heard.threads
    assert link_threads() == []


class Broken:
    """A member whose timer raises every time (a bug in a link)."""

    def __init__(self) -> None:
        self.due = 0.0
        self.ticks = 0

    def tick(self, now: float) -> None:
        self.ticks += 1
        raise RuntimeError("a bug")

    def shut(self) -> None:
        pass


def test_a_member_that_raises_never_stops_the_bus(
    bus: SeatBus, caplog: pytest.LogCaptureFixture
) -> None:
    broken = Broken()
    with a_node_and_its_link() as (node, heard, link):
        bus.add(broken)
        link.start(bus)
        wait_in(bus, lambda: link.connected)
        node.press("flor")
        wait_in(bus, lambda: ButtonPressed("flor") in heard.events)
    assert broken.ticks >= 1 and bus.failures == broken.ticks
    assert broken.ticks <= 10  # not again at once: about once a second
    assert "seat bus" in caplog.text and "a bug" in caplog.text


def test_closing_the_bus_while_another_thread_waits_in_it() -> None:
    bus = SeatBus()
    errors: list[BaseException] = []

    def loop() -> None:
        try:
            for _ in range(10):
                bus.wait(0.2)
        except BaseException as error:  # what the waiting thread would die of
            errors.append(error)

    waiting = threading.Thread(target=loop)
    waiting.start()
    time.sleep(0.05)
    bus.close()
    waiting.join(5)
    assert not waiting.is_alive() and errors == []


def test_a_mock_node_nobody_reads_for_long_drops_frames_instead_of_blocking() -> None:
    """The mock table's loop reads its nodes only while it steps (a player thinking over
    ``truco-table run --mock``'s line of keys, for many minutes): a mock node then drops
    what does not fit in the pty, as USB CDC does, and never blocks the table."""
    node = MockNode(0, heartbeat_s=60.0)
    node.start()
    try:

        def heartbeats() -> None:
            for _ in range(3000):  # 25 bytes each: more than a pty holds
                node.send("HB", "1", "0", "OK")

        sender = threading.Thread(target=heartbeats)
        sender.start()
        sender.join(10)
        assert not sender.is_alive(), "the mock node blocked"
        assert node.dropped > 0
    finally:
        node.close()


def test_a_watched_port_is_watched_for_room_only_while_something_waits() -> None:
    """``want_write``: the writer is called on the waiting thread when the descriptor
    has room, each wait, until ``done_writing``; its reading goes on meanwhile."""
    bus = SeatBus()
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    try:
        with contextlib.suppress(BlockingIOError):
            while True:  # the pipe full: no room
                os.write(write_end, b"x" * 4096)
        reads: list[int] = []
        room: list[int] = []
        bus.watch(write_end, lambda: reads.append(1))
        bus.want_write(write_end, lambda: room.append(1))
        assert bus.wait(0.05) == 0 and room == []  # full: the writer is not called
        os.set_blocking(read_end, False)
        with contextlib.suppress(BlockingIOError):
            while True:  # emptied by its reader
                os.read(read_end, 65536)
        assert bus.wait(1.0) == 1 and room == [1]
        assert bus.wait(0.0) == 1 and room == [1, 1]  # room still: again
        assert reads == []  # a write end is never readable
        bus.done_writing(write_end)
        assert bus.wait(0.05) == 0 and room == [1, 1]  # no more
        bus.want_write(write_end, lambda: room.append(2))
        bus.unwatch(write_end)  # unwatched: its writer goes with it
        assert bus.wait(0.05) == 0 and room == [1, 1]
        bus.done_writing(write_end)  # and telling it so again does nothing
    finally:
        bus.close()
        os.close(read_end)
        os.close(write_end)


class Ticking:
    """A member that counts its ticks and is due again only when told."""

    def __init__(self, due: float) -> None:
        self.due = due
        self.ticks = 0

    def tick(self, now: float) -> None:
        self.ticks += 1
        self.due = float("inf")

    def shut(self) -> None:
        pass


def test_a_member_a_reader_makes_due_is_ticked_by_the_next_wait_at_once(bus: SeatBus) -> None:
    """A wake for a frame runs no member's timer when none was due before the wait; one
    that the frame's reader made due runs at the next wait, which then does not wait."""
    later = Ticking(time.monotonic() + 3600)
    bus.add(later)
    bus.wait(0)  # the add's wake heard, its first tick (due 0.0 on joining) run
    assert later.ticks == 1
    later.due = time.monotonic() + 3600
    read, write = os.pipe()
    try:

        def frame() -> None:
            os.read(read, 1)
            later.due = 0.0  # a session's timer the frame made due at once

        bus.watch(read, frame)
        os.write(write, b"x")
        assert bus.wait(30) == 1 and later.ticks == 1  # the frame's wake: no tick yet
        started = time.monotonic()
        assert bus.wait(30) == 0 and later.ticks == 2
        assert time.monotonic() - started < 20  # it did not wait out its 30 s
    finally:
        bus.unwatch(read)
        os.close(read)
        os.close(write)
