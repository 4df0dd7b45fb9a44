"""Mock hardware: the whole table on any machine, through the real I/O paths.

- Seat nodes are simulated on pseudo-terminal pairs (``os.openpty``): each speaks the
  real line protocol (``firmware/PROTOCOL.md``, encoded with ``frames.encode_frame``)
  and the Pi side is the real ``SeatLink`` reading the pty through pyserial. Pressing a
  button or tapping a card on a ``MockNode`` writes the frames a Pico would write.
- Displays are luma.core's ``dummy`` devices: the image sent to a seat's display is
  kept, and the terminal shows it. ``counting_i2c()`` is luma's own I2C interface on a
  bus that only counts bytes, for a real ``OledDisplay`` without a panel (benchmarks).
- The deck is a ``MockDeck``: forty NTAG213-like UIDs from a seeded generator.

- Two-seat tables wired to the Pi's GPIO: the pads on gpiozero's ``MockFactory`` pins,
  the readers on a simulated MFRC522 (``controller.hal.mock_mfrc522``).

``MockHardware`` hands these to the table's one wiring (``controller.table.hardware``),
so the mock table runs the very code a Pi runs.
"""

from __future__ import annotations

import binascii
import contextlib
import os
import random
import select
import threading
import time
import tty
from collections.abc import Callable
from pathlib import Path
from typing import Any

from luma.core.device import dummy
from PIL import Image

from ..engine import CARDS, Card
from .display import Display, DisplayConfig
from .events import PROTOCOL_VERSION
from .frames import encode_frame, parse_frame
from .mock_mfrc522 import SimMFRC522, SimSpiDev
from .pages import pages_to_image

__all__ = [
    "CountingI2CBus",
    "MockDeck",
    "MockDisplay",
    "MockHardware",
    "MockNode",
    "counting_i2c",
]


class MockDeck:
    """Forty tagged cards with seeded 7-byte UIDs (first byte 0x04, as NTAG213)."""

    def __init__(self, seed: int = 0) -> None:
        rng = random.Random(f"mock-deck-{seed}")
        uids: set[bytes] = set()
        while len(uids) < len(CARDS):
            uids.add(bytes([0x04, *(rng.randrange(256) for _ in range(6))]))
        ordered = sorted(uids)
        rng.shuffle(ordered)
        self._uid = {card: uid for card, uid in zip(CARDS, ordered, strict=True)}
        self._card = {uid: card for card, uid in self._uid.items()}

    def uid(self, card: Card) -> bytes:
        return self._uid[card]

    def lookup(self, uid: bytes) -> Card | None:
        return self._card.get(uid)


#: The firmware's display queue (firmware/seatnode/display.py): at most MAX_QUEUE
#: display items (a DU or DW frame of protocol 2, a DU's counted block of protocol 3 to
#: 5) and MAX_QUEUED_BYTES of blocks wait to be written, in a session of protocol 2 to
#: 4; protocol 5's are MAX_QUEUE_5 and MAX_QUEUED_BYTES_5 (tests/hal/test_mock_node.py
#: holds them to the firmware's).
MAX_QUEUE = 64
MAX_QUEUED_BYTES = 2048
MAX_QUEUE_5 = 128
MAX_QUEUED_BYTES_5 = 8192


def queue_bounds(version: int) -> tuple[int, int]:
    """The node's display queue in a session of ``version``: (items, bytes of blocks)."""
    return (MAX_QUEUE_5, MAX_QUEUED_BYTES_5) if version >= 5 else (MAX_QUEUE, MAX_QUEUED_BYTES)


