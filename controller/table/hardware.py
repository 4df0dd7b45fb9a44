"""The table's one wiring: from the configuration to seat links, pads, readers, panels.

``build_hardware(config, factory)`` is what the service runs on a Pi
(``truco-table run``, with ``PiHardware``) and what the mock table runs everywhere else
(``MockHardware``): the same code decides which seat gets a node link, a GPIO pad, an
SPI reader and which panel, and with which settings. Only the factory differs, as a
gpiozero device is the same on a real pin and on a mock one.

>>> hw = build_hardware(config, MockHardware())     # doctest: +SKIP
>>> service = TableService(..., hw.displays)        # doctest: +SKIP
>>> hw.start(service.post, service.bus)             # events flow from here on
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..hal.display import Display
from ..hal.events import LinkEvent, NodeConnected, NodeDisconnected, PanelReport
from ..hal.factory import HardwareFactory, PiHardware
from .config import TableConfig
from .runfile import replace_json

if TYPE_CHECKING:
    from ..hal.gpio_pad import GpioPad
    from ..hal.seatbus import SeatBus
    from ..hal.seatlink import SeatLink
    from ..hal.spi_reader import SpiReader
    from .config import GpioSeat

__all__ = [
    "HARDWARE_EXIT",
    "Hardware",
    "HardwareStartError",
    "SeatStatus",
    "build_hardware",
    "read_seat_status",
    "read_status",
]

log = logging.getLogger(__name__)

#: ``truco-table run``'s exit status when the hardware cannot start (no pin factory: no
#: /dev/gpiochip*, not a Raspberry Pi; a pin another program holds). Restarting cannot
#: fix it: systemd/truco-table.service lists it in RestartPreventExitStatus.
HARDWARE_EXIT = 3


class HardwareStartError(RuntimeError):
    """A seat's device could not be set up at start-up; the message is one line."""


class SeatStatus:
    """What the service knows of each seat's node and panel, for ``truco-table doctor``.

    A small JSON file (``[table] status_file``, ``/run/truco-table/seats.json`` under
    systemd's ``RuntimeDirectory``, readable by every user), rewritten whole (a temporary
    file and ``os.replace``) whenever a node comes or goes or reports its panel (the
    node's ``PANEL`` state); removed when the service stops. The doctor opens no port the
    service holds: a node's panel is known only to the node, and this is where it says.
    A folder that is not there, or a write that fails, costs the table nothing.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._seats: dict[int, dict[str, Any]] = {}
        self._failed = False
        self._test = False  # the seat test is on
        self._second_run: dict[str, Any] | None = None  # the last second `run` stopped

    def node(self, seat: int, connected: bool) -> None:
        with self._lock:
            entry = self._seats.setdefault(seat, {})
            entry["node"] = "connected" if connected else "disconnected"
            if not connected:
                entry.pop("panel", None)  # known again when the node reports it
            self._write()

    def panel(self, seat: int, report: PanelReport) -> None:
        with self._lock:
            entry = self._seats.setdefault(seat, {})
            entry["node"] = "connected"
            entry["panel"] = {"driver": report.kind, "address": report.address, "ok": report.ok}
            self._write()

    def faults(self, seat: int, faults: dict[str, str]) -> None:
        """The seat's hardware faults (``controller.table.faults``: reader, a stuck
        button, the node on another seat, a card of another deck), by kind: what to say."""
        with self._lock:
            entry = self._seats.setdefault(seat, {})
            if faults:
                entry["faults"] = dict(faults)
            else:
                entry.pop("faults", None)
            self._write()

    def pinmap(self, seat: int, said: str) -> None:
        """The seat's node drives a panel the pin map puts elsewhere (the wrong pin map)."""
        with self._lock:
            self._seats.setdefault(seat, {})["pinmap"] = said
            self._write()

    def second_run(self, pid: int) -> None:
        """A second ``truco-table run`` on this table stopped at the lock."""
        with self._lock:
            self._second_run = {"pid": pid, "at": round(time.time(), 3)}
            self._write()

    def heard(self, seat: int, said: str) -> None:
        """What the seat last heard during the seat test (``botón truco``)."""
        with self._lock:
            entry = self._seats.setdefault(seat, {})
            entry["heard"] = said
            entry["heard_at"] = round(time.time(), 3)
            self._write()

    def set_test(self, on: bool) -> None:
        """The seat test is on (``truco-table doctor --asientos`` follows it)."""
        with self._lock:
            self._test = on
            self._write()

    def listener(
        self,
        seat: int,
        then: Callable[[LinkEvent], None] | None,
        forward: Callable[[int, LinkEvent], None] | None = None,
    ) -> Callable[[LinkEvent], None]:
        """A link's ``display_listener`` that notes the seat's state, then calls ``then``;
        a panel's report also goes to ``forward`` (the service: a seat whose panel does
        not answer is said on the others)."""

        def listen(event: LinkEvent) -> None:
            if isinstance(event, PanelReport):
                self.panel(seat, event)
                if forward is not None:
                    forward(seat, event)
            elif isinstance(event, NodeConnected):
                self.node(seat, True)
            elif isinstance(event, NodeDisconnected):
                self.node(seat, False)
            if then is not None:
                then(event)

        return listen

    def _write(self) -> None:
        if self.path is None or not self.path.parent.is_dir():
            return
        data = {
            "pid": os.getpid(),
            "seats": {str(s): e for s, e in sorted(self._seats.items())},
            "test": self._test,
        }
        if self._second_run is not None:
            data["second_run"] = self._second_run
        try:
            replace_json(self.path, data, prefix=".seats-", sort_keys=True)
        except OSError as error:
            if not self._failed:
                self._failed = True
                log.warning(
                    "no puedo escribir el estado de los asientos en %s: %s", self.path, error
                )

    def close(self) -> None:
        if self.path is None:
            return
        with self._lock, contextlib.suppress(OSError):
            self.path.unlink()


