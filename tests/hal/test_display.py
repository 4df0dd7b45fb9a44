"""The real display adapter, on luma's own interfaces (no panel needed)."""

from __future__ import annotations

from typing import Any

import pytest
from luma.core.interface.serial import i2c, noop
from PIL import Image

from controller.hal.display import DisplayConfig, OledDisplay
from controller.hal.pages import image_to_pages
from controller.render.matchsticks import render_scoreboard_image

from .oled_model import FakeSMBus, SH1106Model, SSD1306Model
from .test_display_planner import same_image


class Recording:
    """A luma serial interface that counts what it is asked to send (luma's ``noop``,
    which swallows everything, with a byte count and a switch to fail)."""

    def __init__(self) -> None:
        self.sent = 0
        self.fail = False
        self._noop = noop()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._noop, name)  # cleanup() and the like

    def command(self, *cmd: int) -> None:
        if self.fail:
            raise OSError("I2C transfer failed")
        self.sent += len(cmd)

    def data(self, data: Any) -> None:
        if self.fail:
            raise OSError("I2C transfer failed")
        self.sent += len(list(data))


@pytest.mark.parametrize("driver", ["ssd1306", "sh1106"])
def test_frames_go_out_and_only_changes_follow(driver: str) -> None:
    iface = Recording()
    display = OledDisplay(DisplayConfig(driver=driver), seat=0, interface=iface)
    display.show(render_scoreboard_image(3, 4, 30))
    full = iface.sent
    assert full > 1024
    display.show(render_scoreboard_image(4, 4, 30))
    assert 0 < iface.sent - full < 100
    before = iface.sent
    display.show(render_scoreboard_image(4, 4, 30))
    assert iface.sent == before
    assert display.errors == 0


def test_a_failing_panel_never_raises_and_recovers() -> None:
    iface = Recording()
    display = OledDisplay(DisplayConfig(), seat=2, interface=iface)
    display.show(render_scoreboard_image(0, 0, 30))
    iface.fail = True
    display.show(render_scoreboard_image(1, 0, 30))
    assert display.errors == 1
    iface.fail = False
    before = iface.sent
    display.show(render_scoreboard_image(1, 0, 30))
    assert iface.sent - before > 1024  # a full frame after the error


def test_missing_bus_is_counted_not_raised() -> None:
    display = OledDisplay(DisplayConfig(port=250), seat=1)
    display.show(Image.new("1", (128, 64)))
    assert display.errors == 1


def test_bad_config() -> None:
    with pytest.raises(ValueError, match="driver must be"):
        DisplayConfig(driver="st7735")
    with pytest.raises(ValueError, match="bus must be"):
        DisplayConfig(bus="usb")


@pytest.mark.parametrize("driver", ["ssd1306", "sh1106", "ssd1309"])
def test_a_panel_that_lost_its_power_comes_back_with_the_screen(driver: str) -> None:
    """A re-seated cable: the writes fail, then the panel answers again, dark and with
    every register at its reset value. The next frame re-initialises it."""
    from luma.core.interface.serial import i2c

    from controller.hal.pages import image_to_pages

    from .oled_model import FakeSMBus, model_for

    model = model_for(driver)
    display = OledDisplay(
        DisplayConfig(driver=driver), seat=0, interface=i2c(bus=FakeSMBus(model), address=0x3C)
    )
    display.show(render_scoreboard_image(3, 4, 30))
    assert model.glass() == image_to_pages(render_scoreboard_image(3, 4, 30))
    model.unplugged = True
    display.show(render_scoreboard_image(4, 4, 30))
    assert display.errors == 1
    model.unplugged = False
    model.power_cycle()
    assert model.glass() == bytes(1024)  # dark: display off, no charge pump
    display.show(render_scoreboard_image(5, 4, 30))
    assert model.glass() == image_to_pages(render_scoreboard_image(5, 4, 30))
    display.show(render_scoreboard_image(6, 4, 30))  # and only changes after that
    assert model.glass() == image_to_pages(render_scoreboard_image(6, 4, 30))
    assert display.errors == 1


@pytest.mark.parametrize("driver", ["ssd1306", "sh1106"])
def test_a_panel_opened_is_cleared_once_and_the_first_screen_sends_what_it_lights(
    driver: str,
) -> None:
    """luma's constructor initialises the panel and clears it: the first screen is a
    difference from that dark panel, not a second full frame, and the panel shows it."""
    model = SSD1306Model() if driver == "ssd1306" else SH1106Model()
    bus = FakeSMBus(model)
    display = OledDisplay(DisplayConfig(driver=driver), seat=0, interface=i2c(bus=bus))
    score = render_scoreboard_image(3, 4, 30)
    display.show(score)
    data = [payload for control, payload in bus.transfers if control == 0x40]
    assert sum(map(len, data)) < 2 * 1024  # luma's clear, then far less than a frame
    assert same_image(model.image(), score)
    pages = image_to_pages(render_scoreboard_image(9, 4, 30))
    display.show_pages(pages)
    assert image_to_pages(model.image()) == pages
