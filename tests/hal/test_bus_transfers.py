"""The Pi-bus writer's short ways: an update's transfers as messages of one ``i2c_rdwr``
(the same messages, in the same order, as luma's own ``command``/``data`` calls make),
and plans kept by where two frames differ (the same windows as planned afresh)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from luma.core.interface.serial import i2c
from luma.oled.device import sh1106, ssd1306
from smbus2 import i2c_msg

from controller.hal import display_bus, display_planner
from controller.hal.display_bus import bus_writer, writer_for_device
from controller.hal.display_planner import DisplayWriter
from controller.hal.pages import image_to_pages
from controller.hal.panels import Controller
from controller.render.matchsticks import render_scoreboard_image

from .oled_model import FakeSMBus, model_for


class RdwrBus(FakeSMBus):
    """The fake bus, counting the calls (each an ioctl on a real bus) and reading real
    smbus2 messages back byte by byte."""

    calls: int = 0

    def write_i2c_block_data(self, address: int, register: int, data: list[int]) -> None:
        self.calls += 1
        super().write_i2c_block_data(address, register, data)

    def i2c_rdwr(self, *messages: Any) -> None:
        self.calls += 1
        assert len(messages) <= 42  # the kernel's I2C_RDWR_IOCTL_MAX_MSGS
        for message in messages:
            buf = bytes(message.buf[: message.len])
            self._deliver(int(message.addr), buf[0], list(buf[1:]))


def _managed(kind: str) -> tuple[DisplayWriter, RdwrBus, Any]:
    model = model_for(kind)
    bus = RdwrBus(model, address=0x3C)
    serial = i2c(bus=bus, address=0x3C)
    serial._managed = True  # as i2c(port=1) makes it: data as smbus2 i2c_rdwr messages
    serial._i2c_msg_write = i2c_msg.write
    device = (ssd1306 if kind == "ssd1306" else sh1106)(serial)
    writer = writer_for_device(device)
    assert isinstance(writer, DisplayWriter)
    writer.assume_blank()
    return writer, bus, model


def _frames(seed: int, count: int) -> list[bytes]:
    rnd = random.Random(seed)
    frames = []
    for _ in range(count):
        image = render_scoreboard_image(rnd.randrange(31), rnd.randrange(31), 30)
        frame = bytearray(image_to_pages(image))
        for _ in range(rnd.randrange(4)):  # a few scattered bytes besides
            frame[rnd.randrange(len(frame))] ^= 1 << rnd.randrange(8)
        frames.append(bytes(frame))
    return frames


@pytest.mark.parametrize("kind", ["ssd1306", "sh1106"])
def test_an_update_is_one_ioctl_of_the_transfers_luma_makes(kind: str) -> None:
    combined, combined_bus, combined_model = _managed(kind)
    plain, plain_bus, plain_model = _managed(kind)
    plain.port._combined = None  # type: ignore[attr-defined]  # luma's own calls
    for frame in _frames(3, 60):
        sent, calls = len(combined_bus.transfers), combined_bus.calls
        ours = combined.update_frame(frame)
        theirs = plain.update_frame(frame)
        assert combined_bus.calls - calls == (1 if ours.transfers else 0)
        assert combined_bus.transfers == plain_bus.transfers  # the same bytes, in order
        assert combined_model.glass() == plain_model.glass()
        assert ours == theirs  # the same report: bytes, transfers, windows
        new = combined_bus.transfers[sent:]
        assert ours.bus_bytes == sum(2 + len(payload) for _, payload in new)
        assert ours.transfers == len(new)


def test_a_smbus_handed_to_luma_keeps_its_block_writes() -> None:
    model = model_for("ssd1306")
    bus = RdwrBus(model, address=0x3C)
    writer = writer_for_device(ssd1306(i2c(bus=bus, address=0x3C)))
    assert isinstance(writer, DisplayWriter)
    assert writer.port._combined is None  # type: ignore[attr-defined]
    writer.update_frame(_frames(1, 1)[0])
    assert all(len(payload) <= 32 for _, payload in bus.transfers)


@pytest.mark.parametrize("controller", [Controller.SSD1306, Controller.SH1106])
def test_kept_plans_are_the_plans_made_afresh(
    controller: Controller, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(display_planner, "_PLANS", {})
    monkeypatch.setattr(display_planner, "PLANS_KEPT", 16)
    writer = bus_writer(_Null(), controller)
    writer.assume_blank()
    frames = _frames(7, 40)
    for last, frame in zip(frames, frames[1:] + frames[:1], strict=True):
        for _ in range(2):  # made, then kept (or forgotten: 16 at most)
            writer._last = last
            kept = writer.plan(frame)
            assert kept == writer._plan_changes(last, frame)
        assert len(writer._plans) <= 16
    assert len(display_planner._PLANS) == 1  # one panel and bus: one shared store


class _Null:
    def command(self, *cmd: int) -> None:
        pass

    def data(self, data: list[int]) -> None:
        pass


def test_changes_in_the_same_places_share_a_plan_and_its_transfers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Different bits of the same bytes: one plan, its transfers made ready once, and
    each update's own bytes on the panel."""
    blank = bytes(1024)
    frames: list[bytes] = []
    for bits in (0x01, 0x80, 0x3C):
        edited = bytearray(blank)
        edited[130:140] = bytes([bits]) * 10  # page 1, columns 2..11
        edited[700] = bits  # page 5, column 60
        frames.append(bytes(edited))
    shown = [_glass_of(frame) for frame in [*frames, blank]]
    display_bus.forget_plans()
    made: list[object] = []
    program = display_bus.BusPort._program

    def counted(port: display_bus.BusPort, rdwr: Any, plan: Any) -> Any:
        made.append(plan)
        return program(port, rdwr, plan)

    monkeypatch.setattr(display_bus.BusPort, "_program", counted)
    writer, _bus, model = _managed("ssd1306")
    plans = []
    for frame, glass in zip(frames, shown, strict=False):
        plans.append(writer._kept_plan(frame))
        writer.update_frame(frame)
        assert model.glass() == glass
        writer.update_frame(blank)
        assert model.glass() == shown[-1]
    assert plans[0] is plans[1] is plans[2]
    assert len(made) == 1