def read_seat_status(path: Path) -> dict[int, dict[str, Any]] | None:
    """The seats' state as a running service wrote it; None when no service writes it
    (no file, or its process is gone). Raises ``PermissionError`` if unreadable."""
    status = read_status(path)
    return None if status is None else status["seats"]


def read_status(path: Path) -> dict[str, Any] | None:
    """The whole status file (``seats`` by number, ``test``, ``second_run``), as
    ``read_seat_status`` reads it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (ValueError, UnicodeDecodeError):
        return None  # half a file cannot be: it is replaced whole; treat as unknown
    if not isinstance(data, dict) or not isinstance(data.get("seats"), dict):
        return None
    pid = data.get("pid")
    if isinstance(pid, int) and pid > 0:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None  # written by a service that is gone
        except PermissionError:
            pass  # alive, another user's
    seats: dict[int, dict[str, Any]] = {}
    for key, entry in data["seats"].items():
        if isinstance(key, str) and key.isdigit() and isinstance(entry, dict):
            seats[int(key)] = entry
    second = data.get("second_run")
    return {
        "seats": seats,
        "test": data.get("test") is True,
        "second_run": second if isinstance(second, dict) else None,
    }


@dataclass
class Hardware:
    """A table's devices. ``displays`` exist at once; ``start`` makes the rest."""

    config: TableConfig
    factory: HardwareFactory
    displays: list[Display]
    links: dict[int, SeatLink] = field(default_factory=dict)
    pads: dict[int, GpioPad] = field(default_factory=dict)
    readers: dict[int, SpiReader] = field(default_factory=dict)
    status: SeatStatus = field(default_factory=lambda: SeatStatus(None))
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
        from ..hal.node_display import NodeDisplay
        from ..hal.seatbus import SeatBus
        from ..hal.seatlink import SeatLink

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
        from ..hal.gpio_pad import GpioPad

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
        from ..hal.spi_reader import SpiReader

        config, factory = self.config, self.factory
        for seat in config.gpio:
            pad = self._pad(seat, on_event)
            self.pads[seat.seat] = pad
            self._closers.append(pad.close)
            if seat.reader_cs is None:
                continue
            try:
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
    config: TableConfig,
    seat: int,
    status: SeatStatus,
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


def _pinmap_line(config: TableConfig) -> str:
    """Where table.toml names its pin map: ``/etc/truco-table/table.toml, línea 12``."""
    source = str(config.source) if config.source is not None else "table.toml"
    return source if config.pinmap_line is None else f"{source}, línea {config.pinmap_line}"


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def build_hardware(config: TableConfig, factory: HardwareFactory | None = None) -> Hardware:
    """The devices ``config`` describes, on ``factory`` (default: the Pi's own)."""
    factory = factory if factory is not None else PiHardware()
    displays = [factory.display(s, config.displays.get(s)) for s in range(config.rules.players)]
    return Hardware(config, factory, displays, status=SeatStatus(config.status_file))
