"""Send a 1-bit frame to an SSD1306/SSD1309/SH1106 OLED, but only the bytes that changed.

luma.oled's ``ssd1306.display()`` / ``sh1106.display()`` send the whole 1 KiB frame
on every call: ~25 ms per panel at 400 kHz I2C, ~150 ms for six panels sharing a
bus.  :class:`DisplayWriter` keeps the last frame it sent and, for a new one,
sends only the changed column spans of each page (merging spans when the gap
costs fewer bus bytes than addressing a new span), or nothing at all when the
frame did not change.

How to get one
--------------
``writer_for_device(device)`` is the usual entry point: give it an initialised
luma device.

* ``luma.oled.device.ssd1306`` (and its subclasses) or ``sh1106``: a
  :class:`DisplayWriter` that talks to the device's own serial interface
  (``device._serial_interface``: luma's ``i2c``/``spi``, or any object with
  ``command(*bytes)`` and ``data(list)``).  luma's constructor has already sent
  the init sequence; the writer only addresses RAM and writes data.  The
  device's rotation (``device.preprocess``) is honoured.
* Anything else (luma.core's ``dummy`` in the mock, emulators): a
  :class:`PassthroughWriter` that simply calls ``device.display(image)``.

Without a luma device, ``DisplayWriter.for_interface(interface, Controller.SH1106)``
works on the interface directly (the caller must have initialised the panel).

The port: deciding and sending are apart
-----------------------------------------
:class:`DisplayWriter` decides *which* page/column windows changed (it keeps the
last frame and plans the windows at the least bus cost of the panel at the far
end); a :class:`PanelPort` takes those windows to the panel.  Two adapters:

* :class:`BusPort` (here): the Pi's own I2C or SPI bus through a luma interface
  (two-seat tables wired to the Pi); it turns windows into controller commands.
* ``controller.hal.node_display.NodePort``: the seat node's serial link; the
  windows travel as display frames (``firmware/PROTOCOL.md``) and the node's own
  driver addresses its panel.

A port says which panel it reaches (:class:`Panel`: controller, size, column
offset) and what its bus costs (:class:`BusModel`), so that the plan is priced as
the bytes really go on the panel's wire.

Controllers
-----------
* SSD1306 and SSD1309 (128 columns; the SSD1309 of 2.42" modules has the
  SSD1306's addressing commands): luma initialises it in horizontal addressing mode
  (``0x20 0x00``), and the writer keeps that mode so that luma's own
  ``display()`` stays valid.  A change is a window ``0x21 c0 c1`` (columns) +
  ``0x22 p0 p1`` (pages) followed by exactly ``(c1-c0+1)*(p1-p0+1)`` data bytes,
  page by page.  After such a write the pointers have wrapped back to the
  window's start, so a next window on the same pages needs only ``0x21`` (3
  bytes) and one on the same columns only ``0x22``.  Windows may span several
  pages (a vertical stick touching three pages is one window).  A full frame is
  ``0x20 0x00 0x21 0 127 0x22 0 7`` + 1024 bytes.
* SH1106 (132-column RAM, the visible 128 start at column 2; page addressing
  only): a span is ``0xB0|page``, ``0x10|(col>>4)``, ``0x00|(col&15)`` with
  ``col`` = 2 + x, then the data; the column auto-increments, the page does not.
  Commands whose value the pointer already has are left out.  A full frame is 8
  times (3 commands + 128 bytes).

Bus cost model
--------------
:class:`BusModel` prices what luma's interfaces put on the wire.  I2C: every
``command()`` call is one transfer and every ``data()`` call is one transfer per
block (luma's ``i2c(bus=...)`` on an SMBus object: 32-byte blocks; luma's own
smbus2-managed ``i2c(port=...)``: ``i2c_rdwr`` messages of up to 4096 bytes);
each transfer costs 2 extra bytes (address byte + control byte) and each byte
takes 9 clock bits (8 + ACK).  SPI: no per-transfer bytes, 8 bits a byte.
:class:`UpdateReport` gives the bytes of one update and its modelled time.

On luma's smbus2-managed ``i2c(port=...)`` (what ``OledDisplay`` opens) :class:`BusPort`
makes an update's transfers itself, as the messages of one ``i2c_rdwr`` call (up to
the kernel's 42 an ioctl): the same transfers, byte for byte and in order, as luma's
``command()`` and ``data()`` would put on the wire, with a repeated START between them
instead of STOP and START, in one call instead of two a window.  Plans are kept by
where the frame changed (:meth:`DisplayWriter.plan`; plans of the same windows are
one, a page's spans are kept by its change too), and a plan's transfers are made
ready once (smbus2 messages over a buffer of their own, shared by the panels of one
address): an update copies its windows' bytes into them and makes the ioctl.

Errors
------
If the interface raises, the writer forgets its last frame and re-raises; the
next update (like the first one, and the one after :meth:`DisplayWriter.invalidate`)
sends the full frame.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from ctypes import c_char, pointer
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from PIL import Image

from .pages import PAGE_HEIGHT, image_to_pages, rotate_pages_180

__all__ = [
    "BusModel",
    "BusPort",
    "Controller",
    "DisplayWriter",
    "FrameWriter",
    "KeptPlan",
    "Panel",
    "PanelPort",
    "PassthroughWriter",
    "SerialInterface",
    "UpdateReport",
    "Window",
    "WriterTotals",
    "forget_plans",
    "image_to_pages",
    "window_bytes",
    "writer_for_device",
]

SSD1306_RAM_COLUMNS = 128
SH1106_RAM_COLUMNS = 132
I2C_MAX_COMMAND_BYTES = 32  # luma's i2c.command() asserts this

# SSD1306 / SH1106 command bytes used here
SSD1306_MEMORY_MODE = 0x20
SSD1306_HORIZONTAL = 0x00
SSD1306_COLUMN_ADDR = 0x21
SSD1306_PAGE_ADDR = 0x22
SET_PAGE = 0xB0  # | page  (SH1106 always; SSD1306 in page addressing mode)
SET_LOW_COLUMN = 0x00  # | low nibble
SET_HIGH_COLUMN = 0x10  # | high nibble


class SerialInterface(Protocol):
    """What luma.core's serial interfaces (``i2c``, ``spi``, ...) offer."""

    def command(self, *cmd: int) -> None: ...

    def data(self, data: list[int]) -> None: ...


