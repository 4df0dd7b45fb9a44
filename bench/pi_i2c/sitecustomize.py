"""The Pi's I2C for ``bench/table.py --topology pi``, in the service's own process.

Put on the service's ``PYTHONPATH`` by the bench (Python imports ``sitecustomize`` at
start-up), on a machine with no ``/dev/i2c-N``: the panels behind the multiplexer are
opened by the service's own code (``OledDisplay``: ``mux_bus`` finds each channel's bus
by its name under a sysfs folder the bench made, luma's ``i2c(port=N)`` opens it with
smbus2), and only smbus2's ``SMBus`` is replaced: a transfer's messages are made as
smbus2 makes them and counted (address and control byte included) instead of handed to
the kernel's ``ioctl``. The totals go into the file ``TRUCO_BENCH_I2C`` names, one
8-byte counter a seat's bus (mapped: the bench reads it while the service runs).
"""

from __future__ import annotations

import mmap
import os
import struct
from pathlib import Path
from typing import Any

_path = os.environ.get("TRUCO_BENCH_I2C")
_sysfs = os.environ.get("TRUCO_BENCH_I2C_SYSFS")

if _path and _sysfs:
    import smbus2

    import controller.hal.display as _display

    _fd = os.open(_path, os.O_RDWR)
    _counts = mmap.mmap(_fd, 0)
    _base = int(os.environ.get("TRUCO_BENCH_I2C_BASE", "10"))

    class _CountingSMBus:
        """smbus2's ``SMBus(port)`` on a bus of the bench's: bytes counted."""

        def __init__(self, bus: int | str | None = None, force: bool = False) -> None:
            self.slot = (int(bus) - _base) * 8 if bus is not None else 0
            self.fd = None

        def _add(self, count: int) -> None:
            (total,) = struct.unpack_from("<Q", _counts, self.slot)
            struct.pack_into("<Q", _counts, self.slot, total + count)

        def write_i2c_block_data(self, address: int, register: int, data: Any) -> None:
            self._add(2 + len(data))

        def i2c_rdwr(self, *messages: Any) -> None:
            self._add(sum(1 + int(message.len) for message in messages))

        def close(self) -> None:
            pass

    smbus2.SMBus = _CountingSMBus  # type: ignore[misc, assignment]
    _display.mux_bus.__defaults__ = (Path(_sysfs),)
