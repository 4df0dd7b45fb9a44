"""One loop for every seat node's serial link: a selector over their ports.

A :class:`SeatBus` holds seat links (``SeatLink.start(bus)``) and whatever else a loop
waits on (``watch``: the table service's inbox bell, written by a post from another
thread). ``wait(timeout)`` is one ``epoll`` wait (``selectors``' default where there is
no ``epoll``: a developer's Mac) over every open port and those descriptors, bounded by
the links' next deadline (a HELLO to repeat, a heartbeat gone missing, a port to reopen
after its backoff, a node to bring back from its REPL); then each ready link reads and
parses what came, on the waiting thread, and each link whose deadline passed runs its
timers. The table service waits in its bus when it has nothing queued
(``TableService.step``): a node's frame is read, parsed and handled on the loop's
thread, with no thread hand-off.

A member that has more to write than a port's buffer took asks to hear of room too
(``want_write``: a seat link's outbox), until it has written it all
(``done_writing``): the loop never waits for a slow node's write.

``start()`` runs the bus on a thread of its own (a link started with no bus does so
with a private bus: ``truco-table enroll``, the tests); ``wake()`` ends a wait at once
from any thread.

Thread safety: a member's reading and timers run under the bus's lock, which ``remove``
(a link's ``close`` from another thread) takes too; the ``select`` itself runs outside
it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import selectors
import threading
import time
import weakref
from collections.abc import Callable
from typing import Final, Protocol

__all__ = ["BusMember", "SeatBus"]

log = logging.getLogger(__name__)

#: the longest a bus with nothing due sleeps in one ``select`` when told to wait for
#: ever (a ``start``ed bus): a safety net, every deadline and wake ends it sooner
IDLE_WAIT_S = 1.0
_NEVER: Final = float("inf")


class BusMember(Protocol):
    """What a bus asks of a member (``SeatLink``): when its timers are next due (a
    monotonic time; ``float("inf")`` when none is), and to run them."""

    due: float

    def tick(self, now: float) -> None:
        """Run the timers due at ``now`` (open the port, repeat a HELLO, ...) and set
        ``due`` to the next one."""
        ...

    def shut(self) -> None:
        """Close the member's port (the bus is removing it), on the bus's lock."""
        ...


READ: Final = selectors.EVENT_READ
WRITE: Final = selectors.EVENT_WRITE


class _Epoll:
    """The bus's readiness on Linux (the Pi): ``select.epoll`` itself, its events read
    as ``READ``/``WRITE`` the way ``selectors.EpollSelector`` reads them, with no key
    object made a wait (the loop waits once an event)."""

    def __init__(self) -> None:
        self._epoll = select.epoll()
        self._events: dict[int, int] = {}  # what each descriptor is watched for
        #: ``epoll.poll`` itself, and the most events one poll returns (one a descriptor):
        #: what the bus calls a wait (``poll`` in one call, no Python frame between)
        self.poll_epoll = self._epoll.poll
        self.most = 1

    @staticmethod
    def _mask(events: int) -> int:
        return (select.EPOLLIN if events & READ else 0) | (select.EPOLLOUT if events & WRITE else 0)

    def register(self, fd: int, events: int) -> None:
        if fd in self._events:
            raise KeyError(f"{fd} is already watched")
        self._epoll.register(fd, self._mask(events))
        self._events[fd] = events
        self.most = len(self._events)

    def modify(self, fd: int, events: int) -> None:
        if fd not in self._events:
            raise KeyError(f"{fd} is not watched")
        self._epoll.modify(fd, self._mask(events))
        self._events[fd] = events

    def unregister(self, fd: int) -> None:
        del self._events[fd]
        self.most = len(self._events) or 1
        self._epoll.unregister(fd)  # OSError: closed meanwhile (epoll forgot it then)

    def events(self, fd: int) -> int:
        return self._events[fd]

    #: what in a ready descriptor's events wakes its reader, its writer: an error or a
    #: hang-up wakes both (``selectors``' reading); only a descriptor watched for room
    #: has a writer
    READABLE: Final = ~select.EPOLLOUT if hasattr(select, "EPOLLOUT") else 0
    WRITABLE: Final = ~select.EPOLLIN if hasattr(select, "EPOLLIN") else 0

    def poll(self, timeout: float) -> list[tuple[int, int]]:
        """The ready descriptors and their events (``READABLE``, ``WRITABLE``), waiting
        up to ``timeout`` s (epoll counts milliseconds: ``epoll.poll`` rounds a timeout
        up to the next one itself, not to wake before it)."""
        return self._epoll.poll(timeout, self.most)

    def close(self) -> None:
        self._epoll.close()


class _Selector:
    """The bus's readiness elsewhere (a developer's Mac running the mock table):
    ``selectors``' default, with ``_Epoll``'s face."""

    def __init__(self) -> None:
        self._selector = selectors.DefaultSelector()

    def register(self, fd: int, events: int) -> None:
        self._selector.register(fd, events)

    def modify(self, fd: int, events: int) -> None:
        self._selector.modify(fd, events)

    def unregister(self, fd: int) -> None:
        self._selector.unregister(fd)

    def events(self, fd: int) -> int:
        return self._selector.get_key(fd).events

    READABLE: Final = READ
    WRITABLE: Final = WRITE

    def poll(self, timeout: float) -> list[tuple[int, int]]:
        return [(key.fd, mask) for key, mask in self._selector.select(timeout)]

    def close(self) -> None:
        self._selector.close()


def _poller() -> _Epoll | _Selector:
    return _Epoll() if hasattr(select, "epoll") else _Selector()


def _close_fds(*fds: int) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


class SeatBus:
    """Seat links and watched descriptors, waited on in one ``select`` (see the module
    docstring)."""

    def __init__(self) -> None:
        self._poller = _poller()
        self._epoll = self._poller if isinstance(self._poller, _Epoll) else None
        # what in a ready descriptor's events wakes its reader, its writer: read off the
        # instance a wait (a class's attribute read through an instance is looked up the
        # general way each time)
        self._readable: int = self._poller.READABLE
        self._writable: int = self._poller.WRITABLE
        self._readers: dict[int, Callable[[], None]] = {}  # what reads each descriptor
        self._members: tuple[BusMember, ...] = ()
        self._lock = threading.RLock()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._woken = False  # a byte is in the wake pipe (wakes do not pile up)
        self._finalizer = weakref.finalize(self, _close_fds, self._wake_r, self._wake_w)
        self._poller.register(self._wake_r, READ)
        self._readers[self._wake_r] = self._drain_wake
        # what writes to a watched descriptor when it has room (``want_write``)
        self._writers: dict[int, Callable[[], None]] = {}
        self._closed = False
        self._thread: threading.Thread | None = None
        self.failures = 0  # readers and timers that raised (logged, never fatal)

    # -- members ---------------------------------------------------------------------
    @property
    def members(self) -> tuple[BusMember, ...]:
        return self._members

    def add(self, member: BusMember) -> None:
        """Take ``member``; its timers run at the next wait (a link opens its port)."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the seat bus is closed")
            member.due = 0.0
            self._members = (*self._members, member)
        self.wake()  # a thread waiting now takes the new member at once

    def remove(self, member: BusMember) -> None:
        """Let ``member`` go, its port closed (``member.shut``), from any thread."""
        with self._lock:
            if member in self._members:
                self._members = tuple(m for m in self._members if m is not member)
            member.shut()

    def watch(self, fd: int, on_ready: Callable[[], None]) -> None:
        """Wait on ``fd`` too: ``on_ready()`` is called on the waiting thread when it is
        readable (a port's data, a bell rung)."""
        with self._lock:
            self._poller.register(fd, READ)
            self._readers[fd] = on_ready

    def unwatch(self, fd: int) -> None:
        self._writers.pop(fd, None)
        with self._lock:
            self._readers.pop(fd, None)
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._poller.unregister(fd)

    def want_write(self, fd: int, on_writable: Callable[[], None]) -> None:
        """Watch the ``watch``ed ``fd`` for room to write too: ``on_writable()`` is
        called on the waiting thread each time the port takes more, until
        ``done_writing``. From any thread, with no lock of the bus's taken (a link calls
        it holding its own write lock, which the bus's readers take): ``epoll`` is told
        at once, and a wait under way hears it."""
        self._writers[fd] = on_writable
        self._modify(fd, READ | WRITE)

    def done_writing(self, fd: int) -> None:
        """Nothing more waits to be written to ``fd``: only its reading is watched."""
        if self._writers.pop(fd, None) is not None:
            self._modify(fd, READ)

    def _modify(self, fd: int, events: int) -> None:
        # unwatched or closed meanwhile (a session that ended on another thread): nothing
        with contextlib.suppress(KeyError, ValueError, OSError, RuntimeError):
            if self._poller.events(fd) != events:
                self._poller.modify(fd, events)

    # -- waiting ---------------------------------------------------------------------
    def wake(self) -> None:
        """End a ``wait`` under way now (or the next one) at once; from any thread."""
        if self._woken:
            return
        self._woken = True
        with contextlib.suppress(OSError):  # closed: nobody waits any more
            os.write(self._wake_w, b"\x01")

    def _drain_wake(self) -> None:
        with contextlib.suppress(OSError):
            os.read(self._wake_r, 4096)
        self._woken = False  # after the read: a wake from now on writes again

    def wait(self, timeout: float | None) -> int:
        """One ``select`` over every open port and watched descriptor, for at most
        ``timeout`` seconds (``None``: until something comes) and never past a member's
        next deadline; then every ready descriptor's reader and every due timer runs,
        on this thread. Returns how many descriptors were ready (0: the wait ran out)."""
        if self._closed:
            return 0
        # the members' first deadline: a loop of this interpreter's specialised attribute
        # reads (a third of ``min(map(attrgetter("due"), ...))``'s instructions, whose
        # getter looks each member's attribute up the general way)
        due = _NEVER
        for member in self._members:
            if member.due < due:
                due = member.due
        limit = IDLE_WAIT_S if timeout is None else timeout
        if due != _NEVER:
            left = due - time.monotonic()
            if left < limit:
                limit = left
        poller = self._poller
        try:
            if self._epoll is not None:  # Linux: epoll's own poll, no Python frame between
                ready = self._epoll.poll_epoll(limit if limit > 0 else 0, self._epoll.most)
            else:
                ready = poller.poll(limit if limit > 0 else 0)
        except (OSError, ValueError):
            if self._closed:  # closed by another thread meanwhile
                return 0
            raise
        # the lock taken and given back by hand: ``with`` looks its two methods up the
        # general way on every wait
        lock = self._lock
        lock.acquire()
        try:
            readers, readable, writable = self._readers, self._readable, self._writable
            for fd, events in ready:
                if events & readable:
                    reader = readers.get(fd)  # None: unwatched in this same wait
                    if reader is not None:
                        try:
                            reader()
                        except Exception:  # a member's bug never stops the loop waiting here
                            self._failed(reader)
                if events & writable:
                    writer = self._writers.get(fd)  # None: not watched for room
                    if writer is not None:
                        try:
                            writer()
                        except Exception:
                            self._writers.pop(fd, None)
                            self._modify(fd, READ)
                            self._failed(writer)
            now = time.monotonic()
            # A member's ``due`` before the wait was no earlier than ``due``: none is due
            # before it (most wakes: a node's frame). One a reader just moved (a session
            # that ended) or another thread added (``add``: due at once, and a wake) is
            # seen by the next wait's first loop, which then does not wait.
            if now >= due:
                for member in self._members:
                    if member.due <= now:
                        try:
                            member.tick(now)
                        except Exception:
                            member.due = now + IDLE_WAIT_S  # not again at once
                            self._failed(member.tick)
        finally:
            lock.release()
        return len(ready)

    def _failed(self, what: object) -> None:
        """A reader or a timer raised: logged (in full the first time), and the bus goes
        on (a seat link's own handling of its node is what fails; the others are read)."""
        self.failures += 1
        if self.failures == 1 or self.failures % 1000 == 0:
            log.exception("seat bus: falló %r (%d fallas hasta ahora)", what, self.failures)

    # -- a thread of its own -------------------------------------------------------------
    @property
    def thread(self) -> threading.Thread | None:
        """The bus's own thread, once ``start``ed."""
        return self._thread

    def start(self, name: str = "seatbus") -> None:
        """Wait on this bus on a thread of its own until ``close``."""
        if self._thread is not None:
            raise RuntimeError("the seat bus is already started")
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._closed:
                self.wait(None)
        except Exception:  # never expected; do not die silently
            log.exception("seat bus: se cayó su hilo")
            raise

    def close(self, timeout: float = 5.0) -> None:
        """Close every member's port, stop the bus's thread (if ``start``ed) and let its
        descriptors go."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            members, self._members = self._members, ()
            for member in members:
                member.shut()
        self.wake()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        with self._lock:
            self._poller.close()
            self._finalizer()
