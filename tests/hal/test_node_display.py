"""The Pi's NodePort against the node's own firmware (NodeApp, PanelLink, the panel
driver) and a model of the panel on the node's I2C bus, in one process.

After every frame the Pi's writer sends (and the node has worked through it), the
panel's glass must show exactly the Pi's image, also when lines are lost or
mangled on the way, when the panel drops off its bus and comes back blank, and when
the node restarts.
"""

from __future__ import annotations

import binascii
import random
from collections.abc import Callable

import pytest
from fake_oled import OledModel, model_for
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw
from seatnode import display as node_display
from seatnode import protocol
from seatnode.config import USB_READ_BUDGET
from seatnode.node import NodeApp
from seatnode.panel import KINDS, Panel

from controller.hal import node_display as node_display_module
from controller.hal.display_planner import DisplayWriter
from controller.hal.display_planner import Panel as PiPanel
from controller.hal.events import DisplayAck, Heartbeat, NodeEvent, PanelReport
from controller.hal.frames import (
    MAX_FRAME,
    FrameDecoder,
    FrameError,
    decode_message,
    encode_counted,
    encode_frame,
    encode_update,
    parse_frame,
)
from controller.hal.node_display import (
    ASK_ACK_BYTES,
    MAX_PIECE,
    WINDOW_4,
    WINDOW_5,
    WINDOW_BYTES,
    NodePort,
    SendWindow,
    _Regions,
    send_window,
)
from controller.hal.pages import image_to_pages
from controller.hal.panel_addressing import Window
from controller.hal.panels import Controller
from controller.render.matchsticks import render_scoreboard_image

SERIAL = "e6614103e7ab1234"


class Wire:
    """The USB cable: the Pi's frames into the node, the node's frames back."""

    def __init__(self, kind: str, protocol: int = 3, direct: bool = True) -> None:
        """``protocol``: the version the node answered the Pi's HELLO with (5 and 4: DR
        frames, counted, DACK on request, 5 with the node's queue 8 KB; 3: the same,
        every update answered; 2: DW pieces).
        ``direct``: the port sends protocol 4's updates through ``send_update`` (as it
        does a SeatLink's); False: through ``send_counted`` only."""
        self.kind = kind
        self.protocol = protocol
        self.model: OledModel = model_for(kind)
        self.model.power_cycle()  # a panel just powered: noise, registers at reset
        self.now = 0
        self.seq = 0
        self.decoder = FrameDecoder()
        self.from_node: list[NodeEvent] = []
        self.node_lines: list[bytes] = []
        self.mangle: Callable[[bytes], bytes] | None = None  # spoils the next write
        self.sent_bytes = 0
        self.boot()
        self.port = NodePort(self, PiPanel(Controller(kind)), clock=lambda: self.now / 1000)
        self.port.direct = self if direct else None
        self.direct_updates = 0  # updates the port sent through send_update
        self.writer = DisplayWriter(self.port)
        self.pump()

    def boot(self) -> None:
        self.decoder.reset()
        self.app = NodeApp(
            self._node_writes, 0, SERIAL, self.now, panel=Panel(self.model, self.kind)
        )
        self.app.set_version(self.protocol)  # the session's, as the Pi's HELLO chose it

    # -- the cable --------------------------------------------------------------------
    def send_many(self, messages: list[tuple[str, tuple[str, ...]]]) -> bool:
        data = b""
        for kind, args in messages:
            frame = encode_frame(self.seq, kind, *args)
            assert len(frame) - 1 <= MAX_FRAME
            data += frame
            self.seq += 1
        self.sent_bytes += len(data)
        mangle, self.mangle = self.mangle, None  # the next write only
        if mangle is not None:
            data = mangle(data)
        self.app.receive(data, self.now)
        return True

    def send_counted(
        self,
        header: Callable[[int], tuple[str, tuple[str, ...]]],
        block: list[tuple[bytes, bytes]],
    ) -> int:
        assert self.protocol >= 3  # NodePort sends protocol 2's frames to a node of 2
        data, self.seq = encode_counted(self.seq, header, block)
        written = len(data)  # what the Pi wrote, whatever the way does to it
        self.sent_bytes += len(data)
        mangle, self.mangle = self.mangle, None  # the next write only
        if mangle is not None:
            data = mangle(data)
        self.app.receive(data, self.now)
        return written

    def send_update(
        self, update: int, regions: bytes, full: bool, bodies: list[bytes], ask_over: int
    ) -> tuple[int, int, bool]:
        assert self.protocol >= 4  # the port's direct way is protocol 4's alone
        self.direct_updates += 1
        data, self.seq, size, ask = encode_update(self.seq, update, regions, full, bodies, ask_over)
        self.sent_bytes += len(data)
        mangle, self.mangle = self.mangle, None  # the next write only
        written = len(data)
        if mangle is not None:
            data = mangle(data)
        self.app.receive(data, self.now)
        return written, size, ask

    def _node_writes(self, frame: bytes) -> None:
        self.node_lines.append(frame)
        self.from_node += self.decoder.feed(frame)

    # -- time ---------------------------------------------------------------------------
    def pump(self, ms: int = 0) -> None:
        """Let the node work (its loop passes) and the Pi hear it, until both are idle,
        then let ``ms`` more milliseconds pass the same way."""
        end = self.now + ms
        while True:
            while self.app.display.pending or self.from_node:
                self.app.tick(self.now)
                events, self.from_node = self.from_node, []
                for event in events:
                    self.port.on_event(event)
            if self.now >= end:
                return
            self.now += 50
            self.app.tick(self.now)

    def show(self, image: Image.Image) -> None:
        self.writer.update(image)
        self.pump()

    def glass_is(self, image: Image.Image) -> bool:
        return self.model.glass() == image_to_pages(image)


