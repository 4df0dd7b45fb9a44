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

from seatnode.compat import sleep_ms, ticks_diff, ticks_ms

# Registers (data sheet section 9.2).
COMMAND = 0x01
COM_IEN = 0x02
DIV_IEN = 0x03
COM_IRQ = 0x04
DIV_IRQ = 0x05
ERROR = 0x06
STATUS1 = 0x07
STATUS2 = 0x08
FIFO_DATA = 0x09
FIFO_LEVEL = 0x0A
CONTROL = 0x0C
BIT_FRAMING = 0x0D
COLL = 0x0E
MODE = 0x11
TX_MODE = 0x12
RX_MODE = 0x13
TX_CONTROL = 0x14
TX_ASK = 0x15
MOD_WIDTH = 0x24
RF_CFG = 0x26
T_MODE = 0x2A
T_PRESCALER = 0x2B
T_RELOAD_H = 0x2C
T_RELOAD_L = 0x2D
VERSION = 0x37

# Commands (data sheet section 10.3).
CMD_IDLE = 0x00
CMD_CALC_CRC = 0x03
CMD_TRANSCEIVE = 0x0C
CMD_SOFT_RESET = 0x0F
POWER_DOWN = 0x10  # CommandReg bit 4

# ComIrqReg bits.
IRQ_RX = 0x20
IRQ_IDLE = 0x10
IRQ_ERR = 0x02
IRQ_TIMER = 0x01

# ErrorReg bits.
ERR_BUFFER_OVFL = 0x10
ERR_COLL = 0x08
ERR_CRC = 0x04
ERR_PARITY = 0x02
ERR_PROTOCOL = 0x01

# CollReg bits.
COLL_VALUES_AFTER_COLL = 0x80

START_SEND = 0x80  # BitFramingReg bit 7
FLUSH_BUFFER = 0x80  # FIFOLevelReg bit 7

# ISO/IEC 14443-3 type A.
REQA = 0x26
WUPA = 0x52
HLTA = 0x50
SEL_CL1 = 0x93
SEL_CL2 = 0x95
SEL_CL3 = 0x97
NVB_SELECT = 0x70
CASCADE_TAG = 0x88
SAK_CASCADE = 0x04

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
OK = 0
TIMEOUT = 1
ERROR_RX = 2
COLLISION = 3

EXCHANGE_TIMEOUT_MS = 30
RX_GAIN_38DB = 0x50  # RFCfgReg: RxGain 101


def crc_a(data):
    """ISO/IEC 14443-3 CRC_A (init 0x6363, reflected 0x1021), low byte first."""
    crc = 0x6363
    for byte in data:
        byte ^= crc & 0xFF
        byte = (byte ^ (byte << 4)) & 0xFF
        crc = ((crc >> 8) ^ (byte << 8) ^ (byte << 3) ^ (byte >> 4)) & 0xFFFF
    return bytes((crc & 0xFF, crc >> 8))


