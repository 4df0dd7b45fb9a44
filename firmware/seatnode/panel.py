"""The seat's OLED panel on the node's own I2C bus: SSD1306, SH1106 or SSD1309.

The Pi draws every screen and decides which page/column windows changed; the
node only puts those windows into the panel's RAM (display frames, see
firmware/PROTOCOL.md).  This module knows the three controllers, from their
datasheets (Solomon Systech SSD1306 rev 1.5, SSD1309 rev 1.3; Sino Wealth
SH1106 v2.3):

* the RAM is 8 pages of 8 rows; a data byte is one column of one page, bit 0
  the page's top row;
* SSD1306 and SSD1309: 128 columns; in horizontal addressing mode (``0x20
  0x00``) ``0x21 c0 c1`` and ``0x22 p0 p1`` set a window, and data fills it
  page after page, the pointers wrapping back to the window's start;
* SH1106: 132 columns, the 128 visible ones from column 2 on 128-wide modules;
  page addressing only: ``0xB0|page``, ``0x10|col>>4``, ``0x00|col&15``, the
  column counting up within the page.

I2C: every transfer is the panel's address, a control byte (``0x00``: the
rest are commands, ``0x40``: the rest are data) and the bytes.  A panel that
does not answer (missing, unplugged, browning out) makes ``machine.I2C`` raise
``OSError``; the panel is then marked not ok, and ``init()`` is tried again
by the caller until it answers, after which its RAM is unknown and the whole
frame must be sent again.  Plain Python: runs on MicroPython, imports on
CPython for the host's tests.
"""

from seatnode.compat import const

SSD1306 = "ssd1306"
SH1106 = "sh1106"
SSD1309 = "ssd1309"
KINDS = (SSD1306, SH1106, SSD1309)

DEFAULT_ADDRESS = const(0x3C)
WIDTH = const(128)
PAGES = const(8)
COMMAND = b"\x00"  # control byte: commands follow
DATA = b"\x40"  # control byte: display data follows

# Initialisation, from each datasheet's command table and application notes, for
# 128x64 modules.  Every value is written (none left to the reset state) so that
# a panel that browned out and kept some registers comes back the same.
INIT = {
    SSD1306: (
        0xAE,  # display off while configuring
        0xD5, 0x80,  # clock: divide ratio 1, oscillator at its reset setting (370 kHz typ.)
        0xA8, 0x3F,  # multiplex ratio 64
        0xD3, 0x00,  # display offset 0
        0x40,  # start line 0
        0x8D, 0x14,  # charge pump on (the modules have no external VCC)
        0x20, 0x00,  # horizontal addressing mode
        0xA1,  # segment remap: column 127 is SEG0 (the modules' glass)
        0xC8,  # COM scan from COM63 to COM0
        0xDA, 0x12,  # COM pins: alternative configuration, no left/right remap
        0x81, 0xCF,  # contrast
        0xD9, 0x22,  # pre-charge: 2 + 2 clocks (the reset value)
        0xDB, 0x30,  # VCOMH deselect level about 0.83 x VCC
        0x2E,  # no scrolling
        0xA4,  # the display follows the RAM
        0xA6,  # not inverted
        0xAF,  # display on
    ),
    SSD1309: (
        0xFD, 0x12,  # unlock the command interface (the reset state, written anyway)
        0xAE,
        0xD5, 0x70,  # clock: divide ratio 1, the SSD1309's reset oscillator setting
        0xA8, 0x3F,
        0xD3, 0x00,
        0x40,
        0x20, 0x00,  # horizontal addressing mode
        0xA1,
        0xC8,
        0xDA, 0x12,
        0x81, 0xCF,
        0xD9, 0x22,
        0xDB, 0x34,  # VCOMH about 0.78 x VCC (the SSD1309's reset value)
        0x2E,
        0xA4,
        0xA6,
        0xAF,  # no charge pump command: SSD1309 modules make their own 12-13 V
    ),
    SH1106: (
        0xAE,
        0xD5, 0x50,  # clock: divide ratio 1, oscillator +0% (the reset value)
        0xA8, 0x3F,
        0xD3, 0x00,
        0x40,
        0xAD, 0x8B,  # DC-DC converter on
        0x32,  # pump voltage 8.0 V
        0xA1,
        0xC8,
        0xDA, 0x12,
        0x81, 0x80,
        0xD9, 0x22,
        0xDB, 0x35,
        0xA4,
        0xA6,
        0xAF,
    ),
}  # fmt: skip

