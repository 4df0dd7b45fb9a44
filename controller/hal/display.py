"""The seat display port and its real adapter: an SSD1306 or SH1106 OLED through luma.

A display takes a 128x64 1-bit image. ``OledDisplay`` opens the panel with luma.oled on
I2C (``/dev/i2c-N``: one bus per seat when the kernel's ``i2c-mux`` overlay exposes each
channel of the TCA9548A as its own bus) or SPI, and sends frames through our
``DisplayWriter``, which transmits only the pages and columns that changed. The mock
adapter is ``controller.hal.mock.MockDisplay`` (luma's ``dummy`` device).

Any failure while writing is caught and counted: a broken display never stops the
table. The writer sends a full frame after an error, so the panel recovers by itself.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from PIL import Image

from .display_writer import DisplayWriter, FrameWriter, writer_for_device

__all__ = ["Display", "DisplayConfig", "OledDisplay", "PageDisplay", "mux_bus"]

log = logging.getLogger(__name__)


class Display(Protocol):
    """Takes the seat's screen, a 128x64 mode "1" image."""

    def show(self, image: Image.Image) -> None: ...


class PageDisplay(Display, Protocol):
    """A display that also takes the screen already in the panel's page layout
    (``controller.render.pages``), as the renderer joins it from cached tiles: the
    service then draws no pixel for it."""

    def show_pages(self, pages: bytes) -> None: ...


@dataclass(frozen=True, slots=True)
class DisplayConfig:
    """One seat's panel, as in ``hardware/pinmap.toml`` ``[[display.seat]]``."""

    driver: str = "ssd1306"  # or "sh1106"
    bus: str = "i2c"  # or "spi"
    port: int = 1  # /dev/i2c-N (the multiplexer's parent bus when mux_channel is set), or SPI
    mux_channel: int | None = None  # TCA9548A channel, a bus of its own with the i2c-mux overlay
    address: int = 0x3C  # I2C address
    device: int = 0  # SPI chip select
    gpio_dc: int = 24  # SPI data/command pin
    gpio_rst: int | None = 25  # SPI reset pin
    width: int = 128
    height: int = 64
    rotate: int = 0

    def __post_init__(self) -> None:
        if self.driver not in ("ssd1306", "sh1106"):
            raise ValueError(f"driver must be ssd1306 or sh1106, not {self.driver!r}")
        if self.bus not in ("i2c", "spi"):
            raise ValueError(f"bus must be i2c or spi, not {self.bus!r}")


def mux_bus(parent: int, channel: int, sys_dir: Path = Path("/sys/bus/i2c/devices")) -> int | None:
    """The Linux bus number the kernel's i2c-mux overlay gave to a multiplexer channel.

    The numbers are assigned at boot; the bus is found by its name,
    ``i2c-<parent>-mux (chan_id <channel>)``.
    """
    wanted = f"i2c-{parent}-mux (chan_id {channel})"
    try:
        entries = sorted(sys_dir.glob("i2c-*"))
    except OSError:
        return None
    for entry in entries:
        try:
            name = (entry / "name").read_text().strip()
        except OSError:
            continue
        if name == wanted and entry.name[4:].isdigit():
            return int(entry.name[4:])
    return None


class OledDisplay:
    """A real panel; ``open()`` may raise if the bus or device is missing."""

    def __init__(self, config: DisplayConfig, *, seat: int, interface: Any = None) -> None:
        self.config = config
        self.seat = seat
        self._interface = interface  # a luma serial interface (tests); else from the config
        self.errors = 0
        self._writer: FrameWriter | None = None
        self._device: Any = None

    def open(self) -> None:
        from luma.core.interface.serial import i2c, spi
        from luma.oled.device import sh1106, ssd1306

        c = self.config
        if self._interface is not None:
            interface = self._interface
        elif c.bus == "i2c":
            port = c.port
            if c.mux_channel is not None:
                found = mux_bus(c.port, c.mux_channel)
                if found is None:
                    raise OSError(f"no I2C bus for mux channel {c.mux_channel} of i2c-{c.port}")
                port = found
            interface = i2c(port=port, address=c.address)
        else:
            interface = spi(port=c.port, device=c.device, gpio_DC=c.gpio_dc, gpio_RST=c.gpio_rst)
        driver = ssd1306 if c.driver == "ssd1306" else sh1106
        self._device = driver(interface, width=c.width, height=c.height, rotate=c.rotate)
        self._writer = writer_for_device(self._device)
        if isinstance(self._writer, DisplayWriter):
            self._writer.assume_blank()  # luma's initialisation ends by clearing the panel

    def show(self, image: Image.Image) -> None:
        writer = self._opened()
        if writer is None:
            return
        try:
            writer.update(image)
        except Exception as error:
            self._failed(f"write failed: {error}")

    def show_pages(self, pages: bytes) -> None:
        """The screen as ``image_to_pages(image)`` would give it (see ``PageDisplay``)."""
        writer = self._opened()
        if writer is None:
            return
        try:
            if isinstance(writer, DisplayWriter):
                writer.update_pages(pages)
            else:  # pragma: no cover - luma's OLED drivers always get a DisplayWriter
                raise TypeError(f"{type(writer).__name__} takes images only")
        except Exception as error:
            self._failed(f"write failed: {error}")

    def _opened(self) -> FrameWriter | None:
        if self._writer is None:
            try:
                self.open()
            except Exception as error:  # a missing panel must not stop the table
                self._failed(f"cannot open: {error}")
                return None
        return self._writer

    def _failed(self, what: str) -> None:
        self.errors += 1
        if self.errors == 1 or self.errors % 100 == 0:
            log.warning("seat %d display: %s (%d errors so far)", self.seat, what, self.errors)
