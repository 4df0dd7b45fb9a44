"""The simulated MFRC522 for the firmware's tests, under CPython and under a real
MicroPython: one source, ``controller/hal/mfrc522_chip.py`` (the mock table's chip too),
loaded from the package, or from ``MICROPYPATH`` in a MicroPython process (the stand-in
``machine`` module, tests/firmware/mpy/machine.py, puts it on the SPI bus of the node's
firmware there)."""

import sys

if sys.implementation.name == "micropython":  # controller/hal is on MICROPYPATH
    from mfrc522_chip import *  # type: ignore[import-not-found]  # noqa: F403
else:  # CPython: the package's chip
    from controller.hal.mfrc522_chip import *  # noqa: F403
