"""Tag presence: arrivals confirmed by consecutive reads, leaves after grace, conflicts.

(The fixed scenarios, and every order of two and three tags through the simulated
reader, are in mpy/fw_checks.py, run on MicroPython and CPython.)  Here: properties
over random poll sequences, and the tick wrap-around.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from seatnode.compat import TICKS_PERIOD
from seatnode.mfrc522 import MANY
from seatnode.tags import TAGMANY, TAGOFF, TAGON, TagPresence

A = bytes.fromhex("04A224B2C55E80")
B = bytes.fromhex("04112233445566")

polls = st.lists(st.sampled_from([A, B, None, MANY]), max_size=80)


@settings(max_examples=300, deadline=None)
@given(polls)
def test_a_card_arrives_only_after_two_identical_reads_and_never_in_a_conflict(
    seen: list[object],
) -> None:
    tags = TagPresence(grace_ms=500, confirm=2)
    on_reader = None
    for i, result in enumerate(seen):
        for kind, uid in tags.update(result, i * 15):
            if kind == TAGON:
                assert seen[i] == uid and seen[i - 1] == uid and i >= 1
                assert on_reader is None
                on_reader = uid
            elif kind == TAGOFF:
                assert uid == on_reader
                on_reader = None
            else:
                assert kind == TAGMANY and seen[i] is MANY and seen[i - 1] is MANY
        assert tags.current == on_reader


def test_grace_across_tick_wraparound() -> None:
    tags = TagPresence(grace_ms=500, confirm=2)
    t0 = TICKS_PERIOD - 100
    assert tags.update(A, t0) == []
    assert tags.update(A, (t0 + 15) % TICKS_PERIOD) == [(TAGON, A)]
    assert tags.update(None, (t0 + 300) % TICKS_PERIOD) == []
    assert tags.update(None, (t0 + 515) % TICKS_PERIOD) == [(TAGOFF, A)]