class Controller(Enum):
    SSD1306 = "ssd1306"  # 0.96" modules
    SH1106 = "sh1106"  # 1.3" modules
    SSD1309 = "ssd1309"  # 2.42" modules


@dataclass(frozen=True)
class BusModel:
    """Bytes and time that commands and data cost on the wire."""

    name: str
    transfer_overhead: int  # bytes added per transfer (I2C: address + control byte)
    data_block: int  # most data bytes in one transfer
    bits_per_byte: int  # I2C: 9 (8 data + ACK); SPI: 8

    @classmethod
    def i2c(cls, block: int = 32) -> BusModel:
        return cls(f"i2c/{block}", transfer_overhead=2, data_block=block, bits_per_byte=9)

    @classmethod
    def spi(cls, transfer_size: int = 4096) -> BusModel:
        return cls("spi", transfer_overhead=0, data_block=transfer_size, bits_per_byte=8)

    @classmethod
    def for_interface(cls, interface: object) -> BusModel:
        """The model matching a luma interface; unknown ones are priced as SMBus I2C."""
        from luma.core.interface.serial import bitbang, i2c

        if isinstance(interface, i2c):
            return cls.i2c(4096 if getattr(interface, "_managed", False) else 32)
        if isinstance(interface, bitbang):  # luma's spi is a bitbang subclass
            return cls.spi(int(getattr(interface, "_transfer_size", 4096)))
        return cls.i2c(32)

    def data_transfers(self, count: int) -> int:
        return -(-count // self.data_block)

    def command_cost(self, count: int) -> int:
        return count + self.transfer_overhead if count else 0

    def data_cost(self, count: int) -> int:
        return count + self.transfer_overhead * self.data_transfers(count)

    def seconds(self, bus_bytes: int, hz: float) -> float:
        return bus_bytes * self.bits_per_byte / hz


@dataclass(frozen=True, order=True)
class Window:
    """Pages ``[page, page + pages)`` x columns ``[col, col + cols)`` of the visible frame."""

    page: int
    col: int
    pages: int = 1
    cols: int = 1

    @property
    def page_end(self) -> int:
        return self.page + self.pages

    @property
    def col_end(self) -> int:
        return self.col + self.cols

    @property
    def size(self) -> int:
        return self.pages * self.cols

    def union(self, other: Window) -> Window:
        page, col = min(self.page, other.page), min(self.col, other.col)
        page_end = max(self.page_end, other.page_end)
        col_end = max(self.col_end, other.col_end)
        return Window(page, col, page_end - page, col_end - col)


@dataclass(frozen=True)
class UpdateReport:
    """What one update put on the bus."""

    full: bool  # the whole frame was sent
    windows: tuple[Window, ...] = ()
    command_bytes: int = 0
    data_bytes: int = 0
    overhead_bytes: int = 0  # I2C address + control bytes
    transfers: int = 0
    bits_per_byte: int = 9
    passthrough: bool = False  # handed to ``device.display()``; not counted

    @property
    def bus_bytes(self) -> int:
        return self.command_bytes + self.data_bytes + self.overhead_bytes

    @property
    def skipped(self) -> bool:
        return not self.passthrough and self.transfers == 0

    def seconds(self, hz: float) -> float:
        """Modelled time on a bus clocked at ``hz`` (e.g. 400e3 or 1e6 for I2C)."""
        return self.bus_bytes * self.bits_per_byte / hz


@dataclass
class WriterTotals:
    updates: int = 0
    skipped: int = 0
    full_frames: int = 0
    command_bytes: int = 0
    data_bytes: int = 0
    overhead_bytes: int = 0
    transfers: int = 0

    @property
    def bus_bytes(self) -> int:
        return self.command_bytes + self.data_bytes + self.overhead_bytes

    def add(self, report: UpdateReport) -> None:
        self.updates += 1
        self.skipped += report.skipped
        self.full_frames += report.full and not report.passthrough
        self.command_bytes += report.command_bytes
        self.data_bytes += report.data_bytes
        self.overhead_bytes += report.overhead_bytes
        self.transfers += report.transfers


class FrameWriter(Protocol):
    totals: WriterTotals

    def update(self, image: Image.Image) -> UpdateReport: ...

    def invalidate(self) -> None: ...


# ----------------------------------------------------------------------- addressing


class _Addressing(Protocol):
    @property
    def multi_page(self) -> bool:
        """Whether one window may span several pages."""
        ...

    def commands(self, state: Any, window: Window) -> tuple[list[int], Any]:
        """Commands that aim at ``window`` given the pointer ``state`` (None: unknown),
        and the state once its data has been written."""
        ...

    def commands_at(
        self, state: Any, page: int, pages: int, col: int, cols: int
    ) -> tuple[list[int], Any]:
        """``commands`` for the window of those pages and columns."""
        ...

    def command_count(
        self, state: Any, page: int, pages: int, col: int, cols: int
    ) -> tuple[int, Any]:
        """How many commands ``commands_at`` gives, and the state after (the planner's
        pricing, without the commands)."""
        ...

    @property
    def max_commands(self) -> int:
        """The most command bytes that aim at one window."""
        ...

    @property
    def min_commands(self) -> int:
        """The fewest command bytes that aim at a span after a gap on the same page."""
        ...

    def full_frame_prefix(self) -> list[int]: ...


@dataclass(frozen=True)
class _SSD1306Addressing:
    """Horizontal addressing mode; state = (columns, pages) of the last window."""

    column_offset: int
    multi_page: bool = True

    def commands(self, state: Any, window: Window) -> tuple[list[int], Any]:
        return self.commands_at(state, window.page, window.pages, window.col, window.cols)

    def commands_at(
        self, state: Any, page: int, pages: int, col: int, cols: int
    ) -> tuple[list[int], Any]:
        columns = (col, col + cols)
        rows = (page, page + pages)
        cmds: list[int] = []
        if state is None or state[0] != columns:
            first = self.column_offset + col
            cmds += [SSD1306_COLUMN_ADDR, first, first + cols - 1]
        if state is None or state[1] != rows:
            cmds += [SSD1306_PAGE_ADDR, page, page + pages - 1]
        if not cmds:  # same window again: re-aim the column pointer anyway
            first = self.column_offset + col
            cmds = [SSD1306_COLUMN_ADDR, first, first + cols - 1]
        # Writing exactly the window's bytes wraps both pointers back to its start.
        return cmds, (columns, rows)

    def command_count(
        self, state: Any, page: int, pages: int, col: int, cols: int
    ) -> tuple[int, Any]:
        columns = (col, col + cols)
        rows = (page, page + pages)
        if state is None:
            return 6, (columns, rows)
        count = (3 if state[0] != columns else 0) + (3 if state[1] != rows else 0)
        return count or 3, (columns, rows)

    @property
    def max_commands(self) -> int:
        return 6

    @property
    def min_commands(self) -> int:
        return 3  # a span after another on its page: new columns

    def full_frame_prefix(self) -> list[int]:
        return [SSD1306_MEMORY_MODE, SSD1306_HORIZONTAL]


@dataclass(frozen=True)
class _SH1106Addressing:
    """Page addressing; state = (page, RAM column) of the write pointer."""

    column_offset: int
    multi_page: bool = False

    def commands(self, state: Any, window: Window) -> tuple[list[int], Any]:
        return self.commands_at(state, window.page, window.pages, window.col, window.cols)

    def commands_at(
        self, state: Any, page: int, pages: int, col: int, cols: int
    ) -> tuple[list[int], Any]:
        if pages != 1:
            raise ValueError("SH1106 windows are one page tall")
        column = self.column_offset + col
        cmds: list[int] = []
        if state is None or state[0] != page:
            cmds.append(SET_PAGE | page)
        if state is None or state[1] >> 4 != column >> 4:
            cmds.append(SET_HIGH_COLUMN | column >> 4)
        if state is None or state[1] & 0x0F != column & 0x0F:
            cmds.append(SET_LOW_COLUMN | column & 0x0F)
        end = min(column + cols, SH1106_RAM_COLUMNS - 1)
        return cmds, (page, end)

    def command_count(
        self, state: Any, page: int, pages: int, col: int, cols: int
    ) -> tuple[int, Any]:
        if pages != 1:
            raise ValueError("SH1106 windows are one page tall")
        column = self.column_offset + col
        end = min(column + cols, SH1106_RAM_COLUMNS - 1)
        if state is None:
            return 3, (page, end)
        count = (
            (state[0] != page) + (state[1] >> 4 != column >> 4) + (state[1] & 0x0F != column & 0x0F)
        )
        return count, (page, end)

    @property
    def max_commands(self) -> int:
        return 3

    @property
    def min_commands(self) -> int:
        return 1  # a span after a gap on its page: one nibble of the column at least

    def full_frame_prefix(self) -> list[int]:
        return []


# ------------------------------------------------------------------------- planning


_CHANGED = re.compile(rb"[^\x00]+")


def _changed_runs(old: bytes, new: bytes) -> list[tuple[int, int]]:
    """The [start, end) column runs where two pages differ (their XOR is not zero)."""
    if len(old) != len(new):
        raise ValueError("pages of different widths")
    size = len(new)
    diff = (int.from_bytes(old, "big") ^ int.from_bytes(new, "big")).to_bytes(size, "big")
    return [m.span() for m in _CHANGED.finditer(diff)]


def _row_runs(row: bytes, narrow: int) -> list[tuple[int, int]]:
    """The runs of non-zero bytes in a page's XOR of two frames, [start, end) columns,
    those less than ``narrow`` apart already joined (as :func:`_page_spans` joins them
    at once): the page is split at its gaps of ``narrow`` zeros or more
    (``bytes.split``, in C; a gap's zeros past a multiple of ``narrow`` begin the piece
    after it, and are left out of its run)."""
    body = row.lstrip(b"\x00")
    at = len(row) - len(body)
    if narrow <= 1:
        return [match.span() for match in _CHANGED.finditer(row, at)]
    runs: list[tuple[int, int]] = []
    for piece in body.rstrip(b"\x00").split(bytes(narrow)):
        if piece:
            end = at + len(piece)
            runs.append((end - len(piece.lstrip(b"\x00")), end))
            at = end + narrow
        else:
            at += narrow
    return runs


def _narrow_gap(addressing: _Addressing, bus: BusModel, width: int) -> int:
    """Runs less than this apart are always joined (see :func:`_page_spans`)."""
    overhead = bus.transfer_overhead
    slack = overhead if bus.data_block >= width else -overhead
    return addressing.min_commands + overhead + slack


def _emission_cost(addressing: _Addressing, bus: BusModel, windows: Sequence[Window]) -> int:
    state: Any = None
    cost = 0
    count_at = addressing.command_count
    overhead, block = bus.transfer_overhead, bus.data_block
    for window in windows:
        count, state = count_at(state, window.page, window.pages, window.col, window.cols)
        size = window.pages * window.cols
        cost += (count + overhead if count else 0) + size + overhead * -(-size // block)
    return cost


def _page_spans(
    addressing: _Addressing, bus: BusModel, page: int, width: int, runs: list[tuple[int, int]]
) -> list[Window]:
    """Group one page's changed runs into spans of least cost (exact, O(runs^2)).

    Two bounds find the same spans sooner. Splitting at a gap narrower than a new
    span's least overhead (its fewest commands, and a data transfer, less a block's
    slack) always costs more than bridging it, so such runs are joined first. And a
    span across a gap wider than a new span's most overhead (its most commands, a
    transfer each for them and the data, a block's slack) always costs more than
    splitting there, so no span is tried across such a gap."""
    overhead = bus.transfer_overhead
    narrow = _narrow_gap(addressing, bus, width)
    joined = [runs[0]]
    for start, end in runs[1:]:
        if start - joined[-1][1] < narrow:
            joined[-1] = (joined[-1][0], end)
        else:
            joined.append((start, end))
    runs = joined
    count = len(runs)
    if count == 1:
        start, end = runs[0]
        return [Window(page, start, 1, end - start)]
    wide = addressing.max_commands + 3 * overhead
    count_at, block = addressing.command_count, bus.data_block
    # best[j] = (least cost of covering runs[:j], pointer state after it, where its
    # last span starts); the state only depends on that last span.
    best: list[tuple[int, Any, int]] = [(0, None, -1)]
    low = 0  # spans start at or after the last wide gap
    for j in range(1, count + 1):
        end = runs[j - 1][1]
        if j > 1 and runs[j - 1][0] - runs[j - 2][1] > wide:
            low = j - 1
        choice: tuple[int, Any, int] | None = None
        for i in range(low, j):
            cost_before, state, _ = best[i]
            start = runs[i][0]
            commands, after = count_at(state, page, 1, start, end - start)
            size = end - start
            cost = cost_before + (commands + overhead if commands else 0) + size
            cost += overhead * -(-size // block)
            if choice is None or cost < choice[0]:
                choice = (cost, after, i)
        assert choice is not None
        best.append(choice)
    spans: list[Window] = []
    j = count
    while j > 0:
        i = best[j][2]
        spans.append(Window(page, runs[i][0], 1, runs[j - 1][1] - runs[i][0]))
        j = i
    return spans[::-1]


def _merge_vertically(addressing: _Addressing, bus: BusModel, spans: list[Window]) -> list[Window]:
    """Greedily stack spans of consecutive pages into taller windows when that is cheaper.

    A window aimed at alone (the pointer unknown) costs its most commands and its data:
    stacking a span on a window ending at the page above saves one window's commands and
    costs the union's data over the two's. Windows are (page, col, pages, cols) tuples
    here (ordered and compared as ``Window`` is), made ``Window``s at the end."""
    fixed = bus.command_cost(addressing.max_commands)
    overhead, block = bus.transfer_overhead, bus.data_block
    done: list[tuple[int, int, int, int]] = []
    open_: list[tuple[int, int, int, int]] = []  # windows ending at the previous page
    at, count = 0, len(spans)
    while at < count:
        page = spans[at].page
        extended: list[tuple[int, int, int, int]] = []
        while at < count and spans[at].page == page:
            span = spans[at]
            at += 1
            col, cols = span.col, span.cols
            span_cost = cols + overhead * -(-cols // block)
            best: tuple[int, tuple[int, int, int, int], tuple[int, int, int, int]] | None = None
            for rect in open_:
                r_page, r_col, r_pages, r_cols = rect
                if r_page + r_pages != page or rect in extended:
                    continue
                first = r_col if r_col < col else col
                end = max(r_col + r_cols, col + cols)
                size = (page + 1 - r_page) * (end - first)
                rect_size = r_pages * r_cols
                delta = (
                    size
                    + overhead * -(-size // block)
                    - rect_size
                    - overhead * -(-rect_size // block)
                    - span_cost
                    - fixed
                )
                if delta < 0 and (best is None or delta < best[0]):
                    best = (delta, rect, (r_page, first, page + 1 - r_page, end - first))
            if best is None:
                extended.append((page, col, 1, cols))
            else:
                open_.remove(best[1])
                extended.append(best[2])
        done += open_
        open_ = extended
    return [Window(*window) for window in sorted(done + open_)]


# ----------------------------------------------------------------------------- panel


@dataclass(frozen=True)
class Panel:
    """The panel at the far end of a port: controller, visible size, first visible column."""

    controller: Controller
    width: int = 128
    height: int = 64
    column_offset: int | None = None  # None: the controller's usual (SH1106: 2, else 0)

    def __post_init__(self) -> None:
        if self.height % PAGE_HEIGHT:
            raise ValueError(f"height {self.height} is not a whole number of pages")
        ram = SH1106_RAM_COLUMNS if self.controller is Controller.SH1106 else SSD1306_RAM_COLUMNS
        if self.offset + self.width > ram:
            name = self.controller.name
            raise ValueError(f"{self.width} columns from {self.offset} overflow the {name} RAM")

    @property
    def offset(self) -> int:
        if self.column_offset is not None:
            return self.column_offset
        return 2 if self.controller is Controller.SH1106 else 0

    @property
    def pages(self) -> int:
        return self.height // PAGE_HEIGHT

    def addressing(self) -> _Addressing:
        if self.controller is Controller.SH1106:
            return _SH1106Addressing(self.offset)
        return _SSD1306Addressing(self.offset)


def _check_frame_size(frame: bytes, width: int, pages: int) -> None:
    if len(frame) != width * pages:
        raise ValueError(f"frame has {len(frame)} bytes, expected {width * pages}")


def window_bytes(frame: bytes, width: int, window: Window) -> bytes:
    """The window's bytes of a frame, page after page (the order the RAM takes them)."""
    out = bytearray()
    for page in range(window.page, window.page_end):
        base = page * width
        out += frame[base + window.col : base + window.col_end]
    return bytes(out)


# ----------------------------------------------------------------------------- ports


class PanelPort(Protocol):
    """Takes the windows a :class:`DisplayWriter` planned to one panel.

    ``send`` raises if the windows could not be delivered (the writer then forgets
    what the panel shows and sends the full frame next time)."""

    @property
    def panel(self) -> Panel: ...

    @property
    def bus(self) -> BusModel:
        """What the bytes cost on the panel's own wire (the plan is priced with it)."""
        ...

    def send(self, frame: bytes, windows: Sequence[Window], full: bool) -> UpdateReport: ...


class BusPort:
    """The Pi's own bus to the panel: a luma serial interface (``i2c``, ``spi``, or any
    object with ``command(*bytes)`` and ``data(list)``) on an initialised panel."""

    def __init__(self, interface: SerialInterface, panel: Panel, bus: BusModel | None = None):
        self.interface = interface
        self._panel = panel
        self._bus = bus if bus is not None else BusModel.for_interface(interface)
        self._addressing = panel.addressing()
        self._combined = _combined_transfers(interface)
        # the same, when its messages are smbus2's own (plans' transfers made ready)
        self._programmable = (
            self._combined
            if self._combined is not None and self._combined[1] is _smbus2_write()
            else None
        )
        self._command_messages: dict[tuple[int, ...], Any] = {}

    @property
    def panel(self) -> Panel:
        return self._panel

    @property
    def bus(self) -> BusModel:
        return self._bus

    def send(self, frame: bytes, windows: Sequence[Window], full: bool) -> UpdateReport:
        if self._combined is not None:
            return self._send_combined(self._combined, frame, windows, full)
        bus, width = self._bus, self._panel.width
        command_bytes = data_bytes = overhead = transfers = 0
        for window, cmds in self._window_commands(windows, full):
            if cmds:
                self.interface.command(*cmds)
                command_bytes += len(cmds)
                overhead += bus.transfer_overhead
                transfers += 1
            data = list(window_bytes(frame, width, window))
            self.interface.data(data)
            data_bytes += len(data)
            blocks = bus.data_transfers(len(data))
            overhead += blocks * bus.transfer_overhead
            transfers += blocks
        return UpdateReport(
            full=full,
            windows=tuple(windows),
            command_bytes=command_bytes,
            data_bytes=data_bytes,
            overhead_bytes=overhead,
            transfers=transfers,
            bits_per_byte=bus.bits_per_byte,
        )

    def send_plan(self, frame: bytes, plan: KeptPlan) -> UpdateReport:
        """``send(frame, windows, full)`` for a plan :meth:`DisplayWriter.plan` kept.

        On luma's smbus2-managed ``i2c`` the plan's transfers are made once, as smbus2
        messages over buffers of their own (each window's data message, its control
        byte first), and kept with the plan's report: an update copies the windows'
        bytes of the frame into them and makes the one ``i2c_rdwr`` (the kernel copies
        the messages at the call, so their buffers are free again when it returns)."""
        rdwr = self._combined
        if rdwr is None or rdwr is not self._programmable:
            return self.send(frame, plan[1], plan[0])
        key = (id(plan), rdwr[0])
        program = _PROGRAMS.get(key)
        if program is None or program.plan is not plan:
            if len(_PROGRAMS) >= PROGRAMS_KEPT:
                _PROGRAMS.clear()
            program = _PROGRAMS[key] = self._program(rdwr, plan)
        busy = program.busy
        if not busy.acquire(blocking=False):  # another thread's update fills its buffer
            return self._send_combined(rdwr, frame, plan[1], plan[0])
        try:
            view = program.view
            for start, stop, first, last in program.copies:
                view[start:stop] = frame[first:last]
            transfer, messages = rdwr[2], program.messages
            if len(messages) <= I2C_RDWR_MAX_MESSAGES:
                transfer(*messages)
            else:
                for first in range(0, len(messages), I2C_RDWR_MAX_MESSAGES):
                    transfer(*messages[first : first + I2C_RDWR_MAX_MESSAGES])
        finally:
            busy.release()
        return program.report

    def _program(self, rdwr: _CombinedTransfers, plan: KeptPlan) -> _Program:
        """A kept plan's messages (as :meth:`_send_combined` makes them) over one buffer
        of the windows' data, where each update's bytes go (``copies``)."""
        address, message, _ = rdwr
        full, windows = plan
        width = self._panel.width
        # a bytearray, not ctypes' create_string_buffer (which makes an array type for
        # every new size: some 10 us)
        buffer = bytearray(sum(window.pages * window.cols for window in windows) + len(windows))
        over = _smbus2_message_type()
        messages: list[Any] = []
        copies: list[tuple[int, int, int, int]] = []
        command_bytes = 0
        at = 0
        for window, cmds in self._window_commands(windows, full):
            if cmds:
                messages.append(self._command_message(message, address, cmds))
                command_bytes += len(cmds)
            page, col, cols = window.page, window.col, window.cols
            size = window.pages * cols
            if size > I2C_MAX_MESSAGE_BYTES:  # pragma: no cover - 1 KiB frames
                raise AssertionError("data too long for one message")
            buffer[at] = _DATA_PREFIX[0]  # a message as i2c_msg.write makes it, on the buffer
            messages.append(over(address, 0, size + 1, pointer(c_char.from_buffer(buffer, at))))
            at += 1
            first = page * width + col
            for _ in range(window.pages):
                copies.append((at, at + cols, first, first + cols))
                at += cols
                first += width
        data_bytes = len(buffer) - len(windows)
        bus = self._bus
        report = UpdateReport(
            full,
            windows,
            command_bytes,
            data_bytes,
            len(messages) * bus.transfer_overhead,
            len(messages),
            bus.bits_per_byte,
        )
        view = memoryview(buffer)
        busy = threading.Lock()
        return _Program(plan, buffer, view, tuple(messages), tuple(copies), report, busy)

    def _command_message(
        self, message: Callable[[int, bytes], Any], address: int, cmds: list[int]
    ) -> Any:
        """The message of a window's addressing commands, made once: the kernel copies a
        message, never keeps it."""
        key = tuple(cmds)
        command = self._command_messages.get(key)
        if command is None:
            command = message(address, bytes((I2C_COMMAND_MODE, *cmds)))
            if len(self._command_messages) >= COMMAND_MESSAGES_KEPT:
                self._command_messages.clear()
            self._command_messages[key] = command
        return command

    def _window_commands(
        self, windows: Sequence[Window], full: bool
    ) -> Iterator[tuple[Window, list[int]]]:
        """Each window with the addressing commands that go before its data (none when
        the panel's pointer is there already; a full frame addresses every window)."""
        state: Any = None
        for index, window in enumerate(windows):
            if full:
                cmds = _full_frame_commands(self._addressing, index, window)
            else:
                cmds, state = self._addressing.commands(state, window)
            if len(cmds) > I2C_MAX_COMMAND_BYTES:  # pragma: no cover - never built
                raise AssertionError("command sequence too long for one transfer")
            yield window, cmds

    def _send_combined(
        self, rdwr: _CombinedTransfers, frame: bytes, windows: Sequence[Window], full: bool
    ) -> UpdateReport:
        """The same transfers as ``send`` through luma (each window's commands, then its
        data, each one I2C message from the address byte and control byte on), made as
        ``i2c_rdwr`` messages of one ioctl (up to the kernel's 42 a call) instead of an
        SMBus block write and an ``i2c_rdwr`` per window."""
        address, message, transfer = rdwr
        bus, width = self._bus, self._panel.width
        overhead_each = bus.transfer_overhead
        command_bytes = data_bytes = 0
        messages: list[Any] = []
        for window, cmds in self._window_commands(windows, full):
            if cmds:
                messages.append(self._command_message(message, address, cmds))
                command_bytes += len(cmds)
            if window.pages == 1:
                base = window.page * width
                data = _DATA_PREFIX + frame[base + window.col : base + window.col_end]
            else:
                data = _DATA_PREFIX + window_bytes(frame, width, window)
            if len(data) > I2C_MAX_MESSAGE_BYTES + 1:  # pragma: no cover - 1 KiB frames
                raise AssertionError("data too long for one message")
            messages.append(message(address, data))
            data_bytes += len(data) - 1
        for first in range(0, len(messages), I2C_RDWR_MAX_MESSAGES):
            transfer(*messages[first : first + I2C_RDWR_MAX_MESSAGES])
        return UpdateReport(
            full=full,
            windows=tuple(windows),
            command_bytes=command_bytes,
            data_bytes=data_bytes,
            overhead_bytes=len(messages) * overhead_each,
            transfers=len(messages),
            bits_per_byte=bus.bits_per_byte,
        )


#: (address, smbus2's ``i2c_msg.write``, the bus's ``i2c_rdwr``)
_CombinedTransfers = tuple[int, Callable[[int, bytes], Any], Callable[..., None]]
I2C_COMMAND_MODE = 0x00  # the control byte before commands (luma's i2c._cmd_mode)
_DATA_PREFIX = b"\x40"  # the control byte before display data (luma's i2c._data_mode)
I2C_MAX_MESSAGE_BYTES = 4096  # luma's managed i2c: data in messages of up to 4 KiB
I2C_RDWR_MAX_MESSAGES = 42  # the kernel's I2C_RDWR_IOCTL_MAX_MSGS
COMMAND_MESSAGES_KEPT = 512  # a panel's addressing messages kept (a window's few bytes each)
PROGRAMS_KEPT = 1024  # plans made ready as smbus2 messages, as many as plans are kept
#: (full frame?, windows): a plan as :class:`DisplayWriter` keeps it (shared, never changed)
KeptPlan = tuple[bool, tuple[Window, ...]]


@dataclass(slots=True, eq=False)
class _Program:
    """A kept plan's transfers, ready: smbus2 messages over ``buffer`` (``view``), and
    where a frame's bytes go in it: ``(start, stop, first, last)``, ``view[start:stop]
    = frame[first:last]`` (a window's page each)."""

    plan: KeptPlan
    buffer: bytearray  # what the data messages point into (kept alive with them)
    view: memoryview
    messages: tuple[Any, ...]
    copies: tuple[tuple[int, int, int, int], ...]
    report: UpdateReport
    busy: threading.Lock  # held while an update fills the buffer and makes the transfer


#: (id of a kept plan, I2C address) -> its transfers made ready, shared by the panels of
#: one address (six seats' panels, each on its own bus, change in the same places). A
#: program keeps its plan alive, so the plan's id is not another's while it is kept.
_PROGRAMS: dict[tuple[int, int], _Program] = {}


def _smbus2_write() -> Any:
    """smbus2's ``i2c_msg.write`` (what luma's managed ``i2c`` makes its messages with)."""
    global _SMBUS2_WRITE
    if _SMBUS2_WRITE is None:
        from smbus2 import i2c_msg

        _SMBUS2_WRITE = i2c_msg.write
    return _SMBUS2_WRITE


_SMBUS2_WRITE: Any = None


def _smbus2_message_type() -> Any:
    """smbus2's ``i2c_msg`` (addr, flags, len, buf)."""
    from smbus2 import i2c_msg

    return i2c_msg


def _combined_transfers(interface: object) -> _CombinedTransfers | None:
    """For luma's ``i2c(port=N)`` (smbus2 opened by luma: its data already goes as
    ``i2c_rdwr`` messages), what sends its transfers as messages of one ioctl; else None
    (an SMBus object handed to luma takes block writes of 32 bytes only; SPI)."""
    if not getattr(interface, "_managed", False):
        return None
    message = getattr(interface, "_i2c_msg_write", None)
    transfer = getattr(getattr(interface, "_bus", None), "i2c_rdwr", None)
    address = getattr(interface, "_addr", None)
    if message is None or transfer is None or not isinstance(address, int):
        return None
    if (getattr(interface, "_cmd_mode", None), getattr(interface, "_data_mode", None)) != (
        I2C_COMMAND_MODE,
        _DATA_PREFIX[0],
    ):
        return None
    return address, message, transfer


def _full_frame_commands(addressing: _Addressing, index: int, window: Window) -> list[int]:
    # Every window addressed from scratch; the first also restores the mode.
    cmds, _ = addressing.commands(None, window)
    return addressing.full_frame_prefix() + cmds if index == 0 else cmds


# --------------------------------------------------------------------------- writers

PLANS_KEPT = 1024  # plans kept per panel and bus (keys of about a frame's size each)
#: (addressing, bus, width, pages) -> the XOR of two frames -> (full?, windows)
_PLANS: dict[tuple[object, BusModel, int, int], dict[int, tuple[bool, tuple[Window, ...]]]] = {}
#: the same key -> the whole frame's plan (the first update, and after an error)
_WHOLE: dict[tuple[object, BusModel, int, int], KeptPlan] = {}
#: the same key -> (a page's first byte, the page's XOR of two frames) -> its spans: a
#: frame's changes are new together more often than page by page
_PAGE_PLANS: dict[tuple[object, BusModel, int, int], dict[tuple[int, bytes], tuple[Window, ...]]]
_PAGE_PLANS = {}
PAGE_PLANS_KEPT = 4096  # a page's spans kept per panel and bus (keys of a page's size)
#: the same key -> each kept plan by its windows: changes of different bits in the same
#: places (half the new ones) share one plan, and the transfers a port made ready for it
_SAME_PLANS: dict[tuple[object, BusModel, int, int], dict[KeptPlan, KeptPlan]] = {}


def forget_plans() -> None:
    """Forget every kept plan and its transfers made ready (as a freshly started
    process: benchmarks that replay frames, tests)."""
    _PLANS.clear()
    _WHOLE.clear()
    _PAGE_PLANS.clear()
    _SAME_PLANS.clear()
    _PROGRAMS.clear()


class DisplayWriter:
    """Sends frames to one panel through a :class:`PanelPort`, only what changed."""

    def __init__(
        self,
        port: PanelPort,
        *,
        preprocess: Callable[[Image.Image], Image.Image] | None = None,
        size: tuple[int, int] | None = None,
        rotation: int | None = None,
    ) -> None:
        """``size`` is the logical image size when ``preprocess`` rotates (luma devices);
        ``rotation`` the quarter turns ``preprocess`` makes, when known (then
        :meth:`update_pages` turns frames itself; None with a ``preprocess``: unknown)."""
        panel = port.panel
        self.port = port
        self.controller = panel.controller
        self.width = panel.width
        self.pages = panel.pages
        self.column_offset = panel.offset
        self.bus = port.bus
        self.size = size if size is not None else (panel.width, panel.height)
        self._preprocess = preprocess
        self.rotation = 0 if preprocess is None else rotation
        self._addressing = panel.addressing()
        self._last: bytes | None = None
        # the last frame as a number (for the XOR of the next), and the frame it is of
        self._number_of: bytes | None = None
        self._number = 0
        self._full_cost: int | None = None  # the full frame's bus cost, once worked out
        store = (self._addressing, self.bus, self.width, self.pages)
        self._plans = _PLANS.setdefault(store, {})
        self._whole = _WHOLE.setdefault(store, (True, tuple(self._full_frame())))
        self._frame_size = self.width * self.pages
        self._narrow = _narrow_gap(self._addressing, self.bus, self.width)
        self._page_plans = _PAGE_PLANS.setdefault(store, {})
        self._same_plans = _SAME_PLANS.setdefault(store, {})
        self._blank_page = bytes(self.width)
        self._unchanged = UpdateReport(full=False, bits_per_byte=self.bus.bits_per_byte)
        send_plan = getattr(port, "send_plan", None)
        self._send_plan: Callable[[bytes, KeptPlan], UpdateReport] = (
            send_plan
            if send_plan is not None
            else lambda frame, plan: port.send(frame, list(plan[1]), plan[0])
        )
        self.totals = WriterTotals()

    @classmethod
    def for_interface(
        cls,
        interface: SerialInterface,
        controller: Controller,
        *,
        width: int = 128,
        height: int = 64,
        column_offset: int | None = None,
        bus: BusModel | None = None,
        preprocess: Callable[[Image.Image], Image.Image] | None = None,
        size: tuple[int, int] | None = None,
        rotation: int | None = None,
    ) -> DisplayWriter:
        """A writer on the Pi's own bus (a :class:`BusPort` on ``interface``)."""
        panel = Panel(controller, width, height, column_offset)
        port = BusPort(interface, panel, bus)
        return cls(port, preprocess=preprocess, size=size, rotation=rotation)

    @property
    def last_frame(self) -> bytes | None:
        """The frame (page layout) the panel is known to show, or None if unknown."""
        return self._last

    def invalidate(self) -> None:
        """Forget what the panel shows: the next update sends the full frame."""
        self._last = None

    def assume_blank(self) -> None:
        """The panel is known to be dark (luma's constructor has just cleared it): the
        next update sends only what it lights, not a second full frame."""
        self._last = bytes(self.width * self.pages)

    def frame_bytes(self, image: Image.Image) -> bytes:
        if image.size != self.size:
            raise ValueError(f"image is {image.size}, the panel takes {self.size}")
        if self._preprocess is not None:
            image = self._preprocess(image)
        if image.size != (self.width, self.pages * PAGE_HEIGHT):
            raise ValueError(f"preprocessed image is {image.size}")
        return image_to_pages(image)

    def update(self, image: Image.Image) -> UpdateReport:
        """Bring the panel to ``image`` (mode "1"), sending only what differs."""
        return self.update_frame(self.frame_bytes(image))

    def update_pages(self, pages: bytes) -> UpdateReport:
        """Like :meth:`update` for ``image_to_pages(image)``: the screen in page layout
        before any rotation (as ``controller.render.screen.render_pages`` composes it)."""
        if self.rotation == 0:
            return self.update_frame(pages)
        if self.rotation == 2:
            _check_frame_size(pages, self.width, self.pages)
            return self.update_frame(rotate_pages_180(pages))
        raise ValueError(f"frames for this panel turned by {self.rotation} quarters: use update")

    def update_frame(self, frame: bytes) -> UpdateReport:
        """Like :meth:`update`, for a frame already in page layout (and orientation)."""
        if len(frame) != self._frame_size:
            _check_frame_size(frame, self.width, self.pages)
        totals = self.totals
        if frame == self._last:
            totals.updates += 1
            totals.skipped += 1
            return self._unchanged
        plan = self._kept_plan(frame)
        self._last = None  # unknown until every transfer went through
        report = self._send_plan(frame, plan)
        self._last = frame
        totals.add(report)
        return report

    def _kept_plan(self, frame: bytes) -> KeptPlan:
        """:meth:`plan`'s windows as kept (shared: never changed), and the frame as a
        number kept for the next."""
        last = self._last
        if last is None:
            return self._whole
        if len(last) != len(frame):
            raise ValueError(f"frame has {len(frame)} bytes, the last {len(last)}")
        before = self._number if self._number_of is last else int.from_bytes(last, "big")
        number = int.from_bytes(frame, "big")
        self._number_of, self._number = frame, number
        changed = before ^ number
        plans = self._plans
        kept = plans.get(changed)
        if kept is None:
            full, windows = self._plan_changes(last, frame, changed)
            if full:
                kept = self._whole
            else:  # the same windows as another change's: the same plan (and transfers)
                same = self._same_plans
                if len(same) >= PLANS_KEPT:
                    same.clear()
                made = (False, tuple(windows))
                kept = same.setdefault(made, made)
            if len(plans) >= PLANS_KEPT:
                with contextlib.suppress(KeyError, StopIteration, RuntimeError):
                    del plans[next(iter(plans))]
            plans[changed] = kept
        return kept

    def plan(self, frame: bytes) -> tuple[bool, list[Window]]:
        """(full frame?, windows) that :meth:`update_frame` would send for ``frame``.

        The plan depends on nothing but where the frame differs from the last (the
        panel, its bus and the bits that changed), and a table's screens change in the
        same places again and again (a card played, a score, a menu's cursor, at every
        seat): plans are kept by the XOR of the two frames, shared by the writers of
        the same panel and bus, the oldest forgotten past ``PLANS_KEPT``."""
        full, windows = self._kept_plan(frame)
        return full, list(windows)

    def _plan_changes(
        self, last: bytes, frame: bytes, changed: int | None = None
    ) -> tuple[bool, list[Window]]:
        """The windows of least cost for ``frame`` after ``last`` (``changed``: their XOR
        as a number, when already known)."""
        addressing, bus = self._addressing, self.bus
        if changed is None:
            changed = int.from_bytes(last, "big") ^ int.from_bytes(frame, "big")
        width = self.width
        diff = changed.to_bytes(len(frame), "big")
        spans: list[Window] = []
        kept, narrow, blank = self._page_plans, self._narrow, self._blank_page
        for base in range(0, len(diff), width):
            row = diff[base : base + width]
            if row == blank:
                continue
            key = (base, row)
            page_spans = kept.get(key)
            if page_spans is None:
                runs = _row_runs(row, narrow)
                page_spans = tuple(_page_spans(addressing, bus, base // width, width, runs))
                if len(kept) >= PAGE_PLANS_KEPT:
                    kept.clear()
                kept[key] = page_spans
            spans += page_spans
        best, cost = spans, _emission_cost(addressing, bus, spans)
        if addressing.multi_page and len(spans) > 1:
            merged = _merge_vertically(addressing, bus, spans)
            merged_cost = _emission_cost(addressing, bus, merged)
            if merged_cost < cost:  # on a tie the spans as they are
                best, cost = merged, merged_cost
        if self._full_cost is None:
            self._full_cost = self._full_frame_cost()
        if cost >= self._full_cost:
            return True, self._full_frame()
        return False, best

    def _full_frame(self) -> list[Window]:
        if self._addressing.multi_page:
            return [Window(0, 0, self.pages, self.width)]
        return [Window(page, 0, 1, self.width) for page in range(self.pages)]

    def _full_frame_cost(self) -> int:
        cost = 0
        for index, window in enumerate(self._full_frame()):
            cmds = _full_frame_commands(self._addressing, index, window)
            cost += self.bus.command_cost(len(cmds)) + self.bus.data_cost(window.size)
        return cost


@dataclass
class PassthroughWriter:
    """For devices without a known controller (luma's ``dummy``): ``device.display()``."""

    device: Any
    totals: WriterTotals = field(default_factory=WriterTotals)

    def update(self, image: Image.Image) -> UpdateReport:
        mode = getattr(self.device, "mode", image.mode)
        self.device.display(image if image.mode == mode else image.convert(mode))
        report = UpdateReport(full=True, passthrough=True)
        self.totals.add(report)
        return report

    def invalidate(self) -> None:
        pass


# luma.oled before 3.16 has no ``sh1106._page_address_offset``: its sh1106.display()
# always addresses column 2 (``0x02 0x10``), the first visible column of a 128-wide
# panel in the SH1106's 132-column RAM.
LUMA_SH1106_COLUMN = 2


def writer_for_device(device: Any, *, bus: BusModel | None = None) -> FrameWriter:
    """A :class:`DisplayWriter` for luma's ssd1306/ssd1309/sh1106, else a
    :class:`PassthroughWriter`."""
    from luma.oled.device import sh1106, ssd1306, ssd1309

    if isinstance(device, sh1106):
        offset = int(getattr(device, "_page_address_offset", LUMA_SH1106_COLUMN))
        controller = Controller.SH1106
    elif isinstance(device, ssd1309):
        controller, offset = Controller.SSD1309, int(getattr(device, "_colstart", 0))
    elif isinstance(device, ssd1306):
        controller, offset = Controller.SSD1306, int(getattr(device, "_colstart", 0))
    else:
        return PassthroughWriter(device)
    return DisplayWriter.for_interface(
        device._serial_interface,
        controller,
        width=int(device._w),
        height=int(device._h),
        column_offset=offset,
        bus=bus,
        preprocess=device.preprocess,
        size=(int(device.size[0]), int(device.size[1])),
        rotation=int(device.rotate),
    )
