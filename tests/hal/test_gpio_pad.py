"""The GPIO button pad: real gpiozero Buttons on MockFactory pins, a hand-driven clock,
the pure debouncer under hypothesis, and agreement with the seat node firmware."""

from __future__ import annotations

import doctest
import importlib
import logging
import queue
import sys
import threading
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from gpiozero import Device
from gpiozero.exc import GPIOPinInUse
from gpiozero.pins.mock import MockFactory, MockPin
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from controller.hal import gpio_pad
from controller.hal.events import ButtonHeld, ButtonPressed, ButtonStuck
from controller.hal.gpio_pad import (
    BUTTONS,
    DEFAULT_PINS,
    FREED,
    HOLD,
    PRESS,
    STUCK,
    Debouncer,
    GpioPad,
    PadEvent,
)
from tests.helpers import wait_until

ROOT = Path(__file__).resolve().parents[2]
SEAT0 = dict(DEFAULT_PINS[0])
SEAT1 = dict(DEFAULT_PINS[1])


def firmware_debounce() -> ModuleType:
    """firmware/seatnode/debounce.py, imported with CPython (tests only)."""
    firmware = str(ROOT / "firmware")
    if firmware not in sys.path:
        sys.path.insert(0, firmware)
    return importlib.import_module("seatnode.debounce")


# -- fixtures ---------------------------------------------------------------------------


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    """A fresh MockFactory as gpiozero's default; reset and restored afterwards."""
    saved = Device.pin_factory
    mock = MockFactory()
    Device.pin_factory = mock
    try:
        yield mock
    finally:
        mock.reset()  # MockFactory keeps pins and reservations at class level
        Device.pin_factory = saved


class FakeClock:
    def __init__(self, t: float = 100.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@dataclass
class Rig:
    """A pad on mock pins with a hand-driven clock; ``at(t)`` moves the clock and polls."""

    factory: MockFactory
    clock: FakeClock
    pad: GpioPad
    events: list[tuple[int, PadEvent]] = field(default_factory=list)

    def pin(self, name: str) -> Any:
        return self.factory.pin(self.pad.pins[name])

    def down(self, name: str, at: float) -> None:
        self.clock.t = at
        self.pin(name).drive_low()

    def up(self, name: str, at: float) -> None:
        self.clock.t = at
        self.pin(name).drive_high()

    def at(self, t: float) -> list[PadEvent]:
        """Move the clock to ``t``, take the decisions due, return the new events."""
        self.clock.t = t
        self.pad.poll()
        got = [event for _, event in self.events]
        self.events.clear()
        return got


MakeRig = Callable[..., Rig]


@pytest.fixture
def make_rig(factory: MockFactory) -> Iterator[MakeRig]:
    rigs: list[Rig] = []

    def make(seat: int = 0, pins: dict[str, int] | None = None, **options: Any) -> Rig:
        clock = FakeClock()
        events: list[tuple[int, PadEvent]] = []
        pad = GpioPad(
            seat,
            DEFAULT_PINS[seat] if pins is None else pins,
            lambda s, e: events.append((s, e)),
            pin_factory=factory,
            clock=clock,
            **options,
        )
        rig = Rig(factory, clock, pad, events)
        rigs.append(rig)
        return rig

    yield make
    for rig in rigs:
        rig.pad.close()


def pad_threads(seat: int) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"gpio-pad-{seat}" and t.is_alive()]


# -- GpioPad on mock pins -----------------------------------------------------------------


def test_buttons_are_pulled_up_inputs_without_gpiozero_debounce(
    make_rig: MakeRig, factory: MockFactory
) -> None:
    rig = make_rig()
    for pin in DEFAULT_PINS[0].values():
        mock_pin = factory.pin(pin)
        assert mock_pin.function == "input"
        assert mock_pin.pull == "up"
        assert mock_pin.bounce is None
        assert mock_pin.state == 1  # released: held high by the pull-up
    assert rig.pad.pins == SEAT0
    assert list(rig.pad.pins) == list(BUTTONS)


