"""The MFRC522 chip simulated on SPI, with ISO/IEC 14443-3 type A tags in its field: one
source for the mock table (:mod:`.mock_mfrc522` puts it behind a spidev look-alike) and
for the seat-node firmware's tests on a real MicroPython (``tests/firmware/fake_mfrc522``
loads this file there, with ``controller/hal`` on ``MICROPYPATH``).

Models what the driver relies on: SPI register access (address byte
``0x80 | reg << 1`` for reads, ``reg << 1`` for writes, burst FIFO access), the
FIFO, ComIrqReg set/clear semantics, the Transceive command started by
StartSend with TxLastBits/RxAlign bit framing, CollReg/ErrorReg on bit
collisions (bits after a collision read as 0, CollPos counted from bit 0 of the
first FIFO byte), and tags with the IDLE/READY/ACTIVE/HALT states, cascade
levels, BCC and CRC_A.

The receiver (data sheet 9.3.3.6 RFCfgReg, 9.3.3.3 RxThresholdReg): each tag has a
``strength``, its answer's amplitude at the antenna relative to a card lying on the
reader (1.0; a card on top of another or at the reader's edge is fainter, one in a
hand above the reader fainter still). RxGain (RFCfgReg bits 6-4: 18 to 48 dB) scales
it; an answer below the decoder's MinLevel is not heard at all; of the answers
heard, one weaker than the strongest by more than CollLevel (RxThresholdReg bits 2-0,
as a fraction of 8) does not make a bit collision: its bits vanish under the stronger
card's Manchester half-bits and the stronger card reads cleanly, as if alone. So a
faint second card is only found by asking again once the first is halted (REQA after
HLTA), and a lower gain keeps a card held above the reader out of range.

Plain enough for MicroPython (no ``__future__`` import; annotations are not evaluated
there), so it imports nothing of the package but CRC_A.
"""

import sys

if sys.implementation.name == "micropython":  # loaded from MICROPYPATH: the firmware's
    from seatnode.mfrc522 import crc_a
else:  # CPython: the package's own
    from .spi_reader import crc_a

COMMAND, COM_IRQ, ERROR, FIFO_DATA, FIFO_LEVEL, CONTROL, BIT_FRAMING, COLL = (
    0x01, 0x04, 0x06, 0x09, 0x0A, 0x0C, 0x0D, 0x0E,
)  # fmt: skip
TX_CONTROL, RX_THRESHOLD, RF_CFG, VERSION = 0x14, 0x18, 0x26, 0x37
# RxGain codes (RFCfgReg bits 6-4) in dB, data sheet table 98.
RX_GAIN_DB = (18, 23, 18, 23, 33, 38, 43, 48)
# The amplitude (strength x gain, relative to 48 dB) the decoder needs at MinLevel 8
# (RxThresholdReg's reset value): a card on the reader (1.0) is heard at every gain,
# 0.1 only at 43 dB and more.
HEARD_AT_MIN_LEVEL_8 = 0.03
SEL_CODES = (0x93, 0x95, 0x97)


def to_bits(data: bytes, last_bits: int = 0) -> list[int]:
    bits = [(byte >> i) & 1 for byte in data for i in range(8)]
    if last_bits:
        bits = bits[: len(bits) - 8 + last_bits]
    return bits


