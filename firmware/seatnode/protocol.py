"""The seat node line protocol (node side), as specified in firmware/PROTOCOL.md.

One frame per line, printable ASCII::

    $<seq> <TYPE>[ <arg>...]*<CRC>

``seq`` is a decimal counter 0..65535 that each sender increments per frame,
``CRC`` is CRC-16/CCITT-FALSE of the bytes between ``$`` and ``*`` written as
four upper-case hex digits.  Plain Python: valid MicroPython, importable by
CPython for the host's tests.
"""

from seatnode.compat import const

PROTOCOL_VERSION = 5  # the newest this firmware speaks
VERSIONS = (2, 3, 4, 5)  # what it accepts in the Pi's HELLO (and answers with)
MAX_FRAME = const(80)  # bytes in a frame, not counting its CR/LF terminator
MAX_ARG = const(32)  # characters in one argument
SEQ_MODULO = const(65536)

BUTTONS = (
    "truco",
    "envido",
    "real_envido",
    "falta_envido",
    "flor",
    "quiero",
    "no_quiero",
    "mazo",
)
LED_MODES = ("OFF", "ON", "SLOW", "FAST")
MAX_IDENT_SECONDS = const(600)

# Message types, node -> Pi.
HELLO = "HELLO"
HB = "HB"
TAGON = "TAGON"
TAGOFF = "TAGOFF"
TAGMANY = "TAGMANY"
PRESS = "PRESS"
HOLD = "HOLD"
STUCK = "STUCK"  # a button down for the stuck time (10 s): a line stuck, a jammed key
FREED = "FREED"  # that button let go again
# Message types, Pi -> node (HELLO and HB are used in both directions).
IDENT = "IDENT"
LED = "LED"
RESET = "RESET"
REPL = "REPL"

# Rejection reasons, in the order the checks are made.
OVERSIZED = "oversized"
GARBAGE = "garbage"
CHECKSUM = "checksum"
UNKNOWN = "unknown"
MALFORMED = "malformed"
VERSION = "version"

_HEX = b"0123456789ABCDEF"


class ProtocolError(Exception):
    """A received line that is not a valid frame; ``reason`` says why."""

    def __init__(self, reason, detail=""):
        # super(), not Exception.__init__(self, ...): MicroPython's built-in types
        # have no __init__ attribute (AttributeError, the node fell into the REPL).
        super().__init__(reason, detail)
        self.reason = reason
        self.detail = detail


def _crc_table():
    table = []
    for high in range(256):
        crc = high << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021 if crc & 0x8000 else crc << 1) & 0xFFFF
        table.append(crc)
    return tuple(table)


# One lookup a byte instead of eight shifts: display frames come 40 at a time.
_CRC_TABLE = _crc_table()


