"""An unplugged panel on the Pi's bus costs no descriptor: every failed reopen closes
what it opened (luma's constructor raises before there is a device to clean up)."""

from __future__ import annotations

import errno
import os
import time
from typing import Any

import pytest
import smbus2
from PIL import Image

from controller.hal.display import DisplayConfig, OledDisplay


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


@pytest.mark.parametrize("driver", ["ssd1306", "sh1106", "ssd1309"])
def test_ten_thousand_frames_to_an_unplugged_panel_leak_no_descriptor(
    monkeypatch: pytest.MonkeyPatch, driver: str
) -> None:
    monkeypatch.setattr(smbus2, "SMBus", UnpluggedBus)
    display = OledDisplay(DisplayConfig(driver=driver, port=1), seat=2)
    frame = Image.new("1", (128, 64))
    display.show(frame)  # the first failure logs; imports are done
    before = open_descriptors()
    opened = UnpluggedBus.opened
    frames = 10_000 if driver == "ssd1306" else 2_000
    deadline = time.monotonic() + 60
    for i in range(frames):
        display.show(frame) if i % 2 else display.show_pages(bytes(1024))
        assert time.monotonic() < deadline
    assert UnpluggedBus.opened - opened == frames  # every frame really tried the bus again
    assert open_descriptors() <= before + 2
    assert display.errors == frames + 1


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
    display = OledDisplay(DisplayConfig(driver="sh1106", port=1), seat=0)
    frame = Image.new("1", (128, 64), 1)
    before = open_descriptors()
    for _ in range(50):
        display.show(frame)
    assert not writes and open_descriptors() <= before + 2
    Bus.plugged = True
    display.show(frame)
    assert writes  # initialised afresh and the frame sent
    assert open_descriptors() <= before + 3  # the one bus the working panel holds
