"""Models of the SSD1306, SSD1309 and SH1106 OLED controllers, fed with the bytes a host sends.

They parse command bytes (with their arguments), keep the addressing mode and the
page/column pointers, auto-increment and wrap them as the datasheets describe, and
keep the settings that decide what the glass shows: display on/off, the charge pump
(SSD1306), segment remap and COM scan direction, inversion, entire-display-on.
They are deliberately strict: anything the datasheet leaves undefined for the mode
in use raises :class:`RamModelError`, so a writer that relies on luck fails.

``power_cycle()`` is a panel that lost its power (a re-seated cable, a brown-out):
the RAM holds noise and every register is back at its reset value, so the glass is
dark until the panel is initialised again.  ``unplugged`` makes every I2C transfer
fail as ``machine.I2C`` and smbus do when nobody acknowledges the address.

Two ways in: ``command()``/``data()`` (what luma's interfaces call) and
``writeto(address, buf)`` (an I2C transfer: control byte(s) and payload, as the
node's ``machine.I2C`` sends it).  Plain enough for MicroPython too (annotations are
not evaluated there): the stand-in ``machine`` module puts a panel on the node's
I2C bus in a real MicroPython process.
"""

try:  # noqa: SIM105 (MicroPython has no contextlib)
    from PIL import Image  # CPython's tests look at the RAM as an image
except ImportError:  # MicroPython
    pass

EIO = 5  # what machine.I2C raises (OSError 5) when the address is not acknowledged


class RamModelError(AssertionError):
    pass


class _Parser:
    """Splits a command byte stream into (opcode, args); a command may span transfers."""

    def __init__(self, arg_counts: dict[int, int]) -> None:
        self.arg_counts = arg_counts
        self.pending: list[int] = []

    def feed(self, byte: int) -> tuple[int, list[int]] | None:
        if not 0 <= byte <= 0xFF:
            raise RamModelError("not a byte: " + repr(byte))
        self.pending.append(byte)
        if len(self.pending) - 1 >= self.arg_counts.get(self.pending[0], 0):
            opcode = self.pending[0]
            args = self.pending[1:]
            self.pending = []
            return opcode, args
        return None


HORIZONTAL, VERTICAL, PAGE = 0, 1, 2