def test_short_press_reports_pressed_once_on_release(make_rig: MakeRig) -> None:
    rig = make_rig()
    rig.down("truco", 100.0)
    assert rig.at(100.015) == []
    assert rig.pad.pressed == frozenset()  # not settled yet
    assert rig.at(100.1) == []
    assert rig.pad.pressed == {"truco"}
    rig.up("truco", 100.3)
    assert rig.at(100.315) == []  # the release settles 20 ms after the edge
    assert rig.at(100.3201) == [ButtonPressed("truco")]
    assert rig.at(105.0) == []
    assert rig.pad.pressed == frozenset()


def test_event_carries_the_seat(make_rig: MakeRig) -> None:
    rig = make_rig(seat=1)
    rig.down("envido", 100.0)
    rig.up("envido", 100.1)
    rig.clock.t = 100.2
    rig.pad.poll()
    assert rig.events == [(1, ButtonPressed("envido"))]


def test_hold_reports_held_once_at_800_ms_and_nothing_on_release(make_rig: MakeRig) -> None:
    rig = make_rig()
    rig.down("mazo", 100.0)
    assert rig.at(100.5) == []
    assert rig.at(100.7999) == []
    assert rig.at(100.8001) == [ButtonHeld("mazo")]
    assert rig.at(102.0) == []
    rig.up("mazo", 102.0)
    assert rig.at(103.0) == []
    assert rig.pad.pressed == frozenset()
    # The next press is a new one.
    rig.down("mazo", 104.0)
    rig.up("mazo", 104.1)
    assert rig.at(104.2) == [ButtonPressed("mazo")]


def test_a_button_down_10_s_is_stuck_once_and_freed_at_its_release(make_rig: MakeRig) -> None:
    """The node's STUCK and FREED (firmware/seatnode/debounce.py): the table shows
    SeatFault.PAD_STUCK on the seat and the doctor reports it."""
    rig = make_rig()
    rig.down("mazo", 100.0)
    assert rig.at(100.8001) == [ButtonHeld("mazo")]
    assert rig.at(109.999) == []
    assert rig.at(110.0001) == [ButtonStuck("mazo", stuck=True)]
    assert rig.at(500.0) == []  # said once, however long it stays down
    rig.up("mazo", 500.0)
    assert rig.at(500.0201) == [ButtonStuck("mazo", stuck=False)]
    rig.down("mazo", 501.0)  # the next press is a new one
    rig.up("mazo", 501.1)
    assert rig.at(501.2) == [ButtonPressed("mazo")]


def test_the_stuck_time_is_the_pad_s_setting(make_rig: MakeRig) -> None:
    rig = make_rig(stuck_s=2.0)
    rig.down("truco", 100.0)
    assert rig.at(101.0) == [ButtonHeld("truco")]
    assert rig.at(102.0001) == [ButtonStuck("truco")]
    with pytest.raises(ValueError, match="hold_s < stuck_s"):
        make_rig(seat=1, stuck_s=0.5)


def test_bouncing_press_and_release_count_once(make_rig: MakeRig) -> None:
    rig = make_rig()
    # Closing: the contact bounces for 8 ms (polls in between, as the timer would).
    for t, closed in [(0, 1), (2, 0), (3, 1), (6, 0), (8, 1)]:
        (rig.down if closed else rig.up)("quiero", 100 + t / 1000)
        assert rig.at(100 + t / 1000 + 0.0005) == []
    assert rig.at(100.2) == []
    # Opening: bounces for 9 ms.
    for t, closed in [(300, 0), (302, 1), (305, 0), (306, 1), (309, 0)]:
        (rig.down if closed else rig.up)("quiero", 100 + t / 1000)
        assert rig.at(100 + t / 1000 + 0.0005) == []
    assert rig.at(100.3285) == []
    assert rig.at(100.3295) == [ButtonPressed("quiero")]  # 20 ms after the last bounce
    assert rig.at(101.0) == []


