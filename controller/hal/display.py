"""The seat display port and its real adapter: an SSD1306 or SH1106 OLED through luma.

A display takes a 128x64 1-bit image. ``OledDisplay`` opens the panel with luma.oled on
I2C (``/dev/i2c-N``: one bus per seat when the kernel's ``i2c-mux`` overlay exposes each
channel of the TCA9548A as its own bus) or SPI, and sends frames through our
``DisplayWriter``, which transmits only the pages and columns that changed. The mock
adapter is ``controller.hal.mock.MockDisplay`` (luma's ``dummy`` device).

Any failure while writing is caught and counted: a broken display never stops the
table. After an error the panel is opened afresh on the next frame: luma's constructor
runs the panel's initialisation again (display on, charge pump, addressing mode) and the
writer sends the whole frame, so a panel that lost its power (a re-seated cable, a
brown-out) and with it every setting comes back with the screen, not black. A panel
that does not answer that reopen is tried again after ``RETRY_S`` (doubling to
``RETRY_MAX_S`` while it stays away), not at every frame: luma's constructor costs
milliseconds of CPU (SSD1306/SSD1309 precompute their pixel maps), and a failed one
leaves nothing open (its bus is closed at once).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from PIL import Image

from .display_bus import writer_for_device
from .display_planner import DisplayWriter, FrameWriter
from .panels import PANEL_KINDS, PANELS, Controller, kinds_said

__all__ = ["Display", "DisplayConfig", "OledDisplay", "PageDisplay", "TileDisplay", "mux_bus"]

RETRY_S = 0.25  # a panel that did not open is tried again after this, doubling ...
RETRY_MAX_S = 2.0  # ... up to this, while it stays away

log = logging.getLogger(__name__)


class Display(Protocol):
    """Takes the seat's screen, a 128x64 mode "1" image."""

    def show(self, image: Image.Image) -> None: ...


class PageDisplay(Display, Protocol):
    """A display that also takes the screen already in the panel's page layout
    (``controller.hal.pages``), as the renderer joins it from cached tiles: the
    service then draws no pixel for it."""

    def show_pages(self, pages: bytes) -> None: ...


class TileDisplay(PageDisplay, Protocol):
    """A display that also takes the screen as tiles of whole pages, top to bottom, each
    tile the same object while it is unchanged (``controller.render.screen.render_tiles``):
    a seat node's (``NodeDisplay``), which sends only the tiles that changed."""

    def show_tiles(self, tiles: Sequence[bytes]) -> None: ...


@dataclass(frozen=True, slots=True)
class DisplayConfig:
    """One seat's panel, as in ``hardware/pinmap.toml`` ``[[display.seat]]``."""

    driver: str = "ssd1306"  # or "sh1106" (1.3"), "ssd1309" (2.42"): panels.PANEL_KINDS
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
    # "node": the panel hangs on the seat node's own I2C (one cable per seat; the
    # windows go as display frames, controller.hal.node_display); "pi": on the Pi's bus.
    connected_to: str = "pi"

    def __post_init__(self) -> None:
        if self.driver not in PANEL_KINDS:
            raise ValueError(f"driver must be {kinds_said()}, not {self.driver!r}")
        if self.connected_to not in ("node", "pi"):
            raise ValueError(f"connected_to must be node or pi, not {self.connected_to!r}")
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

    def __init__(
        self,
        config: DisplayConfig,
        *,
        seat: int,
        interface: Any = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.seat = seat
        self._interface = interface  # a luma serial interface (tests); else from the config
        self._clock = clock
        self._retry_at: float | None = None  # a failed open: not again before this
        self._retry_s = RETRY_S
        self.errors = 0
        self._writer: FrameWriter | None = None
        self._device: Any = None

    def open(self) -> None:
        import luma.oled.device
        from luma.core.interface.serial import i2c, spi

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
        driver = getattr(luma.oled.device, PANELS[Controller(c.driver)].luma_driver)
        try:
            self._device = driver(interface, width=c.width, height=c.height, rotate=c.rotate)
        except BaseException:
            # luma's constructor sends the panel's initialisation: a panel that does not
            # answer raises here, before any device exists to clean up, and the
            # interface would keep /dev/i2c-N open (one descriptor per failed reopen)
            if interface is not self._interface:
                self._cleanup(interface)
            raise
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
            self._close()  # the next frame reopens and re-initialises the panel

    def show_pages(self, pages: bytes) -> None:
        """The screen as ``image_to_pages(image)`` would give it (see ``PageDisplay``)."""
        writer = self._writer
        if writer is None:
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
            self._close()  # the next frame reopens and re-initialises the panel

    def _opened(self) -> FrameWriter | None:
        if self._writer is None:
            now = self._clock()
            if self._retry_at is not None and now < self._retry_at:
                return None  # it did not answer a moment ago: this frame goes nowhere
            try:
                self.open()
            except Exception as error:  # a missing panel must not stop the table
                self._failed(f"cannot open: {error}")
                self._retry_at = now + self._retry_s
                self._retry_s = min(self._retry_s * 2, RETRY_MAX_S)
                return None
            self._retry_at, self._retry_s = None, RETRY_S
        return self._writer

    def _close(self) -> None:
        device, self._device, self._writer = self._device, None, None
        interface = getattr(device, "_serial_interface", None)
        if interface is not None and interface is not self._interface:
            self._cleanup(interface)

    def _cleanup(self, interface: Any) -> None:
        try:  # luma's i2c(port=...) holds /dev/i2c-N open
            interface.cleanup()
        except Exception as error:  # the bus may be gone too
            log.debug("seat %d display: closing: %s", self.seat, error)

    def _failed(self, what: str) -> None:
        self.errors += 1
        if self.errors == 1 or self.errors % 100 == 0:
            log.warning(
                "asiento %d, pantallita: %s (%d errores hasta ahora)", self.seat, what, self.errors
            )
