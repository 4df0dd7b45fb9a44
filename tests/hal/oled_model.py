"""Models of the SSD1306 and SH1106 display RAM, fed with the bytes a host sends.

They parse command bytes (with their arguments), keep the addressing mode and
the page/column pointers, auto-increment and wrap them as the datasheets
describe, and expose the RAM as a PIL image.  They are deliberately strict:
anything the datasheet leaves undefined for the mode in use raises
:class:`RamModelError`, so a writer that relies on luck fails the tests.

Also here: fakes that let real luma.core interfaces talk to a model
(``FakeSMBus`` for ``i2c(bus=...)``, ``FakeSpi``/``FakeGpio`` for ``spi(...)``)
and a plain ``RecordingInterface``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from PIL import Image


class RamModelError(AssertionError):
    pass


class _Parser:
    """Splits a command byte stream into (opcode, args); a command may span transfers."""

    def __init__(self, arg_counts: dict[int, int]) -> None:
        self.arg_counts = arg_counts
        self.pending: list[int] = []

    def feed(self, byte: int) -> tuple[int, list[int]] | None:
        if not 0 <= byte <= 0xFF:
            raise RamModelError(f"not a byte: {byte!r}")
        self.pending.append(byte)
        if len(self.pending) - 1 >= self.arg_counts.get(self.pending[0], 0):
            opcode, *args = self.pending
            self.pending = []
            return opcode, args
        return None


class OledModel:
    ram_columns: int
    column_offset: int  # first visible RAM column

    def __init__(self, width: int = 128, pages: int = 8) -> None:
        self.width = width
        self.pages = pages
        self.ram = [bytearray(self.ram_columns) for _ in range(pages)]
        self.page = 0
        self.col = 0
        self.commands_seen: list[tuple[int, list[int]]] = []
        self.data_bytes = 0

    # -- what the interface calls

    def command(self, *cmds: int) -> None:
        for byte in cmds:
            parsed = self._parser.feed(byte)
            if parsed is not None:
                self.commands_seen.append(parsed)
                self._execute(*parsed)

    def data(self, data: Sequence[int]) -> None:
        if self._parser.pending:
            raise RamModelError(f"data while command {self._parser.pending} awaits arguments")
        for byte in data:
            if not 0 <= byte <= 0xFF:
                raise RamModelError(f"not a byte: {byte!r}")
            if not 0 <= self.col < self.ram_columns:
                raise RamModelError(f"write at column {self.col}, outside the RAM")
            self.ram[self.page][self.col] = byte
            self.data_bytes += 1
            self._advance()

    # -- what the tests read

    def image(self) -> Image.Image:
        """The visible part of the RAM, one pixel at a time (bit 0 = top row of a page)."""
        image = Image.new("1", (self.width, self.pages * 8), 0)
        px = image.load()
        assert px is not None
        for page, row in enumerate(self.ram):
            for x in range(self.width):
                byte = row[self.column_offset + x]
                for bit in range(8):
                    if byte >> bit & 1:
                        px[x, page * 8 + bit] = 255
        return image

    # -- per controller

    _parser: _Parser

    def _execute(self, opcode: int, args: list[int]) -> None:
        raise NotImplementedError

    def _advance(self) -> None:
        raise NotImplementedError


_SSD1306_ARGS = {
    0x20: 1, 0x21: 2, 0x22: 2, 0x26: 6, 0x27: 6, 0x29: 5, 0x2A: 5, 0x81: 1, 0x8D: 1,
    0xA3: 2, 0xA8: 1, 0xAD: 1, 0xD3: 1, 0xD5: 1, 0xD9: 1, 0xDA: 1, 0xDB: 1,
}  # fmt: skip
_SSD1306_SINGLE = {0x2E, 0x2F, 0xA0, 0xA1, 0xA4, 0xA5, 0xA6, 0xA7, 0xAE, 0xAF, 0xC0, 0xC8, 0xE3}

HORIZONTAL, VERTICAL, PAGE = 0, 1, 2


class SSD1306Model(OledModel):
    """128 x 8 pages of RAM; horizontal, vertical or page addressing (reset: page)."""

    ram_columns = 128
    column_offset = 0

    def __init__(self, width: int = 128, pages: int = 8) -> None:
        super().__init__(width, pages)
        self._parser = _Parser(_SSD1306_ARGS)
        self.mode = PAGE
        self.col_start, self.col_end = 0, self.ram_columns - 1
        self.page_start, self.page_end = 0, pages - 1

    def _execute(self, opcode: int, args: list[int]) -> None:
        if opcode <= 0x1F or 0xB0 <= opcode <= 0xB7:
            if self.mode != PAGE:
                raise RamModelError(f"0x{opcode:02X} is for page addressing mode only")
            if opcode <= 0x0F:
                self.col = (self.col & 0xF0) | opcode
            elif opcode <= 0x1F:
                self.col = (self.col & 0x0F) | (opcode & 0x0F) << 4
            else:
                self.page = opcode & 0x07
        elif opcode == 0x20:
            if args[0] & 0x03 == 0x03:
                raise RamModelError("memory addressing mode 3 is invalid")
            self.mode = args[0] & 0x03
        elif opcode in (0x21, 0x22):
            if self.mode == PAGE:
                raise RamModelError(f"0x{opcode:02X} is for horizontal/vertical mode only")
            first, last = args
            if opcode == 0x21:
                self.col_start, self.col_end = first & 0x7F, last & 0x7F
                self.col = self.col_start
            else:
                self.page_start, self.page_end = first & 0x07, last & 0x07
                self.page = self.page_start
        elif opcode in _SSD1306_ARGS or opcode in _SSD1306_SINGLE or 0x40 <= opcode <= 0x7F:
            pass  # display settings, no effect on RAM addressing
        else:
            raise RamModelError(f"0x{opcode:02X} is not an SSD1306 command")

    def _advance(self) -> None:
        if self.mode == HORIZONTAL:
            self.col += 1
            if self.col > self.col_end:
                self.col = self.col_start
                self.page = self.page + 1 if self.page < self.page_end else self.page_start
        elif self.mode == VERTICAL:
            self.page += 1
            if self.page > self.page_end:
                self.page = self.page_start
                self.col = self.col + 1 if self.col < self.col_end else self.col_start
        else:
            # Page mode: the column wraps within the page, the page stays.
            self.col = self.col + 1 if self.col < self.ram_columns - 1 else 0


_SH1106_ARGS = {0x81: 1, 0xA8: 1, 0xAD: 1, 0xD3: 1, 0xD5: 1, 0xD9: 1, 0xDA: 1, 0xDB: 1}


class SH1106Model(OledModel):
    """132 x 8 pages of RAM, the 128 visible columns from column 2; page addressing only.

    Bytes that are no SH1106 command are ignored (and listed in ``ignored``):
    luma's SSD1306-flavoured init sends ``0x20`` and ``0x8D``, which a real SH1106
    does not know (``0x8D``'s argument ``0x14`` then reads as a column command).
    """

    ram_columns = 132
    column_offset = 2

    def __init__(self, width: int = 128, pages: int = 8) -> None:
        super().__init__(width, pages)
        self._parser = _Parser(_SH1106_ARGS)
        self.ignored: list[int] = []
        self.read_modify_write: int | None = None

    def _execute(self, opcode: int, args: list[int]) -> None:
        if opcode <= 0x0F:
            self.col = (self.col & 0xF0) | opcode
        elif opcode <= 0x1F:
            self.col = (self.col & 0x0F) | (opcode & 0x0F) << 4
        elif 0xB0 <= opcode <= 0xB7:
            self.page = opcode & 0x07
        elif opcode == 0xE0:
            self.read_modify_write = self.col
        elif opcode == 0xEE:
            if self.read_modify_write is not None:
                self.col = self.read_modify_write
            self.read_modify_write = None
        elif (
            opcode in _SH1106_ARGS
            or 0x30 <= opcode <= 0x7F
            or opcode in (0xA0, 0xA1, 0xA4, 0xA5, 0xA6, 0xA7, 0xAE, 0xAF, 0xE3)
            or 0xC0 <= opcode <= 0xCF
        ):
            pass
        else:
            self.ignored.append(opcode)

    def _advance(self) -> None:
        # The column counter counts up to 131 and stays there; the page never changes.
        if self.col < self.ram_columns - 1:
            self.col += 1


def model_for(controller: str) -> OledModel:
    return SSD1306Model() if controller == "ssd1306" else SH1106Model()


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
            self.model.data(data)


@dataclass
class FakeSMBus:
    """Stands in for an smbus2 bus under luma's ``i2c(bus=...)`` (and managed ``i2c_rdwr``)."""

    model: OledModel
    transfers: list[tuple[int, list[int]]] = field(default_factory=list)  # (control, payload)
    address: int | None = None

    def _deliver(self, address: int, control: int, payload: list[int]) -> None:
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
