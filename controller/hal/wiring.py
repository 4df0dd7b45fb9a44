"""The table's one wiring: from the configuration to seat links, pads, readers, panels.

``build_hardware(config, factory)`` is what the service runs on a Pi
(``truco-table run``, with ``PiHardware``) and what the mock table runs everywhere else
(``MockHardware``): the same code decides which seat gets a node link, a GPIO pad, a
card reader (``controller.hal.reader``) and which panel, and with which settings. Only
the factory differs, as a gpiozero device is the same on a real pin and on a mock one.

``config`` is anything shaped as a :class:`Wiring` (the table's ``TableConfig`` is);
``status`` is told each seat's node and panel as they come and go (the table's status
file for the doctor, ``controller.table.hardware.SeatStatus``).

>>> hw = build_hardware(config, MockHardware(), SeatStatus(path))  # doctest: +SKIP
>>> service = TableService(..., hw.displays)        # doctest: +SKIP
>>> hw.start(service.post, service.bus)             # events flow from here on
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .display import Display, DisplayConfig
from .events import LinkEvent, PanelReport
from .factory import HardwareFactory, PiHardware
from .reader import CardReader, open_reader

if TYPE_CHECKING:
    from .gpio_pad import GpioPad
    from .seatbus import SeatBus
    from .seatlink import SeatLink

__all__ = [
    "GpioSeat",
    "Hardware",
    "HardwareStartError",
    "NodeSeat",
    "SeatWatch",
    "Unwatched",
    "Wiring",
    "build_hardware",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class NodeSeat:
    seat: int
    serial: str


@dataclass(frozen=True, slots=True)
class GpioSeat:
    seat: int
    buttons: Mapping[str, int]
    reader_cs: int | None = None
    led: int | None = None


class _Players(Protocol):
    @property
    def players(self) -> int: ...


class Wiring(Protocol):
    """What the wiring reads of the table's configuration (``TableConfig`` has it all)."""

    @property
    def rules(self) -> _Players: ...  # how many seats
    @property
    def topology(self) -> str: ...  # "nodes" (a node per seat) or "gpio" (the Pi's pins)
    @property
    def nodes(self) -> tuple[NodeSeat, ...]: ...
    @property
    def gpio(self) -> tuple[GpioSeat, ...]: ...
    @property
    def by_id_dir(self) -> Path: ...
    @property
    def heartbeat_timeout_s(self) -> float: ...
    @property
    def debounce_s(self) -> float: ...
    @property
    def hold_s(self) -> float: ...
    @property
    def reader_spi_bus(self) -> int: ...
    @property
    def reader_reset_pin(self) -> int | None: ...
    @property
    def displays(self) -> Mapping[int, DisplayConfig]: ...
    # where the pin map is named, for the owner's message when it is the wrong one
    @property
    def pinmap(self) -> Path | None: ...
    @property
    def source(self) -> Path | None: ...
    @property
    def pinmap_line(self) -> int | None: ...


LinkListener = Callable[[LinkEvent], None]


class SeatWatch(Protocol):
    """Who is told each seat's node and panel (the table's status file)."""

    def listener(
        self, seat: int, then: LinkListener | None, forward: Callable[[int, LinkEvent], None]
    ) -> LinkListener:
        """A link's ``display_listener`` that notes the seat's state, then calls ``then``;
        a panel's report also goes to ``forward``."""
        ...

    def pinmap(self, seat: int, said: str) -> None:
        """The seat's node drives a panel the pin map puts elsewhere: ``said``."""
        ...

    def close(self) -> None: ...


class Unwatched:
    """Nobody is told: the link's listener is left as it is."""

    def listener(
        self, seat: int, then: LinkListener | None, forward: Callable[[int, LinkEvent], None]
    ) -> LinkListener:
        def listen(event: LinkEvent) -> None:
            if isinstance(event, PanelReport):
                forward(seat, event)
            if then is not None:
                then(event)

        return listen

    def pinmap(self, seat: int, said: str) -> None:
        pass

    def close(self) -> None:
        pass


class HardwareStartError(RuntimeError):
    """A seat's device could not be set up at start-up; the message is one line."""