def frames(seed: int, count: int) -> list[Image.Image]:
    rnd = random.Random(seed)
    out = [render_scoreboard_image(0, 0, 30)]
    for _ in range(count):
        choice = rnd.random()
        if choice < 0.6:
            out.append(render_scoreboard_image(rnd.randrange(31), rnd.randrange(31), 30))
        elif choice < 0.7:
            noise = Image.new("1", (128, 64), 0)
            noise.putdata([255 if rnd.random() < 0.3 else 0 for _ in range(128 * 64)])
            out.append(noise)
        else:
            image = out[-1].copy()
            draw = ImageDraw.Draw(image)
            for _ in range(rnd.randint(1, 3)):
                x, y = rnd.randrange(128), rnd.randrange(64)
                box = (x, y, x + rnd.randrange(1, 30), y + rnd.randrange(1, 20))
                draw.rectangle(box, fill=rnd.choice(["white", "black"]))
            out.append(image)
    return out


PROTOCOLS = (2, 3, 4, 5)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("kind", KINDS)
def test_random_frames_reach_the_glass_after_every_frame(kind: str, protocol: int) -> None:
    wire = Wire(kind, protocol)
    assert wire.port.ready
    for index, image in enumerate(frames(11, 120)):
        wire.show(image)
        assert wire.glass_is(image), f"frame {index}"
        assert wire.app.display.synced
    assert wire.port.stats.full_resends <= 1  # only the first frame went whole
    assert wire.port.stats.lost == 0
    assert wire.app.rx_errors == 0
    assert wire.model.ignored == []


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_small_change_is_a_small_update(protocol: int) -> None:
    wire = Wire("ssd1306", protocol)
    wire.show(render_scoreboard_image(14, 9, 30))
    before = wire.sent_bytes
    wire.show(render_scoreboard_image(15, 9, 30))  # one matchstick diagonal: 18 bytes
    assert wire.sent_bytes - before < 120
    assert wire.glass_is(render_scoreboard_image(15, 9, 30))


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("kind", KINDS)
def test_lost_and_mangled_lines_end_in_a_full_frame(kind: str, protocol: int) -> None:
    rnd = random.Random(kind)
    wire = Wire(kind, protocol)

    def mangle(data: bytes) -> bytes:
        lines = data.split(b"\n")
        for _ in range(rnd.randint(1, 3)):
            i = rnd.randrange(len(lines))
            how = rnd.randrange(4)
            if how == 0:
                del lines[i]  # lost
            elif how == 1 and lines[i]:
                j = rnd.randrange(len(lines[i]))
                lines[i] = lines[i][:j] + bytes([lines[i][j] ^ 0x04]) + lines[i][j + 1 :]
            elif how == 2:
                lines[i] = lines[i][: len(lines[i]) // 2]  # cut short
            else:
                lines.insert(i, b"\x00garbage$$")
        return b"\n".join(lines)

    for index, image in enumerate(frames(3, 60)):
        wire.mangle = mangle if rnd.random() < 0.3 else None
        wire.show(image)
        # The node says DLOST (again each second) or, if nothing of the update came,
        # the Pi misses its DACK by the next heartbeat: either way it is sent whole.
        wire.pump(2500)
        assert wire.glass_is(image), f"frame {index}"
    assert wire.port.stats.lost > 0 and wire.port.stats.full_resends > 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_whole_update_lost_is_caught_by_the_missing_ack(protocol: int) -> None:
    wire = Wire("sh1106", protocol)
    wire.show(render_scoreboard_image(1, 1, 30))
    wire.mangle = lambda data: b""  # the update never arrives
    wire.writer.update(render_scoreboard_image(2, 1, 30))
    wire.pump(200)
    assert not wire.glass_is(render_scoreboard_image(2, 1, 30))
    wire.pump(2000)  # a heartbeat later than the ack timeout: the Pi resends it whole
    assert wire.glass_is(render_scoreboard_image(2, 1, 30))


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("kind", KINDS)
def test_a_panel_that_drops_off_comes_back_with_the_screen(kind: str, protocol: int) -> None:
    wire = Wire(kind, protocol)
    wire.show(render_scoreboard_image(5, 7, 30))
    wire.model.unplugged = True  # the panel's cable is re-seated ...
    wire.show(render_scoreboard_image(6, 7, 30))
    assert not wire.app.display.panel.ok
    assert not wire.port.ready
    assert wire.port.reported == PanelReport(kind, 0x3C, False)
    wire.show(render_scoreboard_image(7, 7, 30))  # the Pi keeps it for later
    wire.model.unplugged = False
    wire.model.power_cycle()  # ... and comes back dark, its registers at reset
    assert wire.model.glass() == bytes(1024)
    wire.pump(1000)  # the node tries again, initialises it, says PANEL OK
    assert wire.port.ready
    assert wire.glass_is(render_scoreboard_image(7, 7, 30))
    assert wire.model.display_on


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_restarted_node_gets_the_whole_frame(protocol: int) -> None:
    wire = Wire("ssd1309", protocol)
    wire.show(render_scoreboard_image(20, 3, 30))
    wire.model.power_cycle()
    wire.boot()  # the node (and its panel) lost power; it says HELLO and PANEL again
    wire.port.on_event(Heartbeat())
    wire.pump()
    assert wire.glass_is(render_scoreboard_image(20, 3, 30))
    wire.show(render_scoreboard_image(21, 3, 30))
    assert wire.glass_is(render_scoreboard_image(21, 3, 30))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_display_frames_never_hold_up_a_button(protocol: int) -> None:
    wire = Wire("ssd1306", protocol)
    wire.show(render_scoreboard_image(3, 2, 30))
    wire.port.on_event(PanelReport("ssd1306", 0x3C, True))  # a full frame is queued now
    pending = len(wire.app.display.queue)
    # protocol 2: 43 pieces; 3: one DR frame, written 128 bytes a pass
    assert pending > 40 if protocol == 2 else pending == 1
    wire.node_lines.clear()
    now = wire.now
    wire.app.buttons([True] + [False] * 7, now)
    wire.app.tick(now)
    wire.app.buttons([True] + [False] * 7, now + 25)
    wire.app.tick(now + 25)
    wire.app.buttons([False] * 8, now + 50)  # released ...
    wire.app.tick(now + 50)
    wire.app.buttons([False] * 8, now + 75)  # ... and debounced: the PRESS goes now
    kinds = [parse_frame(line.strip())[1] for line in wire.node_lines]
    assert "PRESS" in kinds and "DACK" not in kinds
    assert wire.app.display.pending  # the frame is still being written, a few pieces a pass
    wire.pump()
    assert wire.glass_is(render_scoreboard_image(3, 2, 30))
    # a whole screen asks for its DACK but at a node of protocol 5 (its 1,418 bytes are
    # under 6,700: the next heartbeat acknowledges it)
    acked = "DACK" in [parse_frame(line.strip())[1] for line in wire.node_lines]
    assert acked is (protocol < 5)


def test_every_display_frame_fits_the_frame_limit() -> None:
    longest = encode_frame(65535, "DW", "998", "7", "7", "127", "127", "1023", "A" * 32)
    assert len(longest) - 1 <= MAX_FRAME
    assert MAX_PIECE == node_display.MAX_PIECE


# -------------------------------------------------------------------- protocol checks


_arg = st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=33)


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["DU", "DW", "PANEL"]), args=st.lists(_arg, max_size=8))
def test_the_node_checks_any_display_command_without_crashing(kind: str, args: list[str]) -> None:
    try:
        value = node_display.check(kind, args)
    except protocol.ProtocolError as error:
        assert error.reason == protocol.MALFORMED
        return
    if kind == "DW":
        _index, p0, p1, c0, c1, offset, data = value
        assert 0 < len(data) <= 24 and offset + len(data) <= (p1 - p0 + 1) * (c1 - c0 + 1)


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["PANEL", "DACK", "DLOST"]), args=st.lists(_arg, max_size=4))
def test_the_pi_checks_any_display_message_without_crashing(kind: str, args: list[str]) -> None:
    try:
        event = decode_message(kind, tuple(args))
    except FrameError as error:
        assert error.reason == "malformed"
        return
    if isinstance(event, DisplayAck):
        assert 0 <= event.update < 65536