class OledModel:
    ram_columns = 128
    column_offset = 0  # first visible RAM column
    needs_charge_pump = False
    address = 0x3C

    def __init__(self, width: int = 128, pages: int = 8) -> None:
        self.width = width
        self.pages = pages
        self.unplugged = False
        self.power_cycles = 0
        self.transfers = 0
        self.ignored: list[int] = []
        self.commands_seen: list[tuple[int, list[int]]] = []
        self.data_bytes = 0
        self._noise = 0x2545F491
        self._parser = _Parser(self.arg_counts())
        self.ram = [bytearray(self.ram_columns) for _ in range(pages)]
        self._reset_registers()

    def arg_counts(self) -> dict[int, int]:
        raise NotImplementedError

    def _reset_registers(self) -> None:
        self.page = 0
        self.col = 0
        self.display_on = False
        self.charge_pump = False
        self.segment_remap = False
        self.com_reversed = False
        self.inverse = False
        self.entire_on = False
        self._parser.pending = []

    def power_cycle(self) -> None:
        """Power lost and back: noise in the RAM, every register at its reset value."""
        self.power_cycles += 1
        for row in self.ram:
            for i in range(len(row)):
                self._noise = (self._noise * 1103515245 + 12345) & 0x7FFFFFFF
                row[i] = self._noise >> 16 & 0xFF
        self._reset_registers()

    # -- what the host sends -----------------------------------------------------

    def command(self, *cmds: int) -> None:
        for byte in cmds:
            parsed = self._parser.feed(byte)
            if parsed is not None:
                self.commands_seen.append(parsed)
                self._execute(parsed[0], parsed[1])

    def data(self, data: bytes | list[int] | tuple[int, ...]) -> None:
        if self._parser.pending:
            raise RamModelError("data while a command awaits arguments")
        for byte in data:
            if not 0 <= byte <= 0xFF:
                raise RamModelError("not a byte: " + repr(byte))
            if not 0 <= self.col < self.ram_columns:
                raise RamModelError("write at column " + str(self.col) + ", outside the RAM")
            self.ram[self.page][self.col] = byte
            self.data_bytes += 1
            self._advance()

    def writevto(self, address: int, vector: list[bytes]) -> None:
        """``machine.I2C.writevto``: the buffers one after the other, one transfer."""
        self.writeto(address, b"".join([bytes(part) for part in vector]))

    def writeto(self, address: int, buf: bytes) -> None:
        """One I2C write transfer (datasheet 8.1.5): control byte(s), then the bytes."""
        if self.unplugged or address != self.address:
            raise OSError(EIO)
        self.transfers += 1
        i = 0
        while i < len(buf):
            control = buf[i]
            if control & 0x3F:
                raise RamModelError("control byte " + hex(control))
            if control & 0x80:  # Co = 1: one byte, then another control byte
                if i + 1 >= len(buf):
                    raise RamModelError("control byte with nothing after it")
                chunk = buf[i + 1 : i + 2]
                i += 2
            else:
                chunk = buf[i + 1 :]
                i = len(buf)
            if control & 0x40:
                self.data(chunk)
            else:
                self.command(*chunk)

    # -- what the tests read -----------------------------------------------------

    def glass(self) -> bytes:
        """What the glass shows, in page layout (bit 0 = the page's top row), upright
        on a module mounted as its maker meant it (segment remap and COM scan
        reversed, as every module's init sets them): dark while the display is off or
        (SSD1306) the charge pump is off."""
        out = bytearray(self.width * self.pages)
        if not self.display_on or (self.needs_charge_pump and not self.charge_pump):
            return bytes(out)
        for page in range(self.pages):
            for x in range(self.width):
                if self.entire_on:
                    byte = 0xFF
                else:
                    # The glass's column x is driven by SEG(127 - x) unless remapped ...
                    seg = x if self.segment_remap else self.width - 1 - x
                    byte = self.ram[page][self.column_offset + seg]
                    if self.inverse:
                        byte ^= 0xFF
                out[page * self.width + x] = byte
        if not self.com_reversed:  # ... and its rows by COM(63 - y) unless reversed
            flipped = bytearray(len(out))
            for page in range(self.pages):
                for x in range(self.width):
                    byte = out[(self.pages - 1 - page) * self.width + x]
                    rev = 0
                    for bit in range(8):
                        if byte >> bit & 1:
                            rev |= 0x80 >> bit
                    flipped[page * self.width + x] = rev
            out = flipped
        return bytes(out)

    def ram_pages(self) -> bytes:
        """The visible part of the RAM, in page layout."""
        out = bytearray()
        for row in self.ram:
            out += row[self.column_offset : self.column_offset + self.width]
        return bytes(out)

    def image(self) -> "Image.Image":
        """The visible part of the RAM, as a PIL image (bit 0 = top row of a page)."""
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

    def _execute(self, opcode: int, args: list[int]) -> None:
        raise NotImplementedError

    def _advance(self) -> None:
        raise NotImplementedError

    def _display_setting(self, opcode: int, args: list[int]) -> bool:
        """The settings every one of the three controllers shares; True if handled."""
        if opcode in (0xAE, 0xAF):
            self.display_on = opcode == 0xAF
        elif opcode in (0xA0, 0xA1):
            self.segment_remap = opcode == 0xA1
        elif opcode in (0xA4, 0xA5):
            self.entire_on = opcode == 0xA5
        elif opcode in (0xA6, 0xA7):
            self.inverse = opcode == 0xA7
        elif opcode in (0xC0, 0xC8):
            self.com_reversed = opcode == 0xC8
        else:
            return False
        return True


_SSD1306_ARGS = {
    0x20: 1, 0x21: 2, 0x22: 2, 0x26: 6, 0x27: 6, 0x29: 5, 0x2A: 5, 0x81: 1, 0x8D: 1,
    0xA3: 2, 0xA8: 1, 0xAD: 1, 0xD3: 1, 0xD5: 1, 0xD9: 1, 0xDA: 1, 0xDB: 1,
}  # fmt: skip
_SSD1306_SINGLE = {0x2E, 0x2F, 0xE3}


