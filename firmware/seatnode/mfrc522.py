"""MFRC522 reader driver: reads the UID of an ISO/IEC 14443 type A tag.

Written for this project from the NXP MFRC522 data sheet (register map,
Transceive command, bit framing, CollReg) and ISO/IEC 14443-3 (REQA/WUPA,
anticollision and SELECT per cascade level, HLTA, CRC_A).  NTAG213 stickers
have 7-byte UIDs and need cascade level 2; 4- and 10-byte UIDs work too.

The driver only needs three duck-typed objects, so the host's tests can drive
it with a simulated chip: ``spi`` with ``write(buf)`` and
``write_readinto(wbuf, rbuf)`` (``machine.SPI``), ``cs`` and optional ``rst``
with ``value(v)`` (``machine.Pin``).
"""

from seatnode.compat import const, micropython, sleep_ms, ticks_diff, ticks_ms

# Registers (data sheet section 9.2).
COMMAND = const(0x01)
COM_IEN = const(0x02)
DIV_IEN = const(0x03)
COM_IRQ = const(0x04)
DIV_IRQ = const(0x05)
ERROR = const(0x06)
STATUS1 = const(0x07)
STATUS2 = const(0x08)
FIFO_DATA = const(0x09)
FIFO_LEVEL = const(0x0A)
CONTROL = const(0x0C)
BIT_FRAMING = const(0x0D)
COLL = const(0x0E)
MODE = const(0x11)
TX_MODE = const(0x12)
RX_MODE = const(0x13)
TX_CONTROL = const(0x14)
TX_ASK = const(0x15)
MOD_WIDTH = const(0x24)
RF_CFG = const(0x26)
T_MODE = const(0x2A)
T_PRESCALER = const(0x2B)
T_RELOAD_H = const(0x2C)
T_RELOAD_L = const(0x2D)
VERSION = const(0x37)

# Commands (data sheet section 10.3).
CMD_IDLE = const(0x00)
CMD_CALC_CRC = const(0x03)
CMD_TRANSCEIVE = const(0x0C)
CMD_SOFT_RESET = const(0x0F)
POWER_DOWN = const(0x10)  # CommandReg bit 4

# ComIrqReg bits.
IRQ_RX = const(0x20)
IRQ_IDLE = const(0x10)
IRQ_ERR = const(0x02)
IRQ_TIMER = const(0x01)

# ErrorReg bits.
ERR_BUFFER_OVFL = const(0x10)
ERR_COLL = const(0x08)
ERR_CRC = const(0x04)
ERR_PARITY = const(0x02)
ERR_PROTOCOL = const(0x01)

# CollReg bits.
COLL_VALUES_AFTER_COLL = const(0x80)

START_SEND = const(0x80)  # BitFramingReg bit 7
FLUSH_BUFFER = const(0x80)  # FIFOLevelReg bit 7

# ISO/IEC 14443-3 type A.
REQA = const(0x26)
WUPA = const(0x52)
HLTA = const(0x50)
SEL_CL1 = const(0x93)
SEL_CL2 = const(0x95)
SEL_CL3 = const(0x97)
NVB_SELECT = const(0x70)
CASCADE_TAG = const(0x88)
SAK_CASCADE = const(0x04)

# VersionReg: NXP answers 0x91 (v1.0) or 0x92 (v2.0); clone boards answer other
# values (0x88, 0x89 FM17522, 0x90, 0xB2, ...).  Any answer is a chip, except what an
# SPI bus with nothing on it reads: 0x00 (MISO held low) or 0xFF (MISO floating high).
NO_CHIP_VERSIONS = (0x00, 0xFF)


class _Many:
    """read_uid()'s answer when several tags answered at once (a bit collision)."""

    def __repr__(self):
        return "MANY"


# One object, compared with ``is``; not a str (a str compared with UID bytes makes
# MicroPython print "Comparison between bytes and str" where warnings are on).
MANY = _Many()

# Transceive results.
OK = const(0)
TIMEOUT = const(1)
ERROR_RX = const(2)
COLLISION = const(3)

EXCHANGE_TIMEOUT_MS = const(30)
RX_GAIN_38DB = const(0x50)  # RFCfgReg: RxGain 101


