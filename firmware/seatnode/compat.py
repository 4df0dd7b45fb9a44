"""Tick arithmetic that behaves the same on MicroPython and CPython.

MicroPython's ``time.ticks_ms()`` wraps around (every 2**30 ms on the RP2040,
whose small integers have 31 bits; every 2**62 ms on the 64-bit unix port);
all timing code in the firmware compares ticks with ``ticks_diff`` so that the
wrap is harmless.  Under CPython (the host's tests) the same functions are
emulated with the RP2040's period, so wrap-around can be tested on the host.
``TICKS_PERIOD`` is the period of the interpreter running.
"""

TICKS_PERIOD = 1 << 30
_TICKS_MAX = TICKS_PERIOD - 1
_TICKS_HALF = TICKS_PERIOD // 2

try:
    from sys import print_exception  # MicroPython
except ImportError:  # CPython
    import traceback as _traceback

    def print_exception(error, file=None):
        _traceback.print_exception(type(error), error, error.__traceback__, file=file)


try:  # MicroPython: the compiler folds ``NAME = const(value)`` into the code
    from micropython import const
except ImportError:  # CPython: the value itself

    def const(value):
        return value


try:
    from time import sleep_ms, ticks_add, ticks_diff, ticks_ms  # MicroPython

    TICKS_PERIOD = ticks_add(0, -1) + 1
except ImportError:  # CPython: emulate with the same wrap-around period
    import time as _time

    def ticks_ms():
        return int(_time.monotonic() * 1000) & _TICKS_MAX

    def ticks_add(ticks, delta):
        return (ticks + delta) & _TICKS_MAX

    def ticks_diff(ticks1, ticks2):
        diff = (ticks1 - ticks2) & _TICKS_MAX
        if diff >= _TICKS_HALF:
            diff -= TICKS_PERIOD
        return diff

    def sleep_ms(ms):
        _time.sleep(ms / 1000)


try:  # MicroPython: ``@micropython.native`` is read by its compiler, never called
    import micropython
except ImportError:  # CPython: the decorator leaves the function as it is

    class micropython:  # stands in for the module of that name
        @staticmethod
        def native(function):
            return function