def test_hold_time_runs_from_the_last_bounce_of_the_press(make_rig: MakeRig) -> None:
    rig = make_rig()
    for t, closed in [(0, 1), (2, 0), (5, 1), (6, 0), (8, 1)]:
        (rig.down if closed else rig.up)("flor", 100 + t / 1000)
    assert rig.at(100.8075) == []
    assert rig.at(100.8085) == [ButtonHeld("flor")]
    # Releasing with bounces reports nothing more.
    for t, closed in [(1000, 0), (1003, 1), (1004, 0)]:
        (rig.down if closed else rig.up)("flor", 100 + t / 1000)
    assert rig.at(102.0) == []


def test_chatter_shorter_than_debounce_is_ignored(make_rig: MakeRig) -> None:
    rig = make_rig()
    t = 100.0
    for width_ms in (1, 5, 10, 15, 19.5):
        rig.down("falta_envido", t)
        assert rig.at(t + width_ms / 2000) == []
        rig.up("falta_envido", t + width_ms / 1000)
        t += 0.05
        assert rig.at(t) == []
    # A burst of short pulses, each shorter than the debounce time.
    for i in range(20):
        rig.down("falta_envido", t + i * 0.004)
        rig.up("falta_envido", t + i * 0.004 + 0.002)
    assert rig.at(t + 2.0) == []
    assert rig.pad.pressed == frozenset()


def test_short_opening_while_down_does_not_end_the_press(make_rig: MakeRig) -> None:
    rig = make_rig()
    rig.down("truco", 100.0)
    assert rig.at(100.1) == []
    rig.up("truco", 100.2)  # the contact opens for 12 ms
    assert rig.at(100.205) == []
    rig.down("truco", 100.212)
    assert rig.at(100.4) == []
    rig.up("truco", 100.5)
    assert rig.at(100.6) == [ButtonPressed("truco")]


def test_two_buttons_at_once(make_rig: MakeRig) -> None:
    rig = make_rig()
    rig.down("truco", 100.0)
    rig.down("quiero", 100.005)
    assert rig.at(100.1) == []
    assert rig.pad.pressed == {"truco", "quiero"}
    rig.up("truco", 100.3)
    assert rig.at(100.4) == [ButtonPressed("truco")]
    assert rig.at(100.81) == [ButtonHeld("quiero")]
    rig.up("quiero", 101.0)
    # Both short, let go at the same moment: one press each.
    rig.down("envido", 102.0)
    rig.down("no_quiero", 102.0)
    rig.up("envido", 102.2)
    rig.up("no_quiero", 102.2)
    assert sorted(map(repr, rig.at(102.3))) == sorted(
        map(repr, [ButtonPressed("envido"), ButtonPressed("no_quiero")])
    )


def test_late_decisions_come_out_in_time_order(make_rig: MakeRig) -> None:
    rig = make_rig()
    # Nothing polls for 1.5 s: the events due meanwhile come out in the order they
    # fell due, across buttons.
    rig.down("flor", 100.0)  # held at 100.8
    rig.down("envido", 100.1)
    rig.up("envido", 100.7)  # pressed at 100.72
    assert rig.at(101.5) == [ButtonPressed("envido"), ButtonHeld("flor")]
    rig.up("flor", 101.6)
    rig.down("real_envido", 102.0)  # held at 102.8
    rig.down("mazo", 102.5)
    rig.up("mazo", 102.85)  # pressed at 102.87
    assert rig.at(104.0) == [ButtonHeld("real_envido"), ButtonPressed("mazo")]
    # An edge on one button first takes what fell due on the others before it.
    rig.down("flor", 105.0)  # held at 105.8
    rig.down("envido", 105.5)
    rig.up("envido", 105.85)  # pressed at 105.87
    rig.down("envido", 106.0)
    assert rig.at(106.05) == [ButtonHeld("flor"), ButtonPressed("envido")]