@micropython.native
def _crc_a(data, start, count):
    """CRC_A of ``count`` bytes of ``data`` from ``start``, as an int (low byte first
    on the wire): nothing allocated, for the driver's own buffers."""
    crc = 0x6363
    for i in range(start, start + count):
        byte = data[i] ^ (crc & 0xFF)
        byte = (byte ^ (byte << 4)) & 0xFF
        crc = ((crc >> 8) ^ (byte << 8) ^ (byte << 3) ^ (byte >> 4)) & 0xFFFF
    return crc


def crc_a(data):
    """ISO/IEC 14443-3 CRC_A (init 0x6363, reflected 0x1021), low byte first."""
    crc = _crc_a(data, 0, len(data))
    return bytes((crc & 0xFF, crc >> 8))


# The longest frame the driver sends (SELECT: SEL, NVB, 4 UID bytes, BCC, CRC_A) and the
# most answer bytes it takes from the FIFO (an ANTICOLLISION answer is 5; more is noise,
# and whatever is left is flushed before the next exchange).
_TX_MAX = const(9)
_RX_MAX = const(16)
_FIFO_WRITE = const(0x12)  # (FIFO_DATA << 1) & 0x7E
_FIFO_READ = const(0x92)  # 0x80 | _FIFO_WRITE
# _anticollision's answers besides a SAK (0..255)
_LEVEL_NONE = const(-1)
_LEVEL_MANY = const(-2)


