"""The collector's passes on the table's quiet turns (``controller.table.collector``)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.engine import HouseRules
from controller.table.collector import QUIET_S, SAFETY_THRESHOLD, QuietCollector
from controller.table.controls import Button
from controller.table.mock_table import MockTable
from controller.table.timers import Timers
from tests.helpers import Clock, cards


@pytest.fixture
def threshold() -> Iterator[None]:
    """``enable`` sets the process's collector threshold: put back after the test."""
    saved = gc.get_threshold()
    try:
        yield
    finally:
        gc.set_threshold(*saved)


def collector_on(
    clock: Clock, played: Callable[[], int] = lambda: 0
) -> tuple[QuietCollector, Timers]:
    """An enabled collector on ``clock``; ``played()``: the players' events handled so far
    (none by default)."""
    timers = Timers(clock)
    collector = QuietCollector(timers, played)
    collector.enable()
    return collector, timers


def test_enable_raises_the_young_threshold_only(threshold: None) -> None:
    gc.set_threshold(700, 10, 10)
    collector_on(Clock())
    assert gc.get_threshold() == (SAFETY_THRESHOLD, 10, 10)


def test_a_collector_not_enabled_waits_for_nothing() -> None:
    clock = Clock()
    timers = Timers(clock)
    collector = QuietCollector(timers, lambda: 0)
    collector.arm()
    clock.now += 10 * QUIET_S
    timers.run_due()
    assert not collector.due and len(timers) == 0


def test_the_pass_comes_once_the_table_is_quiet(
    threshold: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[int] = []
    monkeypatch.setattr(gc, "collect", made.append)
    monkeypatch.setattr(gc, "get_count", lambda: (300, 2, 1))
    clock = Clock()
    collector, timers = collector_on(clock)
    collector.arm()
    collector.arm()  # one wait, however many redraws
    assert len(timers) == 1
    clock.now += QUIET_S * 0.8
    timers.run_due()
    assert not collector.due
    clock.now += QUIET_S * 0.3
    timers.run_due()
    assert collector.due
    collector.collect()
    assert made == [0] and collector.passes == [1, 0, 0]
    assert not collector.due and len(timers) == 0
    collector.arm()  # the next play: the next wait
    assert len(timers) == 1


def test_play_going_on_puts_the_pass_off(threshold: None, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[int] = []
    monkeypatch.setattr(gc, "collect", made.append)
    clock, events = Clock(), [0]  # the players' events handled so far
    collector, timers = collector_on(clock, lambda: events[0])
    collector.arm()
    for _ in range(5):  # an event every 0.3 QUIET_S
        clock.now += QUIET_S * 0.3
        events[0] += 1
        timers.run_due()
        if collector.due:
            collector.collect()
    assert made == []
    clock.now += QUIET_S * 1.01
    timers.run_due()
    collector.collect()
    assert made == []  # the wait began again at the last look, not at the last event
    clock.now += QUIET_S
    timers.run_due()
    assert collector.due
    collector.collect()
    assert len(made) == 1


@pytest.mark.parametrize(
    ("counts", "generation"),
    [((120, 3, 2), 0), ((120, 10, 2), 0), ((120, 11, 2), 1), ((120, 11, 11), 2), ((5, 0, 11), 2)],
)
def test_the_generation_is_the_one_cpython_would_pick(
    threshold: None,
    monkeypatch: pytest.MonkeyPatch,
    counts: tuple[int, int, int],
    generation: int,
) -> None:
    made: list[int] = []
    monkeypatch.setattr(gc, "collect", made.append)
    monkeypatch.setattr(gc, "get_count", lambda: counts)
    clock = Clock()
    collector, timers = collector_on(clock)
    gc.set_threshold(SAFETY_THRESHOLD, 10, 10)
    collector.arm()
    clock.now += QUIET_S
    timers.run_due()
    collector.collect()
    assert made == [generation]


def test_a_quiet_pass_frees_a_cycle(threshold: None) -> None:
    class Node:
        other: object = None

    clock = Clock()
    collector, timers = collector_on(clock)
    freed: list[bool] = []
    gc.collect()  # nothing older waiting
    first, second = Node(), Node()
    first.other, second.other = second, first
    weakref.finalize(first, freed.append, True)
    del first, second
    assert freed == []  # a cycle: reference counts never free it
    collector.arm()
    clock.now += QUIET_S
    timers.run_due()
    collector.collect()
    assert freed == [True]


def test_the_service_collects_on_a_turn_without_a_players_event(
    tmp_path: Path, threshold: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MockTable(HouseRules(), state_dir=tmp_path) as mock:
        service, clock = mock.service, Clock()
        service.clock = clock
        made: list[int] = []  # the players' events handled when each pass was made
        monkeypatch.setattr(gc, "collect", lambda generation=2: made.append(service.handled))
        service.collector.enable()
        mock.deal({0: cards("7C 6C 3E"), 1: cards("2O 1B 4B")})
        mock.press(0, Button.ENVIDO)
        clock.now += QUIET_S * 1.5  # the pass is due; the next turn has an event
        mock.press(1, Button.QUIERO)
        assert made == []
        handled = service.handled
        mock.pump(0.0)  # a turn with no player's event, before QUIET_S since the last
        assert made == []
        clock.now += QUIET_S
        mock.pump(0.0)
        assert made == [handled]
        assert service.collector.passes == [1, 0, 0]
        mock.pump(0.0)
        assert made == [handled]  # one pass a quiet moment
        mock.tap(0, cards("3E")[0])  # play again (laid, drawn, lifted): a pass to come
        clock.now += QUIET_S * 1.5
        mock.pump(0.0)  # the card was lifted after the wait began: it begins again
        assert made == [handled]
        clock.now += QUIET_S
        mock.pump(0.0)
        assert made == [handled, service.handled]
