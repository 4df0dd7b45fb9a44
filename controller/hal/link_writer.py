"""What the Pi writes to a seat node: numbered frames, protocol 3's counted blocks, the
node's commands (``IDENT``, ``LED``, ``RESET``), each written whole and in order.

:class:`LinkWriter` is the writing half of :class:`~controller.hal.seatlink.SeatLink`
(the link opens the port, reads it and runs the session). On a bus a write never waits
for the node: what the port's buffer does not take waits in the link's outbox
(``OUTBOX_MAX``) and goes out as the port takes it.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Final, Protocol

import serial

from .frames import LED_MODES, SEQ_MODULO, encode_counted, encode_frame, encode_update
from .seatbus import SeatBus

__all__ = ["MAX_IDENT_SECONDS", "OUTBOX_MAX", "LinkWriter", "OutboxFull", "SerialPort"]

log = logging.getLogger(__name__)


MAX_IDENT_SECONDS: Final = 600


class SerialPort(Protocol):
    """What a seat link uses of a pyserial port."""

    def read(self, size: int = 1) -> bytes: ...
    def write(self, data: bytes) -> int | None: ...
    def close(self) -> None: ...

    @property
    def in_waiting(self) -> int: ...


#: the most a link's outbox holds for a node that reads slowly (``LinkWriter._put``): about
#: eleven whole-screen updates; more is a node that does not read
OUTBOX_MAX: Final = 16384


class OutboxFull(OSError):
    """A write to a node whose outbox is full: the node has not read for a while (its
    heartbeat's timeout ends the session). Handled where a failed write is."""


def _write_all(port: SerialPort, data: bytes) -> None:
    """Write all of ``data``: straight to the port's file descriptor when it has one (a
    tty; pyserial's write adds a select and a timeout to every call, which the Pi pays
    per display update), through pyserial otherwise and when the kernel's buffer is
    full (it waits up to its write timeout)."""
    fd = getattr(port, "fd", None)
    if not isinstance(fd, int):
        port.write(data)
        return
    rest: bytes | memoryview = data
    try:
        written = os.write(fd, rest)
        while written < len(rest):  # most often the kernel takes it all at once
            rest = memoryview(rest)[written:]
            written = os.write(fd, rest)
    except BlockingIOError:
        port.write(bytes(rest))


class LinkWriter:
    """The writing half of seat ``seat``'s link: what is written goes to the open port
    (``_serial``, set by the link for each session), numbered from ``_tx_seq``."""

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self._write_lock = threading.Lock()
        self._bus: SeatBus | None = None
        self._fd: int | None = None  # the open port's file descriptor, on the bus
        self._out = bytearray()  # what the port's buffer has not taken yet (``_put``)
        self.outbox_waits = 0  # writes the kernel took only part of (the rest waited)
        self.outbox_overflows = 0  # writes refused: the outbox was full (``OutboxFull``)
        self._serial: SerialPort | None = None
        self._tx_seq = 0

    def send(self, kind: str, *args: str) -> bool:
        """Send one command frame; False if the node is not connected or the write fails."""
        with self._write_lock:
            port = self._serial
            if port is None:
                return False
            frame = encode_frame(self._tx_seq, kind, *args)
            self._tx_seq = (self._tx_seq + 1) % SEQ_MODULO
            try:
                self._put(port, frame)
            except (serial.SerialException, OSError) as error:
                log.debug("seat %d: write failed: %s", self.seat, error)
                return False
        return True

    def send_many(self, messages: list[tuple[str, tuple[str, ...]]]) -> bool:
        """Send several frames in one write, none of another thread's in between (a
        display update); False if the node is not connected or the write fails."""
        with self._write_lock:
            port = self._serial
            if port is None:
                return False
            frames = []
            for kind, args in messages:
                frames.append(encode_frame(self._tx_seq, kind, *args))
                self._tx_seq = (self._tx_seq + 1) % SEQ_MODULO
            try:
                self._put(port, b"".join(frames))
            except (serial.SerialException, OSError) as error:
                log.debug("seat %d: write failed: %s", self.seat, error)
                return False
        return True

    def send_counted(
        self,
        header: Callable[[int], tuple[str, tuple[str, ...]]],
        block: list[tuple[bytes, bytes]],
    ) -> int:
        """Protocol 3's display update: the ``header`` frame (``header(count)`` gives
        its type and arguments, ``count`` being the byte count of the frames after it)
        then the ``block`` frames (type and arguments already joined, as bytes; a frame
        up to MAX_BLOCK_FRAME bytes), all in one write. Returns the bytes written, 0 if
        the node is not connected or the write fails."""
        with self._write_lock:
            port = self._serial
            if port is None:
                return 0
            data, self._tx_seq = encode_counted(self._tx_seq, header, block)
            try:
                self._put(port, data)
            except (serial.SerialException, OSError) as error:
                log.debug("seat %d: write failed: %s", self.seat, error)
                return 0
        return len(data)

    def send_update(
        self, update: int, regions: bytes, full: bool, bodies: list[bytes], ask_over: int
    ) -> tuple[int, int, bool]:
        """Protocol 4's display update (:func:`~controller.hal.frames.encode_update`), in
        one write: the bytes written (0 when the node is not connected or the write
        fails), the DR block's bytes and whether the DU asked for its DACK."""
        with self._write_lock:
            port = self._serial
            if port is None:
                return 0, 0, False
            data, self._tx_seq, size, ask = encode_update(
                self._tx_seq, update, regions, full, bodies, ask_over
            )
            try:
                self._put(port, data)
            except (serial.SerialException, OSError) as error:
                log.debug("seat %d: write failed: %s", self.seat, error)
                return 0, size, ask
        return len(data), size, ask

    def identify(self, seconds: int = 10) -> bool:
        """Make the node's LED blink fast for ``seconds`` (0 stops it)."""
        if not 0 <= seconds <= MAX_IDENT_SECONDS:
            raise ValueError(f"seconds must be 0..{MAX_IDENT_SECONDS}")
        return self.send("IDENT", str(seconds))

    def set_led(self, mode: str) -> bool:
        """Set the node's LED pattern: OFF, ON, SLOW or FAST."""
        if mode not in LED_MODES:
            raise ValueError(f"LED mode must be one of {LED_MODES}")
        return self.send("LED", mode)

    def reset_node(self) -> bool:
        """Restart the node (it disappears from USB for a moment and comes back)."""
        return self.send("RESET")

    def _write_raw(self, data: bytes, before: Callable[[], None] | None = None) -> bool:
        """Write ``data`` whole; ``before`` runs once the port is there, just before."""
        with self._write_lock:
            port = self._serial
            if port is None:
                return False
            if before is not None:
                before()
            try:
                self._put(port, data)
            except (serial.SerialException, OSError) as error:
                log.debug("seat %d: write failed: %s", self.seat, error)
                return False
        return True

    def _put(self, port: SerialPort, data: bytes) -> None:
        """Write ``data`` whole, in order after whatever waits (the link's write lock
        held). On a bus, a write never waits for the node: what the kernel's buffer does
        not take now (a node that reads slowly, busy with its panel) waits in the link's
        outbox and goes out as the port takes it (the bus watches the port for room), so
        the loop reading every seat never stalls on one. An outbox past ``OUTBOX_MAX``
        bytes is a node that does not read: this write fails (``OutboxFull``), what
        waited is kept (its frames stay whole), as a timed-out write did. With no bus
        (or no file descriptor), pyserial's write, which waits up to its timeout."""
        fd, bus = self._fd, self._bus
        if fd is None or bus is None:
            _write_all(port, data)
            return
        out = self._out
        if out:
            if len(out) + len(data) > OUTBOX_MAX:
                self.outbox_overflows += 1
                raise OutboxFull(f"{len(out)} bytes wait for the node")
            out += data
            return
        try:
            written = os.write(fd, data)
        except BlockingIOError:
            written = 0
        if written < len(data):
            out += memoryview(data)[written:]
            self.outbox_waits += 1
            bus.want_write(fd, self._writable)

    def _writable(self) -> None:
        """The bus found room in the port's buffer: what waits in the outbox goes on."""
        with self._write_lock:
            fd, bus, out = self._fd, self._bus, self._out
            if fd is None or bus is None:
                out.clear()
                return
            if out:
                try:
                    del out[: os.write(fd, out)]
                except BlockingIOError:
                    return
                except OSError as error:  # the port went: the reading side ends the session
                    log.debug("seat %d: write failed: %s", self.seat, error)
                    out.clear()
            if not out:
                bus.done_writing(fd)

    @property
    def outbox(self) -> int:
        """Bytes written to the link that wait for room in the port's buffer."""
        return len(self._out)
