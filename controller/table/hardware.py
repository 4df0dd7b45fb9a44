"""The table's one wiring: from the configuration to seat links, pads, readers, panels.

``build_hardware(config, factory)`` is what the service runs on a Pi
(``truco-table run``, with ``PiHardware``) and what the mock table runs everywhere else
(``MockHardware``): the same code decides which seat gets a node link, a GPIO pad, an
SPI reader and which panel, and with which settings. Only the factory differs, as a
gpiozero device is the same on a real pin and on a mock one.

>>> hw = build_hardware(config, MockHardware())     # doctest: +SKIP
>>> service = TableService(..., hw.displays)        # doctest: +SKIP
>>> hw.start(service.post)                          # events flow from here on
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..hal.display import Display
from ..hal.events import LinkEvent
from ..hal.factory import HardwareFactory, PiHardware
from .config import TableConfig

if TYPE_CHECKING:
    from ..hal.gpio_pad import GpioPad
    from ..hal.seatlink import SeatLink
    from ..hal.spi_reader import SpiReader

__all__ = ["Hardware", "build_hardware"]

log = logging.getLogger(__name__)


@dataclass
class Hardware:
    """A table's devices. ``displays`` exist at once; ``start`` makes the rest."""

    config: TableConfig
    factory: HardwareFactory
    displays: list[Display]
    links: dict[int, SeatLink] = field(default_factory=dict)
    pads: dict[int, GpioPad] = field(default_factory=dict)
    readers: dict[int, SpiReader] = field(default_factory=dict)
    _closers: list[Callable[[], None]] = field(default_factory=list)

    def start(self, on_event: Callable[[int, Any], None]) -> None:
        """Open every seat's devices; each hands its events to ``on_event(seat, event)``."""
        config, factory = self.config, self.factory
        try:
            if config.topology == "nodes":
                self._start_links(on_event)
            else:
                self._start_gpio(on_event)
        except BaseException:
            self.close()
            raise
        log.debug(
            "hardware up: %d links, %d pads, %d readers on %s",
            len(self.links), len(self.pads), len(self.readers), type(factory).__name__,
        )  # fmt: skip

    def _start_links(self, on_event: Callable[[int, LinkEvent], None]) -> None:
        from ..hal.node_display import NodeDisplay
        from ..hal.seatlink import SeatLink

        config, factory = self.config, self.factory
        for node in config.nodes:
            link = SeatLink(
                node.seat,
                factory.node_port(node.seat, node.serial, config.by_id_dir),
                on_event,
                heartbeat_timeout=config.heartbeat_timeout_s,
                backoff_initial=factory.reconnect_s,
            )
            self.links[node.seat] = link
            self._closers.append(link.close)
            display = self.displays[node.seat] if node.seat < len(self.displays) else None
            if isinstance(display, NodeDisplay):
                display.attach(link)  # the panel hangs on this node: windows go by its link
            link.start()

    def _start_gpio(self, on_event: Callable[[int, Any], None]) -> None:
        from ..hal.gpio_pad import GpioPad
        from ..hal.spi_reader import SpiReader

        config, factory = self.config, self.factory
        for seat in config.gpio:
            pad = GpioPad(
                seat.seat,
                seat.buttons,
                on_event,
                pin_factory=factory.pin_factory,
                clock=factory.clock,
                debounce_s=config.debounce_s,
                hold_s=config.hold_s,
            )
            self.pads[seat.seat] = pad
            self._closers.append(pad.close)
            if seat.reader_cs is None:
                continue
            reader = SpiReader(
                seat.seat,
                on_event,
                bus=config.reader_spi_bus,
                device=seat.reader_cs,
                reset_pin=config.reader_reset_pin,
                spi=factory.reader_spi(seat.seat, config.reader_spi_bus, seat.reader_cs),
                clock=factory.clock,
                pin_factory=factory.pin_factory,
                start=factory.threaded,
            )
            self.readers[seat.seat] = reader
            self._closers.append(reader.close)

    def poll(self) -> None:
        """Let unthreaded pads and readers look at their pins and chips (mock hardware)."""
        for pad in self.pads.values():
            pad.poll()
        for reader in self.readers.values():
            reader.poll()

    def close(self) -> None:
        """Stop every device (in reverse order), then release the factory."""
        while self._closers:
            close = self._closers.pop()
            try:
                close()
            except Exception:  # one device failing to close must not keep the others open
                log.exception("closing a device failed")
        self.factory.close()


def build_hardware(config: TableConfig, factory: HardwareFactory | None = None) -> Hardware:
    """The devices ``config`` describes, on ``factory`` (default: the Pi's own)."""
    factory = factory if factory is not None else PiHardware()
    displays = [factory.display(s, config.displays.get(s)) for s in range(config.rules.players)]
    return Hardware(config, factory, displays)
