"""The seat node's serial link as a :class:`~controller.hal.display_planner.PanelPort`.

On a table with one cable per seat the node drives the seat's panel on its own
short I2C bus. The Pi still renders every screen and its ``DisplayWriter`` still
decides which windows changed; :class:`NodePort` sends those windows to the node as
display frames (``firmware/PROTOCOL.md``, "Display frames"):

* protocol 3 (a node whose HELLO says 3): one update is ``DU <update> <regions>
  <bytes> FULL|DIFF`` followed by one ``DR`` frame per changed window (its bytes page
  after page in base64, up to 1,393 bytes a frame for the whole screen), ``bytes``
  being their byte count, so the node reads them with one call; written in one go;
* protocol 4: the same with a fifth ``DU`` argument, ``ACK`` or ``-``: the node answers
  ``DACK`` only when asked, and its heartbeat says the last update it wrote whole;
  protocol 5: protocol 4's frames, the node's queue four times larger;
* protocol 2: ``DU <update> <frames> FULL|DIFF`` followed by ``DW`` pieces (at most 24
  bytes, base64, a piece), written in one go so no other frame comes between them;
* the node answers ``DACK <update>`` once the pieces are in the panel's RAM (protocol
  4: when the update asked); a ``DACK`` or a heartbeat's ``written`` acknowledges that
  update and every one before it;
* the whole frame is sent again (a FULL update) when the node says ``DLOST`` (a
  piece went missing), when it reports its panel OK again (``PANEL``: back after an
  I2C error, freshly initialised), when it (re)connects, and when an update is still
  unacknowledged at a heartbeat ``ack_timeout`` seconds after it was sent.

Flow control: with protocol 3 and 2 the port never has more than one update on its
way; with protocol 4, at most ``WINDOW_BYTES`` of DR blocks and ``WINDOW_UPDATES``
updates (the node's queue), an update that leaves more than ``ASK_ACK_BYTES`` or
``ASK_ACK_UPDATES`` unacknowledged asking for its DACK (so one that must wait for room
always has a DACK on its way; no update is larger than the whole screen, which is sent
instead); with protocol 5 the same with the node's queue four times larger
(``send_window``: 8,192 bytes and 112 updates, a DACK asked over 6,700 or 96). While
an update waits, the frames that come are only remembered, their windows merged, and
when the acknowledgement comes one update carries them all (the windows that changed
since the node's last screen, the latest frame's bytes; the whole screen when they
would cost as much). So a seat's
panel gets at most one update per acknowledgement when the window is full, whatever
the table draws, and the node's bounded display queue never overflows from a Pi that
keeps to this. On a table of protocol 4 an event that changes six panels costs the
Pi six writes and, most of the time, no read: the heartbeats it reads anyway carry the
acknowledgements. Most updates (nothing held, room in the window, no whole screen
instead) go the direct way: the frames laid out once a plan for the port, and the
seat's link encodes the DU and its DR frames in one call (``SeatLink.send_update``),
the bytes ``send_counted`` would write for them. Until the node has reported its panel OK,
frames are only remembered: the latest goes out whole as soon as it does.

The windows are planned at the cost of the node's I2C bus (``machine.I2C`` at
400 kHz: one transfer per command group and per piece), which is what decides how
soon the seat's panel shows the frame.
"""

from __future__ import annotations

import binascii
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Final, Protocol, cast

from PIL import Image

from .display import DisplayConfig
from .display_planner import BusModel, DisplayWriter, KeptPlan, Panel, UpdateReport, window_bytes
from .events import (
    DisplayAck,
    DisplayLost,
    Heartbeat,
    LinkEvent,
    NodeConnected,
    NodeDisconnected,
    PanelReport,
)
from .frames import SEQ_MODULO
from .panel_addressing import Window
from .panels import Controller
from .seatlink import SeatLink

__all__ = [
    "MAX_PIECE",
    "NODE_BUS",
    "WINDOW_4",
    "WINDOW_5",
    "FrameSender",
    "NodeDisplay",
    "NodePort",
    "NodePortStats",
    "SendWindow",
    "pieces",
    "send_window",
]

log = logging.getLogger(__name__)