def _glass_of(frame: bytes) -> Any:
    """What a model panel shows after the whole frame is written to it."""
    writer, _bus, model = _managed("ssd1306")
    writer.invalidate()
    writer.update_frame(frame)
    return model.glass()


def test_forgotten_plans_are_planned_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """``forget_plans`` (the bench's replay, at each round's start): the writers plan
    every change afresh, as a process just started."""
    planned: list[bytes] = []
    plan_changes = DisplayWriter._plan_changes

    def counted(writer: DisplayWriter, last: bytes, frame: bytes, changed: Any = None) -> Any:
        planned.append(frame)
        return plan_changes(writer, last, frame, changed)

    monkeypatch.setattr(DisplayWriter, "_plan_changes", counted)
    frames = _frames(11, 6)
    for _ in range(2):
        display_bus.forget_plans()
        writer, _bus, _model = _managed("ssd1306")
        for frame in frames:
            writer.update_frame(frame)
    assert len(planned) == 2 * len(frames)  # each change planned once a round


@pytest.mark.parametrize("kind", ["ssd1306", "sh1106"])
def test_an_update_of_more_messages_than_an_ioctl_takes(kind: str) -> None:
    """Scattered changes: more than the kernel's 42 messages, in ioctls of 42 at most,
    the same transfers as luma's own calls make (each change its own window)."""
    combined, combined_bus, combined_model = _managed(kind)
    plain, plain_bus, plain_model = _managed(kind)
    plain.port._combined = None  # type: ignore[attr-defined]  # luma's own calls
    frame = bytearray(1024)
    for page in range(8):
        for col in range(4 + 10 * (page % 2), 128, 20):  # far apart, no two stacked
            frame[page * 128 + col] = 0x5A
    calls = combined_bus.calls
    for _ in range(2):  # made ready, then kept
        ours = combined.update_frame(bytes(frame))
        theirs = plain.update_frame(bytes(frame))
        assert ours == theirs
        assert ours.transfers > 42
        assert combined_bus.transfers == plain_bus.transfers
        assert combined_model.glass() == plain_model.glass()
        combined.update_frame(bytes(1024))
        plain.update_frame(bytes(1024))
    assert combined_bus.calls - calls == 4 * -(-ours.transfers // 42)