class MFRC522:
    """An MFRC522 on SPI.  Call ``init()`` once, then ``read_uid()`` per poll.

    A poll allocates nothing: every frame is built in ``_tx`` and every answer read into
    ``_rx`` (each SPI transfer through a view of the right length, made once), and a UID
    read is returned in a buffer of its length that the next poll overwrites (its
    reader copies what it keeps, as ``seatnode.tags`` does)."""

    def __init__(self, spi, cs, rst=None):
        self.spi = spi
        self.cs = cs
        self.rst = rst
        self.version = 0
        self._one = bytearray(2)
        self._two = bytearray(2)
        tx = self._tx = bytearray(1 + _TX_MAX)  # FIFO address, then the frame
        tx[0] = _FIFO_WRITE
        self._tx_views = [memoryview(tx)[: n + 1] for n in range(_TX_MAX + 1)]
        # FIFO reads: the address n times then 0 (written at n for the transfer), answers
        # in rx[1:]
        addr = self._rx_addr = bytearray(_RX_MAX + 1)
        for i in range(_RX_MAX + 1):
            addr[i] = _FIFO_READ
        rx = self._rx = bytearray(_RX_MAX + 1)
        self._rx_views = [
            (memoryview(self._rx_addr)[: n + 1], memoryview(rx)[: n + 1])
            for n in range(_RX_MAX + 1)
        ]
        self.rx_count = 0  # answer bytes in _rx[1:] after the last exchange
        self.rx_bits = 0  # valid bits in the answer's last byte (0 = 8)
        self._atqa = bytearray(2)
        self._level = bytearray(4)  # one cascade level's UID bytes
        self._uid = bytearray(10)
        self._uids = {4: bytearray(4), 7: bytearray(7), 10: bytearray(10)}
        cs.value(1)

    # -- register access (data sheet section 8.1.2.3) ------------------------------
    @micropython.native
    def write_reg(self, reg, value):
        self._one[0] = (reg << 1) & 0x7E
        self._one[1] = value & 0xFF
        self.cs.value(0)
        try:
            self.spi.write(self._one)
        finally:
            self.cs.value(1)

    @micropython.native
    def read_reg(self, reg):
        self._one[0] = 0x80 | ((reg << 1) & 0x7E)
        self._one[1] = 0
        self.cs.value(0)
        try:
            self.spi.write_readinto(self._one, self._two)
        finally:
            self.cs.value(1)
        return self._two[1]

    @micropython.native
    def _read_fifo(self, count):
        """``count`` FIFO bytes (1 to _RX_MAX) into ``_rx[1:]``."""
        wbuf, rbuf = self._rx_views[count]
        addr = self._rx_addr
        addr[count] = 0
        self.cs.value(0)
        try:
            self.spi.write_readinto(wbuf, rbuf)
        finally:
            self.cs.value(1)
            addr[count] = _FIFO_READ

    @micropython.native
    def set_bits(self, reg, mask):
        self.write_reg(reg, self.read_reg(reg) | mask)

    @micropython.native
    def clear_bits(self, reg, mask):
        self.write_reg(reg, self.read_reg(reg) & ~mask)

    # -- set-up -----------------------------------------------------------------------
    def init(self):
        """Reset and configure the chip, switch the antenna on.

        Returns True when a chip answers (``version`` holds VersionReg, whatever it is).
        """
        if self.rst is not None:
            self.rst.value(0)
            sleep_ms(2)
            self.rst.value(1)
            sleep_ms(50)
        self.write_reg(COMMAND, CMD_SOFT_RESET)
        start = ticks_ms()
        while self.read_reg(COMMAND) & POWER_DOWN:
            if ticks_diff(ticks_ms(), start) > 100:
                break
            sleep_ms(1)
        self.write_reg(TX_MODE, 0x00)  # 106 kBd, no TX CRC
        self.write_reg(RX_MODE, 0x00)  # 106 kBd, no RX CRC
        self.write_reg(MOD_WIDTH, 0x26)  # reset value
        # Timer: TAuto, f = 13.56 MHz / (2 * 169 + 1) = 40 kHz (25 us per tick); it
        # starts when our frame ends and stops at the tag's first bit, so reload 20
        # ticks = 0.525 ms is six times a tag's frame delay time (86 to 91 us for every
        # command the driver sends, ISO 14443-3): an exchange nobody answers (HLTA, the
        # probe for a second card, a poll with no card) waits that long, not 1 ms.
        self.write_reg(T_MODE, 0x80)
        self.write_reg(T_PRESCALER, 0xA9)
        self.write_reg(T_RELOAD_H, 0x00)
        self.write_reg(T_RELOAD_L, 0x14)
        self.write_reg(TX_ASK, 0x40)  # force 100 % ASK modulation
        self.write_reg(MODE, 0x3D)  # CRC preset 0x6363 (ISO 14443-3 CRC_A)
        # Receiver gain 38 dB, not the 48 dB maximum: the read range is a card on the
        # reader (and one laid on it), not a card in a hand above it (RFCfgReg).
        self.write_reg(RF_CFG, RX_GAIN_38DB)
        self.antenna(True)
        self.version = self.read_reg(VERSION)
        return self.version not in NO_CHIP_VERSIONS

    def antenna(self, on):
        value = self.read_reg(TX_CONTROL)
        if on and (value & 0x03) != 0x03:
            self.write_reg(TX_CONTROL, value | 0x03)  # Tx1RFEn, Tx2RFEn
        elif not on and value & 0x03:
            self.write_reg(TX_CONTROL, value & ~0x03)

    @micropython.native
    def alive(self):
        """True when VersionReg still reads as a chip (wiring check)."""
        return self.read_reg(VERSION) not in NO_CHIP_VERSIONS

    # -- Transceive (data sheet section 10.3.1.8) -------------------------------------
    @micropython.native
    def transceive(self, count, tx_last_bits=0):
        """Send the ``count`` bytes of ``_tx[1:]`` to the tag and receive its answer.

        Returns OK, TIMEOUT, ERROR_RX or COLLISION; the answer is in
        ``_rx[1 : 1 + rx_count]``, its last byte's valid bits in ``rx_bits``.
        """
        framing = tx_last_bits & 0x07
        self.rx_count = self.rx_bits = 0
        self.write_reg(COMMAND, CMD_IDLE)
        self.write_reg(COM_IRQ, 0x7F)  # Set1 = 0: clear all interrupt bits
        self.write_reg(FIFO_LEVEL, FLUSH_BUFFER)
        self.cs.value(0)
        try:
            self.spi.write(self._tx_views[count])
        finally:
            self.cs.value(1)
        self.write_reg(BIT_FRAMING, framing)
        self.write_reg(COMMAND, CMD_TRANSCEIVE)
        self.write_reg(BIT_FRAMING, framing | START_SEND)
        start = ticks_ms()
        while True:
            irq = self.read_reg(COM_IRQ)
            if irq & (IRQ_RX | IRQ_IDLE):
                break
            if irq & IRQ_TIMER or ticks_diff(ticks_ms(), start) > EXCHANGE_TIMEOUT_MS:
                self.write_reg(COMMAND, CMD_IDLE)
                return TIMEOUT
        self.write_reg(BIT_FRAMING, framing)  # StartSend back to 0
        error = self.read_reg(ERROR)
        if error & ERR_BUFFER_OVFL:
            return ERROR_RX
        count = self.read_reg(FIFO_LEVEL) & 0x7F
        if count > _RX_MAX:
            count = _RX_MAX
        if count:
            self._read_fifo(count)
        self.rx_count = count
        self.rx_bits = self.read_reg(CONTROL) & 0x07
        if error & ERR_COLL:
            return COLLISION
        if error & (ERR_PROTOCOL | ERR_PARITY):
            return ERROR_RX
        if not count:
            return TIMEOUT
        return OK

    # -- ISO/IEC 14443-3 type A ----------------------------------------------------------
    @micropython.native
    def request(self, command=WUPA):
        """REQA or WUPA (7-bit short frame); returns the ATQA or None.

        Several tags with different ATQAs collide; any answer means a tag is there.
        """
        self.clear_bits(COLL, COLL_VALUES_AFTER_COLL)
        self._tx[1] = command
        result = self.transceive(1, tx_last_bits=7)
        if result == COLLISION:
            return b"\x00\x00"
        if result != OK or self.rx_count != 2:
            return None
        atqa, rx = self._atqa, self._rx
        atqa[0], atqa[1] = rx[1], rx[2]
        return atqa

    @micropython.native
    def _anticollision(self, sel):
        """ANTICOLLISION/SELECT for one cascade level: its SAK (the level's 4 UID bytes
        in ``_level``), _LEVEL_MANY or _LEVEL_NONE.

        A bit collision means several tags answered: MANY, and no tag is chosen (a
        reader that picked one would play a card the player may not have meant).
        """
        tx, rx, level = self._tx, self._rx, self._level
        tx[1], tx[2] = sel, 0x20  # NVB 0x20: no UID bits known yet
        result = self.transceive(2)
        if result == COLLISION:
            return _LEVEL_MANY
        if result != OK or self.rx_count != 5:
            return _LEVEL_NONE
        if rx[1] ^ rx[2] ^ rx[3] ^ rx[4] != rx[5]:
            return _LEVEL_NONE
        tx[2] = NVB_SELECT
        for i in range(5):
            tx[3 + i] = rx[1 + i]
        for i in range(4):
            level[i] = rx[1 + i]
        crc = _crc_a(tx, 1, 7)
        tx[8], tx[9] = crc & 0xFF, crc >> 8
        result = self.transceive(9)
        if result != OK or self.rx_count != 3 or self.rx_bits != 0:
            return _LEVEL_NONE
        crc = _crc_a(rx, 1, 1)
        if rx[2] != crc & 0xFF or rx[3] != crc >> 8:
            return _LEVEL_NONE
        return rx[1]

    @micropython.native
    def select(self):
        """Select the tag in READY state: its full UID (4, 7 or 10 bytes, in a buffer the
        next poll overwrites), MANY or None."""
        uid, level = self._uid, self._level
        size = 0
        for sel in (SEL_CL1, SEL_CL2, SEL_CL3):
            sak = self._anticollision(sel)
            if sak == _LEVEL_NONE:
                return None
            if sak == _LEVEL_MANY:
                return MANY
            if sak & SAK_CASCADE:
                if level[0] != CASCADE_TAG:
                    return None
                for i in range(3):
                    uid[size + i] = level[1 + i]
                size += 3
            else:
                for i in range(4):
                    uid[size + i] = level[i]
                size += 4
                out = self._uids[size]
                for i in range(size):
                    out[i] = uid[i]
                return out
        return None

    @micropython.native
    def halt(self):
        """HLTA: the selected tag goes quiet until the next WUPA."""
        tx = self._tx
        tx[1], tx[2] = HLTA, 0x00
        crc = _crc_a(tx, 1, 2)
        tx[3], tx[4] = crc & 0xFF, crc >> 8
        self.transceive(4)  # a halted tag does not answer: TIMEOUT is success

    @micropython.native
    def read_uid(self):
        """One poll: wake the tags in the field, read the UID of the one there, halt it.

        Returns the UID (a bytearray that the next poll overwrites); MANY when several
        tags answered; None when no tag (or no complete read).  Every poll that woke a
        tag ends with HLTA: the selected
        tag halts, and a tag left half-way (READY after a collision or an error)
        falls back to IDLE/HALT (ISO 14443-3), so the next poll's WUPA wakes it.
        """
        if self.request(WUPA) is None:
            return None
        uid = self.select()
        self.halt()
        if uid is None or uid is MANY:
            return uid
        # A second card much fainter than the first (laid on it, at the reader's edge)
        # makes no bit collision: its answers vanish under the first card's. With the
        # first one halted, REQA wakes every other card (not a halted one): any answer
        # is a second card, and nothing is read.
        if self.request(REQA) is not None:
            self.halt()  # that one goes back to IDLE, so the next WUPA wakes both
            return MANY
        return uid