MAX_PIECE: Final = 24  # data bytes in one DW frame: 32 base64 characters, an argument's most
MAX_FRAMES: Final = 999  # DW frames in one update
MAX_HELD_WINDOWS: Final = 16  # windows merged while awaiting a DACK; more: the whole screen
# Protocol 3 (firmware/seatnode/display.py): a DU's block of DR frames is at most
# MAX_BLOCK bytes and MAX_REGIONS frames; an update that would need more is sent whole.
MAX_BLOCK: Final = 2048
MAX_REGIONS: Final = 32
# Protocol 4: the DR blocks' bytes sent and not yet acknowledged, at most (the node's
# queue, seatnode/display.py's MAX_QUEUED_BYTES); an update that leaves more than
# ASK_ACK_BYTES of them unacknowledged asks for its DACK. A whole screen's block (1,394
# bytes at most) fits in what is left under that, so an update that must wait for room
# always has a DACK on its way (the last update sent asked for one), never a heartbeat.
WINDOW_BYTES: Final = 2048
ASK_ACK_BYTES: Final = 640
# And the updates sent and not yet acknowledged, at most: each waits in the node's queue
# as one entry (MAX_QUEUE, 64), so a run of tiny updates (a block is 24 bytes at least:
# 85 in 2,048) never overflows it; an update that leaves more than ASK_ACK_UPDATES of
# them unacknowledged asks for its DACK (one that leaves more than 32 leaves more than
# 640 bytes too: the count asks for no DACK the bytes would not). WINDOW_UPDATES is over
# ASK_ACK_UPDATES, so an update that must wait for an entry has a DACK on its way too.
WINDOW_UPDATES: Final = 48
ASK_ACK_UPDATES: Final = 32
# Protocol 5: the same with the node's queue four times larger (MAX_QUEUED_BYTES_5, 8,192
# bytes; MAX_QUEUE_5, 128 entries): a whole screen's block fits in 8,192 - 6,700, and 112
# updates leave the node's queue 16 entries for rejected lines.
WINDOW_BYTES_5: Final = 8192
ASK_ACK_BYTES_5: Final = 6700
WINDOW_UPDATES_5: Final = 112
ASK_ACK_UPDATES_5: Final = 96
# The node's own bus: machine.I2C writes a whole buffer as one transfer (address +
# control byte), 9 clocks a byte.  The node writes every piece as a transfer of its own.
NODE_BUS: Final = BusModel("node-i2c", transfer_overhead=2, data_block=MAX_PIECE, bits_per_byte=9)


@dataclass(frozen=True, slots=True)
class SendWindow:
    """What the Pi may leave unacknowledged at a node of a protocol (4 and later): the
    DR blocks' ``size`` bytes and ``updates`` updates at most, a DACK asked by an update
    that leaves more than ``ask_bytes`` or ``ask_updates`` of them."""

    size: int
    ask_bytes: int
    updates: int
    ask_updates: int


#: the window at a node of protocol 4, and of 5 (the node's queue four times larger)
WINDOW_4: Final = SendWindow(WINDOW_BYTES, ASK_ACK_BYTES, WINDOW_UPDATES, ASK_ACK_UPDATES)
WINDOW_5: Final = SendWindow(WINDOW_BYTES_5, ASK_ACK_BYTES_5, WINDOW_UPDATES_5, ASK_ACK_UPDATES_5)


def send_window(protocol: int) -> SendWindow:
    """The window at a node that answered this protocol (4 or later; 3 and 2 have one
    update on its way instead)."""
    return WINDOW_5 if protocol >= 5 else WINDOW_4


class FrameSender(Protocol):
    """What the port needs of a :class:`~controller.hal.seatlink.SeatLink`. A sender
    that also has ``protocol`` (the node's version) and ``send_counted`` (as SeatLink's)
    gets protocol 3's frames from a node of version 3; any other gets protocol 2's."""

    def send_many(self, messages: list[tuple[str, tuple[str, ...]]]) -> bool: ...


class CountedSender(FrameSender, Protocol):
    """A sender of protocol 3's counted blocks (:meth:`SeatLink.send_counted`)."""

    @property
    def protocol(self) -> int: ...

    def send_counted(
        self,
        header: Callable[[int], tuple[str, tuple[str, ...]]],
        block: list[tuple[bytes, bytes]],
    ) -> int: ...


class UpdateSender(Protocol):
    """A link that encodes protocol 4's display update itself
    (:meth:`SeatLink.send_update`): the port's direct way for most updates."""

    @property
    def protocol(self) -> int: ...

    def send_update(
        self, update: int, regions: bytes, full: bool, bodies: list[bytes], ask_over: int
    ) -> tuple[int, int, bool]: ...


@dataclass
class NodePortStats:
    updates: int = 0  # updates written to the link
    full_resends: int = 0  # full frames sent because the node asked or went quiet
    acks: int = 0
    asked: int = 0  # updates that asked for their DACK (protocol 3 and 2: every one)
    lost: int = 0  # DLOST received
    deferred: int = 0  # frames kept while the node's panel was not ready
    merged: int = 0  # frames held while an update awaited its DACK, sent merged after it
    tiled: int = 0  # updates sent as the changed tiles alone (``send_tiles``)


def pieces(frame: bytes, width: int, window: Window) -> list[tuple[int, bytes]]:
    """(offset, bytes) of a window's pieces: its bytes page after page, cut every
    ``MAX_PIECE`` bytes."""
    data = window_bytes(frame, width, window)
    return [(i, data[i : i + MAX_PIECE]) for i in range(0, len(data), MAX_PIECE)]