@dataclass
class Hardware:
    """A table's devices. ``displays`` exist at once; ``start`` makes the rest."""

    config: Wiring
    factory: HardwareFactory
    displays: list[Display]
    links: dict[int, SeatLink] = field(default_factory=dict)
    pads: dict[int, GpioPad] = field(default_factory=dict)
    readers: dict[int, CardReader] = field(default_factory=dict)
    status: SeatWatch = field(default_factory=Unwatched)
    _closers: list[Callable[[], None]] = field(default_factory=list)

    def start(self, on_event: Callable[[int, Any], None], bus: SeatBus | None = None) -> None:
        """Open every seat's devices; each hands its events to ``on_event(seat, event)``.

        The seat nodes' links go on ``bus``, read by whoever waits in it (the table
        service's loop: ``service.bus``); with no bus, on one of their own, waited on by
        a thread of its own. The pads and readers post from their own threads.

        A device that cannot be set up (gpiozero finds no pin factory, a pin is held by
        another program) raises ``HardwareStartError`` with one line saying which seat
        and what, after closing what was opened."""
        config, factory = self.config, self.factory
        self._closers.append(self.status.close)
        try:
            if config.topology == "nodes":
                self._start_links(on_event, bus)
            else:
                self._start_gpio(on_event)
        except HardwareStartError:
            self.close()
            raise
        except Exception as error:
            self.close()
            raise HardwareStartError(_one_line(error)) from error
        except BaseException:
            self.close()
            raise
        log.debug(
            "hardware up: %d links, %d pads, %d readers on %s",
            len(self.links), len(self.pads), len(self.readers), type(factory).__name__,
        )  # fmt: skip

    def _start_links(self, on_event: Callable[[int, LinkEvent], None], bus: SeatBus | None) -> None:
        from .node_display import NodeDisplay
        from .seatbus import SeatBus
        from .seatlink import SeatLink

        config, factory = self.config, self.factory
        if bus is None:  # nobody waits in one: a bus on a thread of its own
            bus = SeatBus()
            bus.start()
            self._closers.append(bus.close)
        warned: set[str] = set()  # the wrong pin map: one journal warning for the table
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
            # the doctor reads each seat's node and panel state from the status file
            then = link.display_listener
            if display is not None and not isinstance(display, NodeDisplay):
                then = _panel_elsewhere(config, node.seat, self.status, then, warned)
            link.display_listener = self.status.listener(node.seat, then, on_event)
            link.start(bus)

    def _pad(self, seat: GpioSeat, on_event: Callable[[int, Any], None]) -> GpioPad:
        from .gpio_pad import GpioPad

        config, factory = self.config, self.factory
        # gpiozero warns once per pin factory it could not load (several lines on
        # standard error): they go into the one line of a failure, or to the debug log
        with warnings.catch_warnings(record=True) as fallbacks:
            warnings.simplefilter("always")
            try:
                pad = GpioPad(
                    seat.seat,
                    seat.buttons,
                    on_event,
                    pin_factory=factory.pin_factory,
                    clock=factory.clock,
                    debounce_s=config.debounce_s,
                    hold_s=config.hold_s,
                )
            except Exception as error:
                tried = "; ".join(_one_line(w.message) for w in fallbacks)  # type: ignore[arg-type]
                raise HardwareStartError(
                    f"seat {seat.seat}: the buttons' GPIO pins cannot be opened: "
                    f"{_one_line(error)}{f' (tried: {tried})' if tried else ''}; is this a "
                    "Raspberry Pi with /dev/gpiochip*, and the user in the gpio group?"
                ) from error
        for fallback in fallbacks:
            log.debug("seat %d: %s", seat.seat, fallback.message)
        return pad

    def _start_gpio(self, on_event: Callable[[int, Any], None]) -> None:
        config, factory = self.config, self.factory
        for seat in config.gpio:
            pad = self._pad(seat, on_event)
            self.pads[seat.seat] = pad
            self._closers.append(pad.close)
            if seat.reader_cs is None:
                continue
            try:
                reader = open_reader(
                    seat.seat,
                    on_event,
                    factory,
                    bus=config.reader_spi_bus,
                    chip_select=seat.reader_cs,
                    reset_pin=config.reader_reset_pin,
                )
            except Exception as error:
                raise HardwareStartError(
                    f"seat {seat.seat}: the card reader (SPI {config.reader_spi_bus}."
                    f"{seat.reader_cs}, reset GPIO{config.reader_reset_pin}) cannot be set "
                    f"up: {_one_line(error)}"
                ) from error
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
                log.exception("falló al cerrar un dispositivo")
        self.factory.close()


def _panel_elsewhere(
    config: Wiring,
    seat: int,
    status: SeatWatch,
    then: Callable[[LinkEvent], None] | None,
    warned: set[str],
) -> Callable[[LinkEvent], None]:
    """A node that drives a panel of its own, on a table whose pin map puts that seat's
    panel on the Pi (the multiplexer's pin map named in table.toml on the guide's table):
    one journal warning for the table pointing at the ``pinmap`` line, and the doctor is
    told which seats."""
    said = False

    def listen(event: LinkEvent) -> None:
        nonlocal said
        if isinstance(event, PanelReport) and event.ok and not said:
            said = True
            where = _pinmap_line(config)
            text = (
                f"el nodo tiene su propia pantalla, pero el mapa de pines "
                f"({config.pinmap.name if config.pinmap else 'table.toml'}) la pone en la Pi "
                f"detrás de un multiplexor: si tu mesa es la de la guía (cada pantalla en su "
                f'nodo), poné pinmap = "pinmap.toml" en {where} y reiniciá con sudo '
                "systemctl restart truco-table"
            )
            if "pinmap" not in warned:
                warned.add("pinmap")
                log.warning("asiento %d: %s", seat, text)
            status.pinmap(seat, text)
        if then is not None:
            then(event)

    return listen


def _pinmap_line(config: Wiring) -> str:
    """Where table.toml names its pin map: ``/etc/truco-table/table.toml, línea 12``."""
    source = str(config.source) if config.source is not None else "table.toml"
    return source if config.pinmap_line is None else f"{source}, línea {config.pinmap_line}"


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def build_hardware(
    config: Wiring, factory: HardwareFactory | None = None, status: SeatWatch | None = None
) -> Hardware:
    """The devices ``config`` describes, on ``factory`` (default: the Pi's own); each
    seat's node and panel told to ``status`` (default: nobody)."""
    factory = factory if factory is not None else PiHardware()
    displays = [factory.display(s, config.displays.get(s)) for s in range(config.rules.players)]
    return Hardware(config, factory, displays, status=status if status is not None else Unwatched())
