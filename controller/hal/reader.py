"""A seat's card reader port, beside the display port (``controller.hal.display.Display``)
and the seat's pad (``controller.hal.gpio_pad.GpioPad``).

On a table with seat nodes the node reads the seat's cards and its link says what it
read (``TAGON``/``TAGOFF``: ``controller.hal.seatlink``). On a two-seat table wired to
the Pi (``topology = "gpio"``) each seat's MFRC522 hangs on the Pi's own SPI bus and
:func:`open_reader` opens it (``controller.hal.spi_reader.SpiReader``), on what the
hardware factory gives: ``/dev/spidevB.D`` on a Pi, a simulated chip in the mock. Either
way the table hears the same events (``controller.hal.events``) and sees the reader as a
:class:`CardReader`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from .events import Heartbeat, TagArrived, TagConflict, TagLeft
from .factory import HardwareFactory

__all__ = ["CardReader", "ReaderEventCallback", "open_reader"]

#: what a reader hands the table, with its seat: its cards, and its chip answering or not
ReaderEventCallback = Callable[[int, TagArrived | TagLeft | TagConflict | Heartbeat], None]


class CardReader(Protocol):
    """What the table uses of a seat's card reader."""

    @property
    def name(self) -> str:
        """Where the reader is (``/dev/spidev0.1``), for the owner's messages."""
        ...

    @property
    def ok(self) -> bool:
        """True while the reader answers."""
        ...

    @property
    def present(self) -> bytes | None:
        """The UID of the card on the reader now (as last reported), or None."""
        ...

    def poll(self) -> None:
        """Look at the reader now (a reader with no thread of its own: the mock)."""
        ...

    def close(self, timeout: float = 2.0) -> None:
        """Stop reading; no event is delivered after it returns."""
        ...


def open_reader(
    seat: int,
    on_event: ReaderEventCallback,
    factory: HardwareFactory,
    *,
    bus: int,
    chip_select: int,
    reset_pin: int | None,
) -> CardReader:
    """Seat's MFRC522 on the Pi's SPI ``bus`` at ``chip_select``, on ``factory``'s SPI
    device, pins and clock; it runs a thread of its own if the factory's devices do.
    Raises what the reader's set-up raises (a pin another program holds)."""
    from .spi_reader import SpiReader

    return SpiReader(
        seat,
        on_event,
        bus=bus,
        device=chip_select,
        reset_pin=reset_pin,
        spi=factory.reader_spi(seat, bus, chip_select),
        clock=factory.clock,
        pin_factory=factory.pin_factory,
        start=factory.threaded,
    )