def from_bits(bits: list[int]) -> bytes:
    out = bytearray((len(bits) + 7) // 8)
    for i, bit in enumerate(bits):
        out[i // 8] |= bit << (i % 8)
    return bytes(out)


class SimTag:
    """An ISO 14443-3A tag with a 4-, 7- or 10-byte UID (NTAG213: 7 bytes, SAK 0x00)."""

    def __init__(
        self, uid: bytes, atqa: bytes = b"\x44\x00", sak: int = 0x00, strength: float = 1.0
    ) -> None:
        assert len(uid) in (4, 7, 10)
        self.uid = bytes(uid)
        self.strength = strength
        self.atqa = atqa
        self.sak = sak
        if len(uid) == 4:
            self.levels = [uid]
        elif len(uid) == 7:
            self.levels = [b"\x88" + uid[:3], uid[3:]]
        else:
            self.levels = [b"\x88" + uid[:3], b"\x88" + uid[3:6], uid[6:]]
        self.state = "IDLE"
        self.level = 0
        self.halted = False

    def cl_bytes(self, level: int) -> bytes:
        cl = self.levels[level]
        return cl + bytes((cl[0] ^ cl[1] ^ cl[2] ^ cl[3],))

    def answer(self, bits: list[int]) -> list[int] | None:
        """React to one reader frame; return the answer's bits or None (silent)."""
        if len(bits) == 7:
            command = from_bits(bits)[0]
            wake = command == 0x52 and self.state in ("IDLE", "HALT")
            request = command == 0x26 and self.state == "IDLE"
            if wake or request:
                self.state, self.level = "READY", 0
                return to_bits(self.atqa)
            self._fall_back()
            return None
        if len(bits) % 8 and len(bits) < 16:
            self._fall_back()
            return None
        head = from_bits(bits[:16])
        if self.state == "READY" and head[0] == SEL_CODES[self.level]:
            nvb = head[1]
            cl_bits = to_bits(self.cl_bytes(self.level))
            if nvb == 0x70:
                frame = from_bits(bits)
                if len(frame) != 9 or frame[2:7] != self.cl_bytes(self.level):
                    return None
                if crc_a(frame[:7]) != frame[7:]:
                    return None
                last = self.level == len(self.levels) - 1
                sak = self.sak if last else 0x04
                if last:
                    self.state = "ACTIVE"
                else:
                    self.level += 1
                return to_bits(bytes((sak,)) + crc_a(bytes((sak,))))
            known = ((nvb >> 4) - 2) * 8 + (nvb & 0x0F)
            if known < 0 or known > 32 or len(bits) != 16 + known:
                self._fall_back()
                return None
            if bits[16:] != cl_bits[:known]:
                return None  # not this tag: it keeps quiet
            return cl_bits[known:]
        if self.state == "ACTIVE":
            frame = from_bits(bits)
            if frame == b"\x50\x00" + crc_a(b"\x50\x00"):
                self.state, self.halted = "HALT", True
                return None
        self._fall_back()
        return None

    def _fall_back(self) -> None:
        self.state = "HALT" if self.halted else "IDLE"


class FakePin:
    """Stands in for machine.Pin (output side) as the driver's CS/RST."""

    def __init__(self, value: int = 1) -> None:
        self._value = value

    def value(self, v: int | None = None) -> int:
        if v is not None:
            self._value = 1 if v else 0
        return self._value


class SimMFRC522:
    """The chip, seen through SPI: pass it as ``spi`` with ``sim.cs`` as ``cs``."""

    def __init__(self, tags: list[SimTag] | None = None, version: int = 0x92) -> None:
        self.tags: list[SimTag] = list(tags or [])
        self.version = version
        self.cs = FakePin(1)
        self.regs = bytearray(64)
        self.fifo: list[int] = []
        self.command = 0
        self.transceives = 0
        self.corrupt_next_answer = False
        # Nothing on the bus: every read gives the idle level of MISO, 0x00 held low
        # or 0xFF floating high (what a missing or miswired reader looks like).
        self.dead = version in (0x00, 0xFF)
        self.bus_idle = version if self.dead else 0x00
        self._soft_reset()

    def _soft_reset(self) -> None:
        self.regs = bytearray(64)
        self.regs[TX_CONTROL] = 0x80
        self.regs[COLL] = 0x80
        self.regs[RX_THRESHOLD] = 0x84  # MinLevel 8, CollLevel 4
        self.regs[RF_CFG] = 0x48  # RxGain 33 dB
        self.regs[VERSION] = self.version
        self.fifo = []
        self.command = 0

    # -- SPI (machine.SPI interface) -------------------------------------------------
    def write(self, buf: bytes) -> None:
        assert self.cs.value() == 0, "SPI transfer with CS high"
        if self.dead or buf[0] & 0x80:
            return
        reg = (buf[0] >> 1) & 0x3F
        for value in buf[1:]:
            self.write_register(reg, value)

    def write_readinto(self, wbuf: bytes, rbuf: bytearray) -> None:
        assert self.cs.value() == 0, "SPI transfer with CS high"
        assert len(wbuf) == len(rbuf)
        rbuf[0] = 0
        for i in range(1, len(wbuf)):
            address = wbuf[i - 1]
            rbuf[i] = self.bus_idle if self.dead else self.read_register((address >> 1) & 0x3F)

    # -- registers --------------------------------------------------------------------
    def read_register(self, reg: int) -> int:
        if reg == FIFO_DATA:
            return self.fifo.pop(0) if self.fifo else 0
        if reg == FIFO_LEVEL:
            return len(self.fifo)
        return self.regs[reg]

    def write_register(self, reg: int, value: int) -> None:
        if reg == COMMAND:
            command = value & 0x0F
            if command == 0x0F:
                self._soft_reset()
                return
            self.command = command
            self.regs[COMMAND] = value & 0x3F
        elif reg == COM_IRQ:
            if value & 0x80:
                self.regs[COM_IRQ] |= value & 0x7F
            else:
                self.regs[COM_IRQ] &= ~value & 0x7F
        elif reg == FIFO_LEVEL:
            if value & 0x80:
                self.fifo = []
        elif reg == FIFO_DATA:
            self.fifo.append(value)
        elif reg == BIT_FRAMING:
            self.regs[BIT_FRAMING] = value & 0x7F
            if value & 0x80 and self.command == 0x0C:
                self._transceive()
        else:
            self.regs[reg] = value

    def _transceive(self) -> None:
        self.transceives += 1
        framing = self.regs[BIT_FRAMING]
        tx_last_bits = framing & 0x07
        rx_align = (framing >> 4) & 0x07
        bits = to_bits(bytes(self.fifo), tx_last_bits)
        self.fifo = []
        self.regs[ERROR] = 0
        antenna_on = self.regs[TX_CONTROL] & 0x03 == 0x03
        tags = self.tags if antenna_on else []
        gain = 10 ** ((RX_GAIN_DB[(self.regs[RF_CFG] >> 4) & 7] - 48) / 20)
        threshold = self.regs[RX_THRESHOLD]
        heard_at = HEARD_AT_MIN_LEVEL_8 * max(1, threshold >> 4) / 8
        coll_ratio = max(1, threshold & 0x07) / 8
        loud = []  # (amplitude, answer) of the tags the decoder hears
        for tag in tags:
            answer = tag.answer(bits)  # every tag hears the reader (its field is strong)
            amplitude = tag.strength * gain
            if answer is not None and amplitude >= heard_at:
                loud.append((amplitude, answer))
        strongest = max((amplitude for amplitude, _ in loud), default=0.0)
        answers = [answer for amplitude, answer in loud if amplitude >= strongest * coll_ratio]
        if not answers:
            self.regs[COM_IRQ] |= 0x01  # TimerIRq: nobody answered
            return
        length = max(len(a) for a in answers)
        received: list[int] = []
        collision = None
        for i in range(length):
            values = {a[i] for a in answers if i < len(a)}
            if collision is None and len(values) > 1:
                collision = i
            received.append(0 if collision is not None else values.pop())
        if self.corrupt_next_answer:
            self.corrupt_next_answer = False
            received[-1] ^= 1
        positions = [0] * rx_align + received
        data = from_bits(positions)
        self.fifo = list(data)
        self.regs[CONTROL] = len(positions) % 8
        if collision is not None:
            self.regs[ERROR] |= 0x08
            position = rx_align + collision + 1
            keep = self.regs[COLL] & 0x80
            self.regs[COLL] = keep | (0x20 if position > 32 else position % 32)
        self.regs[COM_IRQ] |= 0x20  # RxIRq
