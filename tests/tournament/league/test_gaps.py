"""The league desk's watch on a venue table's seqs: which holes it asks for, when, and
when it gives one up (pure; the real bridge's resend is in test_bridge_brokers)."""

from __future__ import annotations

from controller.tournament.league.gaps import (
    GAP_WAIT_S,
    MAX_ASKS,
    RESEND_MAX,
    RETRY_S,
    Hole,
    SeqWatch,
)


def heard(watch: SeqWatch, seqs: range | list[int], now: float = 0.0) -> None:
    for seq in seqs:
        watch.heard("bar-a", "mesa01", seq, now)


def test_messages_in_order_leave_no_hole_and_duplicates_change_nothing() -> None:
    watch = SeqWatch()
    heard(watch, range(1, 50))
    heard(watch, [3, 49, 12])  # QoS 1 duplicates, a message given again
    assert watch.holes(100.0) == [] and watch.open_holes() == []


def test_a_hole_is_asked_for_once_it_is_old_then_again_only_after_a_while() -> None:
    watch = SeqWatch()
    heard(watch, [1, 2, 5, 6], now=10.0)
    assert watch.open_holes() == [Hole("bar-a", "mesa01", 3, 4)]
    assert watch.holes(10.0 + GAP_WAIT_S / 2) == []  # it may still be on its way
    assert watch.holes(10.0 + GAP_WAIT_S) == [Hole("bar-a", "mesa01", 3, 4)]
    assert watch.holes(10.0 + GAP_WAIT_S + 1) == []  # asked: the answer is given time
    assert watch.holes(10.0 + GAP_WAIT_S + RETRY_S) == [Hole("bar-a", "mesa01", 3, 4)]
    heard(watch, [4, 3], now=30.0)
    assert watch.open_holes() == [] and watch.holes(100.0) == []
    heard(watch, [7], now=100.0)
    assert watch.open_holes() == []


def test_a_live_status_shows_the_hole_at_the_end() -> None:
    watch = SeqWatch()
    heard(watch, range(1, 11), now=0.0)
    watch.said("bar-a", "mesa01", 10, 1.0)  # as far as we heard: nothing missing
    assert watch.holes(50.0) == []
    watch.said("bar-a", "mesa01", 14, 60.0)  # the table has journaled up to 14
    assert watch.holes(60.0) == []
    assert watch.holes(60.0 + GAP_WAIT_S) == [Hole("bar-a", "mesa01", 11, 14)]


def test_the_first_message_heard_starts_the_watch_and_a_status_first_too() -> None:
    watch = SeqWatch()
    heard(watch, [40, 41], now=0.0)  # a desk started late: nothing before 40 is asked for
    watch.said("bar-b", "mesa02", 7, 0.0)
    watch.heard("bar-b", "mesa02", 8, 0.0)
    assert watch.holes(100.0) == []


def test_a_big_hole_is_asked_for_in_pieces() -> None:
    watch = SeqWatch()
    heard(watch, [1, 2000], now=0.0)
    first = watch.holes(GAP_WAIT_S)
    assert first == [Hole("bar-a", "mesa01", 2, 1 + RESEND_MAX)]
    heard(watch, range(2, 2 + RESEND_MAX), now=5.0)  # the first piece came
    assert watch.holes(5.0 + GAP_WAIT_S) == [
        Hole("bar-a", "mesa01", 2 + RESEND_MAX, 1 + 2 * RESEND_MAX)
    ]


def test_a_hole_never_given_is_given_up_and_the_watch_goes_on() -> None:
    watch = SeqWatch()
    heard(watch, [1, 2, 9], now=0.0)
    now = GAP_WAIT_S
    for _ in range(MAX_ASKS):
        assert watch.holes(now) == [Hole("bar-a", "mesa01", 3, 8)]
        now += RETRY_S
    assert watch.holes(now) == []
    assert watch.given_up == [Hole("bar-a", "mesa01", 3, 8)]
    assert watch.open_holes() == []
    heard(watch, [10, 12], now=now)
    assert watch.open_holes() == [Hole("bar-a", "mesa01", 11, 11)]


def test_tables_are_watched_apart() -> None:
    watch = SeqWatch()
    watch.heard("bar-a", "mesa01", 1, 0.0)
    watch.heard("bar-b", "mesa01", 1, 0.0)
    watch.heard("bar-b", "mesa01", 3, 0.0)
    watch.heard("bar-a", "mesa01", 2, 0.0)
    assert watch.holes(GAP_WAIT_S) == [Hole("bar-b", "mesa01", 2, 2)]