def crc16(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, not reflected, no final xor."""
    table = _CRC_TABLE
    for byte in data:
        crc = ((crc << 8) & 0xFF00) ^ table[(crc >> 8) ^ byte]
    return crc


try:  # MicroPython: the same loop compiled to machine code (viper), 10x faster there
    from array import array

    import micropython

    _CRC_WORDS = array("H", _CRC_TABLE)

    @micropython.viper
    def _crc16_viper(data, size: int, crc: int) -> int:
        buf = ptr8(data)  # noqa: F821 (viper's pointer type, MicroPython only)
        table = ptr16(_CRC_WORDS)  # noqa: F821
        i = 0
        while i < size:
            crc = ((crc << 8) & 0xFF00) ^ table[((crc >> 8) ^ buf[i]) & 0xFF]
            i += 1
        return crc

    def _crc16_fast(data, crc=0xFFFF):
        """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, not reflected, no final xor."""
        return _crc16_viper(data, len(data), crc)

    # a port without viper raises here; a wrong answer keeps the plain loop too
    if _crc16_fast(b"123456789") == 0x29B1 and _crc16_fast(b"0 HB") == 0xC20C:
        crc16 = _crc16_fast
except (ImportError, AttributeError, NameError, SyntaxError, NotImplementedError):
    pass


def _hex4(value):
    return bytes(
        (
            _HEX[(value >> 12) & 15],
            _HEX[(value >> 8) & 15],
            _HEX[(value >> 4) & 15],
            _HEX[value & 15],
        )
    )


def encode(seq, kind, args=()):
    """Return the frame for one message as bytes, LF-terminated."""
    parts = [str(seq % SEQ_MODULO), kind]
    for arg in args:
        parts.append(str(arg))
    body = " ".join(parts).encode()
    frame = b"$" + body + b"*" + _hex4(crc16(body))
    if len(frame) > MAX_FRAME:
        raise ValueError("frame too long")
    return frame + b"\n"


def _is_digits(field):
    # bytes.isdigit and isupper are ASCII-only (MicroPython and CPython alike) and run in C.
    return field.isdigit()


def _is_upper_word(field):
    return 0 < len(field) <= 8 and field.isalpha() and field.isupper()


def parse(line):
    """Split one received line (bytes, terminator removed) into (seq, type, args).

    Raises ProtocolError with reason "oversized", "garbage" or "checksum".
    Message-specific checks are done by the caller (see ``check_command``).
    """
    if len(line) > MAX_FRAME:
        raise ProtocolError(OVERSIZED)
    if line and (min(line) < 0x20 or max(line) > 0x7E):
        raise ProtocolError(GARBAGE, "non-printable byte")
    if len(line) < 8 or line[0] != 0x24 or line[-5] != 0x2A:  # "$", "*"
        raise ProtocolError(GARBAGE, "not a frame")
    body = line[1:-5]
    crc_text = line[-4:]
    if crc_text.strip(b"0123456789ABCDEF"):  # 0-9, A-F only
        raise ProtocolError(GARBAGE, "bad checksum field")
    if b"*" in body:
        raise ProtocolError(GARBAGE, "stray '*'")
    fields = body.split(b" ")
    if len(fields) < 2:
        raise ProtocolError(GARBAGE, "no type")
    for field in fields:
        if not field:
            raise ProtocolError(GARBAGE, "empty field")
    seq_text = fields[0]
    if (
        not _is_digits(seq_text)
        or len(seq_text) > 5
        or (len(seq_text) > 1 and seq_text[0] == 0x30)
        or int(seq_text) >= SEQ_MODULO
    ):
        raise ProtocolError(GARBAGE, "bad sequence number")
    if not _is_upper_word(fields[1]):
        raise ProtocolError(GARBAGE, "bad type")
    args = []
    for field in fields[2:]:
        if len(field) > MAX_ARG:
            raise ProtocolError(GARBAGE, "argument too long")
        args.append(field.decode())
    if crc16(body) != int(crc_text, 16):
        raise ProtocolError(CHECKSUM)
    return int(seq_text), fields[1].decode(), args


def _is_session(text):
    """A session number: decimal 0..65535, no leading zeros (like ``seq``)."""
    field = text.encode()
    if not _is_digits(field) or len(field) > 5 or (len(field) > 1 and field[0] == 0x30):
        return False
    return int(text) < SEQ_MODULO


def check_command(kind, args):
    """Validate a Pi -> node command; return its argument converted, or None.

    HELLO returns the Pi's session number (its version, 2 to 5, is ``args[0]``),
    IDENT its seconds, LED its mode.

    Raises ProtocolError with reason "unknown", "malformed" or "version".
    """
    if kind in (HB, RESET, REPL):
        if args:
            raise ProtocolError(MALFORMED, kind)
        return None
    if kind == HELLO:
        # The version comes first: another version's HELLO may carry other arguments.
        if not args or not _is_digits(args[0].encode()) or len(args[0]) > 5:
            raise ProtocolError(MALFORMED, kind)
        if int(args[0]) not in VERSIONS:
            raise ProtocolError(VERSION, args[0])
        if len(args) != 2 or not _is_session(args[1]):
            raise ProtocolError(MALFORMED, kind)
        return int(args[1])
    if kind == IDENT:
        if len(args) != 1 or not _is_digits(args[0].encode()) or len(args[0]) > 3:
            raise ProtocolError(MALFORMED, kind)
        seconds = int(args[0])
        if seconds > MAX_IDENT_SECONDS:
            raise ProtocolError(MALFORMED, kind)
        return seconds
    if kind == LED:
        if len(args) != 1 or args[0] not in LED_MODES:
            raise ProtocolError(MALFORMED, kind)
        return args[0]
    raise ProtocolError(UNKNOWN, kind)


BLOCK = "block"  # LineReader.items: the counted block expected is complete


class LineReader:
    """Splits a byte stream into lines; CR and LF both end a line.

    ``feed`` returns the complete lines (without terminator); empty lines are
    dropped.  A line longer than MAX_FRAME is discarded up to its terminator
    and reported once as ``None`` in the returned list.

    Protocol 3's and 4's display updates announce the byte count of the frames that follow
    their ``DU`` line: after ``expect(count)`` the next ``count`` bytes of the stream
    are kept whole (not split into lines, whatever their length) in one preallocated
    buffer, which ``items`` reports as ``BLOCK`` once full (``block()`` gives them).
    ``space()`` is the buffer's part still to fill, for a ``readinto`` straight into it.
    """

    def __init__(self, limit=MAX_FRAME, block_size=2048):
        self.limit = limit
        self._buf = bytearray()
        self._skipping = False
        self._block = bytearray(block_size)
        self._view = memoryview(self._block)
        self._want = 0  # bytes of the block still to come
        self._fill = 0  # bytes of the block received

    def reset(self):
        self._buf = bytearray()
        self._skipping = False
        self._want = self._fill = 0

    # -- counted blocks --------------------------------------------------------------
    def expect(self, count):
        """The next ``count`` bytes are a block (1 to the buffer's size)."""
        self._want, self._fill = count, 0

    @property
    def wanted(self):
        """Bytes of the expected block still to come (0: none expected)."""
        return self._want

    def space(self):
        """The rest of the block's buffer, to read into (then ``filled``)."""
        return self._view[self._fill : self._fill + self._want]

    def filled(self, count):
        """``count`` bytes were read into ``space()``; True when the block is complete."""
        self._fill += count
        self._want -= count
        return self._want == 0

    def block(self):
        """The complete block (a view into the buffer: valid until the next one)."""
        return self._view[: self._fill]

    def abandon(self):
        """Give up the block under way (it never came whole): the bytes that come
        next are dropped up to the next terminator, so a cut frame is no line."""
        if self._want:
            self._want = self._fill = 0
            self._buf = bytearray()
            self._skipping = True

    # -- lines ---------------------------------------------------------------------------
    def feed(self, data):
        return list(self.items(data))

    def items(self, data):
        """The lines (and ``BLOCK``) in ``data``, one at a time: a caller that reads a
        ``DU`` calls ``expect`` before taking the next item."""
        # Whole runs between terminators at a time (bytes.find and slices run in C).
        start, size = 0, len(data)
        while start < size:
            if self._want:
                n = min(self._want, size - start)
                self._view[self._fill : self._fill + n] = data[start : start + n]
                start += n
                if self.filled(n):
                    yield BLOCK
                continue
            cr, lf = data.find(b"\r", start), data.find(b"\n", start)
            end = lf if cr < 0 or (0 <= lf < cr) else cr
            if end < 0:
                if self._take(data[start:]):
                    yield None
                break
            over = self._take(data[start:end])
            start = end + 1
            if over:
                yield None
            if self._skipping:
                self._skipping = False
            elif self._buf:
                line = bytes(self._buf)
                self._buf = bytearray()
                yield line
            self._buf = bytearray()

    def _take(self, chunk):
        """Add a run to the line; True when that made it oversized (reported once)."""
        if self._skipping or not chunk:
            return False
        if len(self._buf) + len(chunk) > self.limit:
            self._buf = bytearray()
            self._skipping = True
            return True
        self._buf.extend(chunk)
        return False


class Sequencer:
    """Counts sent frames: 0, 1, ..., 65535, 0, ..."""

    def __init__(self):
        self.value = 0

    def next(self):
        seq = self.value
        self.value = (seq + 1) % SEQ_MODULO
        return seq


def uid_hex(uid):
    """A tag UID as upper-case hex, as carried in TAGON/TAGOFF."""
    out = bytearray()
    for byte in uid:
        out.append(_HEX[byte >> 4])
        out.append(_HEX[byte & 15])
    return out.decode()