class SSD1306Model(OledModel):
    """128 x 8 pages of RAM; horizontal, vertical or page addressing (reset: page)."""

    ram_columns = 128
    column_offset = 0
    needs_charge_pump = True

    def arg_counts(self) -> dict[int, int]:
        return _SSD1306_ARGS

    def _reset_registers(self) -> None:
        OledModel._reset_registers(self)
        self.mode = PAGE
        self.col_start, self.col_end = 0, self.ram_columns - 1
        self.page_start, self.page_end = 0, self.pages - 1

    def _execute(self, opcode: int, args: list[int]) -> None:
        if opcode <= 0x1F or 0xB0 <= opcode <= 0xB7:
            if self.mode != PAGE:
                raise RamModelError(hex(opcode) + " is for page addressing mode only")
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
                raise RamModelError(hex(opcode) + " is for horizontal/vertical mode only")
            first, last = args
            if opcode == 0x21:
                self.col_start, self.col_end = first & 0x7F, last & 0x7F
                self.col = self.col_start
            else:
                self.page_start, self.page_end = first & 0x07, last & 0x07
                self.page = self.page_start
        elif opcode == 0x8D:
            self.charge_pump = bool(args[0] & 0x04)
        elif self._display_setting(opcode, args):
            pass
        elif opcode in _SSD1306_ARGS or opcode in _SSD1306_SINGLE or 0x40 <= opcode <= 0x7F:
            pass  # settings with no effect on the RAM or on what the model shows
        else:
            self.unknown(opcode)

    def unknown(self, opcode: int) -> None:
        raise RamModelError(hex(opcode) + " is not an SSD1306 command")

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


_SSD1309_ARGS = dict(_SSD1306_ARGS)
_SSD1309_ARGS[0xFD] = 1  # command lock
del _SSD1309_ARGS[0x8D]  # no charge pump


class SSD1309Model(SSD1306Model):
    """The SSD1306's RAM and addressing; no charge pump (the module makes its own VCC),
    a command lock (``0xFD 0x16`` locks, ``0xFD 0x12`` unlocks).  Bytes that are no
    SSD1309 command are ignored and listed in ``ignored`` (luma's ssd1309 sends the
    SSD1306's charge pump command ``0x8D 0x14``, whose ``0x14`` then reads as a
    column command)."""

    needs_charge_pump = False

    def arg_counts(self) -> dict[int, int]:
        return _SSD1309_ARGS

    def _reset_registers(self) -> None:
        SSD1306Model._reset_registers(self)
        self.locked = False

    def _execute(self, opcode: int, args: list[int]) -> None:
        if opcode == 0xFD:
            self.locked = args[0] & 0x04 != 0
        elif self.locked or opcode == 0x8D:
            self.ignored.append(opcode)
        else:
            SSD1306Model._execute(self, opcode, args)

    def unknown(self, opcode: int) -> None:
        self.ignored.append(opcode)


_SH1106_ARGS = {0x81: 1, 0xA8: 1, 0xAD: 1, 0xD3: 1, 0xD5: 1, 0xD9: 1, 0xDA: 1, 0xDB: 1}


class SH1106Model(OledModel):
    """132 x 8 pages of RAM, the 128 visible columns from column 2; page addressing only.

    Bytes that are no SH1106 command are ignored (and listed in ``ignored``):
    luma's SSD1306-flavoured init sends ``0x20`` and ``0x8D``, which a real SH1106
    does not know (``0x8D``'s argument ``0x14`` then reads as a column command).
    Its DC-DC converter is on at reset (``0xAD 0x8B``), so no charge pump to switch.
    """

    ram_columns = 132
    column_offset = 2

    def arg_counts(self) -> dict[int, int]:
        return _SH1106_ARGS

    def _reset_registers(self) -> None:
        OledModel._reset_registers(self)
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
        elif self._display_setting(opcode, args) or (
            opcode in _SH1106_ARGS
            or 0x30 <= opcode <= 0x7F
            or opcode == 0xE3
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
    if controller == "ssd1306":
        return SSD1306Model()
    if controller == "ssd1309":
        return SSD1309Model()
    return SH1106Model()
