"""Button debounce and long press, with explicit millisecond timestamps.

(Short press, chatter, long press, wrap-around and the pad are checked in
mpy/fw_checks.py, on MicroPython and CPython.)"""

from __future__ import annotations

from fw_checks import _press as run
from seatnode.debounce import PRESS, Button, ButtonPad


def test_bouncy_press_counts_once() -> None:
    b = Button("envido", debounce_ms=20, hold_ms=800)
    bounce_in = [(t, t % 10 == 0) for t in range(100, 120, 5)]
    held = [(t, True) for t in range(120, 300, 5)]
    bounce_out = [(t, t % 10 == 5) for t in range(300, 320, 5)]
    released = [(t, False) for t in range(320, 500, 5)]
    events = run(b, bounce_in + held + bounce_out + released)
    assert [e for _, e in events] == [PRESS]


def test_the_pad_says_while_a_contact_settles() -> None:
    """Firmware 0.6.1: from the first sample of a change until its debounce time is over
    (the press's, or the release's that makes the PRESS), ``settling`` is True; the
    node's loop keeps its passes short meanwhile (seatnode.main)."""
    pad = ButtonPad(["truco", "envido"], debounce_ms=20, hold_ms=800)
    up, down = [False, False], [True, False]
    assert pad.update(up, 0) == [] and not pad.settling
    for now in range(5, 25, 5):  # pressed at 5: settles until 25
        assert pad.update(down, now) == [] and pad.settling, now
    assert pad.update(down, 25) == [] and not pad.settling  # down, debounced
    assert pad.update(down, 100) == [] and not pad.settling
    for now in range(105, 125, 5):  # let go at 105
        assert pad.update(up, now) == [] and pad.settling, now
    assert pad.update(up, 125) == [(PRESS, "truco")] and not pad.settling
    # a chatter shorter than the debounce time: settling while it lasts, then nothing
    assert pad.update(down, 200) == [] and pad.settling
    assert pad.update(up, 205) == [] and not pad.settling