# The same settings again while the panel runs (the liveness refresh): everything but
# "display off", so a panel that kept its settings does not blink, and one that reset
# silently (a brown-out, a re-seated jumper: no I2C error, a dark glass) is set up again.
LIVE = {kind: tuple(c for c in cmds if c != 0xAE) for kind, cmds in INIT.items()}
_LIVE_BYTES = {kind: bytes(cmds) for kind, cmds in LIVE.items()}

# The visible columns' first RAM column.
COLUMN_OFFSET = {SSD1306: 0, SSD1309: 0, SH1106: 2}


class Panel:
    """One panel on ``i2c`` (a ``machine.I2C``) at ``address``.

    ``ok`` says whether the panel answered its last transfer.  ``resets``
    counts the initialisations that went through (a new one means the RAM the
    Pi knew is gone).  ``bytes_sent`` counts the bytes put on the wire
    (address and control bytes included), for the benchmark.
    """

    def __init__(self, i2c, kind=SSD1306, address=DEFAULT_ADDRESS):
        if kind not in KINDS:
            raise ValueError("panel type must be one of " + ", ".join(KINDS))
        self.i2c = i2c
        self.kind = kind
        self.address = address
        self.offset = COLUMN_OFFSET[kind]
        self.ok = False
        self.resets = 0
        self.errors = 0
        self.bytes_sent = 0
        self.transfers = 0
        # What the visible RAM should hold (what was written), 8 pages x 128 columns:
        # the liveness refresh writes it back, so a panel whose RAM was lost without an
        # error shows the screen again without the Pi.
        self.shadow = bytearray(WIDTH * PAGES)
        self.refreshes = 0
        # Reused every transfer, so the loop allocates nothing (MicroPython's ssd1306
        # driver does the same): the control byte and the payload go out as one I2C
        # transfer with ``writevto`` and this list; the window commands are built in
        # ``_cmd``; the liveness refresh writes the shadow's pages through these views.
        self._vec = [COMMAND, b""]
        writevto = getattr(i2c, "writevto", None)  # machine.I2C has it; a bare fake may not
        self._writevto = writevto if writevto is not None else self._joined
        self._cmd = bytearray(6)
        self._cmd_views = [memoryview(self._cmd)[:n] for n in range(7)]
        shadow = memoryview(self.shadow)
        self._pages = [shadow[page * WIDTH : (page + 1) * WIDTH] for page in range(PAGES)]
        self._live = _LIVE_BYTES[kind]
        # panel bytes the node writes in one pass of its loop (seatnode.display): a page
        # row on I2C, what the bus says it takes in about a millisecond otherwise
        self.slice_bytes = getattr(i2c, "slice_bytes", 128)
        self._forget()

    def _forget(self):
        # What the controller's pointers are known to hold (None: unknown).
        self._window = None  # SSD13xx: the window set, (p0, p1, c0, c1) packed in an int
        self._cursor = 0  # SSD13xx: bytes written into that window (mod its size)
        self._page = None  # SH1106: the page and RAM column of the pointer
        self._column = None

    # -- the wire ----------------------------------------------------------------------
    def _joined(self, address, vec):
        self.i2c.writeto(address, vec[0] + bytes(vec[1]))

    def _write(self, control, payload):
        vec = self._vec
        vec[0] = control
        vec[1] = payload
        try:
            self._writevto(self.address, vec)
        except OSError:
            self.ok = False
            self.errors += 1
            self._forget()
            raise
        self.bytes_sent += 2 + len(payload)
        self.transfers += 1

    def command(self, *cmds):
        self._write(COMMAND, bytes(cmds))

    def _command(self, count):
        """The first ``count`` bytes of ``_cmd`` as commands (nothing allocated)."""
        self._write(COMMAND, self._cmd_views[count])

    # -- set-up ------------------------------------------------------------------------
    def init(self):
        """Configure the panel and blank its RAM; True if it answered throughout."""
        self._forget()
        try:
            self.command(*INIT[self.kind])
            self.ok = True
            self.clear()
        except OSError:
            self.ok = False
            return False
        self.resets += 1
        return True

    def clear(self):
        """Zero the visible RAM (a fresh panel shows noise until the Pi's frame comes)."""
        blank = bytes(WIDTH * 2)
        for page in range(0, PAGES, 2):
            self.window(page, page + 1, 0, WIDTH - 1, 0, blank)

    # -- windows -----------------------------------------------------------------------
    def window(self, p0, p1, c0, c1, offset, data):
        """Write ``data`` into the window pages p0..p1 x columns c0..c1 (visible
        columns), starting ``offset`` bytes into the window's page-after-page order.

        Raises OSError if the panel does not answer (``ok`` is then False)."""
        cols = c1 - c0 + 1
        size = (p1 - p0 + 1) * cols
        if cols < 1 or p1 < p0 or p1 >= PAGES or c1 >= WIDTH or offset + len(data) > size:
            raise ValueError("window outside the panel")
        if self.kind == SH1106:
            self._window_sh1106(p0, c0, cols, offset, data)
        else:
            self._window_ssd13xx(p0, p1, c0, c1, offset, data, size)
        shadow, pos, count = self.shadow, 0, len(data)
        if offset == 0 and cols == WIDTH:  # whole page rows: one copy, no slice of data
            start = p0 * WIDTH + c0
            shadow[start : start + count] = data
            return
        while pos < count:
            row, col = divmod(offset + pos, cols)
            n = min(cols - col, count - pos)
            start = (p0 + row) * WIDTH + c0 + col
            shadow[start : start + n] = data[pos : pos + n]
            pos += n

    def refresh(self, step):
        """One step of the liveness refresh: step 0 sends the settings again (``LIVE``),
        steps 1 to 8 write page ``step - 1`` back from ``shadow``.  Returns the next
        step, or 0 when the refresh is done.  Raises OSError like ``window``."""
        if step == 0:
            self._forget()
            self._write(COMMAND, self._live)
            return 1
        page = step - 1
        if self.kind == SH1106:
            self._window_sh1106(page, 0, WIDTH, 0, self._pages[page])
        else:
            self._window_ssd13xx(page, page, 0, WIDTH - 1, 0, self._pages[page], WIDTH)
        if page == PAGES - 1:
            self.refreshes += 1
            return 0
        return step + 1

    def _window_ssd13xx(self, p0, p1, c0, c1, offset, data, size):
        key = p0 | p1 << 3 | c0 << 6 | c1 << 13  # an int: no tuple allocated a call
        if self._window != key or self._cursor != offset:
            if offset:
                # Not where the pointer is (never happens with in-order chunks): the
                # rest of this page row by itself, then the window from the next row.
                cols = c1 - c0 + 1
                row, col = offset // cols, offset % cols
                first = min(cols - col, len(data))
                self._window = None
                self.command(0x21, c0 + col, c1, 0x22, p0 + row, p0 + row)
                self._write(DATA, data[:first])
                self._window = None
                if first < len(data):
                    self.command(0x21, c0, c1, 0x22, p0 + row + 1, p1)
                    self._window, self._cursor = key, (row + 1) * cols
                    self._write(DATA, data[first:])
                    self._cursor = (self._cursor + len(data) - first) % size
                return
            cmd = self._cmd
            cmd[0], cmd[1], cmd[2] = 0x21, c0 + self.offset, c1 + self.offset
            cmd[3], cmd[4], cmd[5] = 0x22, p0, p1
            self._command(6)
            self._window, self._cursor = key, 0
        self._write(DATA, data)
        self._cursor = (self._cursor + len(data)) % size

    def _window_sh1106(self, p0, c0, cols, offset, data):
        pos = 0
        while pos < len(data):
            row, col = (offset + pos) // cols, (offset + pos) % cols
            n = min(cols - col, len(data) - pos)
            page, column = p0 + row, self.offset + c0 + col
            cmd, count = self._cmd, 0
            if self._page != page:
                cmd[count] = 0xB0 | page
                count += 1
            if self._column is None or self._column >> 4 != column >> 4:
                cmd[count] = 0x10 | column >> 4
                count += 1
            if self._column is None or self._column & 15 != column & 15:
                cmd[count] = column & 15
                count += 1
            if count:
                self._command(count)
            self._page, self._column = page, column
            self._write(DATA, data if pos == 0 and n == len(data) else data[pos : pos + n])
            self._column = column + n
            pos += n