def test_an_edge_first_takes_the_decisions_due_before_it(make_rig: MakeRig) -> None:
    rig = make_rig()
    # No poll between press and release: the release edge still knows the press
    # settled at 100.02 and reports it once the release settles.
    rig.down("envido", 100.0)
    rig.up("envido", 100.5)
    assert rig.at(100.5201) == [ButtonPressed("envido")]


@pytest.mark.parametrize("seat", [0, 1])
def test_every_button_maps_to_its_name(make_rig: MakeRig, seat: int) -> None:
    rig = make_rig(seat=seat)
    t = 100.0
    for name in BUTTONS:
        pin = rig.factory.pin(DEFAULT_PINS[seat][name])
        rig.clock.t = t
        pin.drive_low()
        rig.clock.t = t + 0.1
        pin.drive_high()
        rig.clock.t = t + 0.2
        rig.pad.poll()
        t += 1.0
    assert rig.events == [(seat, ButtonPressed(name)) for name in BUTTONS]
    rig.events.clear()
    for name in BUTTONS:
        rig.down(name, t)
        assert rig.at(t + 0.9) == [ButtonHeld(name)]
        rig.up(name, t + 1.0)
        t += 2.0
    assert rig.at(t) == []


def test_both_seats_side_by_side(make_rig: MakeRig) -> None:
    seat0 = make_rig(seat=0)
    seat1 = make_rig(seat=1)
    seat0.down("truco", 100.0)
    seat0.up("truco", 100.1)
    assert seat0.at(100.2) == [ButtonPressed("truco")]
    assert seat1.at(100.2) == []
    seat1.down("truco", 100.0)  # seat 1's clock is its own
    seat1.up("truco", 100.1)
    assert seat1.at(100.2) == [ButtonPressed("truco")]


def test_pin_map_order_does_not_matter(make_rig: MakeRig) -> None:
    rig = make_rig(pins=dict(reversed(SEAT0.items())))
    assert list(rig.pad.pins) == list(BUTTONS)
    rig.down("no_quiero", 100.0)
    rig.up("no_quiero", 100.1)
    assert rig.at(100.2) == [ButtonPressed("no_quiero")]


@pytest.mark.parametrize(
    ("pins", "match"),
    [
        ({**SEAT0, "trucco": 7}, "'trucco'"),
        ({**SEAT0, "mazo": 4}, "'truco' and 'mazo'.*GPIO4"),
        ({k: v for k, v in SEAT0.items() if k != "flor"}, "'flor'"),
        ({}, "'truco'"),
        ({**SEAT0, "envido": "GPIO17"}, "'envido'"),
        ({**SEAT0, "quiero": -1}, "'quiero'"),
        ({**SEAT0, "quiero": 6.0}, "'quiero'"),
        ({**SEAT0, "quiero": True}, "'quiero'"),
    ],
    ids=["unknown", "duplicate", "missing", "empty", "string", "negative", "float", "bool"],
)
def test_bad_pin_maps_are_rejected(
    factory: MockFactory, make_rig: MakeRig, pins: dict[str, Any], match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        GpioPad(0, pins, lambda seat, event: None, pin_factory=factory)
    assert pad_threads(0) == []
    make_rig()  # nothing was left reserved


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"seat": -1}, "seat"),
        ({"debounce_s": -0.001}, "debounce_s"),
        ({"debounce_s": 0.5, "hold_s": 0.5}, "hold_s"),
    ],
)
def test_bad_settings_are_rejected(
    factory: MockFactory, options: dict[str, Any], match: str
) -> None:
    seat = options.pop("seat", 0)
    with pytest.raises(ValueError, match=match):
        GpioPad(seat, SEAT0, lambda s, e: None, pin_factory=factory, **options)


