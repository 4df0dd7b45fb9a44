"""The display writer: what it sends, decoded by a model of the controller RAM,
must reproduce every frame; and it must send little for small changes."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from luma.core.device import dummy
from luma.core.interface.serial import i2c, spi
from luma.oled.device import sh1106, ssd1306
from PIL import Image, ImageChops, ImageDraw

from controller.hal.display_bus import PassthroughWriter, bus_writer, writer_for_device
from controller.hal.display_planner import BusModel, DisplayWriter, UpdateReport
from controller.hal.pages import image_to_pages, rotate_pages_180
from controller.hal.panel_addressing import Window
from controller.hal.panels import Controller
from controller.render.matchsticks import render_scoreboard_image

from .oled_model import (
    FakeGpio,
    FakeSMBus,
    FakeSpi,
    OledModel,
    RamModelError,
    RecordingInterface,
    SH1106Model,
    SSD1306Model,
    model_for,
)

SIZE = (128, 64)
CONTROLLERS = [Controller.SSD1306, Controller.SH1106]
BUSES = [BusModel.i2c(32), BusModel.i2c(4096), BusModel.spi()]


def same_image(a: Image.Image, b: Image.Image) -> bool:
    return ImageChops.difference(a.convert("L"), b.convert("L")).getbbox() is None


def make_writer(
    controller: Controller, bus: BusModel | None = None
) -> tuple[DisplayWriter, RecordingInterface, OledModel]:
    model = model_for(controller.value)
    if isinstance(model, SSD1306Model):
        model.command(0x20, 0x00)  # what luma's ssd1306 init leaves behind
    interface = RecordingInterface(model)
    return (
        bus_writer(interface, controller, bus=bus or BusModel.i2c(32)),
        interface,
        model,
    )


def noise(rnd: random.Random, density: float) -> Image.Image:
    image = Image.new("1", SIZE, 0)
    px = image.load()
    assert px is not None
    for y in range(SIZE[1]):
        for x in range(SIZE[0]):
            if rnd.random() < density:
                px[x, y] = 255
    return image


def scribble(rnd: random.Random, image: Image.Image) -> Image.Image:
    """A copy of ``image`` with a few shapes drawn or erased."""
    out = image.copy()
    draw = ImageDraw.Draw(out)
    for _ in range(rnd.randint(1, 4)):
        x0, y0 = rnd.randrange(128), rnd.randrange(64)
        x1, y1 = x0 + rnd.randrange(1, 40), y0 + rnd.randrange(1, 20)
        fill = rnd.choice(["white", "black"])
        shape = rnd.randrange(4)
        if shape == 0:
            draw.rectangle((x0, y0, x1, y1), fill=fill)
        elif shape == 1:
            draw.line((x0, y0, x1, y1), fill=fill, width=rnd.randint(1, 3))
        elif shape == 2:
            draw.point([(rnd.randrange(128), rnd.randrange(64)) for _ in range(5)], fill=fill)
        else:
            draw.rectangle((x0, y0, x1, y1), outline=fill)
    return out


# ------------------------------------------------------------------ page layout


def test_image_to_pages_matches_luma_and_the_model() -> None:
    rnd = random.Random(7)
    for _ in range(5):
        image = noise(rnd, 0.3)
        model = SSD1306Model()
        device = ssd1306(i2c(bus=FakeSMBus(model)))
        device.display(image)  # luma's own full-frame path
        assert same_image(model.image(), image)
        assert image_to_pages(image) == b"".join(bytes(row) for row in model.ram)


def test_image_to_pages_bit_order() -> None:
    image = Image.new("1", SIZE, 0)
    image.putpixel((5, 0), 255)  # page 0, bit 0
    image.putpixel((6, 15), 255)  # page 1, bit 7
    pages = image_to_pages(image)
    assert pages[5] == 0x01
    assert pages[128 + 6] == 0x80
    assert sum(1 for b in pages if b) == 2


def test_image_to_pages_rejects_other_modes() -> None:
    with pytest.raises(ValueError):
        image_to_pages(Image.new("L", SIZE))


# ----------------------------------------------- sent bytes reproduce every frame


def run_sequence(controller: Controller, bus: BusModel, frames: list[Image.Image]) -> None:
    writer, _, model = make_writer(controller, bus)
    for index, frame in enumerate(frames):
        report = writer.update(frame)
        assert same_image(model.image(), frame), f"frame {index} differs ({report})"
        if index == 0:
            assert report.full


@pytest.mark.parametrize("controller", CONTROLLERS)
@pytest.mark.parametrize("bus", BUSES, ids=lambda b: b.name)
def test_seeded_random_frames(controller: Controller, bus: BusModel) -> None:
    rnd = random.Random(2024)
    frames = [noise(rnd, 0.1)]
    for _ in range(150):
        choice = rnd.random()
        if choice < 0.1:
            frames.append(noise(rnd, rnd.choice([0.01, 0.2, 0.5])))
        elif choice < 0.2:
            frames.append(frames[-1].copy())
        else:
            frames.append(scribble(rnd, frames[-1]))
    run_sequence(controller, bus, frames)


_pixels = st.tuples(st.integers(0, 127), st.integers(0, 63))
_edit = st.tuples(st.sampled_from(["rect", "line", "points", "invert-page"]), _pixels, _pixels)


def apply_edit(image: Image.Image, edit: tuple[str, tuple[int, int], tuple[int, int]]) -> None:
    kind, (x0, y0), (x1, y1) = edit
    draw = ImageDraw.Draw(image)
    box = (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
    if kind == "rect":
        draw.rectangle(box, fill="white" if (x0 + y1) % 2 else "black")
    elif kind == "line":
        draw.line((x0, y0, x1, y1), fill="white" if x1 % 2 else "black", width=1 + y0 % 3)
    elif kind == "points":
        draw.point([(x0, y0), (x1, y1), (x1, y0)], fill="white" if y0 % 2 else "black")
    else:
        page = y0 // 8
        strip = image.crop((0, page * 8, 128, page * 8 + 8)).point(lambda v: 255 - v)
        image.paste(strip, (0, page * 8))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    controller=st.sampled_from(CONTROLLERS),
    bus=st.sampled_from(BUSES),
    start=st.sampled_from(["blank", "full", "board"]),
    steps=st.lists(st.lists(_edit, max_size=4), min_size=1, max_size=8),
)
def test_hypothesis_frames(
    controller: Controller,
    bus: BusModel,
    start: str,
    steps: list[list[tuple[str, tuple[int, int], tuple[int, int]]]],
) -> None:
    if start == "board":
        frame = render_scoreboard_image(13, 21, 30)
    else:
        frame = Image.new("1", SIZE, 255 if start == "full" else 0)
    frames = [frame]
    for edits in steps:
        frame = frame.copy()
        for edit in edits:
            apply_edit(frame, edit)
        frames.append(frame)
    run_sequence(controller, bus, frames)


# ------------------------------------------------------- through real luma objects


@pytest.mark.parametrize("kind", ["ssd1306", "sh1106"])
@pytest.mark.parametrize("managed", [False, True])
def test_luma_i2c_transfers_match_the_count(kind: str, managed: bool) -> None:
    model = model_for(kind)
    bus = FakeSMBus(model, address=0x3C)
    serial = i2c(bus=bus, address=0x3C)
    if managed:  # as with i2c(port=1): smbus2 i2c_rdwr messages of up to 4096 bytes
        serial._managed = True
        serial._i2c_msg_write = lambda address, buf: (address, buf)
    device = (ssd1306 if kind == "ssd1306" else sh1106)(serial)  # init sequence + clear
    writer = writer_for_device(device)
    assert isinstance(writer, DisplayWriter)
    assert writer.bus == BusModel.i2c(4096 if managed else 32)
    rnd = random.Random(5)
    frame = render_scoreboard_image(0, 0, 30)
    for step in range(40):
        if step % 10 == 9:
            frame = noise(rnd, 0.3)
        else:
            frame = render_scoreboard_image(rnd.randrange(31), rnd.randrange(31), 30)
        before_bytes, before_transfers = bus.bus_bytes(), len(bus.transfers)
        report = writer.update(frame)
        assert same_image(model.image(), frame)
        assert report.bus_bytes == bus.bus_bytes() - before_bytes
        assert report.transfers == len(bus.transfers) - before_transfers
    if isinstance(model, SH1106Model):
        assert model.ignored == [0x20, 0x8D]  # luma's init: SSD1306 commands the SH1106 lacks


def test_luma_spi_bytes_match_the_count() -> None:
    model = SSD1306Model()
    gpio = FakeGpio()
    fake = FakeSpi(model, gpio)
    device = ssd1306(spi(spi=fake, gpio=gpio, gpio_DC=24, gpio_RST=25))
    writer = writer_for_device(device)
    assert isinstance(writer, DisplayWriter)
    assert writer.bus == BusModel.spi()
    for ours in range(0, 31, 3):
        before = fake.written
        frame = render_scoreboard_image(ours, 30 - ours, 30)
        report = writer.update(frame)
        assert same_image(model.image(), frame)
        assert report.bus_bytes == fake.written - before
        assert report.overhead_bytes == 0


def test_rotated_luma_device() -> None:
    model = SSD1306Model()
    device = ssd1306(i2c(bus=FakeSMBus(model)), rotate=2)
    writer = writer_for_device(device)
    frame = render_scoreboard_image(7, 12, 30)
    writer.update(frame)
    assert same_image(model.image(), frame.rotate(180))
    writer.update(render_scoreboard_image(8, 12, 30))
    assert same_image(model.image(), render_scoreboard_image(8, 12, 30).rotate(180))


@pytest.mark.parametrize("rotate", [0, 2])
def test_frames_in_page_layout_reach_the_panel_as_images_do(rotate: int) -> None:
    model = SSD1306Model()
    writer = writer_for_device(ssd1306(i2c(bus=FakeSMBus(model)), rotate=rotate))
    assert isinstance(writer, DisplayWriter) and writer.rotation == rotate
    for ours in (7, 8, 15):
        frame = render_scoreboard_image(ours, 12, 30)
        writer.update_pages(image_to_pages(frame))
        assert same_image(model.image(), frame.rotate(180 * rotate // 2))
    assert rotate_pages_180(rotate_pages_180(image_to_pages(frame))) == image_to_pages(frame)
    assert rotate_pages_180(image_to_pages(frame)) == image_to_pages(frame.rotate(180))


def test_frames_in_page_layout_refused_for_a_panel_turned_a_quarter() -> None:
    writer = writer_for_device(ssd1306(i2c(bus=FakeSMBus(SSD1306Model())), rotate=1))
    assert isinstance(writer, DisplayWriter)
    with pytest.raises(ValueError, match="quarters"):
        writer.update_pages(bytes(1024))


def test_dummy_device_gets_display_calls() -> None:
    device = dummy(width=128, height=64, mode="1")
    writer = writer_for_device(device)
    assert isinstance(writer, PassthroughWriter)
    frame = render_scoreboard_image(3, 4, 15)
    report = writer.update(frame)
    assert report.passthrough and report.bus_bytes == 0
    assert same_image(device.image, frame)
    rgb = dummy()  # luma's default dummy is RGB: the frame is converted
    writer_for_device(rgb).update(frame)
    assert same_image(rgb.image, frame)
    writer.invalidate()  # harmless


# ------------------------------------------------------------ how much is sent


def one_point_changes() -> list[tuple[int, int, int, int]]:
    """(ours, theirs) before and after one point, over a whole 30-point game, both teams."""
    changes = []
    for points in range(30):
        changes.append((points, 11, points + 1, 11))
        changes.append((7, points, 7, points + 1))
    return changes


@pytest.mark.parametrize("controller", CONTROLLERS)
def test_one_matchstick_costs_little(
    controller: Controller, capsys: pytest.CaptureFixture[str]
) -> None:
    writer, _interface, model = make_writer(controller, BusModel.i2c(32))
    full = writer.update(render_scoreboard_image(0, 0, 30))
    assert full.full
    worst: tuple[int, tuple[int, int, int, int]] = (0, (0, 0, 0, 0))
    sizes = []
    for before_after in one_point_changes():
        a, b, c, d = before_after
        writer.update(render_scoreboard_image(a, b, 30))
        report = writer.update(render_scoreboard_image(c, d, 30))
        assert not report.full
        assert same_image(model.image(), render_scoreboard_image(c, d, 30))
        sizes.append(report.bus_bytes)
        worst = max(worst, (report.bus_bytes, before_after))
    mean = sum(sizes) / len(sizes)
    with capsys.disabled():
        print(
            f"\n{controller.value} I2C (32-byte blocks): full frame {full.bus_bytes} B "
            f"({full.seconds(400e3) * 1e3:.1f} ms at 400 kHz); one matchstick: mean "
            f"{mean:.1f} B, worst {worst[0]} B {worst[1]} "
            f"({worst[0] / full.bus_bytes:.1%}, {worst[0] * 9 / 400e3 * 1e3:.2f} ms)"
        )
    assert worst[0] < 0.05 * full.bus_bytes


def test_the_typical_stick_in_numbers() -> None:
    writer, interface, _ = make_writer(Controller.SSD1306, BusModel.i2c(32))
    writer.update(render_scoreboard_image(14, 9, 30))
    interface.ops.clear()
    report = writer.update(render_scoreboard_image(15, 9, 30))  # the diagonal of square 3
    # The diagonal: x 39-47, y 12-20, i.e. 9 columns of pages 1 and 2, one window.
    assert report.windows == (Window(page=1, col=39, pages=2, cols=9),)
    assert interface.ops == [
        ("command", [0x21, 39, 47, 0x22, 1, 2]),
        ("data", interface.ops[1][1]),
    ]
    assert len(interface.ops[1][1]) == 18
    assert report.bus_bytes == (2 + 6) + (2 + 18)


@pytest.mark.parametrize("controller", CONTROLLERS)
def test_unchanged_frame_sends_nothing(controller: Controller) -> None:
    writer, interface, _ = make_writer(controller)
    frame = render_scoreboard_image(5, 6, 30)
    writer.update(frame)
    interface.ops.clear()
    report = writer.update(frame.copy())
    assert interface.ops == []
    assert report.skipped and report.bus_bytes == 0 and report.transfers == 0
    assert writer.totals.skipped == 1


@pytest.mark.parametrize("controller", CONTROLLERS)
def test_full_frame_at_start_and_after_invalidate(controller: Controller) -> None:
    writer, _interface, model = make_writer(controller)
    frame = render_scoreboard_image(5, 6, 30)
    first = writer.update(frame)
    assert first.full and first.data_bytes == 1024
    writer.invalidate()
    again = writer.update(frame)
    assert again.full and again.data_bytes == 1024
    assert same_image(model.image(), frame)
    assert writer.totals.full_frames == 2


@pytest.mark.parametrize("controller", CONTROLLERS)
def test_full_frame_sizes(controller: Controller) -> None:
    writer, interface, _ = make_writer(controller, BusModel.i2c(32))
    report = writer.update(Image.new("1", SIZE, 0))
    if controller is Controller.SSD1306:
        # 0x20 0x00 0x21 0 127 0x22 0 7 in one transfer, then 1024 bytes in 32 blocks of 32
        assert (report.command_bytes, report.transfers) == (8, 1 + 32)
        assert report.bus_bytes == 8 + 1024 + 2 * 33
        assert interface.ops[0] == ("command", [0x20, 0x00, 0x21, 0, 127, 0x22, 0, 7])
    else:
        # 8 x (0xB0|p, 0x10, 0x02 + 128 bytes in 4 blocks)
        assert (report.command_bytes, report.transfers) == (24, 8 * 5)
        assert report.bus_bytes == 24 + 1024 + 2 * 40
        assert interface.ops[0] == ("command", [0xB0, 0x10, 0x02])


class FlakyInterface(RecordingInterface):
    def __init__(self, model: OledModel, fail_at: int) -> None:
        super().__init__(model)
        self.calls = 0
        self.fail_at = fail_at

    def _tick(self) -> None:
        self.calls += 1
        if self.calls == self.fail_at:
            raise OSError(121, "Remote I/O error")

    def command(self, *cmd: int) -> None:
        self._tick()
        super().command(*cmd)

    def data(self, data: list[int]) -> None:  # type: ignore[override]
        self._tick()
        super().data(data)


@pytest.mark.parametrize("controller", CONTROLLERS)
@pytest.mark.parametrize("fail_after", [0, 1, 2, 3])
def test_after_an_interface_error_the_next_update_is_full(
    controller: Controller, fail_after: int
) -> None:
    model = model_for(controller.value)
    if isinstance(model, SSD1306Model):
        model.command(0x20, 0x00)
    interface = FlakyInterface(model, fail_at=10**9)
    writer = bus_writer(interface, controller)
    writer.update(render_scoreboard_image(3, 3, 30))
    interface.fail_at = interface.calls + 1 + fail_after
    with pytest.raises(OSError):
        writer.update(render_scoreboard_image(20, 3, 30))
    assert writer.last_frame is None
    report = writer.update(render_scoreboard_image(21, 3, 30))
    assert report.full
    assert same_image(model.image(), render_scoreboard_image(21, 3, 30))
    follow = writer.update(render_scoreboard_image(22, 3, 30))
    assert not follow.full


# ------------------------------------------------------------- span planning


def changed_columns(writer: DisplayWriter, columns: list[int]) -> UpdateReport:
    frame = Image.new("1", SIZE, 0)
    writer.update(frame)
    changed = frame.copy()
    for x in columns:
        changed.putpixel((x, 3), 255)  # page 0
    return writer.update(changed)


@pytest.mark.parametrize(
    ("controller", "bus", "merge_gap"),
    [
        # SSD1306 second span on a page: 0x21 c0 c1 = 3 bytes + I2C 2 for the command and
        # 2 for the extra data transfer = 7; a gap of 7 unchanged bytes costs the same.
        (Controller.SSD1306, BusModel.i2c(32), 7),
        (Controller.SSD1306, BusModel.spi(), 3),
        # SH1106: low nibble only (same high nibble) = 1 + 2 + 2 = 5.
        (Controller.SH1106, BusModel.i2c(32), 5),
        (Controller.SH1106, BusModel.spi(), 1),
    ],
    ids=lambda v: getattr(v, "name", str(v)),
)
def test_spans_merge_when_the_gap_is_cheaper(
    controller: Controller, bus: BusModel, merge_gap: int
) -> None:
    writer, _, _model = make_writer(controller, bus)
    merged = changed_columns(writer, [64, 64 + merge_gap + 1])
    assert len(merged.windows) == 1, merged
    apart = changed_columns(writer, [64, 64 + merge_gap + 2])
    assert len(apart.windows) == 2, apart
    assert apart.bus_bytes <= merged.bus_bytes + 1


def test_vertical_stick_is_one_window_on_ssd1306() -> None:
    writer, _, model = make_writer(Controller.SSD1306)
    frame = Image.new("1", SIZE, 0)
    writer.update(frame)
    stick = frame.copy()
    ImageDraw.Draw(stick).rectangle((40, 5, 41, 30), fill="white")  # pages 0-3
    report = writer.update(stick)
    assert report.windows == (Window(page=0, col=40, pages=4, cols=2),)
    assert same_image(model.image(), stick)


def test_scattered_changes_fall_back_to_a_full_frame() -> None:
    writer, _, model = make_writer(Controller.SH1106, BusModel.i2c(32))
    writer.update(Image.new("1", SIZE, 0))
    checker = Image.new("1", SIZE, 0)
    for page in range(8):
        for x in range(0, 128, 2):
            checker.putpixel((x, page * 8), 255)
    report = writer.update(checker)
    assert report.bus_bytes <= 24 + 1024 + 2 * 40
    assert same_image(model.image(), checker)


# ------------------------------------------------------------ the RAM models


def test_ssd1306_model_horizontal_window_wraps() -> None:
    model = SSD1306Model()
    model.command(0x20, 0x00, 0x21, 10, 12, 0x22, 2, 3)
    model.data(list(range(1, 8)))  # 2 pages x 3 columns, then wrap to (page 2, col 10)
    assert list(model.ram[2][10:13]) == [7, 2, 3]
    assert list(model.ram[3][10:13]) == [4, 5, 6]
    assert (model.page, model.col) == (2, 11)


def test_ssd1306_model_vertical_and_page_modes() -> None:
    model = SSD1306Model()
    model.command(0x20, 0x01, 0x21, 0, 1, 0x22, 6, 7)
    model.data([1, 2, 3, 4])
    assert (model.ram[6][0], model.ram[7][0], model.ram[6][1], model.ram[7][1]) == (1, 2, 3, 4)
    model.command(0x20, 0x02, 0xB5, 0x0E, 0x17)  # page 5, column 0x7E
    model.data([9, 9, 8])
    assert (model.ram[5][126], model.ram[5][127], model.ram[5][0]) == (9, 9, 8)


def test_ssd1306_model_is_strict() -> None:
    model = SSD1306Model()
    model.command(0x20, 0x00)
    for bad in ([0xB0], [0x05], [0x14]):
        with pytest.raises(RamModelError):
            model.command(*bad)
    model.command(0x20, 0x02)
    with pytest.raises(RamModelError):
        model.command(0x21, 0, 127)
    with pytest.raises(RamModelError):
        model.command(0xFF)
    model.command(0x81)
    with pytest.raises(RamModelError):
        model.data([1])  # the contrast command still waits for its argument


def test_sh1106_model_columns() -> None:
    model = SH1106Model()
    model.command(0xB7, 0x18, 0x02)  # page 7, column 130
    model.data([1, 2, 3, 4])  # 130, 131, then the counter stays at 131
    assert (model.ram[7][130], model.ram[7][131]) == (1, 4)
    assert model.image().size == SIZE
    model.command(0xB0, 0x10, 0x02)  # page 0, column 2 = visible x 0
    model.data([0xFF])
    assert model.image().getpixel((0, 0)) == 255


def test_models_for_luma_full_frames() -> None:
    frame = render_scoreboard_image(9, 26, 30)
    for device_class, model in ((ssd1306, SSD1306Model()), (sh1106, SH1106Model())):
        device = device_class(i2c(bus=FakeSMBus(model)))
        device.display(frame)
        assert same_image(model.image(), frame)


def test_luma_ssd1309_is_written_with_ssd1306_addressing() -> None:
    from luma.oled.device import ssd1309

    model = SSD1306Model()  # the SSD1309's RAM and addressing commands are the SSD1306's
    device = ssd1309(i2c(bus=FakeSMBus(model)))
    writer = writer_for_device(device)
    assert isinstance(writer, DisplayWriter)
    assert writer.controller is Controller.SSD1309
    for ours in (0, 1, 2, 17):
        frame = render_scoreboard_image(ours, 3, 30)
        writer.update(frame)
        assert same_image(model.image(), frame)


def test_sh1106_of_a_luma_without_page_address_offset() -> None:
    """luma.oled < 3.16 has no ``_page_address_offset``; its sh1106 writes from column 2."""
    model = SH1106Model()
    device = sh1106(i2c(bus=FakeSMBus(model)))
    vars(device).pop("_page_address_offset", None)  # as in 3.13-3.15 (scripts/test-lowest)
    writer = writer_for_device(device)
    assert isinstance(writer, DisplayWriter)
    assert writer.column_offset == 2
    frame = render_scoreboard_image(9, 4, 30)
    writer.update(frame)
    assert same_image(model.image(), frame)
