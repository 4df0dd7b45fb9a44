"""The seat's panel bus on an emulated Pico: I2C at 400 kHz against 4-wire SPI (SPI1).

The 2.42" SSD1309 module speaks I2C and 4-wire SPI.  This runs the firmware's own
``seatnode.panel.Panel`` on the emulated Pico (``tests/pico/seat-pico.mjs``: I2C0 at
400 kHz, each byte its 9 clocks; SPI1, each byte its 8 clocks at the rate MicroPython
set) from the REPL of a node started in maintenance mode, and times with
``time.ticks_us`` a full update (the whole screen: 8 pages x 128 columns, one window, as
the node writes a FULL update) and a typical one (a window of 2 pages x 48 columns, a
score's digits), over I2C and over SPI (the panel's writes go to SPI through a small
adapter: the control byte sets D/C, CS framing each transfer).  Prints one line::

    emulated=rp2040 i2c_khz=400 spi_mhz=... full_i2c_ms=... full_spi_ms=...
    typical_i2c_ms=... typical_spi_ms=... i2c_bytes=... spi_bytes=...

    python bench/panel_bus.py IMAGE.uf2 [--bootrom BOOTROM.mjs] [--spi-hz 8000000]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.pico import run  # noqa: E402

MEASURE = (
    "import time, machine\n"
    "from machine import Pin\n"
    "from seatnode.panel import Panel\n"
    "class SpiBus:\n"
    " def __init__(s, spi, dc, cs):\n"
    "  s.spi, s.dc, s.cs = spi, dc, cs\n"
    " def writeto(s, address, buf):\n"
    "  s.dc(1 if buf[0] == 0x40 else 0)\n"
    "  s.cs(0)\n"
    "  s.spi.write(memoryview(buf)[1:])\n"
    "  s.cs(1)\n"
    "def t(panel, p0, p1, c0, c1, n):\n"
    " data = bytes(range(256)) * 4\n"
    " best = 1 << 30\n"
    " for _ in range(n):\n"
    "  panel._forget()\n"
    "  a = time.ticks_us()\n"
    "  panel.window(p0, p1, c0, c1, 0, data[:(p1 - p0 + 1) * (c1 - c0 + 1)])\n"
    "  best = min(best, time.ticks_diff(time.ticks_us(), a))\n"
    " return best\n"
    "i2c = machine.I2C(0, sda=Pin(0), scl=Pin(1), freq=400000)\n"
    "spi = machine.SPI(1, baudrate=SPIHZ, sck=Pin(10), mosi=Pin(11))\n"
    "pi = Panel(i2c, 'ssd1309', 0x3C)\n"
    "ps = Panel(SpiBus(spi, Pin(12, Pin.OUT), Pin(13, Pin.OUT, value=1)), 'ssd1309', 0x3C)\n"
    "r = (t(pi, 0, 7, 0, 127, 3), t(ps, 0, 7, 0, 127, 3), t(pi, 2, 3, 40, 87, 5),"
    " t(ps, 2, 3, 40, 87, 5))\n"
    "print('BU' + 'S', spi, *r)\n"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("image", nargs="?", default=os.environ.get("TRUCO_SEAT_UF2"))
    parser.add_argument("--bootrom", default=os.environ.get("TRUCO_PICO_BOOTROM"))
    parser.add_argument("--spi-hz", type=int, default=8_000_000)
    args = parser.parse_args()
    if not args.image or not args.bootrom:
        raise SystemExit("panel_bus: give the image (or TRUCO_SEAT_UF2) and TRUCO_PICO_BOOTROM")
    code = MEASURE.replace("SPIHZ", str(args.spi_hz))
    steps: list[dict[str, object]] = [
        {"press": "mazo"},
        {"wait_line": "maintenance", "timeout_ms": 5000},
        {"release": "mazo"},
        {"after_ms": 300},
        {"send": f"exec({code!r})\r"},
        {"wait_line": "BUS ", "timeout_ms": 20000},
    ]
    lines = run(args.bootrom, args.image, steps, wall_s=900)
    said = next(x for x in lines if x.startswith("L ") and " BUS " in x).split()
    end = lines[-1].split()
    full_i2c, full_spi, typical_i2c, typical_spi = (int(v) / 1000 for v in said[-4:])
    baud = next((w for w in said if w.startswith("baudrate=")), "baudrate=0").rstrip(",")
    figures = {
        "emulated": "rp2040",
        "i2c_khz": "400",
        "spi_mhz": f"{int(baud.split('=')[1]) / 1e6:.2f}",
        "full_i2c_ms": f"{full_i2c:.1f}",
        "full_spi_ms": f"{full_spi:.1f}",
        "typical_i2c_ms": f"{typical_i2c:.2f}",
        "typical_spi_ms": f"{typical_spi:.2f}",
        "i2c_bytes": next(w.split("=")[1] for w in end if w.startswith("i2c_bytes=")),
        "spi_bytes": next(w.split("=")[1] for w in end if w.startswith("spi1_bytes=")),
    }
    print(" ".join(f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
