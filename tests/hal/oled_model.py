"""The panel models (``tests/firmware/fake_oled.py``: SSD1306, SSD1309 and SH1106 RAM,
addressing and settings, shared with the node's tests under real MicroPython) and
fakes that let real luma.core interfaces talk to a model
(``FakeSMBus`` for ``i2c(bus=...)``, ``FakeSpi``/``FakeGpio`` for ``spi(...)``)
and a plain ``RecordingInterface``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fake_oled import (
    OledModel,
    RamModelError,
    SH1106Model,
    SSD1306Model,
    SSD1309Model,
    model_for,
)

__all__ = [
    "FakeGpio",
    "FakeSMBus",
    "FakeSpi",
    "OledModel",
    "RamModelError",
    "RecordingInterface",
    "SH1106Model",
    "SSD1306Model",
    "SSD1309Model",
    "model_for",
]


# ----------------------------------------------------------------- interfaces, fakes


@dataclass
class RecordingInterface:
    """``command``/``data`` like luma's interfaces; records and forwards to a model."""

    model: OledModel | None = None
    ops: list[tuple[str, list[int]]] = field(default_factory=list)

    def command(self, *cmd: int) -> None:
        self.ops.append(("command", list(cmd)))
        if self.model is not None:
            self.model.command(*cmd)

    def data(self, data: Sequence[int]) -> None:
        self.ops.append(("data", list(data)))
        if self.model is not None:
            self.model.data(list(data))


@dataclass
class FakeSMBus:
    """Stands in for an smbus2 bus under luma's ``i2c(bus=...)`` (and managed ``i2c_rdwr``)."""

    model: OledModel
    transfers: list[tuple[int, list[int]]] = field(default_factory=list)  # (control, payload)
    address: int | None = None

    def _deliver(self, address: int, control: int, payload: list[int]) -> None:
        if self.model.unplugged:
            raise OSError(121, "Remote I/O error")  # what smbus2 raises on a NACK
        if self.address is not None and address != self.address:
            raise RamModelError(f"transfer to 0x{address:02X}")
        self.transfers.append((control, payload))
        if control == 0x00:
            self.model.command(*payload)
        elif control == 0x40:
            self.model.data(payload)
        else:
            raise RamModelError(f"control byte 0x{control:02X}")

    def write_i2c_block_data(self, address: int, register: int, data: list[int]) -> None:
        if len(data) > 32:
            raise RamModelError("SMBus block writes carry at most 32 bytes")
        self._deliver(address, register, list(data))

    def i2c_rdwr(self, *messages: Any) -> None:
        for address, buf in messages:
            self._deliver(address, buf[0], list(buf[1:]))

    def bus_bytes(self) -> int:
        """What went over the wire: address + control byte + payload per transfer."""
        return sum(2 + len(payload) for _, payload in self.transfers)


@dataclass
class FakeGpio:
    LOW: int = 0
    HIGH: int = 1
    OUT: int = 0
    BCM: int = 11
    levels: dict[int, int] = field(default_factory=dict)

    def setup(self, pin: int, direction: int) -> None:
        self.levels.setdefault(pin, 0)

    def output(self, pin: int, value: int) -> None:
        self.levels[pin] = 1 if value else 0

    def setmode(self, mode: int) -> None:
        pass

    def setwarnings(self, flag: bool) -> None:
        pass

    def cleanup(self, *pins: Any) -> None:
        pass


@dataclass
class FakeSpi:
    """Stands in for spidev under luma's ``spi(...)``; the D/C pin picks command or data."""

    model: OledModel
    gpio: FakeGpio
    dc_pin: int = 24
    written: int = 0
    max_speed_hz: int = 0
    mode: int = 0

    def open(self, port: int, device: int) -> None:
        pass

    def writebytes(self, data: Sequence[int]) -> None:
        self.written += len(data)
        if self.gpio.levels.get(self.dc_pin):
            self.model.data(list(data))
        else:
            self.model.command(*data)

    def close(self) -> None:
        pass
