"""The referee call on the pads: quiero and no quiero held together, at any seat, from a
GPIO pad (gpiozero's MockFactory pins, a hand-driven clock) or a seat node (pty frames);
the races of the two presses, and what the table does and does not do."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory

from controller.engine import Action, HouseRules, Kind
from controller.hal.gpio_pad import DEFAULT_PINS, GpioPad
from controller.hal.mock import MockDeck
from controller.notices import AskConfirm, RefereeCalled
from controller.render.notices import notice_text
from controller.table.chord import CHORD_S, RefereeChord
from controller.table.controls import Button, Mode
from controller.table.mock_table import MockTable
from controller.table.service import RefereeCall, ServiceConfig, ServiceEvent, TableService
from controller.table.table import Phase
from controller.transcript import parse, replay
from tests.helpers import cards

DEAL = {0: cards("7C 6C 3E"), 1: cards("2O 1B 4B")}


# ---------------------------------------------------------------------------- the chord alone


def test_the_chord_is_two_holds_of_the_pair_at_one_seat_close_together() -> None:
    chord = RefereeChord()
    assert not chord.hold(0, "quiero", 10.0)
    assert chord.hold(0, "no_quiero", 10.0 + CHORD_S)  # either order, up to the window
    assert not chord.hold(1, "no_quiero", 20.0)
    assert chord.hold(1, "quiero", 20.1)
    # too far apart; the same button twice; another seat; a press between
    assert not chord.hold(0, "quiero", 30.0) and not chord.hold(0, "no_quiero", 30.6)
    assert not chord.hold(0, "quiero", 40.0) and not chord.hold(0, "quiero", 40.1)
    assert not chord.hold(2, "quiero", 50.0) and not chord.hold(3, "no_quiero", 50.1)
    chord.hold(4, "quiero", 60.0)
    chord.press(4)
    assert not chord.hold(4, "no_quiero", 60.1)
    # another button's hold in between
    chord.hold(5, "quiero", 70.0)
    assert not chord.hold(5, "mazo", 70.1) and not chord.hold(5, "no_quiero", 70.2)
    with pytest.raises(ValueError):
        RefereeChord(0.9)  # longer than the hold time: the buttons might never overlap


# ---------------------------------------------------------------------------- GPIO pads


@dataclass
class GpioTable:
    """A real TableService fed by real GpioPads on MockFactory pins, one hand-driven clock
    for both (so the gaps between presses are the mock clock's, as on the Pi)."""

    factory: MockFactory
    service: TableService
    pads: list[GpioPad]
    now: list[float]
    heard: list[ServiceEvent] = field(default_factory=list)

    def at(self, t: float) -> None:
        """Move the clock on to ``t`` in 10 ms steps, the pads and the loop taking what is
        due at each (as the pads' threads and the service's loop do on time)."""
        while True:
            self.now[0] = min(t, self.now[0] + 0.01)
            for pad in self.pads:
                pad.poll()
            while self.service.step(0.0):
                pass
            if self.now[0] >= t:
                return

    def down(self, seat: int, button: str, t: float) -> None:
        self.at(t)
        self.factory.pin(DEFAULT_PINS[seat][button]).drive_low()

    def up(self, seat: int, button: str, t: float) -> None:
        self.at(t)
        self.factory.pin(DEFAULT_PINS[seat][button]).drive_high()

    def calls(self) -> list[int]:
        return [e.seat for e in self.heard if isinstance(e, RefereeCall)]


@pytest.fixture
def gpio() -> Iterator[GpioTable]:
    factory = MockFactory()
    now = [100.0]

    def clock() -> float:
        return now[0]

    service = TableService(ServiceConfig(HouseRules()), MockDeck().lookup, [], clock=clock)
    pads = [
        GpioPad(seat, DEFAULT_PINS[seat], service.post, pin_factory=factory, clock=clock)
        for seat in (0, 1)
    ]
    table = GpioTable(factory, service, pads, now)
    service.listeners.append(table.heard.append)
    service.table.new_hand()
    for seat, hand in DEAL.items():
        for card in hand:
            service.table._deal_tap(seat, card)
    assert service.table.phase is Phase.PLAYING
    try:
        yield table
    finally:
        for pad in pads:
            pad.close()
        factory.reset()


def told(service: TableService, seat: int) -> str | None:
    message = service.table.messages[seat]
    return None if message is None else notice_text(message.notice, seat)


def test_both_held_calls_the_referee_and_plays_nothing(gpio: GpioTable) -> None:
    gpio.service.table.attempt(Action(0, Kind.TRUCO))
    assert gpio.service.table.game.truco_pending is not None
    moves = len(gpio.service.table.game.hand_actions)
    gpio.down(1, "quiero", 101.0)
    gpio.down(1, "no_quiero", 101.15)  # a finger after the other
    gpio.at(101.8)  # quiero's hold: its menu opens, nothing is played
    opened = gpio.service.table.inputs[1].mode
    assert opened is Mode.MENU and not gpio.calls()
    gpio.at(102.0)  # no quiero's hold: the chord
    gpio.up(1, "quiero", 102.3)
    gpio.up(1, "no_quiero", 102.35)
    gpio.at(103.0)
    assert gpio.calls() == [1]
    game = gpio.service.table.game
    assert len(game.hand_actions) == moves and game.truco_pending is not None  # not answered
    closed = gpio.service.table.inputs[1].mode
    assert closed is Mode.NORMAL  # the menu the first hold opened is closed
    assert told(gpio.service, 1) == "Llamaste al árbitro: esperalo"
    assert told(gpio.service, 0) == "El asiento 1 llamó al árbitro"
    assert gpio.service.referee_calls == 1


def test_the_order_of_the_two_presses_does_not_matter(gpio: GpioTable) -> None:
    gpio.down(0, "no_quiero", 101.0)
    gpio.down(0, "quiero", 101.4)
    gpio.at(102.5)
    gpio.up(0, "no_quiero", 102.5)
    gpio.up(0, "quiero", 102.5)
    gpio.at(103.0)
    assert gpio.calls() == [0] and not gpio.service.table.game.hand_actions


def test_presses_too_far_apart_are_two_holds(gpio: GpioTable) -> None:
    gpio.down(0, "quiero", 101.0)
    gpio.down(0, "no_quiero", 101.6)  # 0.6 s later: over the window
    gpio.at(103.0)
    gpio.up(0, "quiero", 103.0)
    gpio.up(0, "no_quiero", 103.0)
    gpio.at(104.0)
    assert not gpio.calls()
    inputs = gpio.service.table.inputs[0]
    assert inputs.mode is Mode.MENU and inputs.menu is Button.NO_QUIERO  # the last hold's


def test_one_let_go_early_is_a_press_of_it_and_no_call(gpio: GpioTable) -> None:
    gpio.down(1, "quiero", 101.0)
    gpio.down(1, "no_quiero", 101.1)
    gpio.up(1, "no_quiero", 101.4)  # before its hold time: a short press, on release
    gpio.at(102.5)
    gpio.up(1, "quiero", 102.5)
    gpio.at(103.0)
    assert not gpio.calls()
    last = gpio.service.table.last
    assert last is not None and last.action.kind is Kind.NO_QUIERO  # refused: nothing pending
    assert last.code is not None and not gpio.service.table.game.hand_actions


def test_each_seat_makes_its_own_chord(gpio: GpioTable) -> None:
    gpio.down(0, "quiero", 101.0)
    gpio.down(1, "no_quiero", 101.05)  # the other seat's half: no chord of the two
    gpio.at(102.0)
    assert not gpio.calls()
    gpio.up(0, "quiero", 102.0)
    gpio.up(1, "no_quiero", 102.0)
    gpio.down(0, "quiero", 103.0)
    gpio.down(1, "quiero", 103.0)
    gpio.down(0, "no_quiero", 103.1)
    gpio.down(1, "no_quiero", 103.2)
    gpio.at(104.5)
    assert sorted(gpio.calls()) == [0, 1]


def test_the_call_cancels_an_undo_waiting_for_confirmation(gpio: GpioTable) -> None:
    table = gpio.service.table
    table.attempt(Action(0, Kind.TRUCO))
    gpio.down(0, "mazo", 101.0)
    gpio.up(0, "mazo", 102.0)  # held: the mazo menu, and the first half of a control
    gpio.down(0, "no_quiero", 102.2)
    gpio.down(0, "quiero", 102.3)
    gpio.at(103.05)  # no quiero's hold came first: with the mazo before, an undo is asked
    message = table.messages[1]
    assert message is not None and message.notice == AskConfirm("undo") and not gpio.calls()
    gpio.at(103.2)  # quiero's hold: the chord, and the question is gone
    message = table.messages[1]
    assert gpio.calls() == [0]
    assert message is not None and message.notice == RefereeCalled(0)
    gpio.up(0, "no_quiero", 103.3)
    gpio.up(0, "quiero", 103.3)
    gpio.down(1, "quiero", 103.5)
    gpio.up(1, "quiero", 103.6)  # would have confirmed the undo: now it answers the truco
    gpio.at(104.0)
    assert [str(a) for a in table.game.hand_actions] == ["0 truco", "1 quiero"]


# ---------------------------------------------------------------------------- seat nodes


def test_a_seat_node_call_reaches_the_listeners_and_the_panel() -> None:
    heard: list[ServiceEvent] = []
    with MockTable(HouseRules(players=4)) as mock:
        mock.service.listeners.append(heard.append)
        mock.deal({0: cards("7C 6C 3E"), 1: cards("2O 1B 4B"), 2: cards("5E 5O 5C"),
                   3: cards("6E 6O 4C")})  # fmt: skip
        mock.call_referee(2)
        assert [e for e in heard if isinstance(e, RefereeCall)] == [RefereeCall(2)]
        assert not mock.game.hand_actions
        for seat in range(4):
            message = mock.table.messages[seat]
            assert message is not None and message.notice == RefereeCalled(2)
        # the seat's own panel says so (the luma dummy device holds what was drawn)
        assert told(mock.service, 2) == "Llamaste al árbitro: esperalo"


def test_a_seat_node_sending_the_holds_apart_calls_nobody() -> None:
    with MockTable(HouseRules()) as mock:
        mock.deal(DEAL)
        node = mock.parts.nodes[1]
        mock.send_event("hold", lambda: node.hold("quiero"))
        time.sleep(CHORD_S + 0.1)
        mock.send_event("hold", lambda: node.hold("no_quiero"))
        assert mock.service.referee_calls == 0
        mock.call_referee(1)  # and then together
        assert mock.service.referee_calls == 1


def test_the_mock_gpio_table_calls_too() -> None:
    with MockTable(HouseRules(), topology="gpio") as mock:
        mock.deal(DEAL)
        mock.call_referee(0)
        assert mock.service.referee_calls == 1 and not mock.game.hand_actions


def test_the_tournament_record_keeps_the_call_as_a_comment(tmp_path: Path) -> None:
    with MockTable(HouseRules(), state_dir=tmp_path) as mock:
        mock.service.config = dataclasses.replace(mock.service.config, record_refusals=True)
        mock.deal(DEAL)
        mock.call_referee(1)
        mock.press(0, Button.TRUCO)
    text = (tmp_path / "current.truco").read_text(encoding="utf-8")
    assert "# llamado al árbitro: asiento 1" in text
    game = replay(parse(text)).game  # a comment: the record replays as before
    assert [str(a) for a in game.hand_actions] == ["0 truco"]
    with MockTable(HouseRules(), state_dir=tmp_path) as again:  # and restores
        assert again.game.truco_pending is not None
