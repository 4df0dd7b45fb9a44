"""MicroPython's rp2 ``sys.stdin`` (the node's USB serial in) as the firmware meets it,
for the firmware's ``UsbSerial`` run by CPython.

The rp2 port reads stdin a character at a time: ``stdio_read`` (shared/runtime/
sys_stdio_mphal.c) loops over ``mp_hal_stdin_rx_chr()`` until every byte asked for has
arrived, so ``readinto(buf)`` returns only when ``len(buf)`` bytes came, however long that
takes; ``select.poll`` reports "readable" as soon as one byte waits (the port's stdin ring
buffer is not empty) and never says how many.  Nothing here is kinder than that:

* bytes arrive at the times of a schedule (seconds after the stand-in is made, on the
  node's clock: ``NodeClock``);
* ``readinto(buf)`` waits until ``len(buf)`` bytes have arrived (the node's clock moves
  on while it waits, as a Pico's would); when the schedule will never bring them the
  real node would wait for ever (until its watchdog bites), and the stand-in raises
  ``StdinWouldBlock`` saying so;
* ``poll(0)`` / ``ipoll(0)`` report readable when at least one byte has arrived
  (``Rp2Select`` is the ``select`` module the firmware imports, watching it).
"""

from __future__ import annotations

import select
import types
from collections.abc import Iterator


class StdinWouldBlock(AssertionError):
    """The firmware asked the rp2 stdin for bytes that never come: a real node stalls."""


class NodeClock:
    """The node's time in a test run by CPython: it moves only as the node's loop passes
    (``passed``: what a pass costs the Pico) and sleeps (``sleep_ms``, the firmware's), and
    while a read waits for bytes; never with this machine's speed, so a loaded machine
    changes no time the test reads. ``ticks_ms`` and ``sleep_ms`` stand in for the
    firmware's (``seatnode.compat``)."""

    def __init__(self, pass_ms: float = 0.2) -> None:
        self.pass_ms = pass_ms
        self._ms = 0.0

    def now(self) -> float:
        """Seconds since the clock was made."""
        return self._ms / 1000

    def ticks_ms(self) -> int:
        return int(self._ms)

    def sleep_ms(self, ms: float) -> None:
        self._ms += ms

    def passed(self) -> None:
        """One pass of the node's loop went by."""
        self._ms += self.pass_ms


class Rp2Stdin:
    def __init__(self, schedule: list[tuple[float, bytes]], clock: NodeClock) -> None:
        self._clock = clock
        self._start = clock.now()
        self._schedule = sorted(schedule, key=lambda item: item[0])
        self._taken = 0
        self.reads = 0  # readinto calls
        self.waited_s = 0.0  # time spent blocked inside readinto

    # -- the stream (``sys.stdin`` and its ``buffer``) --------------------------------------
    @property
    def buffer(self) -> Rp2Stdin:
        return self

    def _arrived(self) -> int:
        now = self._clock.now() - self._start
        return sum(len(data) for at, data in self._schedule if at <= now)

    def _bytes(self) -> bytes:
        return b"".join(data for _at, data in self._schedule)

    def readinto(self, buf: bytearray | memoryview) -> int:
        """Like the rp2 port: returns only once ``len(buf)`` bytes have come."""
        self.reads += 1
        size = len(buf)
        need = self._taken + size
        if need > len(self._bytes()):
            raise StdinWouldBlock(
                f"readinto asked for {size} bytes, {self._arrived() - self._taken} have come "
                "and no more ever will: MicroPython's rp2 stdin waits for all of them "
                "(the node's loop stops until the watchdog resets it)"
            )
        began = self._clock.now()
        while self._arrived() < need:
            self._clock.sleep_ms(0.5)
        self.waited_s += self._clock.now() - began
        buf[:size] = self._bytes()[self._taken : need]
        self._taken = need
        return size

    def read(self, size: int) -> bytes:
        buf = bytearray(size)
        self.readinto(buf)
        return bytes(buf)

    # -- select.poll registered on it ------------------------------------------------------
    def _ready(self) -> bool:
        return self._arrived() > self._taken

    def poll(self, timeout: int = -1) -> list[tuple[object, int]]:
        return [(self, select.POLLIN)] if self._ready() else []

    def ipoll(self, timeout: int = -1) -> Iterator[tuple[object, int]]:
        return iter(self.poll(timeout))

    @property
    def left(self) -> int:
        """Bytes that have arrived and not been read."""
        return self._arrived() - self._taken


class Rp2Select(types.ModuleType):
    """The ``select`` module the firmware imports: its ``poll()`` watches the stand-in."""

    POLLIN = select.POLLIN

    def __init__(self, stdin: Rp2Stdin) -> None:
        super().__init__("select")
        self.stdin = stdin

    def poll(self) -> Rp2Poll:
        return Rp2Poll(self.stdin)


class Rp2Poll:
    def __init__(self, stdin: Rp2Stdin) -> None:
        self.stdin = stdin

    def register(self, stream: object, flags: int = select.POLLIN) -> None:
        pass  # sys.stdin, the only stream the node watches

    def poll(self, timeout: int = -1) -> list[tuple[object, int]]:
        return self.stdin.poll(timeout)

    def ipoll(self, timeout: int = -1) -> Iterator[tuple[object, int]]:
        return self.stdin.ipoll(timeout)


class Rp2Stdout:
    """``sys.stdout`` (and its ``buffer``): what the node wrote, when it wrote each frame."""

    def __init__(self, clock: NodeClock) -> None:
        self._clock = clock
        self._start = clock.now()
        self.frames: list[tuple[float, bytes]] = []

    @property
    def buffer(self) -> Rp2Stdout:
        return self

    def write(self, frame: bytes) -> int:
        self.frames.append((self._clock.now() - self._start, bytes(frame)))
        return len(frame)
