"""The service loop's timer heap (``controller.table.timers``)."""

from __future__ import annotations

import pytest

from controller.table.timers import CallQueue, Timers


class Clock:
    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_due_entries_run_in_time_order_and_later_ones_wait() -> None:
    clock, ran = Clock(), []
    timers = Timers(clock)
    timers.schedule(102.0, lambda: ran.append("b"))
    timers.schedule(101.0, lambda: ran.append("a"))
    timers.after(5.0, lambda: ran.append("c"))
    assert timers.next_due() == 101.0 and not timers.due()
    clock.now = 102.0
    assert timers.due() and timers.run_due() == 2
    assert ran == ["a", "b"] and timers.next_due() == 105.0 and len(timers) == 1


def test_a_key_holds_one_entry_replaced_or_cancelled() -> None:
    clock, ran = Clock(), []
    timers = Timers(clock)
    timers.after(1.0, lambda: ran.append("first"), "deal")
    timers.after(3.0, lambda: ran.append("second"), "deal")  # replaces the first
    assert timers.pending("deal") and timers.when("deal") == 103.0
    clock.now = 102.0
    assert timers.run_due() == 0 and ran == []
    clock.now = 103.0
    assert timers.run_due() == 1 and ran == ["second"] and not timers.pending("deal")
    timers.after(1.0, lambda: ran.append("third"), "deal")
    timers.cancel("deal")
    clock.now = 200.0
    assert timers.run_due() == 0 and timers.next_due() is None and ran == ["second"]


def test_an_entry_a_callback_schedules_for_later_waits_for_the_next_pass() -> None:
    clock, ran = Clock(), []
    timers = Timers(clock)

    def again() -> None:
        ran.append(clock.now)
        timers.after(1.0, again, "ping")

    timers.schedule(float("-inf"), again, "ping")
    assert timers.run_due() == 1 and timers.run_due() == 0
    clock.now += 1.0
    assert timers.run_due() == 1 and ran == [100.0, 101.0]


def test_an_entry_sooner_than_every_pending_one_runs_once_due() -> None:
    """``run_due`` looks only at the clock when nothing is due: an entry scheduled
    sooner than the others (waking or riding, from a callback too) is still seen."""
    clock, ran = Clock(), []
    timers = Timers(clock)
    timers.after(10.0, lambda: ran.append("late"))
    clock.now = 105.0
    assert timers.run_due() == 0
    timers.schedule(104.0, lambda: ran.append("sooner"))
    assert timers.run_due() == 1 and ran == ["sooner"]
    timers.after(0.5, lambda: timers.after(0.25, lambda: ran.append("from a callback")))
    timers.after(2.0, lambda: ran.append("rider"), wake=False)
    clock.now = 105.5
    assert timers.run_due() == 1 and ran == ["sooner"]
    clock.now = 105.75
    assert timers.run_due() == 1 and ran == ["sooner", "from a callback"]
    clock.now = 107.0
    assert timers.run_due() == 1 and ran[-1] == "rider"
    timers.cancel("none")  # nothing to cancel: nothing changes
    clock.now = 110.0
    assert timers.run_due() == 1 and ran[-1] == "late" and len(timers) == 0


def test_another_clock_keeps_every_pending_delay() -> None:
    clock, ran = Clock(), []
    timers = Timers(clock)
    timers.after(2.0, lambda: ran.append("x"), "k")
    other = Clock(1000.0)
    timers.clock = other
    assert timers.when("k") == 1002.0 and timers.next_due() == 1002.0
    other.now = 1002.0
    assert timers.run_due() == 1 and ran == ["x"]


def test_a_failing_callback_is_logged_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock, ran = Clock(), []
    timers = Timers(clock)

    def failing() -> None:
        raise ZeroDivisionError

    timers.schedule(100.0, failing)
    timers.schedule(100.0, lambda: ran.append("after"))
    assert timers.run_due() == 2 and ran == ["after"]
    assert "falló un temporizador" in caplog.text


def test_calls_handed_over_run_once_in_order_and_a_failing_one_stops_nothing() -> None:
    calls, ran = CallQueue(), []

    def failing() -> None:
        raise ZeroDivisionError

    assert not calls
    calls.add(lambda: ran.append(1))
    calls.add(failing)
    calls.add(lambda: ran.append(3))
    assert calls
    calls.run()
    calls.run()
    assert ran == [1, 3] and not calls


def test_the_loops_wait_is_cut_short_by_the_first_live_entry() -> None:
    clock = Clock()
    timers = Timers(clock)
    assert timers.timeout(1.0) == 1.0  # nothing scheduled: the whole wait
    timers.after(0.25, lambda: None, "banner")
    timers.after(0.5, lambda: None, "deal")
    assert timers.timeout(1.0) == 0.25 and timers.timeout(0.1) == 0.1
    timers.cancel("banner")  # a cancelled entry does not end a wait
    assert timers.timeout(1.0) == 0.5
    clock.now += 2.0
    assert timers.timeout(1.0) == 0.0  # due: no wait at all


def test_an_entry_that_rides_bounds_no_wait_and_runs_on_the_next_turn_once_due() -> None:
    """``wake=False`` (the control folder's look): no wait is cut short for it; the first
    ``run_due`` once it is due runs it, in time order with the other entries due."""
    clock, ran = Clock(), []
    timers = Timers(clock)
    timers.after(0.05, lambda: ran.append("look"), "controls", wake=False)
    assert timers.timeout(1.0) == 1.0 and timers.next_due() is None
    assert timers.pending("controls") and len(timers) == 1
    assert timers.run_due() == 0 and ran == [] and not timers.due()
    timers.after(0.5, lambda: ran.append("deal"), "deal")
    assert timers.timeout(1.0) == 0.5  # only the entry that wakes bounds the wait
    clock.now += 0.1
    assert timers.due() and timers.timeout(1.0) == pytest.approx(0.4)  # due: bounds no wait
    clock.now += 1.9
    assert timers.run_due() == 2 and ran == ["look", "deal"] and not timers.pending("controls")


def test_a_key_replaced_across_riding_and_waking_holds_one_entry() -> None:
    clock, ran = Clock(), []
    timers = Timers(clock)
    timers.after(1.0, lambda: ran.append("woke"), "k")
    timers.after(2.0, lambda: ran.append("rode"), "k", wake=False)  # replaces the first
    assert timers.timeout(5.0) == 5.0  # the replaced entry no longer cuts a wait short
    clock.now += 1.5
    assert timers.run_due() == 0
    timers.after(0.1, lambda: ran.append("woke again"), "k")  # and back
    timers.cancel("k")
    other = Clock(1000.0)  # another clock keeps a rider's delay too
    timers.after(3.0, lambda: ran.append("after the clock"), wake=False)
    timers.clock = other
    other.now = 1002.9
    assert timers.run_due() == 0
    other.now = 1003.0
    assert timers.run_due() == 1 and ran == ["after the clock"] and len(timers) == 0


def test_quiet_is_never_true_when_run_due_would_run_an_entry() -> None:
    clock, ran = Clock(), []
    timers = Timers(clock)
    assert timers.quiet()  # nothing scheduled
    timers.after(1.0, lambda: ran.append("wakes"))
    timers.schedule(100.5, lambda: ran.append("rides"), wake=False)
    assert timers.quiet()
    clock.now = 100.5  # the rider is due
    assert not timers.quiet() and timers.run_due() == 1
    assert timers.quiet()
    clock.now = 101.0
    assert not timers.quiet() and timers.run_due() == 1
    assert timers.quiet() and ran == ["rides", "wakes"]
