"""Bytes on the I2C bus: luma's full-frame display() vs the changed-bytes DisplayWriter.

Plays score changes of a 30-point game on six seat panels (seats 0/2/4 see team A
as "nosotros", seats 1/3/5 team B) and reports bus bytes and modelled time at
400 kHz and 1 MHz (9 clock bits per byte).  The luma baseline is measured by
running luma's own ``ssd1306``/``sh1106`` ``display()`` over a fake SMBus.

    .venv/bin/python bench/display_writer_bytes.py [--seed N] [--sh1106] [--managed]
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass, field
from typing import Any

from luma.core.interface.serial import i2c
from luma.oled.device import sh1106, ssd1306

from controller.hal.display_bus import writer_for_device
from controller.hal.display_planner import BusModel
from controller.render.matchsticks import render_scoreboard_image

SEATS = 6
TARGET = 30
MUX_SELECT_BYTES = 2  # TCA9548A: address byte + channel mask, once per panel switch


@dataclass
class CountingBus:
    """An SMBus stand-in that only counts what would go over the wire."""

    bytes: int = 0
    transfers: int = 0
    log: list[int] = field(default_factory=list)

    def write_i2c_block_data(self, address: int, register: int, data: list[int]) -> None:
        self.bytes += 2 + len(data)
        self.transfers += 1

    def i2c_rdwr(self, *messages: Any) -> None:
        for _address, buf in messages:
            self.bytes += 1 + len(buf)
            self.transfers += 1


def make_device(kind: str, bus: CountingBus, managed: bool) -> Any:
    serial = i2c(bus=bus)
    if managed:  # like i2c(port=1): smbus2 i2c_rdwr messages of up to 4096 bytes
        serial._managed = True
        serial._i2c_msg_write = lambda address, buf: (address, buf)
    return (sh1106 if kind == "sh1106" else ssd1306)(serial)


def game(seed: int) -> list[tuple[int, int]]:
    """Scores after each award until a team reaches the target."""
    rnd = random.Random(seed)
    a = b = 0
    scores = []
    while a < TARGET and b < TARGET:
        points = rnd.choice([1, 1, 1, 2, 2, 3, 4])
        if rnd.random() < 0.5:
            a += points
        else:
            b += points
        scores.append((a, b))
    return scores


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sh1106", action="store_true")
    parser.add_argument("--managed", action="store_true", help="4096-byte i2c_rdwr blocks")
    args = parser.parse_args(argv)
    kind = "sh1106" if args.sh1106 else "ssd1306"
    scores = game(args.seed)

    luma_bus, writer_bus = CountingBus(), CountingBus()
    luma_devices = [make_device(kind, luma_bus, args.managed) for _ in range(SEATS)]
    writer_devices = [make_device(kind, writer_bus, args.managed) for _ in range(SEATS)]
    writers = [writer_for_device(device) for device in writer_devices]
    luma_bus.bytes = writer_bus.bytes = 0  # leave out the init sequences

    def frames(a: int, b: int) -> list[Any]:
        return [
            render_scoreboard_image(a, b, TARGET) if seat % 2 == 0
            else render_scoreboard_image(b, a, TARGET)
            for seat in range(SEATS)
        ]  # fmt: skip

    # first screen: both send everything
    for device, writer, frame in zip(luma_devices, writers, frames(0, 0), strict=True):
        device.display(frame)
        writer.update(frame)
    first_luma, first_writer = luma_bus.bytes, writer_bus.bytes
    luma_bus.bytes = writer_bus.bytes = 0

    for a, b in scores:
        for device, writer, frame in zip(luma_devices, writers, frames(a, b), strict=True):
            device.display(frame)
            writer.update(frame)
    changes = len(scores)
    mux = MUX_SELECT_BYTES * SEATS  # per round, both ways

    block = "4096 (i2c_rdwr)" if args.managed else "32 (SMBus)"
    print(f"{kind}, six panels on one I2C bus, data blocks of {block}; seed {args.seed}")
    print(f"game: {changes} score changes, final {scores[-1][0]}-{scores[-1][1]}")
    print(f"first screen, six panels: luma {first_luma} B, writer {first_writer} B")
    per_luma = luma_bus.bytes / changes + mux
    per_writer = writer_bus.bytes / changes + mux
    print(f"{'per score change, six panels':34} {'bytes':>8} {'400 kHz':>10} {'1 MHz':>10}")
    for name, count in (("luma display() (full frames)", per_luma), ("DisplayWriter", per_writer)):
        ms400 = BusModel.i2c().seconds(int(count), 400e3) * 1e3
        ms1m = BusModel.i2c().seconds(int(count), 1e6) * 1e3
        print(f"{name:34} {count:8.0f} {ms400:8.2f} ms {ms1m:8.2f} ms")
    print(f"(includes {mux} B of multiplexer channel selects per round)")
    print(f"ratio: {per_writer / per_luma:.1%} of the bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
