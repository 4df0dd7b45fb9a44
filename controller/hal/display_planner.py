"""The update planner: what of a 1-bit frame an SSD1306/SSD1309/SH1106 OLED must be sent,
only the bytes that changed. Pure: it sends nothing itself, a port does.

luma.oled's ``ssd1306.display()`` / ``sh1106.display()`` send the whole 1 KiB frame
on every call: ~25 ms per panel at 400 kHz I2C, ~150 ms for six panels sharing a
bus.  :class:`DisplayWriter` keeps the last frame it sent and, for a new one,
sends only the changed column spans of each page (merging spans when the gap
costs fewer bus bytes than addressing a new span), or nothing at all when the
frame did not change.

The port: deciding and sending are apart
-----------------------------------------
:class:`DisplayWriter` decides *which* page/column windows changed (it keeps the
last frame and plans the windows at the least bus cost of the panel at the far
end); a :class:`PanelPort` takes those windows to the panel.  Two adapters:

* ``controller.hal.display_bus.BusPort``: the Pi's own I2C or SPI bus through a luma interface
  (two-seat tables wired to the Pi); it turns windows into controller commands.
* ``controller.hal.node_display.NodePort``: the seat node's serial link; the
  windows travel as display frames (``firmware/PROTOCOL.md``) and the node's own
  driver addresses its panel.

A port says which panel it reaches (:class:`Panel`: controller, size, column
offset) and what its bus costs (:class:`BusModel`), so that the plan is priced as
the bytes really go on the panel's wire.

Bus cost model
--------------
:class:`BusModel` prices what luma's interfaces put on the wire.  I2C: every
``command()`` call is one transfer and every ``data()`` call is one transfer per
block (luma's ``i2c(bus=...)`` on an SMBus object: 32-byte blocks; luma's own
smbus2-managed ``i2c(port=...)``: ``i2c_rdwr`` messages of up to 4096 bytes);
each transfer costs 2 extra bytes (address byte + control byte) and each byte
takes 9 clock bits (8 + ACK).  SPI: no per-transfer bytes, 8 bits a byte.
:class:`UpdateReport` gives the bytes of one update and its modelled time. Each
controller's addressing commands and their cost are in ``controller.hal.panel_addressing``.

Errors
------
If the port raises, the writer forgets its last frame and re-raises; the
next update (like the first one, and the one after :meth:`DisplayWriter.invalidate`)
sends the full frame.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from PIL import Image

from .pages import PAGE_HEIGHT, image_to_pages, rotate_pages_180
from .panel_addressing import (
    Addressing,
    SH1106Addressing,
    SSD1306Addressing,
    Window,
    full_frame_commands,
)
from .panels import PANELS, Controller

__all__ = [
    "BusModel",
    "DisplayWriter",
    "FrameWriter",
    "KeptPlan",
    "Panel",
    "PanelPort",
    "UpdateReport",
    "WriterTotals",
    "forget_plans",
    "window_bytes",
]


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

    def data_transfers(self, count: int) -> int:
        return -(-count // self.data_block)

    def command_cost(self, count: int) -> int:
        return count + self.transfer_overhead if count else 0

    def data_cost(self, count: int) -> int:
        return count + self.transfer_overhead * self.data_transfers(count)

    def seconds(self, bus_bytes: int, hz: float) -> float:
        return bus_bytes * self.bits_per_byte / hz


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


def _narrow_gap(addressing: Addressing, bus: BusModel, width: int) -> int:
    """Runs less than this apart are always joined (see :func:`_page_spans`)."""
    overhead = bus.transfer_overhead
    slack = overhead if bus.data_block >= width else -overhead
    return addressing.min_commands + overhead + slack


def _emission_cost(addressing: Addressing, bus: BusModel, windows: Sequence[Window]) -> int:
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
    addressing: Addressing, bus: BusModel, page: int, width: int, runs: list[tuple[int, int]]
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


def _merge_vertically(addressing: Addressing, bus: BusModel, spans: list[Window]) -> list[Window]:
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
    column_offset: int | None = None  # None: the controller's usual (``panels.PANELS``)

    def __post_init__(self) -> None:
        if self.height % PAGE_HEIGHT:
            raise ValueError(f"height {self.height} is not a whole number of pages")
        if self.offset + self.width > PANELS[self.controller].ram_columns:
            name = self.controller.name
            raise ValueError(f"{self.width} columns from {self.offset} overflow the {name} RAM")

    @property
    def offset(self) -> int:
        if self.column_offset is not None:
            return self.column_offset
        return PANELS[self.controller].column_offset

    @property
    def pages(self) -> int:
        return self.height // PAGE_HEIGHT

    def addressing(self) -> Addressing:
        if PANELS[self.controller].addressing == "page":
            return SH1106Addressing(self.offset)
        return SSD1306Addressing(self.offset)


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


#: (full frame?, windows): a plan as :class:`DisplayWriter` keeps it (shared, never changed)
KeptPlan = tuple[bool, tuple[Window, ...]]



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
    """Forget every kept plan (as a freshly started process: benchmarks that replay
    frames, tests; ``display_bus.forget_plans`` forgets their transfers made ready too)."""
    _PLANS.clear()
    _WHOLE.clear()
    _PAGE_PLANS.clear()
    _SAME_PLANS.clear()


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
        if changed is None:
            changed = int.from_bytes(last, "big") ^ int.from_bytes(frame, "big")
        best, cost = self._spans(changed.to_bytes(len(frame), "big"), 0)
        if self._full_cost is None:
            self._full_cost = self._full_frame_cost()
        if cost >= self._full_cost:
            return True, self._full_frame()
        return False, best

    def _spans(self, diff: bytes, first_page: int) -> tuple[list[Window], int]:
        """The windows of least cost, and their cost, for the XOR ``diff`` of whole pages
        from ``first_page`` on: each page's spans (kept by the page's place and XOR),
        stacked into taller windows where that is cheaper."""
        addressing, bus, width = self._addressing, self.bus, self.width
        spans: list[Window] = []
        kept, narrow, blank = self._page_plans, self._narrow, self._blank_page
        first = first_page * width
        for at in range(0, len(diff), width):
            row = diff[at : at + width]
            if row == blank:
                continue
            base = first + at
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
        return best, cost

    def tile_windows(self, old: bytes, new: bytes, first_page: int) -> tuple[Window, ...]:
        """The windows to send when the whole pages from ``first_page`` on go from ``old``
        to ``new`` and nothing else changes (a screen's tile: ``NodePort.send_tiles``):
        found as :meth:`plan` finds a frame's, within those pages."""
        if len(old) != len(new) or len(new) % self.width or first_page < 0:
            raise ValueError(f"a tile of {len(new)} bytes after {len(old)} at page {first_page}")
        if first_page * self.width + len(new) > self._frame_size:
            raise ValueError(f"a tile of {len(new)} bytes at page {first_page} is off the panel")
        diff = (int.from_bytes(old, "big") ^ int.from_bytes(new, "big")).to_bytes(len(new), "big")
        return tuple(self._spans(diff, first_page)[0])

    def shown_as(self, frame: bytes) -> None:
        """The panel is known to show ``frame`` now (its port sent it another way:
        ``NodePort.send_tiles``); the next update is planned after it."""
        _check_frame_size(frame, self.width, self.pages)
        self._last = frame

    def _full_frame(self) -> list[Window]:
        if self._addressing.multi_page:
            return [Window(0, 0, self.pages, self.width)]
        return [Window(page, 0, 1, self.width) for page in range(self.pages)]

    def _full_frame_cost(self) -> int:
        cost = 0
        for index, window in enumerate(self._full_frame()):
            cmds = full_frame_commands(self._addressing, index, window)
            cost += self.bus.command_cost(len(cmds)) + self.bus.data_cost(window.size)
        return cost
