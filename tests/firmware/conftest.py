"""Firmware tests import the MicroPython modules from firmware/ (and tests/firmware/mpy) with
CPython."""

import sys
from pathlib import Path

FIRMWARE_DIR = Path(__file__).resolve().parents[2] / "firmware"
MPY_DIR = Path(__file__).resolve().parent / "mpy"  # what runs inside MicroPython too
for _path in (FIRMWARE_DIR, MPY_DIR):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))