def test_pin_already_in_use_releases_the_others(factory: MockFactory, make_rig: MakeRig) -> None:
    first = make_rig(seat=0)
    clash = {**SEAT1, "mazo": SEAT0["mazo"]}  # mazo comes last: seven pins taken first
    with pytest.raises(GPIOPinInUse):
        GpioPad(1, clash, lambda s, e: None, pin_factory=factory)
    first.pad.close()
    make_rig(seat=1, pins=clash)  # all eight are free again


def test_pin_factory_none_uses_gpiozero_default(factory: MockFactory) -> None:
    got: list[tuple[int, PadEvent]] = []
    clock = FakeClock()
    with GpioPad(0, SEAT0, lambda s, e: got.append((s, e)), clock=clock) as pad:
        factory.pin(SEAT0["flor"]).drive_low()
        clock.t = 100.1
        factory.pin(SEAT0["flor"]).drive_high()
        clock.t = 100.2
        pad.poll()
    assert got == [(0, ButtonPressed("flor"))]


class StuckDownPin(MockPin):  # type: ignore[misc]  # gpiozero is untyped
    """seat 0's mazo pin, with the button already down: the pull-up cannot lift it."""

    def _set_pull(self, value: str) -> None:
        super()._set_pull(value)
        if self.info.name == f"GPIO{SEAT0['mazo']}":
            self.drive_low()


def test_button_down_at_start_counts_as_pressed_from_then(factory: MockFactory) -> None:
    stuck = MockFactory(pin_class=StuckDownPin)
    clock = FakeClock()
    got: list[PadEvent] = []
    with GpioPad(0, SEAT0, lambda s, e: got.append(e), pin_factory=stuck, clock=clock) as pad:
        assert stuck.pin(SEAT0["mazo"]).state == 0
        clock.t = 100.7
        pad.poll()
        assert got == []
        assert pad.pressed == {"mazo"}
        clock.t = 100.81
        pad.poll()
        assert got == [ButtonHeld("mazo")]  # as a node started with mazo down
        stuck.pin(SEAT0["mazo"]).drive_high()
        clock.t = 101.0
        pad.poll()
        assert got == [ButtonHeld("mazo")]


def test_close_stops_callbacks(make_rig: MakeRig, factory: MockFactory) -> None:
    rig = make_rig()
    rig.down("truco", 100.0)
    rig.down("envido", 100.0)
    rig.up("envido", 100.1)  # a press due at 100.12...
    assert pad_threads(0)
    rig.pad.close()  # ...dropped by close()
    assert rig.pad.closed
    assert pad_threads(0) == []
    assert rig.at(101.0) == []  # no hold either
    rig.pin("truco").drive_high()  # the pins are released: edges go nowhere
    assert rig.at(102.0) == []
    rig.pad.close()  # idempotent
    again = make_rig()  # the pins are free again
    again.down("truco", 100.0)
    again.up("truco", 100.1)
    assert again.at(100.2) == [ButtonPressed("truco")]
    assert rig.events == []


def test_close_from_inside_on_event(factory: MockFactory) -> None:
    clock = FakeClock()
    got: list[PadEvent] = []

    def on_event(seat: int, event: PadEvent) -> None:
        got.append(event)
        pad.close()

    pad = GpioPad(0, SEAT0, on_event, pin_factory=factory, clock=clock)
    factory.pin(SEAT0["envido"]).drive_low()
    clock.t = 100.1
    factory.pin(SEAT0["flor"]).drive_low()
    clock.t = 100.5
    factory.pin(SEAT0["envido"]).drive_high()
    clock.t = 102.0  # envido pressed (100.52) and flor held (100.9) both due
    pad.poll()
    assert got == [ButtonPressed("envido")]  # the second one is dropped
    assert pad.closed
    assert wait_until(lambda: pad_threads(0) == [])