def test_known_display_lines() -> None:
    assert node_display.check("DU", ["0", "43", "FULL"]) == (0, 43, True)
    line = ["0", "1", "2", "39", "47", "0", "AAECAwQFBgcICQoLDA0ODxAR"]
    assert node_display.check("DW", line) == (0, 1, 2, 39, 47, 0, bytes(range(18)))
    for bad in (
        ["0", "1", "2", "39", "47", "0", "AAF="],  # non-canonical padding bits
        ["0", "1", "2", "39", "47", "0", "AA!A"],
        ["0", "2", "1", "39", "47", "0", "AAAA"],  # p1 < p0
        ["0", "0", "0", "0", "0", "0", "AAAA"],  # 3 bytes into a 1-byte window
        ["00", "0", "0", "0", "3", "0", "AAAA"],
    ):
        with pytest.raises(protocol.ProtocolError):
            node_display.check("DW", bad)
    assert decode_message("PANEL", ("sh1106", "3C", "OK")) == PanelReport("sh1106", 0x3C, True)
    with pytest.raises(FrameError):
        decode_message("PANEL", ("st7735", "3C", "OK"))


def test_the_pin_maps_panel_is_named_to_a_node_that_drives_another() -> None:
    wire = Wire("sh1106")
    wire.app.display.configure = lambda kind, address: Panel(wire.model, kind, address)
    # The node was set up for an SSD1306 (its flash says so); the pin map says SH1106.
    # (The strict SH1106 model would refuse the SSD1306's commands: the wrong driver
    # talks to a model of its own here.)
    wrong = Panel(model_for("ssd1306"), "ssd1306", 0x3C)
    wire.app.attach_panel(wrong, wire.app.display.configure, 0)
    wire.pump()
    assert wire.app.display.panel.kind == "sh1106"
    assert wire.port.reported == PanelReport("sh1106", 0x3C, True)
    wire.show(render_scoreboard_image(4, 4, 30))
    assert wire.glass_is(render_scoreboard_image(4, 4, 30))


# -- tiles (NodePort.show_tiles: a screen as its kept tiles, the changed ones alone) ------

TILE_SIZES = (5 * 128, 128, 128, 128)  # the score's pages, the strip's, the two lines'


def tile_screens(seed: int, count: int) -> list[tuple[bytes, ...]]:
    """Screens as tiles: each after the first changes some tiles (new objects, some only
    in a few columns, some equal to the old one in another object) and keeps the rest
    (the very objects), as the renderer's kept tiles do."""
    rnd = random.Random(seed)
    screens = [tuple(rnd.randbytes(size) for size in TILE_SIZES)]
    for _ in range(count):
        tiles = list(screens[-1])
        for index, size in enumerate(TILE_SIZES):
            choice = rnd.random()
            if choice < 0.3:
                tiles[index] = rnd.randbytes(size)  # a new tile
            elif choice < 0.5:  # a few columns of it
                tile = bytearray(tiles[index])
                start, width = rnd.randrange(size - 8), rnd.randrange(1, 8)
                tile[start : start + width] = rnd.randbytes(width)
                tiles[index] = bytes(tile)
            elif choice < 0.55:
                tiles[index] = bytes(bytearray(tiles[index]))  # equal, another object
        screens.append(tuple(tiles))
    return screens


