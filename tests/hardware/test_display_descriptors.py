"""An unplugged panel on the Pi's bus costs no descriptor: every failed reopen closes
what it opened (luma's constructor raises before there is a device to clean up), and it
is not reopened at every frame."""

from __future__ import annotations

import errno
import os
import time
from typing import Any

import pytest
import smbus2
from PIL import Image

from controller.hal.display import RETRY_MAX_S, DisplayConfig, OledDisplay
from tests.helpers import Clock


class UnpluggedBus:
    """smbus2.SMBus as the kernel gives it for a bus whose panel is unplugged: opening
    /dev/i2c-N works (a real descriptor, here /dev/null), every transfer is not
    acknowledged (ENXIO)."""

    opened = 0

    def __init__(self, bus: int | str | None = None, force: bool = False) -> None:
        self.fd: int | None = os.open(os.devnull, os.O_RDWR)
        UnpluggedBus.opened += 1

    def _nak(self, *args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENXIO, "No such device or address")

    write_i2c_block_data = write_byte_data = i2c_rdwr = write_quick = _nak

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


# luma's SH1106 constructor is cheap; SSD1306/SSD1309 precompute pixel maps (about 3 ms
# each, more on a loaded machine): fewer of those, the same path
@pytest.mark.parametrize(
    ("driver", "frames"), [("sh1106", 10_000), ("ssd1306", 200), ("ssd1309", 200)]
)
def test_ten_thousand_frames_to_an_unplugged_panel_leak_no_descriptor(
    monkeypatch: pytest.MonkeyPatch, driver: str, frames: int
) -> None:
    monkeypatch.setattr(smbus2, "SMBus", UnpluggedBus)
    clock = Clock(1000.0)
    display = OledDisplay(DisplayConfig(driver=driver, port=1), seat=2, clock=clock)
    frame = Image.new("1", (128, 64))
    display.show(frame)  # the first failure logs; imports are done
    before = open_descriptors()
    opened = UnpluggedBus.opened
    deadline = time.monotonic() + 60
    for i in range(frames):
        clock.now += RETRY_MAX_S  # every frame late enough to try the bus again
        display.show(frame) if i % 2 else display.show_pages(bytes(1024))
        assert time.monotonic() < deadline
    assert UnpluggedBus.opened - opened == frames  # every frame really reopened the bus
    assert open_descriptors() <= before + 2
    assert display.errors == frames + 1


def test_an_unplugged_panel_is_not_reopened_at_every_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(smbus2, "SMBus", UnpluggedBus)
    clock = Clock(1000.0)
    display = OledDisplay(DisplayConfig(driver="ssd1306", port=1), seat=0, clock=clock)
    frame = Image.new("1", (128, 64))
    opened = UnpluggedBus.opened
    for _ in range(600):  # 60 s of frames at 10 per second
        display.show(frame)
        clock.now += 0.1
    tries = UnpluggedBus.opened - opened
    assert 60 / RETRY_MAX_S <= tries <= 60 / RETRY_MAX_S + 5  # backing off to one per 2 s


def test_a_panel_that_comes_back_is_shown_again(monkeypatch: pytest.MonkeyPatch) -> None:
    writes: list[int] = []

    class Bus(UnpluggedBus):
        plugged = False

        def i2c_rdwr(self, *messages: Any) -> None:
            if not Bus.plugged:
                self._nak()
            writes.append(len(messages))

        def write_i2c_block_data(self, *args: Any) -> None:
            if not Bus.plugged:
                self._nak()
            writes.append(1)

    monkeypatch.setattr(smbus2, "SMBus", Bus)
    clock = Clock(1000.0)
    display = OledDisplay(DisplayConfig(driver="sh1106", port=1), seat=0, clock=clock)
    frame = Image.new("1", (128, 64), 1)
    before = open_descriptors()
    for _ in range(50):
        display.show(frame)
        clock.now += 0.1
    assert not writes and open_descriptors() <= before + 2
    Bus.plugged = True
    clock.now += RETRY_MAX_S  # plugged back: shown again within the longest wait
    display.show(frame)
    assert writes  # initialised afresh and the frame sent
    assert open_descriptors() <= before + 3  # the one bus the working panel holds
