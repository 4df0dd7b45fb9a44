"""What the seat hardware runs on, in gpiozero's manner: the devices stay the same.

gpiozero builds the same ``Button`` on a real pin or on a ``MockFactory`` pin; here the
table's wiring (``controller.hal.wiring.build_hardware``) builds the same seat links,
GPIO pads, SPI readers and displays, and a ``HardwareFactory`` says what they sit on:

- ``PiHardware``: the Pi. Seat nodes are found by USB serial number under
  ``/dev/serial/by-id``; pads on gpiozero's default pin factory (lgpio on Bookworm, or
  the ``GPIOZERO_PIN_FACTORY`` variable); readers open ``/dev/spidevB.D`` with spidev;
  panels open ``/dev/i2c-N`` with luma.oled. Pads and readers run threads of their own;
  the seat nodes are read by the service's loop (``controller.hal.seatbus``).
- ``controller.hal.mock.MockHardware``: simulated seat nodes on pseudo-terminals, pads on
  gpiozero's ``MockFactory`` pins, readers on a simulated MFRC522 behind a spidev
  look-alike, panels on luma's ``dummy`` device; pads and readers are polled by the
  caller on a hand-driven clock.

``factory_named("pi" | "mock")`` picks one by name (``TRUCO_TABLE_HARDWARE`` when the
caller gives none, as ``GPIOZERO_PIN_FACTORY`` does for gpiozero).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .display import Display, DisplayConfig, OledDisplay
from .node_finder import port_for_serial

if TYPE_CHECKING:
    from gpiozero import Factory

    from .spi_reader import SpiDevice

__all__ = ["HARDWARE_ENV", "HardwareFactory", "NoDisplay", "PiHardware", "factory_named"]

HARDWARE_ENV = "TRUCO_TABLE_HARDWARE"


class NoDisplay:
    """A seat without a panel in the pin map: frames go nowhere."""

    def show(self, image: Any) -> None:
        pass


class HardwareFactory(Protocol):
    """What ``build_hardware`` asks of the hardware it wires."""

    #: gpiozero's pin factory for pads and reset lines (None: gpiozero's default)
    pin_factory: Factory | None
    #: pads and readers run their own threads (False: the caller polls them)
    threaded: bool
    #: how soon a seat link first tries again after its node went away, in seconds
    reconnect_s: float

    def clock(self) -> float:
        """The time for debouncing and card presence, in seconds."""
        ...

    def node_port(self, seat: int, serial: str, by_id_dir: Path) -> Callable[[], str | None]:
        """Where seat's node is now (None while unplugged)."""
        ...

    def reader_spi(self, seat: int, bus: int, device: int) -> SpiDevice | None:
        """The SPI device of seat's reader (None: the reader opens spidev itself)."""
        ...

    def display(self, seat: int, config: DisplayConfig | None) -> Display:
        """Seat's panel (``config`` None: the pin map lists none for the seat)."""
        ...

    def close(self) -> None:
        """Release what the factory made (after the devices are closed)."""
        ...


class PiHardware:
    """The Raspberry Pi's own buses and pins (see the module docstring)."""

    pin_factory: Factory | None = None
    threaded = True
    reconnect_s = 0.25

    def clock(self) -> float:
        return time.monotonic()

    def node_port(self, seat: int, serial: str, by_id_dir: Path) -> Callable[[], str | None]:
        return port_for_serial(serial, by_id_dir)

    def reader_spi(self, seat: int, bus: int, device: int) -> SpiDevice | None:
        return None

    def display(self, seat: int, config: DisplayConfig | None) -> Display:
        if config is None:
            return NoDisplay()
        if config.connected_to == "node":  # one cable: the panel hangs on the seat's node
            from .node_display import NodeDisplay

            return NodeDisplay(config, seat=seat)
        return OledDisplay(config, seat=seat)

    def close(self) -> None:
        pass


def factory_named(name: str | None = None) -> HardwareFactory:
    """``pi`` or ``mock`` (default: ``$TRUCO_TABLE_HARDWARE``, else ``pi``)."""
    name = name or os.environ.get(HARDWARE_ENV) or "pi"
    if name == "pi":
        return PiHardware()
    if name == "mock":
        from .mock import MockHardware

        return MockHardware()
    raise ValueError(f"hardware must be pi or mock, not {name!r}")