class MFRC522:
    """An MFRC522 on SPI.  Call ``init()`` once, then ``read_uid()`` per poll."""

    def __init__(self, spi, cs, rst=None):
        self.spi = spi
        self.cs = cs
        self.rst = rst
        self.version = 0
        self._one = bytearray(2)
        self._two = bytearray(2)
        cs.value(1)

    # -- register access (data sheet section 8.1.2.3) ------------------------------
    def write_reg(self, reg, value):
        self._one[0] = (reg << 1) & 0x7E
        self._one[1] = value & 0xFF
        self.cs.value(0)
        try:
            self.spi.write(self._one)
        finally:
            self.cs.value(1)

    def write_fifo(self, data):
        buf = bytearray(((FIFO_DATA << 1) & 0x7E,))
        buf.extend(data)
        self.cs.value(0)
        try:
            self.spi.write(buf)
        finally:
            self.cs.value(1)

    def read_reg(self, reg):
        self._one[0] = 0x80 | ((reg << 1) & 0x7E)
        self._one[1] = 0
        self.cs.value(0)
        try:
            self.spi.write_readinto(self._one, self._two)
        finally:
            self.cs.value(1)
        return self._two[1]

    def read_fifo(self, count):
        if count <= 0:
            return b""
        address = 0x80 | ((FIFO_DATA << 1) & 0x7E)
        wbuf = bytearray(count + 1)
        for i in range(count):
            wbuf[i] = address
        rbuf = bytearray(count + 1)
        self.cs.value(0)
        try:
            self.spi.write_readinto(wbuf, rbuf)
        finally:
            self.cs.value(1)
        return bytes(rbuf[1:])

    def set_bits(self, reg, mask):
        self.write_reg(reg, self.read_reg(reg) | mask)

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
        # starts when our frame ends and stops at the tag's first bit, so reload 40
        # ticks = 1 ms is ten times a tag's frame delay time (86 us, ISO 14443-3).
        self.write_reg(T_MODE, 0x80)
        self.write_reg(T_PRESCALER, 0xA9)
        self.write_reg(T_RELOAD_H, 0x00)
        self.write_reg(T_RELOAD_L, 0x28)
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

    def alive(self):
        """True when VersionReg still reads as a chip (wiring check)."""
        return self.read_reg(VERSION) not in NO_CHIP_VERSIONS

    # -- Transceive (data sheet section 10.3.1.8) -------------------------------------
    def transceive(self, data, tx_last_bits=0, rx_align=0):
        """Send ``data`` to the tag and receive its answer.

        Returns (result, received bytes, valid bits in the last byte (0 = 8)).
        """
        framing = ((rx_align & 0x07) << 4) | (tx_last_bits & 0x07)
        self.write_reg(COMMAND, CMD_IDLE)
        self.write_reg(COM_IRQ, 0x7F)  # Set1 = 0: clear all interrupt bits
        self.write_reg(FIFO_LEVEL, FLUSH_BUFFER)
        self.write_fifo(data)
        self.write_reg(BIT_FRAMING, framing)
        self.write_reg(COMMAND, CMD_TRANSCEIVE)
        self.write_reg(BIT_FRAMING, framing | START_SEND)
        start = ticks_ms()
        while True:
            irq = self.read_reg(COM_IRQ)
            if irq & (IRQ_RX | IRQ_IDLE):
                break
            if irq & IRQ_TIMER:
                self.write_reg(COMMAND, CMD_IDLE)
                return TIMEOUT, b"", 0
            if ticks_diff(ticks_ms(), start) > EXCHANGE_TIMEOUT_MS:
                self.write_reg(COMMAND, CMD_IDLE)
                return TIMEOUT, b"", 0
        self.write_reg(BIT_FRAMING, framing)  # StartSend back to 0
        error = self.read_reg(ERROR)
        if error & ERR_BUFFER_OVFL:
            return ERROR_RX, b"", 0
        count = self.read_reg(FIFO_LEVEL) & 0x7F
        received = self.read_fifo(count)
        last_bits = self.read_reg(CONTROL) & 0x07
        if error & ERR_COLL:
            return COLLISION, received, last_bits
        if error & (ERR_PROTOCOL | ERR_PARITY):
            return ERROR_RX, received, last_bits
        if not received:
            return TIMEOUT, b"", 0
        return OK, received, last_bits

    # -- ISO/IEC 14443-3 type A ----------------------------------------------------------
    def request(self, command=WUPA):
        """REQA or WUPA (7-bit short frame); returns the ATQA or None.

        Several tags with different ATQAs collide; any answer means a tag is there.
        """
        self.clear_bits(COLL, COLL_VALUES_AFTER_COLL)
        result, data, _bits = self.transceive(bytes((command,)), tx_last_bits=7)
        if result == COLLISION:
            return b"\x00\x00"
        if result != OK or len(data) != 2:
            return None
        return data

    def _anticollision(self, sel):
        """ANTICOLLISION/SELECT for one cascade level: (CLn 4 bytes, SAK), MANY or None.

        A bit collision means several tags answered: MANY, and no tag is chosen (a
        reader that picked one would play a card the player may not have meant).
        """
        frame = bytearray((sel, 0x20))  # NVB 0x20: no UID bits known yet
        result, data, _bits = self.transceive(frame)
        if result == COLLISION:
            return MANY
        if result != OK or len(data) != 5:
            return None
        if data[0] ^ data[1] ^ data[2] ^ data[3] != data[4]:
            return None
        frame = bytearray((sel, NVB_SELECT))
        frame.extend(data)
        frame.extend(crc_a(frame))
        result, answer, bits = self.transceive(frame)
        if result != OK or len(answer) != 3 or bits != 0:
            return None
        if crc_a(answer[:1]) != answer[1:]:
            return None
        return bytes(data[:4]), answer[0]

    def select(self):
        """Select the tag in READY state: its full UID (4, 7 or 10 bytes), MANY or None."""
        uid = bytearray()
        for sel in (SEL_CL1, SEL_CL2, SEL_CL3):
            level = self._anticollision(sel)
            if level is None or level is MANY:
                return level
            part, sak = level
            if sak & SAK_CASCADE:
                if part[0] != CASCADE_TAG:
                    return None
                uid.extend(part[1:])
            else:
                uid.extend(part)
                return bytes(uid)
        return None

    def halt(self):
        """HLTA: the selected tag goes quiet until the next WUPA."""
        frame = bytearray((HLTA, 0x00))
        frame.extend(crc_a(frame))
        self.transceive(frame)  # a halted tag does not answer: TIMEOUT is success

    def read_uid(self):
        """One poll: wake the tags in the field, read the UID of the one there, halt it.

        Returns the UID bytes; MANY when several tags answered; None when no tag (or
        no complete read).  Every poll that woke a tag ends with HLTA: the selected
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
