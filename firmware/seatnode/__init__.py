"""Seat node firmware for truco-table (MicroPython on a Raspberry Pi Pico).

The modules in this package are plain Python so that the host's test suite can
import them with CPython; only ``seatnode.main`` touches ``machine``.
"""

FIRMWARE_VERSION = "0.7.0"