@pytest.mark.parametrize("kind", KINDS)
def test_tiles_reach_the_glass_as_the_changed_tiles_alone(kind: str) -> None:
    """Protocol 4 over the port's direct way: after the first screen (a whole frame), a
    screen given as tiles goes as the changed tiles' windows alone, and the panel shows
    it exactly after every screen."""
    wire = Wire(kind, 4)
    wire.pump(1100)
    screens = tile_screens(5, 150)
    for index, tiles in enumerate(screens):
        sent = wire.sent_bytes
        wire.port.show_tiles(tiles, wire.writer)
        wire.pump()
        assert wire.model.glass() == b"".join(tiles), f"screen {index}"
        if index and all(a is b for a, b in zip(tiles, screens[index - 1], strict=True)):
            assert wire.sent_bytes == sent  # nothing changed: nothing sent
    assert wire.port.stats.tiled >= 0.8 * len(screens)  # the common way
    assert wire.port.stats.lost == 0 and wire.app.rx_errors == 0
    assert wire.model.ignored == []


def test_tiles_shown_as_a_frame_equal_to_the_last_go_the_tiles_way_next() -> None:
    """A screen whose joined frame equals the one the writer last sent (a banner's end
    that leaves the panel as it was) is sent by nothing, and the next screen's changed
    tiles go the tiles' way."""
    wire = Wire("ssd1306", 4)
    tiles = tuple(bytes([n]) * size for n, size in enumerate(TILE_SIZES))
    wire.port.show_tiles(tiles, wire.writer)
    wire.pump(1100)
    wire.writer.update_pages(bytes(1024))  # a banner, drawn as a frame
    wire.writer.update_pages(b"".join(tiles))  # and gone
    wire.pump()
    sent = wire.port.stats.updates
    wire.port.show_tiles(tiles, wire.writer)  # the same screen: nothing to send
    assert wire.port.stats.updates == sent
    changed = (tiles[0], tiles[1], b"\x07" * 128, tiles[3])
    wire.port.show_tiles(changed, wire.writer)
    wire.pump()
    assert wire.port.stats.tiled == 1 and wire.port.stats.updates == sent + 1
    assert wire.model.glass() == b"".join(changed)


def test_a_tile_equal_to_the_last_in_another_object_sends_nothing() -> None:
    wire = Wire("ssd1306", 4)
    tiles = tuple(bytes([n]) * size for n, size in enumerate(TILE_SIZES))
    wire.port.show_tiles(tiles, wire.writer)
    wire.pump(1100)
    sent, updates = wire.sent_bytes, wire.port.stats.updates
    wire.port.show_tiles(tuple(bytes(bytearray(t)) for t in tiles), wire.writer)
    assert (wire.sent_bytes, wire.port.stats.updates) == (sent, updates)
    assert wire.writer.totals.skipped >= 1


