"""Button debounce and long press, with explicit millisecond timestamps."""

from __future__ import annotations

from seatnode.compat import TICKS_PERIOD
from seatnode.debounce import HOLD, PRESS, Button, ButtonPad


def run(button: Button, samples: list[tuple[int, bool]]) -> list[tuple[int, str]]:
    events = []
    for now, raw in samples:
        event = button.update(raw, now)
        if event is not None:
            events.append((now, event))
    return events


def test_short_press_reports_press_on_release() -> None:
    b = Button("truco", debounce_ms=20, hold_ms=800)
    samples = [(t, 100 <= t < 300) for t in range(0, 400, 5)]
    assert run(b, samples) == [(320, PRESS)]


def test_chatter_shorter_than_debounce_is_ignored() -> None:
    b = Button("truco", debounce_ms=20, hold_ms=800)
    # Contact bounces every 5 ms for 15 ms, then stays open.
    samples = [(t, (t // 5) % 2 == 1) for t in range(0, 15, 5)]
    samples += [(t, False) for t in range(15, 200, 5)]
    assert run(b, samples) == []


def test_bouncy_press_counts_once() -> None:
    b = Button("envido", debounce_ms=20, hold_ms=800)
    bounce_in = [(t, t % 10 == 0) for t in range(100, 120, 5)]
    held = [(t, True) for t in range(120, 300, 5)]
    bounce_out = [(t, t % 10 == 5) for t in range(300, 320, 5)]
    released = [(t, False) for t in range(320, 500, 5)]
    events = run(b, bounce_in + held + bounce_out + released)
    assert [e for _, e in events] == [PRESS]


def test_long_press_reports_hold_once_and_nothing_on_release() -> None:
    b = Button("mazo", debounce_ms=20, hold_ms=800)
    samples = [(t, 0 <= t < 2000) for t in range(0, 2500, 10)]
    assert run(b, samples) == [(800, HOLD)]


def test_works_across_tick_wraparound() -> None:
    b = Button("flor", debounce_ms=20, hold_ms=800)
    start = TICKS_PERIOD - 400
    samples = []
    for i in range(0, 1500, 10):
        samples.append(((start + i) % TICKS_PERIOD, i < 1000))
    assert run(b, samples) == [((start + 800) % TICKS_PERIOD, HOLD)]


def test_pad_reports_names() -> None:
    pad = ButtonPad(("truco", "quiero"), debounce_ms=20, hold_ms=800)
    events = []
    for t in range(0, 400, 10):
        events += pad.update([False, 50 <= t < 150], t)
    assert events == [(PRESS, "quiero")]