def _newer(a: int, b: int) -> bool:
    """Update number ``a`` was sent after ``b`` (numbers wrap at 65536)."""
    return 0 < (a - b) % SEQ_MODULO < SEQ_MODULO // 2


class NodePort:
    """Display windows to one seat node's panel, over its :class:`SeatLink`.

    Give it to a :class:`~controller.hal.display_planner.DisplayWriter` and make it the
    link's ``display_listener``.  ``panel`` is the panel the pin map names for the
    seat; the node says which one it has in its ``PANEL`` report (a different one is
    told to drive the pin map's, which it keeps in its flash)."""

    def __init__(
        self,
        link: FrameSender,
        panel: Panel,
        *,
        seat: int = 0,
        address: int = 0x3C,
        ack_timeout: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.link = link
        self.seat = seat
        self.address = address
        self._panel = panel
        self.ack_timeout = ack_timeout
        self._clock = clock
        self._lock = threading.Lock()
        self._latest: bytes | None = None
        self._ready = False
        self._update = 0
        # Updates sent and not acknowledged, oldest first: (update, DR block bytes, when
        # sent); protocols 4 and 5 keep up to their window's (``send_window``), the older
        # ones one.
        self._unacked: list[tuple[int, int, float]] = []
        self._unacked_bytes = 0
        self._last_full: int | None = None
        # Windows of frames that came while an update awaited its DACK (None: nothing
        # held), and whether one of them asked for the whole screen.
        self._held: list[Window] | None = None
        self._held_full = False
        self.reported: PanelReport | None = None
        self.stats = NodePortStats()
        # The seat's link when it encodes protocol 4's updates itself (``attach``): an
        # update that needs nothing held, merged or made whole goes to it straight
        # (``_send_direct``), its frames laid out once a plan (``_regions``).
        self.direct: UpdateSender | None = None
        # The tiles last shown (``send_tiles``) and the frame they join into, while the
        # writer's last frame is that one (else the next tiles go as a frame)
        self._tiles: tuple[tuple[bytes, ...], bytes] | None = None
        self._panel_key = (panel.controller.value, panel.width, panel.pages)  # hashed in C

    @property
    def panel(self) -> Panel:
        return self._panel

    @property
    def bus(self) -> BusModel:
        return NODE_BUS

    @property
    def ready(self) -> bool:
        """The node has reported its panel OK; windows go out as they come."""
        return self._ready

    # -- PanelPort ----------------------------------------------------------------------
    def send_plan(self, frame: bytes, plan: KeptPlan) -> UpdateReport:
        """``send(frame, windows, full)`` for a plan the writer kept: protocol 3's DR
        frames laid out once for it (:class:`_Regions`)."""
        full, windows = plan
        with self._lock:
            direct = self.direct
            if direct is not None and self._ready and self._held is None and direct.protocol >= 4:
                regions = _regions(plan, self._panel)
                window = send_window(direct.protocol)
                if regions.direct and self._room(window, regions.size):
                    return self._send_direct(direct, frame, regions, full, window)
            link = self.link
            protocol = getattr(link, "protocol", 2)
            if self._waits(protocol):
                return self._hold(frame, windows, full)
            self._latest = frame
            if protocol >= 3 and hasattr(link, "send_counted"):
                return self._send_laid_out(
                    cast(CountedSender, link), frame, _regions(plan, self._panel), full, protocol
                )
            return self._send_locked(frame, windows, full)

    def send_tiles(self, tiles: Sequence[bytes], writer: DisplayWriter) -> bool:
        """A screen given as tiles of whole pages, top to bottom (``controller.render.
        screen.render_tiles``: a tile unchanged is the very object it was), sent as the
        changed tiles' windows alone, protocol 4's direct way: no frame compared, no plan
        looked up, each change of a tile laid out once (``_tile_change``, kept by the two
        tiles' bytes) and shared by every seat that makes it. True when sent so (or
        nothing changed); False when this way does not take it (the first screen, the
        writer's last frame not these tiles', the node not ready, frames held, the window
        without room, more than the whole screen's bytes, a panel turned): the caller then
        sends the joined frame through ``writer`` (:meth:`show_tiles`)."""
        with self._lock:
            last, direct = self._tiles, self.direct
            if (
                last is None
                or writer.last_frame is not last[1]
                or direct is None
                or not self._ready
                or self._held is not None
                or direct.protocol < 4
                or writer.rotation != 0
            ):
                return False
            old_tiles = last[0]
            if len(tiles) != len(old_tiles):
                return False
            panel = self._panel
            width = panel.width
            bodies: list[bytes] = []
            size = payload = page = 0
            for new, old in zip(tiles, old_tiles, strict=True):
                if new is not old and new != old:
                    if len(new) != len(old):
                        return False
                    change = _tile_change(old, new, page, self._panel_key, panel, writer)
                    bodies += change.bodies
                    size += change.size
                    payload += change.payload
                page += len(new) // width
            kept = tuple(tiles)
            if not bodies:  # nothing a pixel shows changed
                self._tiles = (kept, last[1])
                writer.totals.updates += 1
                writer.totals.skipped += 1
                return True
            window = send_window(direct.protocol)
            if (
                len(bodies) > MAX_REGIONS
                or size > _whole_screen(panel).size
                or not self._room(window, size)
            ):
                return False  # the whole screen instead, or held: the writer's way decides
            frame = b"".join(kept)
            self._latest = frame
            update = self._update
            self._update = update + 1 if update < SEQ_MODULO - 1 else 0
            written, sent, ask = direct.send_update(
                update, b"%d" % len(bodies), False, bodies, self._ask_over(window)
            )
            totals = writer.totals  # as ``totals.add`` counts the update's report
            totals.updates += 1
            if self._sent(written > 0, update, False, sent, ask):
                self.stats.tiled += 1
                totals.data_bytes += payload
                totals.overhead_bytes += written - payload
                totals.transfers += 1 + len(bodies)
            else:
                totals.skipped += 1  # nothing went (its report has no transfer)
            writer.shown_as(frame)  # as the writer's own update leaves it, sent or not
            self._tiles = (kept, frame)
            return True

    def show_tiles(self, tiles: Sequence[bytes], writer: DisplayWriter) -> None:
        """``tiles`` on the panel: by :meth:`send_tiles` when it takes them, else their
        joined frame through ``writer`` (the tiles then remembered, for the next)."""
        if self.send_tiles(tiles, writer):
            return
        frame = b"".join(tiles)
        writer.update_pages(frame)
        shown = writer.last_frame  # this frame, or an equal one it kept (nothing was sent)
        with self._lock:  # compared with the next tiles if the writer shows this frame
            self._tiles = (tuple(tiles), shown) if shown is not None and shown == frame else None

    def send(self, frame: bytes, windows: Sequence[Window], full: bool) -> UpdateReport:
        with self._lock:
            if self._waits(getattr(self.link, "protocol", 2)):
                return self._hold(frame, windows, full)
            self._latest = frame
            return self._send_locked(frame, windows, full)

    def _room(self, window: SendWindow, size: int) -> bool:
        """An update of a ``size``-byte block fits the window now (the port's lock held):
        none unacknowledged, or room for its bytes and for one more update."""
        unacked = self._unacked
        return not unacked or (
            self._unacked_bytes + size <= window.size and len(unacked) < window.updates
        )

    def _ask_over(self, window: SendWindow) -> int:
        """The block's bytes over which the next update asks for its DACK (the port's
        lock held): -1, whatever its size, when it leaves more than ``ask_updates``
        updates unacknowledged."""
        if len(self._unacked) >= window.ask_updates:
            return -1
        return window.ask_bytes - self._unacked_bytes

    def _waits(self, protocol: int) -> bool:
        """A frame that comes now waits (the port's lock held): the node's panel is not
        ready, frames already wait (they go first, merged), or an update awaits its
        DACK and the protocol lets only one be on its way (protocol 4 decides by the
        window, in ``_send_laid_out``, once the frame's size is known)."""
        return not self._ready or self._held is not None or (bool(self._unacked) and protocol < 4)

    def _hold(self, frame: bytes, windows: Sequence[Window], full: bool) -> UpdateReport:
        """Not now: the node's panel is not ready, or an update awaits its DACK (the
        port's lock held)."""
        self._latest = frame
        if not self._ready:
            self.stats.deferred += 1
        else:
            self.stats.merged += 1
            held = self._held if self._held is not None else []
            held.extend(windows)
            self._held = held
            self._held_full = self._held_full or full
        return UpdateReport(full=full, windows=tuple(windows), bits_per_byte=8)

    @property
    def awaiting(self) -> int | None:
        """The newest update on its way to the node (sent, not yet acknowledged by a
        DACK or, protocol 4, a heartbeat), if any."""
        return self._unacked[-1][0] if self._unacked else None

    @property
    def unacknowledged(self) -> tuple[int, ...]:
        """The updates sent and not yet acknowledged, oldest first."""
        return tuple(entry[0] for entry in self._unacked)

    def _acknowledged(self, update: int) -> None:
        """``update`` and every one sent before it are in the node's panel; what was
        held goes out if there is room now."""
        unacked = self._unacked
        if not unacked or _newer(unacked[0][0], update):
            return
        while unacked and not _newer(unacked[0][0], update):
            self._unacked_bytes -= unacked.pop(0)[1]
        if self._ready:
            self._flush_held()

    def _forget_unacked(self) -> None:
        self._unacked.clear()
        self._unacked_bytes = 0

    def _flush_held(self) -> None:
        """An acknowledgement came: what was held goes out as one update (protocol 4:
        if the window has room for it; it waits for the next one otherwise)."""
        held, full = self._held, self._held_full
        self._held, self._held_full = None, False
        frame = self._latest
        if held is None or frame is None:
            return
        panel = self._panel
        whole = Window(0, 0, panel.pages, panel.width)
        unique = list(dict.fromkeys((w.page, w.col, w.pages, w.cols) for w in held))
        windows = [Window(*w) for w in unique]
        if full or len(windows) > MAX_HELD_WINDOWS or sum(w.size for w in windows) >= whole.size:
            self._send_locked(frame, [whole], True)
        else:
            self._send_locked(frame, windows, False)

    def _send_locked(self, frame: bytes, windows: Sequence[Window], full: bool) -> UpdateReport:
        link = self.link
        protocol = getattr(link, "protocol", 2)
        if protocol >= 3 and hasattr(link, "send_counted"):
            regions = _Regions.of(tuple(windows), self._panel)
            return self._send_laid_out(cast(CountedSender, link), frame, regions, full, protocol)
        width = self._panel.width
        cut = [(window, pieces(frame, width, window)) for window in windows]
        count = sum(len(p) for _, p in cut)
        if count > MAX_FRAMES:  # pragma: no cover - a plan never costs more than a full frame
            raise ValueError("an update of more than 999 display frames")
        update = self._update
        self._update = (update + 1) % SEQ_MODULO
        messages: list[tuple[str, tuple[str, ...]]] = [
            ("DU", (str(update), str(count), "FULL" if full else "DIFF"))
        ]
        index = 0
        payload = 0
        for window, parts in cut:
            box = (
                str(window.page),
                str(window.page_end - 1),
                str(window.col),
                str(window.col_end - 1),
            )
            for offset, data in parts:
                text = binascii.b2a_base64(data, newline=False).decode("ascii")
                messages.append(("DW", (str(index), *box, str(offset), text)))
                index += 1
                payload += len(data)
        if not self._sent(self.link.send_many(messages), update, full):
            return UpdateReport(full=full, windows=tuple(windows), bits_per_byte=8)
        wire = sum(_frame_length(kind, args) for kind, args in messages)
        return UpdateReport(
            full=full,
            windows=tuple(windows),
            data_bytes=payload,
            overhead_bytes=wire - payload,
            transfers=len(messages),
            bits_per_byte=8,
        )

    def _sent(self, ok: bool, update: int, full: bool, size: int = 0, ask: bool = True) -> bool:
        """After an update's write: on its way (awaiting its acknowledgement), or not
        (``ok`` False: the node went away; it reports its panel when back). ``size``:
        its DR block's bytes; ``ask``: it asked for its DACK."""
        if not ok:
            self._ready = False
            self.stats.deferred += 1
            return False
        self.stats.updates += 1
        self.stats.asked += ask
        if full:
            self._last_full = update
        self._unacked.append((update, size, self._clock()))
        self._unacked_bytes += size
        return True

    def _send_laid_out(
        self, link: CountedSender, frame: bytes, regions: _Regions, full: bool, protocol: int
    ) -> UpdateReport:
        """Protocols 3 and 4: one DR frame per window, their byte count in the DU."""
        if regions.whole is not None:  # more frames or bytes than a node's block takes
            regions, full = regions.whole, True
        quiet = protocol >= 4  # DACK on request, the heartbeats acknowledge the rest
        if quiet and regions.size > (whole := _whole_screen(self._panel)).size:
            # more bytes than the whole screen: the whole screen (the largest block, which
            # the window always has room for when no DACK is on its way)
            regions, full = whole, True
        window = send_window(protocol)
        if quiet and not self._room(window, regions.size):
            return self._hold(frame, regions.windows, full)  # sent when there is room
        block: list[tuple[bytes, bytes]] = []
        b2a = binascii.b2a_base64
        for box, rows in regions.frames:
            if len(rows) == 1:
                data = frame[rows[0][0] : rows[0][1]]
            else:
                data = b"".join([frame[first:last] for first, last in rows])
            block.append((b"DR", box + b2a(data, newline=False)))
        update = self._update
        self._update = (update + 1) % SEQ_MODULO
        head = (str(update), regions.count, "FULL" if full else "DIFF")
        sizes = [0, 1]  # the block's bytes, whether the DU asks for its DACK

        def header(count: int) -> tuple[str, tuple[str, ...]]:
            sizes[0] = count
            if not quiet:
                return "DU", (*head[:2], str(count), head[2])
            ask = count > self._ask_over(window)
            sizes[1] = ask
            return "DU", (*head[:2], str(count), head[2], "ACK" if ask else "-")

        written = link.send_counted(header, block)
        if not self._sent(written > 0, update, full, sizes[0], bool(sizes[1])):
            return UpdateReport(full=full, windows=regions.windows, bits_per_byte=8)
        return regions.report(full, written)

    def _send_direct(
        self, direct: UpdateSender, frame: bytes, regions: _Regions, full: bool, window: SendWindow
    ) -> UpdateReport:
        """Protocol 4's update of ``regions`` as :meth:`_send_laid_out` would send it
        (nothing held, the window has room, no whole screen instead), encoded by the
        link in one call (the port's lock held)."""
        self._latest = frame
        b2a = binascii.b2a_base64
        bodies = [
            head + b2a(frame[first:last], newline=False) for head, first, last in regions.direct
        ]
        update = self._update
        self._update = update + 1 if update < SEQ_MODULO - 1 else 0
        written, size, ask = direct.send_update(
            update, regions.count_bytes, full, bodies, self._ask_over(window)
        )
        if not self._sent(written > 0, update, full, size, ask):
            return UpdateReport(full=full, windows=regions.windows, bits_per_byte=8)
        return regions.report(full, written)

    def _resend_full(self, why: str) -> None:
        frame = self._latest
        if frame is None:
            return
        log.debug("seat %d: full frame to the node's panel (%s)", self.seat, why)
        self.stats.full_resends += 1
        self._held, self._held_full = None, False  # the whole screen covers them
        self._forget_unacked()  # lost, or superseded: the node takes the FULL one
        panel = self._panel
        self._send_locked(frame, [Window(0, 0, panel.pages, panel.width)], True)

    # -- what the link hears --------------------------------------------------------------
    def on_event(self, event: LinkEvent) -> None:
        """Display events, NodeConnected/NodeDisconnected and heartbeats of the node."""
        with self._lock:
            if isinstance(event, DisplayAck):  # protocol 3's commonest: one an update
                self.stats.acks += 1
                self._acknowledged(event.update)
            elif isinstance(event, PanelReport):
                self._on_report(event)
            elif isinstance(event, DisplayLost):
                self.stats.lost += 1
                if self._ready and not (
                    self._last_full is not None and _newer(self._last_full, event.update)
                ):
                    self._resend_full(f"the node lost update {event.update}")
            elif isinstance(event, NodeConnected | NodeDisconnected):
                self._ready = False  # wait for the PANEL report that follows HELLO
                self._forget_unacked()
                self._held, self._held_full = None, False  # the PANEL OK sends it whole
            elif isinstance(event, Heartbeat):
                if event.written is not None:  # protocol 4: the last update written whole
                    self._acknowledged(event.written)
                unacked = self._unacked
                if self._ready and unacked and self._clock() - unacked[0][2] > self.ack_timeout:
                    self._resend_full(f"update {unacked[0][0]} not acknowledged")

    def _on_report(self, report: PanelReport) -> None:
        wanted = (self._panel.controller.value, self.address)
        if (report.kind, report.address) != wanted:
            # The node keeps its panel's type in flash; name the pin map's. It answers
            # with a PANEL report of the new one.
            log.info(
                "asiento %d: el nodo maneja una %s en 0x%02X; se le pone la del pinmap, "
                "%s en 0x%02X",
                self.seat,
                report.kind,
                report.address,
                *wanted,
            )
            self._ready = False
            self.reported = report
            self.link.send_many([("PANEL", (wanted[0], f"{wanted[1]:02X}"))])
            return
        if report != self.reported:
            if report.kind == "none":
                log.warning(
                    "seat %d: the node drives no panel (check its panel setting)", self.seat
                )
            elif not report.ok:
                log.warning(
                    "seat %d: the node's %s at 0x%02X does not answer",
                    self.seat,
                    report.kind,
                    report.address,
                )
        self.reported = report
        was_ready, self._ready = self._ready, report.ok
        if report.ok:
            # Connected again, or back from an I2C error: its RAM is blank.
            self._resend_full(
                "the node's panel is ready" if not was_ready else "panel re-initialised"
            )
        else:
            self._forget_unacked()
            self._held, self._held_full = None, False


def _region_frame_bytes(box: bytes, size: int) -> int:
    """A DR frame's bytes at most, for a window of ``size`` bytes at ``box`` (``b"p0 p1
    c0 c1 "``): "$<seq> " (5 digits at most), "DR ", the box, the base64 of its bytes,
    "*CRC" and LF."""
    return 2 + len(box) + 4 * -(-size // 3) + 14


@dataclass(frozen=True, slots=True, eq=False)
class _Regions:
    """Protocol 3's DR frames of some windows, laid out: each frame's box (``b"p0 p1 c0
    c1 "``) and the [first, last) bytes of the frame it carries, page after page; how
    many frames (as the DU says it), their data bytes, and, when the block would be
    more frames or bytes than a node takes, the whole screen's instead."""

    windows: tuple[Window, ...]
    frames: tuple[tuple[bytes, tuple[tuple[int, int], ...]], ...]
    count: str
    payload: int
    size: int  # the block's bytes at most (each frame's sequence number at its longest)
    whole: _Regions | None
    # (FULL?, bytes written) -> the update's report (the sequence numbers' digits make a
    # few sizes)
    reports: dict[tuple[bool, int], UpdateReport] = field(default_factory=dict)
    # each frame's ``b"DR <box> "`` and the bytes it carries, [first, last) of the frame,
    # when every frame is one page's row and the block goes as it is (``make_direct``;
    # empty: the port's direct way does not take it), and the frames' count as bytes
    direct: list[tuple[bytes, int, int]] = field(default_factory=list)
    count_bytes: bytes = b""

    def make_direct(self) -> None:
        """Lay the frames out for :meth:`NodePort._send_direct` (once a plan and port)."""
        if self.direct or any(len(rows) != 1 for _, rows in self.frames):
            return
        self.direct.extend((b"DR " + box, *rows[0]) for box, rows in self.frames)

    def report(self, full: bool, written: int) -> UpdateReport:
        """The report of an update of these frames that wrote ``written`` bytes."""
        report = self.reports.get((full, written))
        if report is None:
            if len(self.reports) >= 64:  # pragma: no cover - a handful of sizes
                self.reports.clear()
            payload = self.payload
            report = self.reports[full, written] = UpdateReport(
                full=full,
                windows=self.windows,
                data_bytes=payload,
                overhead_bytes=written - payload,
                transfers=1 + len(self.frames),
                bits_per_byte=8,
            )
        return report

    @staticmethod
    def of(windows: tuple[Window, ...], panel: Panel) -> _Regions:
        width = panel.width
        frames = []
        size = 0
        for window in windows:
            last_page, last_col = window.page_end - 1, window.col_end - 1
            box = b"%d %d %d %d " % (window.page, last_page, window.col, last_col)
            rows = tuple(
                (page * width + window.col, page * width + window.col_end)
                for page in range(window.page, window.page_end)
            )
            frames.append((box, rows))
            size += _region_frame_bytes(box, window.size)
        whole = None
        if len(frames) > MAX_REGIONS or size > MAX_BLOCK:
            whole = _whole_screen(panel)
        payload = sum(window.size for window in windows)
        return _Regions(
            windows,
            tuple(frames),
            str(len(frames)),
            payload,
            size,
            whole,
            count_bytes=b"%d" % len(frames),
        )


#: id of a kept plan and the panel -> its regions (they keep the plan alive: the id is
#: not another's while kept)
_LAID_OUT: dict[tuple[int, int, int], tuple[KeptPlan, _Regions]] = {}
LAID_OUT_KEPT: Final = 1024  # as many as the writer keeps plans


def _regions(plan: KeptPlan, panel: Panel) -> _Regions:
    """A kept plan's regions, laid out once."""
    key = (id(plan), panel.width, panel.pages)
    kept = _LAID_OUT.get(key)
    if kept is None or kept[0] is not plan:
        if len(_LAID_OUT) >= LAID_OUT_KEPT:
            _LAID_OUT.clear()
        regions = _Regions.of(plan[1], panel)
        if regions.whole is None and regions.size <= _whole_screen(panel).size:
            regions.make_direct()  # what NodePort's direct way sends as it is
        kept = _LAID_OUT[key] = (plan, regions)
    return kept[1]


_WHOLE: dict[tuple[int, int], _Regions] = {}


def _whole_screen(panel: Panel) -> _Regions:
    """The regions of a panel's whole screen, laid out once."""
    key = (panel.width, panel.pages)
    whole = _WHOLE.get(key)
    if whole is None:
        whole = _WHOLE[key] = _Regions.of((Window(0, 0, panel.pages, panel.width),), panel)
    return whole


@dataclass(frozen=True, slots=True, eq=False)
class _TileChange:
    """A tile's change laid out for the node (``NodePort.send_tiles``): the two tiles,
    the DR frames' bodies (``b"DR <box> <base64>"``), their block's bytes at most, their
    data bytes, the windows."""

    old: bytes
    new: bytes
    bodies: tuple[bytes, ...]
    size: int
    payload: int
    windows: tuple[Window, ...]


#: (the old and the new tile, the tile's first page, the panel's type and size) -> its
#: change. Kept by the tiles' bytes, not their identities: a tile the renderer made
#: again (its cache forgot it) finds its change still laid out. A bytes object keeps
#: its hash, so a look-up hashes each tile once in its life, and a tile met again (the
#: same object) is compared by identity.
_TILE_CHANGES: dict[tuple[bytes, bytes, int, tuple[str, int, int]], _TileChange] = {}
#: changes kept, at most: a six-seat game makes 2,000-3,000 changes of which a third to a
#: half are new (a score, a strip of cards not met before), and the same ones come back
#: from game to game; past it the older half is forgotten (docs/dev/benchmarks.md)
TILE_CHANGES_KEPT: Final = 4096


def _tile_change(
    old: bytes,
    new: bytes,
    page: int,
    panel_key: tuple[str, int, int],
    panel: Panel,
    writer: DisplayWriter,
) -> _TileChange:
    """The change of the tile at ``page`` from ``old`` to ``new``, laid out once: its
    windows as the writer plans a frame's (``DisplayWriter.tile_windows``), each a DR
    frame of its bytes page after page."""
    key = (old, new, page, panel_key)
    kept = _TILE_CHANGES.get(key)
    if kept is not None:
        return kept
    windows = writer.tile_windows(old, new, page)
    width = panel.width
    b2a = binascii.b2a_base64
    bodies = []
    size = 0
    for window in windows:
        starts = [(window.page - page + row) * width + window.col for row in range(window.pages)]
        data = b"".join([new[start : start + window.cols] for start in starts])
        box = b"%d %d %d %d " % (window.page, window.page_end - 1, window.col, window.col_end - 1)
        bodies.append(b"DR " + box + b2a(data, newline=False))
        size += _region_frame_bytes(box, window.size)
    change = _TileChange(old, new, tuple(bodies), size, sum(w.size for w in windows), windows)
    if len(_TILE_CHANGES) >= TILE_CHANGES_KEPT:  # the older half goes (a dict keeps order)
        for stale in list(islice(_TILE_CHANGES, TILE_CHANGES_KEPT // 2)):
            del _TILE_CHANGES[stale]
    _TILE_CHANGES[key] = change
    return change


def _frame_length(kind: str, args: tuple[str, ...]) -> int:
    """Bytes of one encoded frame on the wire: ``$``, seq (at most 5 digits), the type,
    the arguments, ``*CRC`` and LF (the seq is counted at its longest)."""
    return 1 + 5 + 1 + len(kind) + sum(1 + len(a) for a in args) + 5 + 1


class NodeDisplay:
    """A seat's :class:`~controller.hal.display.Display` whose panel hangs on its node.

    ``attach(link)`` once the seat's :class:`SeatLink` exists; until then (and while
    the node is away) frames are only remembered, the latest going out whole once
    the node reports its panel. A failure never reaches the table: it is counted."""

    def __init__(
        self, config: DisplayConfig, *, seat: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.config = config
        self.seat = seat
        self.errors = 0
        self._link: SeatLink | None = None
        panel = Panel(Controller(config.driver), config.width, config.height)
        self.port = NodePort(self, panel, seat=seat, address=config.address, clock=clock)
        rotate = (lambda image: image.rotate(180)) if config.rotate == 2 else None
        # rotation: update_pages turns a frame half round itself, without pixels
        self.writer = DisplayWriter(self.port, preprocess=rotate, rotation=2 if rotate else 0)

    def attach(self, link: SeatLink) -> None:
        self._link = link
        link.display_listener = self.port.on_event
        self.port.direct = link if hasattr(link, "send_update") else None

    def send_many(self, messages: list[tuple[str, tuple[str, ...]]]) -> bool:
        link = self._link
        return link.send_many(messages) if link is not None else False

    @property
    def protocol(self) -> int:
        """The node's protocol version (its HELLO's), 2 while no link is attached."""
        link = self._link
        return link.protocol if link is not None else 2

    def send_counted(
        self,
        header: Callable[[int], tuple[str, tuple[str, ...]]],
        block: list[tuple[bytes, bytes]],
    ) -> int:
        link = self._link
        return link.send_counted(header, block) if link is not None else 0

    def show(self, image: Image.Image) -> None:
        try:
            self.writer.update(image)
        except Exception as error:  # a broken display never stops the table
            self._failed(error)

    def show_pages(self, pages: bytes) -> None:
        """The screen as ``image_to_pages(image)`` would give it (``PageDisplay``): the
        service joins it from the renderer's cached tiles and draws no pixel for it."""
        try:
            self.writer.update_pages(pages)
        except Exception as error:  # a broken display never stops the table
            self._failed(error)

    def show_tiles(self, tiles: Sequence[bytes]) -> None:
        """The screen as tiles of whole pages (``render_tiles``): only the changed ones
        go to the node when the port's direct way takes them (``NodePort.send_tiles``),
        else their joined frame as :meth:`show_pages` sends it."""
        try:
            self.port.show_tiles(tiles, self.writer)
        except Exception as error:  # a broken display never stops the table
            self._failed(error)

    def _failed(self, error: Exception) -> None:
        self.errors += 1
        if self.errors == 1 or self.errors % 100 == 0:
            log.warning("asiento %d, pantallita (en el nodo): %s", self.seat, error)
        self.writer.invalidate()