class MockNode:
    """A seat node on a pty pair. ``path`` is the device the Pi side opens."""

    def __init__(
        self,
        seat: int,
        serial: str | None = None,
        *,
        heartbeat_s: float = 1.0,
        panel: bool = False,
        protocol: int = PROTOCOL_VERSION,
    ) -> None:
        """``panel``: the seat's panel hangs on this node (an SSD1306 at 0x3C, until the
        Pi's PANEL names another): it says so after every HELLO, writes the display
        frames into ``ram`` (the panel's 8 pages of 128 visible columns) and answers
        each whole update with DACK (protocol 4 and 5: when its DU asks; its heartbeats say
        the last update written, ``written``). ``protocol``: the newest version it speaks (it
        answers a HELLO of that version or older, as the firmware does, and ignores a
        newer one, as firmware of protocol 2 does).

        Its display queue is the firmware's, bounded by the session's version
        (:func:`queue_bounds`): what one read brings waits in it, then is written before
        the next read. A Pi that sends more than the queue holds between two reads
        overflows it as it overflows the firmware's: what waits is dropped (``overflows``
        counts it), ``DLOST``, and only a FULL update is written after that."""
        self.seat = seat
        #: the seat the node has stored and says in its HELLO (another than ``seat``: a
        #: node on the wrong seat's cable, or the pin map's serial numbers swapped)
        self.says_seat: int | None = seat
        #: whether its MFRC522 answers (its heartbeats say OK or NONE, its HELLO the
        #: chip's version or 00); ``set_reader`` changes it as the firmware does
        self.reader_ok = True
        #: whether its panel answers (``set_panel`` changes it: PANEL ... MISSING)
        self.panel_ok = True
        self.panel = panel
        self.protocol = protocol
        self._version = protocol  # this session's (the Pi's HELLO chose it)
        # protocol 3 to 5: (update, regions, bytes, answer with DACK, FULL) of a DU's block
        self._block: tuple[int, int, int, bool, bool] | None = None
        # display items read and not yet written: ("DR", (update, regions, block, ack,
        # full)) or (DU or DW, args); the blocks' bytes among them
        self._queue: list[tuple[str, Any]] = []
        self._queued_bytes = 0
        self.overflows = 0  # times the display queue overflowed (the firmware's DLOST)
        self._lost = False  # after an overflow: only a FULL update is written
        self.ram = bytearray(128 * 8)
        self.updates = 0  # updates written whole
        self.written: int | None = None  # the last of them in this session
        self._update: tuple[int, int] | None = None  # (update, DW frames) under way
        self._pieces = 0
        self._panel_kind = ("ssd1306", "3C")  # what it drives; the Pi's PANEL changes it
        self.serial = serial or f"e66141{seat:010x}"
        self.heartbeat_s = heartbeat_s
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)  # a frame nobody reads is dropped (send)
        self._master, self._slave = master, slave
        self.path = os.ttyname(slave)
        self._seq = 0
        self.dropped = 0  # frames dropped: the pty full, nobody reading the Pi's side
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._running = threading.Event()  # cleared by pause(): the thread parks
        self._running.set()
        self._parked = threading.Event()  # set by the thread once parked
        # close() and pause() wake the node's select at once
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name=f"mocknode-{seat}", daemon=True)
        self._buffer = b""
        self._started = time.monotonic()
        self.received: list[str] = []  # message types the Pi sent (HELLO, HB, LED, ...)

    def start(self) -> None:
        self._thread.start()
        self.hello()

    def pause(self, timeout: float = 2.0) -> None:
        """Park the node's thread until :meth:`resume`: it reads nothing and sends no
        heartbeat meanwhile (what the Pi writes waits in the pty, as in a USB buffer).
        Returns once it is parked. A benchmark holds its nodes while it measures the
        Pi's work: a real node is a chip of its own, and a node's thread woken by each
        frame would take this process's interpreter from the Pi's loop."""
        if not self._thread.is_alive():
            return
        if not self._running.is_set():  # paused already
            self._parked.wait(timeout)
            return
        self._parked.clear()
        self._running.clear()
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"h")
        if not self._parked.wait(timeout):
            raise RuntimeError(f"mock node {self.seat}: its thread did not park")

    def resume(self) -> None:
        """The node's thread runs again (after :meth:`pause`)."""
        self._running.set()

    def close(self) -> None:
        self._stop.set()
        self._running.set()  # a held thread sees the stop
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        if self._thread.is_alive():
            self._thread.join(2)
        for fd in (self._master, self._slave, self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    # -- what a player does --------------------------------------------------------
    def press(self, button: str) -> None:
        self.send("PRESS", button)

    def hold(self, button: str) -> None:
        self.send("HOLD", button)

    def tag_on(self, uid: bytes) -> None:
        self.send("TAGON", uid.hex().upper())

    def tag_off(self, uid: bytes) -> None:
        self.send("TAGOFF", uid.hex().upper())

    def stuck(self, button: str) -> None:
        """A button down for the firmware's stuck time (STUCK)."""
        self.send("STUCK", button)

    def freed(self, button: str) -> None:
        """That button let go (FREED)."""
        self.send("FREED", button)

    def set_reader(self, ok: bool) -> None:
        """The reader stops answering (or answers again): said at once, in a heartbeat,
        as the firmware says it."""
        self.reader_ok = ok
        self._beat(time.monotonic() - self._started)

    def set_panel(self, ok: bool) -> None:
        """The panel stops answering (PANEL ... MISSING) or answers again (OK, its RAM
        blank), as the firmware says it."""
        self.panel_ok = ok
        if self.panel:
            self.ram[:] = bytes(len(self.ram))
            self._update = None
            self.send("PANEL", *self._panel_kind, "OK" if ok else "MISSING")

    def hello(self, session: str = "-") -> None:
        """HELLO at power-up (``-``), or answering the Pi's HELLO with its session."""
        self.written = None
        seat = "-" if self.says_seat is None else str(self.says_seat)
        reader = "92" if self.reader_ok else "00"
        self.send("HELLO", str(self._version), "0.1.0-mock", seat, self.serial, reader, session)
        if self.panel:  # freshly initialised: its RAM is blank
            self.ram[:] = bytes(len(self.ram))
            self._update = None
            self.send("PANEL", *self._panel_kind, "OK" if self.panel_ok else "MISSING")

    def _beat(self, uptime: float) -> None:
        beat: tuple[str, ...] = (str(int(uptime)), "0", "OK" if self.reader_ok else "NONE")
        if self._version >= 4:  # and the last update written whole
            beat += ("-" if self.written is None else str(self.written),)
        with contextlib.suppress(OSError):
            self.send("HB", *beat)

    def tag_conflict(self) -> None:
        """Several cards on the reader at once (the node's TAGMANY)."""
        self.send("TAGMANY")

    def send(self, kind: str, *args: str) -> None:
        with self._lock:
            frame = encode_frame(self._seq, kind, *args)
            self._seq += 1
            try:
                os.write(self._master, frame)
            except BlockingIOError:
                # Nobody has read the port for long (the table's loop, which reads it,
                # waits for a player's keys): dropped, as USB CDC drops what is not read,
                # instead of this node's threads waiting for ever.
                self.dropped += 1

    # -- the node's side of the link -----------------------------------------------
    def _run(self) -> None:
        started = next_beat = self._started
        while not self._stop.is_set():
            if not self._running.is_set():  # paused
                self._parked.set()
                self._running.wait()
                continue
            wait = max(0.0, next_beat - time.monotonic())
            try:
                ready, _, _ = select.select([self._master, self._wake_r], [], [], wait)
            except (OSError, ValueError):
                return
            if self._stop.is_set():
                return
            if self._wake_r in ready:  # pause() (close() stopped it above)
                with contextlib.suppress(OSError):
                    os.read(self._wake_r, 4096)
                ready.remove(self._wake_r)
            now = time.monotonic()
            if now >= next_beat:
                next_beat = now + self.heartbeat_s
                self._beat(now - started)
            if not ready:
                continue
            try:
                data = os.read(self._master, 4096)
            except OSError:
                return
            self._buffer += data
            self._take_input()

    def _take_input(self) -> None:
        """What was read: its frames handled, its display items queued, then written."""
        try:
            while self._buffer:
                if self._block is not None:  # protocol 3 to 5: a DU's counted block
                    update, regions, count, ack, full = self._block
                    if len(self._buffer) < count:
                        return
                    block, self._buffer = self._buffer[:count], self._buffer[count:]
                    self._block = None
                    self._enqueue("DR", (update, regions, block, ack, full), len(block))
                    continue
                end = self._buffer.find(b"\n")
                if end < 0:
                    return
                line, self._buffer = self._buffer[:end].rstrip(b"\r"), self._buffer[end + 1 :]
                if line:
                    self._line(line)
        finally:
            self._write_queue()

    def _enqueue(self, kind: str, value: Any, size: int = 0) -> None:
        """A display item waits to be written, as in the firmware's queue: one that finds
        it full (items or bytes, the session's bounds) overflows it."""
        items, most = queue_bounds(self._version)
        if len(self._queue) >= items or self._queued_bytes + size > most:
            self.overflows += 1
            self._queue.clear()
            self._queued_bytes = 0
            self._update = None
            self.written = None
            if not self._lost:
                self._lost = True
                update = value[0] if kind == "DR" else 0
                self.send("DLOST", str(update))
            return
        self._queue.append((kind, value))
        self._queued_bytes += size

    def _write_queue(self) -> None:
        queue, self._queue, self._queued_bytes = self._queue, [], 0
        for kind, value in queue:
            if kind == "DR":
                update, regions, block, ack, full = value
                if self._lost and not full:
                    continue  # out of sync after an overflow: a FULL update only
                self._lost = False
                self._regions(update, regions, block, ack)
            else:
                if self._lost and not (kind == "DU" and value[-1] == "FULL"):
                    continue
                self._lost = False
                self._display_frame(kind, value)

    def _line(self, line: bytes) -> None:
        try:
            _, kind, args = parse_frame(line)
        except ValueError:
            return
        self.received.append(kind)
        if kind == "HELLO" and len(args) == 2:
            if args[0].isdigit() and 2 <= int(args[0]) <= self.protocol:
                self._version = int(args[0])
                self.hello(args[1])
        elif self.panel and kind == "DU" and len(args) == 4 and self._version >= 3:
            self._block = (int(args[0]), int(args[1]), int(args[2]), True, args[3] == "FULL")
        elif self.panel and kind == "DU" and len(args) == 5 and self._version >= 4:
            full = args[3] == "FULL"
            self._block = (int(args[0]), int(args[1]), int(args[2]), args[4] == "ACK", full)
        elif self.panel and kind in ("DU", "DW"):
            self._enqueue(kind, args)
        elif self.panel and kind == "PANEL" and len(args) == 2:
            # drive the pin map's panel from now on: initialised, its RAM blank, its
            # queue emptied (the firmware's PanelLink does the same)
            self._queue.clear()
            self._queued_bytes = 0
            self._panel_kind = (args[0], args[1])
            self.ram[:] = bytes(len(self.ram))
            self._update = None
            self.send("PANEL", *self._panel_kind, "OK" if self.panel_ok else "MISSING")

    def _regions(self, update: int, regions: int, block: bytes, ack: bool) -> None:
        """Protocol 3 to 5: a DU's DR frames (one whole window each) into ``ram``."""
        lines = block.split(b"\n")
        windows = []
        for line in lines[:-1]:
            body, _, crc = line[1:].rpartition(b"*")
            fields = body.split(b" ")
            if (
                line[:1] != b"$"
                or crc != b"%04X" % binascii.crc_hqx(body, 0xFFFF)
                or len(fields) != 7
                or fields[1] != b"DR"
            ):
                break
            p0, p1, c0, c1 = (int(f) for f in fields[2:6])
            windows.append((p0, p1, c0, c1, binascii.a2b_base64(fields[6])))
            self.received.append("DR")
        if lines[-1] or len(windows) != regions:
            self.written = None
            self.send("DLOST", str(update))
            return
        for p0, p1, c0, c1, data in windows:
            cols = c1 - c0 + 1
            for row in range(p1 - p0 + 1):
                start = (p0 + row) * 128 + c0
                self.ram[start : start + cols] = data[row * cols : (row + 1) * cols]
        self.updates += 1
        self.written = update
        if ack:
            self.send("DACK", str(update))

    def _display_frame(self, kind: str, args: tuple[str, ...]) -> None:
        """``DU`` and ``DW`` (firmware/PROTOCOL.md, "Display frames") into ``ram``."""
        if kind == "DU":
            self._update, self._pieces = (int(args[0]), int(args[1])), 0
            return
        if self._update is None or int(args[0]) != self._pieces:
            self.send("DLOST", str(self._update[0] if self._update else 0))
            self._update = None
            return
        p0, p1, c0, c1, offset = (int(a) for a in args[1:6])
        cols = c1 - c0 + 1
        for i, byte in enumerate(binascii.a2b_base64(args[6])):
            page, col = divmod(offset + i, cols)
            if p0 + page <= p1:
                self.ram[(p0 + page) * 128 + c0 + col] = byte
        self._pieces += 1
        update, count = self._update
        if self._pieces == count:
            self._update = None
            self.updates += 1
            self.send("DACK", str(update))


class MockDisplay:
    """A seat display backed by luma's ``dummy`` device (keeps the last image). Frames in
    page layout (``show_pages``, as the service sends them) become an image only when
    someone looks (``image``)."""

    def __init__(self) -> None:
        self.device = dummy(width=128, height=64, mode="1")
        self.frames = 0
        self._pages: bytes | None = None  # the last frame, not yet drawn on the device

    def show(self, image: Image.Image) -> None:
        self.device.display(image)
        self._pages = None
        self.frames += 1

    def show_pages(self, pages: bytes) -> None:
        if len(pages) != 128 * 8:
            raise ValueError(f"a frame of {len(pages)} bytes, the panel takes 1024")
        self._pages = pages
        self.frames += 1

    @property
    def image(self) -> Image.Image:
        if self._pages is not None:
            self.device.display(pages_to_image(self._pages))
            self._pages = None
        image: Image.Image = self.device.image
        return image


class CountingI2CBus:
    """Stands in for an open smbus2 bus: counts the bytes a transfer puts on the wire
    (address and control byte included) instead of calling the kernel."""

    def __init__(self) -> None:
        self.bytes = 0
        self.transfers = 0

    def write_i2c_block_data(self, address: int, register: int, data: list[int]) -> None:
        self.bytes += 2 + len(data)
        self.transfers += 1

    def i2c_rdwr(self, *messages: Any) -> None:
        for message in messages:
            self.bytes += 1 + int(message.len)
            self.transfers += 1


def counting_i2c() -> tuple[Any, CountingI2CBus]:
    """luma's ``i2c`` interface as ``i2c(port=N)`` makes it (data in smbus2 ``i2c_msg``
    messages of up to 4096 bytes, commands as SMBus block writes), on a counting bus."""
    from luma.core.interface.serial import i2c
    from smbus2 import i2c_msg

    bus = CountingI2CBus()
    serial = i2c(bus=bus)
    serial._managed = True  # what i2c(port=N) sets: one i2c_rdwr message per data() call
    serial._i2c_msg_write = i2c_msg.write
    return serial, bus


class MockHardware:
    """The table's wiring on simulated parts (a ``HardwareFactory``, see ``hal.factory``).

    Seat nodes are ``MockNode``s on ptys, made (and started) when the wiring asks for a
    node's port; ``unplug``/``replug`` pull and put back a node's USB cable. Pads sit on
    gpiozero's ``MockFactory`` pins (``pin_factory``), readers on a ``SimMFRC522`` behind
    a ``SimSpiDev`` (``spi[seat]``), panels on luma's ``dummy`` (``displays[seat]``).
    Pads and readers have no threads of their own (``threaded`` is False): the caller
    moves ``now`` and polls them, so a hold takes no real time.
    """

    threaded = False
    reconnect_s = 0.05  # a replugged mock node is there at once

    def __init__(self, *, heartbeat_s: float = 1.0) -> None:
        from gpiozero.pins.mock import MockFactory

        self.pin_factory = MockFactory()
        self.now = 1000.0
        self.heartbeat_s = heartbeat_s
        self.nodes: dict[int, MockNode] = {}
        self._plugged: dict[int, MockNode | None] = {}
        self.spi: dict[int, SimSpiDev] = {}
        self.displays: dict[int, MockDisplay] = {}  # the panels on the Pi's bus
        self._node_panels: set[int] = set()  # seats whose panel hangs on the node

    def clock(self) -> float:
        return self.now

    def node_port(self, seat: int, serial: str, by_id_dir: Path) -> Callable[[], str | None]:
        node = MockNode(seat, serial, heartbeat_s=self.heartbeat_s, panel=seat in self._node_panels)
        self.nodes[seat] = node
        self._plugged[seat] = node
        node.start()

        def current() -> str | None:
            plugged = self._plugged.get(seat)
            return plugged.path if plugged is not None else None

        return current

    def reader_spi(self, seat: int, bus: int, device: int) -> SimSpiDev:
        spi = SimSpiDev(SimMFRC522())
        self.spi[seat] = spi
        return spi

    def display(self, seat: int, config: DisplayConfig | None) -> Display:
        if config is not None and config.connected_to == "node":
            from .node_display import NodeDisplay

            self._node_panels.add(seat)  # its MockNode drives it (MockNode.ram)
            return NodeDisplay(config, seat=seat)
        display = MockDisplay()
        self.displays[seat] = display
        return display

    def unplug(self, seat: int) -> None:
        """Pull the seat node's USB cable: its pty goes away."""
        node = self._plugged.get(seat)
        self._plugged[seat] = None
        if node is not None:
            node.close()

    def replug(self, seat: int) -> MockNode:
        """Plug a (fresh) node back in, on a new pty."""
        node = MockNode(
            seat,
            self.nodes[seat].serial,
            heartbeat_s=self.heartbeat_s,
            panel=seat in self._node_panels,
        )
        self.nodes[seat] = node
        self._plugged[seat] = node
        node.start()
        return node

    def close(self) -> None:
        for node in self._plugged.values():
            if node is not None:
                node.close()
        self._plugged.clear()
        self.pin_factory.close()