def test_on_event_errors_are_logged_and_the_pad_goes_on(
    factory: MockFactory, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[PadEvent] = []

    def on_event(seat: int, event: PadEvent) -> None:
        calls.append(event)
        raise RuntimeError("boom")

    clock = FakeClock()
    pin = factory.pin(SEAT0["quiero"])
    with (
        caplog.at_level(logging.WARNING, logger="controller.hal.gpio_pad"),
        GpioPad(0, SEAT0, on_event, pin_factory=factory, clock=clock) as pad,
    ):
        for i in range(3):
            clock.t = 100.0 + i
            pin.drive_low()
            clock.t = 100.1 + i
            pin.drive_high()
            clock.t = 100.2 + i
            pad.poll()
        assert calls == [ButtonPressed("quiero")] * 3
        assert pad.callback_errors == 3
    assert len([r for r in caplog.records if "on_event falló" in r.getMessage()]) == 1


# -- with the real clock: the pad's own timer thread --------------------------------------


def test_timer_thread_delivers_on_time_without_poll(factory: MockFactory) -> None:
    got: queue.Queue[tuple[float, PadEvent]] = queue.Queue()
    with GpioPad(
        0,
        SEAT0,
        lambda seat, event: got.put((time.monotonic(), event)),
        pin_factory=factory,
        debounce_s=0.01,
        hold_s=0.15,
    ):
        pin = factory.pin(SEAT0["quiero"])
        start = time.monotonic()
        pin.drive_low()
        when, event = got.get(timeout=120)
        assert event == ButtonHeld("quiero")
        assert 0.15 <= when - start < 0.5
        pin.drive_high()
        time.sleep(0.05)
        assert got.empty()  # the release of a hold reports nothing
        pin.drive_low()
        time.sleep(0.05)
        start = time.monotonic()
        pin.drive_high()
        when, event = got.get(timeout=120)
        assert event == ButtonPressed("quiero")
        assert 0.01 <= when - start < 0.3
    assert pad_threads(0) == []


def test_close_from_inside_on_event_on_the_timer_thread(factory: MockFactory) -> None:
    done = threading.Event()

    def on_event(seat: int, event: PadEvent) -> None:
        pad.close()
        done.set()

    pad = GpioPad(0, SEAT0, on_event, pin_factory=factory, hold_s=0.05, debounce_s=0.005)
    factory.pin(SEAT0["truco"]).drive_low()
    assert done.wait(120)
    assert pad.closed
    assert wait_until(lambda: pad_threads(0) == [])


def test_docstring_example_runs(factory: MockFactory) -> None:
    result = doctest.testmod(gpio_pad, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_default_pins_match_pinmap_toml() -> None:
    with (ROOT / "hardware" / "pinmap-gpio.toml").open("rb") as f:
        pinmap = tomllib.load(f)
    seats = {seat["seat"]: seat["buttons"] for seat in pinmap["gpio"]["seat"]}
    assert seats == {seat: dict(pins) for seat, pins in DEFAULT_PINS.items()}
    assert pinmap["gpio"]["debounce_ms"] / 1000 == gpio_pad.DEBOUNCE_S
    assert pinmap["gpio"]["hold_ms"] / 1000 == gpio_pad.HOLD_S


# -- the pure debouncer -------------------------------------------------------------------

DEBOUNCE_MS = 20
HOLD_MS = 800
bounces = st.lists(st.integers(1, DEBOUNCE_MS - 1), max_size=10).map(
    lambda xs: xs[
        : len(xs) // 2 * 2
    ]  # pairs: (closed, open) at the press, (open, closed) at the release
)


@dataclass
class Press:
    edges: list[tuple[int, bool]]  # (time in ms, contact closed)
    closed_for_good: int  # the last closing edge
    opened_for_good: int  # the last opening edge


@st.composite
def bouncy_presses(draw: st.DrawFn) -> Press:
    t = 1000
    edges: list[tuple[int, bool]] = []
    closed = True
    for width in draw(bounces):
        edges.append((t, closed))
        closed = not closed
        t += width
    p = t
    edges.append((p, True))
    t += draw(st.integers(DEBOUNCE_MS + 1, 2 * HOLD_MS))  # a clean, settled press
    closed = False
    for width in draw(bounces):
        edges.append((t, closed))
        closed = not closed
        t += width
    edges.append((t, False))
    return Press(edges, p, t)


def run_edges(
    deb: Debouncer, edges: list[tuple[float, bool]], polls: list[float], end: float
) -> list[tuple[float, str]]:
    """Feed edges and timer polls in time order (edges first at equal times)."""
    steps = sorted([(t, 0, closed) for t, closed in edges] + [(t, 1, False) for t in polls])
    decisions: list[tuple[float, str]] = []
    deb.edge(False, 0)  # the initial state: open
    for t, kind, closed in steps:
        if t > end:
            break
        decisions += deb.edge(closed, t) if kind == 0 else deb.advance(t)
    decisions += deb.advance(end)
    return decisions


@settings(max_examples=150, deadline=None)
@given(press=bouncy_presses(), poll_at=st.lists(st.integers(0, 5000), max_size=30))
def test_bouncy_press_gives_exactly_one_event(press: Press, poll_at: list[int]) -> None:
    deb = Debouncer(DEBOUNCE_MS, HOLD_MS)
    end = press.opened_for_good + HOLD_MS + 100
    edges = [(float(t), closed) for t, closed in press.edges]
    decisions = run_edges(deb, edges, [float(t) for t in poll_at], end)
    held = press.closed_for_good + HOLD_MS < press.opened_for_good + DEBOUNCE_MS
    if held:
        assert decisions == [(press.closed_for_good + HOLD_MS, HOLD)]
    else:
        assert decisions == [(press.opened_for_good + DEBOUNCE_MS, PRESS)]
    assert not deb.pressed


@settings(max_examples=100, deadline=None)
@given(press=bouncy_presses(), poll_at=st.lists(st.integers(0, 5000), max_size=30))
def test_bouncy_press_in_seconds(press: Press, poll_at: list[int]) -> None:
    """The same in float seconds, as GpioPad uses it (no exact ties: float rounding)."""
    assume(press.opened_for_good - press.closed_for_good != HOLD_MS - DEBOUNCE_MS)
    deb = Debouncer(gpio_pad.DEBOUNCE_S, gpio_pad.HOLD_S)
    edges = [(t / 1000, closed) for t, closed in press.edges]
    end = press.opened_for_good / 1000 + 2.0
    decisions = run_edges(deb, edges, [t / 1000 for t in poll_at], end)
    held = press.closed_for_good + HOLD_MS < press.opened_for_good + DEBOUNCE_MS
    assert [kind for _, kind in decisions] == [HOLD if held else PRESS]
    assert not deb.pressed


samples = st.lists(
    st.tuples(st.one_of(st.integers(0, 8), st.integers(0, 1200)), st.booleans()), max_size=150
)
timings = st.one_of(
    st.just((DEBOUNCE_MS, HOLD_MS, 10000)),
    st.integers(1, 60).flatmap(
        lambda debounce: st.integers(61, 1000).flatmap(
            lambda hold: st.tuples(st.just(debounce), st.just(hold), st.integers(hold + 1, 3000))
        )
    ),
)


@settings(max_examples=200, deadline=None)
@given(timing=timings, raw=samples, start=st.integers(0, 10**6))
def test_samples_agree_with_the_firmware(
    timing: tuple[int, int, int], raw: list[tuple[int, bool]], start: int
) -> None:
    fw = firmware_debounce()
    debounce, hold, stuck = timing
    theirs = fw.Button("truco", debounce_ms=debounce, hold_ms=hold, stuck_ms=stuck)
    ours = Debouncer(debounce, hold, stuck)
    now = start
    for gap, value in raw:
        now += gap
        assert ours.update(value, now) == theirs.update(value, now), now
        assert ours.pressed == theirs.pressed
    assert fw.PRESS == PRESS
    assert fw.HOLD == HOLD
    assert (fw.STUCK, fw.FREED, fw.STUCK_MS) == (STUCK, FREED, gpio_pad.STUCK_S * 1000)


edge_gaps = st.lists(st.one_of(st.integers(1, 30), st.integers(1, 1000)), max_size=14)


@settings(max_examples=120, deadline=None)
@given(
    timing=timings,
    initial=st.booleans(),
    gaps=edge_gaps,
    poll_at=st.lists(st.integers(0, 15000), max_size=20),
)
def test_edges_agree_with_the_firmware_sampling_every_millisecond(
    timing: tuple[int, int, int], initial: bool, gaps: list[int], poll_at: list[int]
) -> None:
    """Fed each edge (and the timer's wake-ups, anywhere), the debouncer decides what
    the firmware decides sampling the same contact continuously, at the same times."""
    fw = firmware_debounce()
    debounce, hold, stuck = timing
    edges: list[tuple[int, bool]] = []
    t, value = 0, initial
    for gap in gaps:
        t += gap
        value = not value
        edges.append((t, value))
    end = t + stuck + debounce + 5  # a press left down at the end gets to its STUCK

    theirs = fw.Button("truco", debounce_ms=debounce, hold_ms=hold, stuck_ms=stuck)
    expected: list[tuple[float, str]] = []
    changes = dict(edges)
    value = initial
    for now in range(end + 1):
        value = changes.get(now, value)
        decision = theirs.update(value, now)
        if decision is not None:
            expected.append((now, decision))

    ours = Debouncer(debounce, hold, stuck)
    got = ours.edge(initial, 0)
    steps = sorted([(float(t), 0, v) for t, v in edges] + [(p + 0.5, 1, False) for p in poll_at])
    for now_f, kind, v in steps:
        if now_f <= end:
            got += ours.edge(v, now_f) if kind == 0 else ours.advance(now_f)
    got += ours.advance(end)
    assert got == expected
    assert ours.pressed == theirs.pressed


def test_next_deadline() -> None:
    deb = Debouncer(20, 800)
    assert deb.next_deadline() is None  # nothing seen yet
    assert deb.edge(False, 0) == []
    assert deb.next_deadline() is None  # open and settled: nothing to wait for
    assert deb.edge(True, 100) == []
    assert deb.next_deadline() == 120  # settling
    assert deb.advance(120) == []
    assert deb.pressed
    assert deb.next_deadline() == 900  # the hold time
    assert deb.edge(False, 890) == []
    assert deb.next_deadline() == 900  # hold due before the release settles (910)
    assert deb.advance(2000) == [(900, HOLD)]
    assert deb.next_deadline() is None
    assert not deb.pressed


def test_time_never_runs_backwards() -> None:
    deb = Debouncer(20, 800)
    deb.edge(False, 1000)
    deb.edge(True, 1010)
    deb.edge(False, 900)  # late: counts as 1010
    assert deb.advance(1029) == []
    assert deb.advance(1030) == []
    assert not deb.pressed


def test_next_deadline_after_the_hold_is_the_stuck_time() -> None:
    deb = Debouncer(20, 800, 10000)
    deb.edge(False, 0)
    deb.edge(True, 100)
    assert deb.advance(900) == [(900, HOLD)]
    assert deb.next_deadline() == 10100  # the stuck time, from the press
    assert deb.advance(20000) == [(10100, STUCK)]
    assert deb.next_deadline() is None  # said once
    deb.edge(False, 20000)
    assert deb.advance(20020) == [(20020, FREED)]
    assert not deb.pressed and not deb.stuck
    assert Debouncer(20, 800).next_deadline() is None  # no stuck time: never stuck
