"""A simulated MFRC522 on SPI, with ISO/IEC 14443-3 type A tags in its field.

Models what the driver relies on: SPI register access (address byte
``0x80 | reg << 1`` for reads, ``reg << 1`` for writes, burst FIFO access), the
FIFO, ComIrqReg set/clear semantics, the Transceive command started by
StartSend with TxLastBits/RxAlign bit framing, CollReg/ErrorReg on bit
collisions (bits after a collision read as 0, CollPos counted from bit 0 of the
first FIFO byte), and tags with the IDLE/READY/ACTIVE/HALT states, cascade
levels, BCC and CRC_A.

The mock table's two-seat GPIO wiring reads its cards through it (``SimSpiDev``, a
spidev ``SpiDev`` look-alike, under the Pi's own ``controller.hal.spi_reader``); the
firmware tests drive the seat node's MicroPython driver against the same chip.
"""

from __future__ import annotations

import threading

from .mfrc522_chip import SimMFRC522, SimTag

__all__ = ["SimMFRC522", "SimSpiDev", "SimTag"]


class SimSpiDev:
    """The simulated chip as a spidev ``SpiDev``: ``xfer2`` drives CS around the frame.

    The chip decides read/write by bit 7 of the first byte (``0x80 | reg << 1`` reads,
    then one address byte per data byte; ``reg << 1`` writes the bytes that follow),
    exactly as the real one does. ``lock`` guards the chip for callers that change it
    while a reader thread polls; ``error`` makes every transfer raise it; ``frames``
    records the bytes sent (MOSI).
    """

    def __init__(self, chip: SimMFRC522) -> None:
        self.chip = chip
        self.lock = threading.RLock()
        self.error: Exception | None = None
        self.frames: list[bytes] = []
        self.closed = False

    def xfer2(self, data: list[int]) -> list[int]:
        with self.lock:
            if self.error is not None:
                raise self.error
            if not all(0 <= b <= 0xFF for b in data):
                raise ValueError("SPI bytes are 0..255")
            self.frames.append(bytes(data))
            chip = self.chip
            chip.cs.value(0)
            try:
                if data[0] & 0x80:
                    rbuf = bytearray(len(data))
                    chip.write_readinto(bytes(data), rbuf)
                    return list(rbuf)
                chip.write(bytes(data))
                return [0] * len(data)
            finally:
                chip.cs.value(1)

    def put(self, *tags: SimTag) -> None:
        """Lay these tags on the reader (and nothing else)."""
        with self.lock:
            self.chip.tags = list(tags)

    def close(self) -> None:
        self.closed = True
