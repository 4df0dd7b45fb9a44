"""Button debounce and long press, with explicit millisecond timestamps.

(Short press, chatter, long press, wrap-around and the pad are checked in
mpy/fw_checks.py, on MicroPython and CPython.)"""

from __future__ import annotations

from fw_checks import _press as run
from seatnode.debounce import PRESS, Button


def test_bouncy_press_counts_once() -> None:
    b = Button("envido", debounce_ms=20, hold_ms=800)
    bounce_in = [(t, t % 10 == 0) for t in range(100, 120, 5)]
    held = [(t, True) for t in range(120, 300, 5)]
    bounce_out = [(t, t % 10 == 5) for t in range(300, 320, 5)]
    released = [(t, False) for t in range(320, 500, 5)]
    events = run(b, bounce_in + held + bounce_out + released)
    assert [e for _, e in events] == [PRESS]
