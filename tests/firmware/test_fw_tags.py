"""Tag presence: one arrival per card lying on the reader, leave after grace."""

from __future__ import annotations

from seatnode.compat import TICKS_PERIOD
from seatnode.tags import TAGOFF, TAGON, TagPresence

A = bytes.fromhex("04A224B2C55E80")
B = bytes.fromhex("04112233445566")


def test_card_lying_still_with_missed_polls_is_one_arrival() -> None:
    tags = TagPresence(grace_ms=500)
    events = []
    for t in range(0, 5000, 60):
        seen = A if (t // 60) % 4 != 3 else None  # every 4th poll misses it
        events += [(t, e) for e in tags.update(seen, t)]
    assert events == [(0, (TAGON, A))]
    assert tags.current == A


def test_leaves_after_grace_period() -> None:
    tags = TagPresence(grace_ms=500)
    assert tags.update(A, 0) == [(TAGON, A)]
    assert tags.update(None, 400) == []
    assert tags.update(None, 499) == []
    assert tags.update(None, 500) == [(TAGOFF, A)]
    assert tags.update(None, 600) == []
    assert tags.current is None


def test_swapping_cards_ends_the_old_one_at_once() -> None:
    tags = TagPresence(grace_ms=500)
    tags.update(A, 0)
    assert tags.update(B, 60) == [(TAGOFF, A), (TAGON, B)]


def test_grace_across_tick_wraparound() -> None:
    tags = TagPresence(grace_ms=500)
    t0 = TICKS_PERIOD - 100
    assert tags.update(A, t0) == [(TAGON, A)]
    assert tags.update(None, (t0 + 300) % TICKS_PERIOD) == []
    assert tags.update(None, (t0 + 500) % TICKS_PERIOD) == [(TAGOFF, A)]