def test_tiles_after_a_frame_held_lost_or_whole_reach_the_glass() -> None:
    """The tiles' way gives way to the writer's whenever the port must hold, merge or
    send the whole screen (the window full, the node's panel re-initialised, a frame
    drawn another way between): the glass still ends on the last screen."""
    rnd = random.Random(9)
    wire = Wire("sh1106", 4)
    screens = tile_screens(8, 120)
    for tiles in screens:
        wire.port.show_tiles(tiles, wire.writer)
        event = rnd.random()
        if event < 0.15:
            wire.pump()  # the node catches up now and then; else the window fills
        elif event < 0.2:
            wire.writer.update_pages(rnd.randbytes(1024))  # a banner, drawn as a frame
        elif event < 0.25:
            wire.mangle = lambda data: data[: len(data) // 2]  # the next update cut: DLOST
    wire.pump(2500)
    assert wire.model.glass() == b"".join(screens[-1])
    assert wire.port.stats.tiled > 0 and wire.port.stats.merged > 0
    assert wire.port.stats.lost > 0 and wire.port.stats.full_resends > 1
    assert wire.app.display.dropped == 0


def test_a_change_of_tile_is_laid_out_once_for_every_seat() -> None:
    """Two seats making the same change of tile (the same two tile objects at the same
    place) share its windows and DR frames, laid out once."""
    old, new = bytes(128), b"\x01" + bytes(127)
    tiles = (bytes(640), bytes(128), old, bytes(128))
    changed = (tiles[0], tiles[1], new, tiles[3])
    wires = [Wire("ssd1306", 4) for _ in range(2)]
    for wire in wires:
        wire.port.show_tiles(tiles, wire.writer)
        wire.pump(1100)
    before = dict(node_display_module._TILE_CHANGES)
    for wire in wires:
        wire.port.show_tiles(changed, wire.writer)
        wire.pump()
        assert wire.model.glass() == b"".join(changed)
    made = [v for k, v in node_display_module._TILE_CHANGES.items() if k not in before]
    assert len(made) == 1 and made[0].old is old and made[0].new is new
    assert made[0].windows == (Window(6, 0, 1, 1),)  # the one column that changed


def test_a_change_of_tile_made_again_as_another_object_is_not_laid_out_again() -> None:
    """The renderer may make a tile again (its cache forgot it): the same bytes in
    another object. Its change is found by the tiles' bytes, not laid out anew."""
    old, new = bytes(128), b"\x02" + bytes(127)
    tiles = (bytes(640), bytes(128), old, bytes(128))
    wire = Wire("ssd1306", 4)
    wire.port.show_tiles(tiles, wire.writer)
    wire.pump(1100)
    for tile in (new, old):  # there and back: two changes laid out
        wire.port.show_tiles((tiles[0], tiles[1], tile, tiles[3]), wire.writer)
        wire.pump()
    kept = dict(node_display_module._TILE_CHANGES)
    for tile in (new, old, new):  # equal bytes, other objects
        again = bytes(bytearray(tile))
        assert again is not tile
        wire.port.show_tiles((tiles[0], tiles[1], again, tiles[3]), wire.writer)
        wire.pump()
    assert wire.model.glass() == b"".join((tiles[0], tiles[1], new, tiles[3]))
    assert node_display_module._TILE_CHANGES.keys() == kept.keys()  # nothing laid out


def test_past_the_changes_kept_the_older_half_is_forgotten(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The kept changes are bounded: at ``TILE_CHANGES_KEPT`` the older half goes and
    the newer half stays laid out (a night's tables never grow it without end)."""
    monkeypatch.setattr(node_display_module, "_TILE_CHANGES", {})
    monkeypatch.setattr(node_display_module, "TILE_CHANGES_KEPT", 8)
    base = (bytes(640), bytes(128), bytes(128), bytes(128))
    wire = Wire("ssd1306", 4)
    wire.port.show_tiles(base, wire.writer)
    wire.pump(1100)
    shown = []
    for column in range(9):  # nine changes: the ninth finds eight kept
        tile = bytes(column) + b"\x04" + bytes(127 - column)
        wire.port.show_tiles((base[0], base[1], tile, base[3]), wire.writer)
        wire.pump()
        shown.append(tile)
        assert wire.model.glass() == b"".join((base[0], base[1], tile, base[3]))
    kept = node_display_module._TILE_CHANGES
    assert len(kept) == 5  # four of the eight, and the ninth
    assert [key[1] for key in kept] == shown[-5:]  # the newest, in order


# -- flow control -----------------------------------------------------------------------


@pytest.mark.parametrize("protocol", (2, 3))
def test_the_pi_sends_one_update_per_dack_and_merges_what_came_meanwhile(protocol: int) -> None:
    wire = Wire("ssd1306", protocol)
    wire.show(render_scoreboard_image(0, 0, 30))
    sent_before = wire.port.stats.updates
    # Five screens drawn while the node has not answered the first: one goes out, the
    # other four are held and go out as one update after its DACK.
    for score in range(1, 6):
        wire.writer.update(render_scoreboard_image(score, 0, 30))
    assert wire.port.stats.updates == sent_before + 1
    assert wire.port.awaiting is not None
    assert wire.port.stats.merged == 4
    wire.pump()
    assert wire.port.stats.updates == sent_before + 2  # the merged one, after the DACK
    assert wire.glass_is(render_scoreboard_image(5, 0, 30))
    assert wire.port.stats.full_resends <= 1 and wire.port.stats.lost == 0


def test_protocol_4_sends_small_updates_at_once_and_the_heartbeat_acknowledges_them() -> None:
    """Protocol 4: screens drawn while earlier updates are on their way go out at once
    (their windows fit the node's queue), none asks for a DACK, and the node's next
    heartbeat (its ``written``) acknowledges them all."""
    wire = Wire("ssd1306", 4)
    wire.show(render_scoreboard_image(0, 0, 30))
    wire.pump(1100)  # the whole screen (asked for its DACK) and a heartbeat
    assert wire.port.awaiting is None
    before = (wire.port.stats.updates, wire.port.stats.asked, wire.port.stats.acks)
    for score in range(1, 6):
        wire.writer.update(render_scoreboard_image(score, 0, 30))
    assert wire.port.stats.updates == before[0] + 5  # none held
    assert wire.port.stats.merged == 0
    assert len(wire.port.unacknowledged) == 5
    wire.pump()
    assert wire.glass_is(render_scoreboard_image(5, 0, 30))
    assert (wire.port.stats.asked, wire.port.stats.acks) == before[1:]  # no DACK asked
    dacks = sum(b" DACK " in line for line in wire.node_lines)
    wire.pump(1100)  # a heartbeat: it says the last one was written
    assert wire.port.awaiting is None
    assert sum(b" DACK " in line for line in wire.node_lines) == dacks
    beats = [decode_message(*parse_frame(line.rstrip())[1:]) for line in wire.node_lines]
    assert [b.written for b in beats if isinstance(b, Heartbeat)][-1] == wire.port.stats.updates - 1
    assert wire.port.stats.full_resends <= 1 and wire.port.stats.lost == 0  # the first only


def test_protocol_4_asks_for_a_dack_early_enough_for_a_whole_screen() -> None:
    """An update that must wait for room always has a DACK on its way: what may stay
    unacknowledged without one asked leaves room for the largest block, a whole screen."""
    panel = PiPanel(Controller("sh1106"))
    whole = _Regions.of((Window(0, 0, panel.pages, panel.width),), panel)
    assert whole.whole is None and whole.size <= WINDOW_BYTES - ASK_ACK_BYTES
    # and no update is larger: one that would be goes as the whole screen
    wire = Wire("sh1106", 4)
    wire.show(Image.new("1", (128, 64), 0))
    wire.pump(1100)
    windows = [Window(page, col, 1, 16) for page in range(8) for col in (0, 32, 64, 96)]
    assert _Regions.of(tuple(windows), panel).size > whole.size  # 32 windows, 1.6 KB
    pages = bytearray(1024)
    for window in windows:
        start = window.page * 128 + window.col
        pages[start : start + window.cols] = b"\xff" * window.cols
    writes = _capture(wire)
    wire.port.send(bytes(pages), windows, False)
    wire.pump()
    assert wire.model.glass() == bytes(pages)
    _seq, kind, args = parse_frame(writes[-1].split(b"\n")[1])
    assert kind == "DU" and args[1] == "1" and args[3:] == ("FULL", "ACK")
    assert int(args[2]) <= whole.size


def test_the_window_is_the_nodes_queue_of_each_protocol() -> None:
    """Protocol 4: 2 KB and 48 updates (the node's 2,048 bytes and 64 entries); 5: 8 KB
    and 112 (its 8,192 and 128). Each asks for a DACK early enough for the largest
    block, a whole screen, and for one more update."""
    assert send_window(4) == WINDOW_4 == SendWindow(2048, 640, 48, 32)
    assert send_window(5) == WINDOW_5 == SendWindow(8192, 6700, 112, 96)
    panel = PiPanel(Controller("sh1106"))
    whole = _Regions.of((Window(0, 0, panel.pages, panel.width),), panel)
    queues = (
        (4, node_display.MAX_QUEUE, node_display.MAX_QUEUED_BYTES),
        (5, node_display.MAX_QUEUE_5, node_display.MAX_QUEUED_BYTES_5),
    )
    for version, entries, most in queues:
        window = send_window(version)
        assert window.size == most and whole.size <= window.size - window.ask_bytes
        assert window.ask_updates < window.updates < entries


def _noise_screens(count: int, seed: int = 3) -> list[Image.Image]:
    """``count`` screens of random pixels: each a whole screen's update (1,418 bytes)."""
    rnd = random.Random(seed)
    screens = []
    for _ in range(count):
        image = Image.new("1", (128, 64), 0)
        image.putdata([255 if rnd.random() < 0.5 else 0 for _ in range(128 * 64)])
        screens.append(image)
    return screens


@pytest.mark.parametrize(("protocol", "sent"), [(4, 1), (5, 5)])
def test_whole_screens_fill_the_window_of_each_protocol_and_wait_for_a_dack(
    protocol: int, sent: int
) -> None:
    """Eight whole screens (1,418 bytes each) drawn while the node works through none:
    protocol 4 sends the first (it asks for its DACK), protocol 5 five (the fifth takes
    the unacknowledged bytes past 6,700 and asks); the rest wait, merged, for that DACK.
    The node's queue (the firmware's, its bounds the session's) never overflows."""
    wire = Wire("sh1106", protocol)
    wire.pump(1100)
    noise = _noise_screens(8)
    before, asked = wire.port.stats.updates, wire.port.stats.asked
    for image in noise:
        wire.writer.update(image)
    assert wire.port.stats.updates == before + sent and wire.port.stats.merged == 8 - sent
    assert wire.port.stats.asked == asked + 1  # the last one sent: a DACK on its way
    assert len(wire.app.display.queue) == sent  # all in the node's queue, none written yet
    wire.pump()  # DACKs only, no heartbeat: what waited goes out after the one asked
    assert wire.port.stats.updates == before + sent + 1
    assert wire.glass_is(noise[-1])
    assert wire.app.display.dropped == 0 and wire.port.stats.lost == 0


@pytest.mark.parametrize("protocol", [4, 5])
def test_many_tiny_updates_never_overflow_the_nodes_queue(protocol: int) -> None:
    """300 updates of one byte each (a 26-byte block: 8 KB would be 300 of them, more
    than the node's 128 entries; 2 KB, 78, more than its 64) drawn while the node works
    through none: the Pi stops at its window's count of updates, the last one sent
    asking for its DACK, and the node's queue never overflows."""
    wire = Wire("ssd1306", protocol)
    wire.show(Image.new("1", (128, 64), 0))
    wire.pump(1100)  # the whole screen acknowledged by a heartbeat
    window = send_window(protocol)
    pages = bytearray(1024)
    most = 0
    for n in range(300):
        pages[(n % 8) * 128 + n % 128] ^= 1 + n % 255  # one byte, another each time
        wire.writer.update_pages(bytes(pages))
        most = max(most, len(wire.app.display.queue))
    assert wire.app.display.dropped == 0
    assert len(wire.port.unacknowledged) == window.updates  # the count, not the bytes
    assert most == window.updates < wire.app.display.max_queue
    assert wire.port.stats.asked >= 1 and wire.port.stats.merged == 300 - window.updates
    wire.pump()  # DACKs only, no heartbeat: the one asked lets the rest go
    assert wire.model.glass() == bytes(pages)
    assert wire.port.unacknowledged == () or wire.port.awaiting is not None
    assert wire.app.display.dropped == 0 and wire.port.stats.lost == 0


def test_an_old_node_of_protocol_4_still_gets_2_kb() -> None:
    """A node of firmware 0.6 (protocol 4) keeps its 2 KB queue: the Pi keeps 2 KB
    unacknowledged at most there, as it always did, and 8 KB at a node of protocol 5."""
    for version, window in ((4, 2048), (5, 8192)):
        wire = Wire("ssd1306", version)
        wire.show(Image.new("1", (128, 64), 0))
        wire.pump(1100)
        rnd = random.Random(version)
        peak = 0
        for _ in range(40):  # scoreboards, a few hundred bytes each, none acknowledged
            image = render_scoreboard_image(rnd.randrange(31), rnd.randrange(31), 30)
            wire.writer.update(image)
            peak = max(peak, wire.port._unacked_bytes)
            assert wire.app.display._queued_bytes <= wire.app.display.max_queued_bytes
        assert window - 1500 < peak <= window  # filled up to the node's queue, never over
        assert wire.app.display.max_queued_bytes == window
        assert wire.app.display.dropped == 0
        wire.pump()
        assert wire.glass_is(image)


def test_protocol_4_holds_what_would_overflow_the_nodes_queue_until_an_ack() -> None:
    """Whole screens (1,418 bytes each): the first asks for its DACK, the next would
    take the unacknowledged bytes past the node's 2,048 and waits, merged with the rest,
    until that DACK; the node never overflows and the glass ends right."""
    wire = Wire("sh1106", 4)
    wire.pump(1100)
    noise = _noise_screens(4)
    before = wire.port.stats.updates
    for image in noise:
        wire.writer.update(image)
    assert wire.port.stats.updates == before + 1 and wire.port.stats.merged == 3
    assert wire.port.stats.asked >= 1
    wire.pump()
    assert wire.port.stats.updates == before + 2  # the held ones, as one, after the DACK
    assert wire.glass_is(noise[-1])
    assert wire.app.display.dropped == 0 and wire.port.stats.lost == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_merged_updates_reach_the_glass_in_any_order_of_dacks(protocol: int) -> None:
    rnd = random.Random(7)
    wire = Wire("sh1106", protocol)
    shown = frames(21, 80)
    for image in shown:
        wire.writer.update(image)
        if rnd.random() < 0.2:  # now and then the node catches up (and DACKs)
            wire.pump()
    wire.pump()
    assert wire.glass_is(shown[-1])
    assert wire.port.stats.lost == 0
    assert wire.port.stats.updates < len(shown)  # merged, never more than one per DACK


@pytest.mark.parametrize("per_pass", [USB_READ_BUDGET, 4096])
def test_an_unpaced_sender_only_loses_frames_that_are_redrawn(per_pass: int) -> None:
    # A Pi that ignores the DACKs (the old one): 100,000 display frames straight into
    # the node, ``per_pass`` bytes a pass of its loop. At the node's USB budget (48)
    # the pieces it writes a pass keep up; with more a pass (a node taking 4 KiB a
    # pass) its queue fills: updates are dropped (DLOST). Either way the queue stays
    # bounded, and the paced Pi's FULL update after it (or the flood's own last
    # update, if it got through whole) shows the screen.
    wire = Wire("ssd1306", protocol=2)
    screen = render_scoreboard_image(1, 1, 30)
    wire.show(screen)
    data = image_to_pages(screen)
    lines = []
    sent, update = 0, 100
    while sent < 100_000:
        lines.append(encode_frame(sent, "DU", str(update), "43", "FULL"))
        for index, offset in enumerate(range(0, 1024, MAX_PIECE)):
            text = binascii.b2a_base64(data[offset : offset + MAX_PIECE], newline=False)
            args = (str(index), "0", "7", "0", "127", str(offset), text.decode())
            lines.append(encode_frame(sent + index + 1, "DW", *args))
        sent += 44
        update += 1
    stream = b"".join(lines)
    wire.model.power_cycle()  # the glass is dark: only what the node writes lights it
    wire.app.display.panel.init()
    wire.from_node.clear()
    most = 0
    for start in range(0, len(stream), per_pass):
        wire.app.receive(stream[start : start + per_pass], wire.now)
        wire.app.tick(wire.now)
        most = max(most, len(wire.app.display.queue))
    assert most <= node_display.MAX_QUEUE
    dropped = wire.app.display.dropped
    assert (dropped > 0) is (per_pass > USB_READ_BUDGET)
    assert any(b" DLOST " in line for line in wire.node_lines) is (dropped > 0)
    wire.from_node.clear()
    wire.pump(1500)  # the node repeats its DLOST; the Pi redraws the screen whole
    assert wire.glass_is(screen)


@pytest.mark.parametrize("kind", KINDS)
def test_a_panel_that_resets_without_an_error_is_lit_again_within_2_s(kind: str) -> None:
    wire = Wire(kind)
    screen = render_scoreboard_image(12, 4, 30)
    wire.show(screen)
    before = wire.sent_bytes
    wire.model.power_cycle()  # a brown-out, a re-seated jumper: every transfer still acked
    assert wire.model.glass() == bytes(1024) and not wire.model.display_on
    wire.pump(2000)
    assert wire.model.display_on and wire.glass_is(screen)
    assert wire.sent_bytes == before  # the node did it from its copy, the Pi sent nothing
    assert wire.app.display.panel.refreshes >= 1


# -- protocol 3: counted blocks of DR frames ----------------------------------------------


def _capture(wire: Wire) -> list[bytes]:
    """What the Pi writes to the node from now on (each write, unmangled)."""
    writes: list[bytes] = []

    def keep(data: bytes) -> bytes:
        writes.append(data)
        wire.mangle = keep  # every write, not only the next
        return data

    wire.mangle = keep
    return writes


def test_a_full_update_of_protocol_3_is_one_counted_region_frame() -> None:
    wire = Wire("ssd1306")
    writes = _capture(wire)
    image = frames(5, 1)[1]
    wire.port.on_event(PanelReport("ssd1306", 0x3C, True))  # the whole screen, at once
    wire.show(image)
    empty, du, dr, end = writes[0].split(b"\n")
    assert empty == end == b""  # an LF first (ends a cut line), each frame ends in LF
    _seq, kind, args = parse_frame(du)
    assert kind == "DU" and args[1:] == ("1", str(len(dr) + 1), "FULL")
    assert len(du) <= MAX_FRAME < len(dr) <= node_display.MAX_REGION_FRAME
    assert node_display.parse_region(dr) == (0, 7, 0, 127, image_to_pages(image))
    assert wire.glass_is(image)


def test_many_small_windows_go_as_the_whole_screen_in_protocol_3() -> None:
    wire = Wire("ssd1306")
    wire.show(render_scoreboard_image(1, 2, 30))
    writes = _capture(wire)
    screen = image_to_pages(render_scoreboard_image(2, 2, 30))
    windows = [Window(page, col * 4, 1, 2) for page in range(8) for col in range(5)]  # 40
    wire.port.send(screen, windows, False)
    wire.pump()
    lines = writes[0].split(b"\n")
    assert len(lines) == 4 and parse_frame(lines[1])[2][1:] == ("1", str(len(lines[2]) + 1), "FULL")
    assert wire.glass_is(render_scoreboard_image(2, 2, 30))


def test_known_region_lines() -> None:
    # the example of PROTOCOL.md: a matchstick's diagonal, pages 1-2 x columns 39-47
    line = b"$41 DR 1 2 39 47 AAECAwQFBgcICQoLDA0ODxAR*CA55"
    assert node_display.parse_region(line) == (1, 2, 39, 47, bytes(range(18)))
    assert encode_counted(
        40, lambda n: ("DU", ("7", "1", str(n), "DIFF")), [(b"DR", line[7:-5])]
    ) == (b"\n$40 DU 7 1 47 DIFF*BEC8\n" + line + b"\n", 42)
    # the header is checked as encode_frame checks any frame's type and arguments
    for kind, args in (
        ("du", ("7", "1", "47", "DIFF")),
        ("DU", ("7", "1", "47 DIFF")),  # a space in an argument: two of them
        ("DU", ("7", "1", "47", "DÍFF")),
        ("DU", ("7", "", "47", "DIFF")),
        ("DU", ("7", "1", "47", "DIFF", "X", "Y")),
    ):

        def header(
            count: int, kind: str = kind, args: tuple[str, ...] = args
        ) -> tuple[str, tuple[str, ...]]:
            return kind, args

        with pytest.raises(ValueError, match="bad block header"):
            encode_counted(40, header, [(b"DR", line[7:-5])])
    for bad, reason in (
        (b"$41 DR 1 2 39 47 AAECAwQFBgcICQoLDA0ODxAR*CA56", protocol.CHECKSUM),
        (b"$41 DR 1 2 39 47 AAECAwQFBgcICQoLDA0ODw==*8D2C", protocol.MALFORMED),  # 16 of 18
        (b"$41 DR 1 2 39 47 AAECAwQFBgcICQoLDA0ODxAR AA==*0000", protocol.CHECKSUM),
        (b"$0 DR 0 0 0 3 AAF=*5A9D", protocol.MALFORMED),  # padding bits not zero
        (b"$0 DR 0 0 0 03 AAAA*D245", protocol.MALFORMED),  # a leading zero
        (b"$0 DR 1 0 0 3 AAAAAA==*2DF4", protocol.MALFORMED),  # p1 < p0
        (b"$0 DW 0 0 0 3 AAAA*ABA0", protocol.UNKNOWN),  # only DR frames in a block
        (b"$0 DR 0 0 0 3 AA\x00A*0000", protocol.GARBAGE),
        (b"$0 DR 0 7 0 127 " + b"A" * 1400 + b"*0000", protocol.OVERSIZED),
    ):
        body = bad[1:-5]
        if reason not in (protocol.CHECKSUM, protocol.GARBAGE, protocol.OVERSIZED):
            bad = b"$" + body + b"*%04X" % binascii.crc_hqx(body, 0xFFFF)
        with pytest.raises(protocol.ProtocolError) as caught:
            node_display.parse_region(bad)
        assert caught.value.reason == reason, bad


def test_a_dr_frame_outside_its_block_is_a_lost_update() -> None:
    """Its DU was lost on the way: the node says DLOST, the Pi sends the screen whole."""
    wire = Wire("sh1106")
    wire.show(render_scoreboard_image(3, 3, 30))
    wire.mangle = lambda data: data.replace(b" DU ", b" DX ")  # the DU spoilt: unknown
    wire.show(render_scoreboard_image(4, 3, 30))
    assert wire.port.stats.lost == 1
    assert wire.glass_is(render_scoreboard_image(4, 3, 30))


def test_a_block_that_never_comes_whole_is_given_up() -> None:
    """The Pi gone in the middle of a write: after 250 ms the node takes frames again,
    and says the update is lost (the Pi, back, sends the screen whole)."""
    wire = Wire("ssd1306")
    wire.show(render_scoreboard_image(6, 6, 30))
    errors = wire.app.rx_errors
    wire.mangle = lambda data: data[: len(data) // 2]  # cut in the middle of its DR
    wire.writer.update(render_scoreboard_image(7, 6, 30))
    assert wire.app.block_wanted > 0
    wire.pump(300)
    assert wire.app.block_wanted == 0 and wire.app.rx_errors == errors + 1
    assert wire.port.stats.lost == 1
    assert wire.glass_is(render_scoreboard_image(7, 6, 30))
    wire.app.receive(encode_frame(0, "LED", "FAST"), wire.now)  # frames are taken again
    assert wire.app.led.mode == "FAST"


def test_an_update_encoded_at_once_is_the_counted_block_byte_for_byte() -> None:
    rng = random.Random(7)
    for _ in range(300):
        seq = rng.choice([0, 1, 77, 65533, 65534, 65535, rng.randrange(65536)])
        update, full = rng.randrange(65536), rng.random() < 0.3
        bodies = [
            b"DR %d %d %d %d %s"
            % (p, p, c, c + n - 1, binascii.b2a_base64(rng.randbytes(n), newline=False))
            for p, c, n in (
                (rng.randrange(8), rng.randrange(100), rng.randrange(1, 28))
                for _ in range(rng.randrange(1, 6))
            )
        ]
        ask_over = rng.randrange(-5, 900)
        data, nxt, size, ask = encode_update(
            seq, update, b"%d" % len(bodies), full, bodies, ask_over
        )

        head = (str(update), str(len(bodies)))
        word = "FULL" if full else "DIFF"

        def header(
            count: int, head: tuple[str, str] = head, word: str = word, over: int = ask_over
        ) -> tuple[str, tuple[str, ...]]:
            return "DU", (*head, str(count), word, "ACK" if count > over else "-")

        block = [(body[:2], body[3:]) for body in bodies]
        assert (data, nxt) == encode_counted(seq, header, block)
        assert size == len(data) - len(data.split(b"\n")[1]) - 2 and ask == (size > ask_over)


@pytest.mark.parametrize("kind", ["ssd1309", "sh1106"])
def test_the_direct_way_writes_what_the_counted_way_writes(kind: str) -> None:
    """A seat's updates through the link's ``send_update`` (the port's direct way) are
    the bytes ``send_counted`` writes for them, held and whole-screen ones included, and
    the panel shows every frame either way."""
    rng = random.Random(kind)
    wires = [Wire(kind, 4, direct=True), Wire(kind, 4, direct=False)]
    writes = [_capture(wire) for wire in wires]
    frame = bytearray(image_to_pages(render_scoreboard_image(3, 5, 30)))
    for step in range(120):
        for _ in range(rng.randrange(1, 4)):  # a line, a score's sticks, a whole page or two
            page, col = rng.randrange(8), rng.randrange(120)
            rows = rng.choice([1, 1, 1, 2, 5])
            for p in range(page, min(8, page + rows)):
                n = rng.randrange(1, 128 - col + 1)
                frame[p * 128 + col : p * 128 + col + n] = rng.randbytes(n)
        for wire in wires:
            wire.writer.update_frame(bytes(frame))
            if step % 7 == 0:
                wire.pump()  # the node's heartbeat acknowledges now and then
    for wire in wires:
        wire.pump(3000)
        assert wire.port.stats.full_resends == 0
        assert wire.model.glass() == bytes(frame)
    assert writes[0] == writes[1]
    assert wires[0].direct_updates > 40 and wires[1].direct_updates == 0
