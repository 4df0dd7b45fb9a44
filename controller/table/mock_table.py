"""A whole table on mock hardware: mock nodes and displays, the real links, the Table.

``MockTable`` is what ``truco-table run --mock`` plays on, what the tests drive, and
what ``replay --through mock`` feeds a transcript through: every action becomes the
button presses, holds and card taps a player would make (``controls.gestures_for``),
written as protocol frames by a simulated seat node on a pty, read back by the real
``SeatLink``, queued, and handled by the ``Table`` in order.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..engine import Action, Card, Game, HouseRules, RefusalCode
from ..hal.display import Display
from ..hal.mock import MockDeck, MockSeats
from ..hal.seatlink import LinkEvent
from .controls import Button, Gesture, gestures_for
from .notify import Notifier
from .service import ServiceConfig, TableService
from .table import DealReading, Phase, Table

__all__ = ["MockGpioPads", "MockTable", "MockTableError", "mock_gpio_target", "mock_target"]


class MockTableError(RuntimeError):
    """The mock hardware did not deliver what was sent (a bug, never a rules matter)."""


class MockTable:
    """A ``TableService`` wired to mock seat nodes; ``close()`` (or ``with``) stops the threads."""

    def __init__(
        self,
        rules: HouseRules,
        *,
        seed: int = 0,
        deal_reading: DealReading = DealReading.SEATS,
        game: Game | None = None,
        on_record: Callable[[str], None] | None = None,
        on_change: Callable[[], None] | None = None,
        timeout: float = 5.0,
        topology: str = "nodes",
        state_dir: Path | None = None,
        notifier: Notifier | None = None,
        watchdog_s: float | None = None,
        displays: Sequence[Display] | None = None,
    ) -> None:
        """``displays``: the seats' panels (default: the mock seats' luma ``dummy`` ones)."""
        self.deck = MockDeck(seed)
        self.timeout = timeout
        self.on_change = on_change
        self.seats = MockSeats(rules.players, self._on_event)
        self.service = TableService(
            ServiceConfig(rules, deal_reading, state_dir, watchdog_s),
            self.deck.lookup,
            self.seats.displays if displays is None else displays,
            notifier=notifier,
            game=game,
            on_record=on_record,
        )
        self.sent = 0  # counted events sent (presses, holds, tag on/off)
        self.gpio: MockGpioPads | None = None
        if topology == "gpio":
            self.gpio = MockGpioPads(rules.players, self._on_event)
        elif topology != "nodes":
            raise ValueError(f"topology must be nodes or gpio, not {topology!r}")
        self.seats.start()
        self._wait_connected()
        self.sent = self.service.handled

    @property
    def table(self) -> Table:
        return self.service.table

    @property
    def game(self) -> Game:
        return self.service.table.game

    @property
    def handled(self) -> int:
        return self.service.handled

    def _on_event(self, seat: int, event: LinkEvent) -> None:
        self.service.post(seat, event)  # called on the links' threads

    def _wait_connected(self) -> None:
        deadline = time.monotonic() + self.timeout
        while not all(self.table.node_ok) or not all(link.connected for link in self.seats.links):
            self.pump(0.05)
            if time.monotonic() > deadline:
                raise MockTableError("mock seat nodes did not connect")
        self.pump(0.0)

    def close(self) -> None:
        if self.gpio is not None:
            self.gpio.close()
        self.seats.close()
        self.service.close()

    def __enter__(self) -> MockTable:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ event loop

    def pump(self, wait: float) -> int:
        """Handle queued hardware events (waiting up to ``wait`` s for the first)."""
        done = self.service.step(wait)
        if done and self.on_change is not None:
            self.on_change()
        return done

    def settle(self) -> None:
        """Wait until the table has handled everything sent so far."""
        deadline = time.monotonic() + self.timeout
        while self.handled < self.sent:
            self.pump(0.05)
            if time.monotonic() > deadline:
                raise MockTableError(f"the table handled {self.handled} of {self.sent} events sent")

    # ------------------------------------------------------------------ a player's hands

    def perform(self, gesture: Gesture) -> None:
        """Make ``gesture``: each of its hardware events sent and handled in turn."""
        for kind, send in self.hardware_events(gesture):
            self.send_event(kind, send)

    def hardware_events(self, gesture: Gesture) -> list[tuple[str, Callable[[], None]]]:
        """The hardware events a gesture makes, in order, as (kind, send): ``press`` or
        ``hold`` (a frame from the seat node, or an edge on a GPIO pin), ``tag_on`` and
        ``tag_off`` (a card tapped: laid on the reader, then lifted)."""
        node = self.seats.nodes[gesture.seat]
        if gesture.kind == "tap":
            assert gesture.card is not None
            uid = self.deck.uid(gesture.card)
            return [("tag_on", lambda: node.tag_on(uid)), ("tag_off", lambda: node.tag_off(uid))]
        assert gesture.button is not None
        name, hold = gesture.button.value, gesture.kind == "hold"
        gpio = self.gpio
        if gpio is not None:
            return [(gesture.kind, lambda: gpio.push(gesture.seat, name, hold=hold))]
        return [(gesture.kind, lambda: node.hold(name) if hold else node.press(name))]

    def send_event(self, kind: str, send: Callable[[], None]) -> None:
        """Send one hardware event and wait until the table has handled it."""
        send()
        self.sent += 1
        self.settle()

    def press(self, seat: int, button: Button) -> None:
        self.perform(Gesture(seat, "press", button))

    def hold(self, seat: int, button: Button) -> None:
        self.perform(Gesture(seat, "hold", button))

    def tap(self, seat: int, card: Card) -> None:
        self.perform(Gesture(seat, "tap", card=card))

    def act(self, action: Action) -> RefusalCode | None:
        """Make ``action`` with the seat's pad and reader; returns the refusal, if any."""
        self.table.last = None
        for gesture in gestures_for(self.game, action, self.table.inputs[action.seat]):
            self.perform(gesture)
        last = self.table.last
        if last is None or last.action != action:
            got = "nothing" if last is None else str(last.action)
            raise MockTableError(f"the pads made {got}, not {action}")
        return last.code

    def deal(
        self, hands: Mapping[int, tuple[Card, ...] | list[Card]], dealer: int | None = None
    ) -> None:
        """Start a hand and tap the dealt cards on the seats' readers."""
        table = self.table
        if table.phase is Phase.WAITING or (
            table.phase is Phase.DEALING and dealer is not None and dealer != table.hand_dealer
        ):
            table.new_hand(dealer)
        if self.table.phase is not Phase.DEALING:
            return
        if self.table.deal_reading is DealReading.DEALER and len(hands) == self.game.players:
            dealer_seat = self.table.hand_dealer
            assert dealer_seat is not None
            n = self.game.players
            order = [(dealer_seat + 1 + i) % n for i in range(n)]
            for round_ in range(3):
                for seat in order:
                    self.tap(dealer_seat, list(hands[seat])[round_])
        else:
            for seat, cards in sorted(hands.items()):
                for card in cards:
                    self.tap(seat, card)
        if self._phase() is Phase.DEALING:
            dealer_seat = self.table.hand_dealer
            assert dealer_seat is not None
            self.hold(dealer_seat, Button.MAZO)
        if self._phase() is not Phase.PLAYING:
            raise MockTableError("the hand did not start after the deal")

    def _phase(self) -> Phase:
        return self.table.phase


class MockGpioPads:
    """Two-seat tables: pads on the Pi's GPIO, as gpiozero ``MockFactory`` pins.

    Real ``gpiozero.Button`` objects on mock pins, read by our ``GpioPad`` (its own
    debounce and hold). A press drives the pin low and high again; the pads' clock is a
    manual one, so a hold does not take 0.8 s of real time.
    """

    def __init__(self, players: int, on_event: Callable[[int, LinkEvent], None]) -> None:
        from gpiozero.pins.mock import MockFactory

        from ..hal.gpio_pad import DEFAULT_PINS, GpioPad

        if players != 2:
            raise ValueError("GPIO pads are for two-seat tables")
        self.factory = MockFactory()
        self.now = 1000.0
        self.pads = [
            GpioPad(seat, DEFAULT_PINS[seat], on_event, pin_factory=self.factory, clock=self.clock)
            for seat in range(players)
        ]

    def clock(self) -> float:
        return self.now

    def push(self, seat: int, button: str, *, hold: bool) -> None:
        pad = self.pads[seat]
        pin = self.factory.pin(pad.pins[button])
        pin.drive_low()
        self.now += 0.9 if hold else 0.05
        pad.poll()
        pin.drive_high()
        self.now += 0.05
        pad.poll()

    def close(self) -> None:
        for pad in self.pads:
            pad.close()
        self.factory.close()


class _MockTarget:
    """``replay --through mock``: each statement through the mock table's hardware."""

    def __init__(self, game: Game, topology: str = "nodes") -> None:
        self.mock = MockTable(game.rules, game=game, topology=topology)
        self.game = game

    def start_hand(self, dealer: int | None, deal: Mapping[int, tuple[Card, ...]]) -> None:
        self.mock.deal(deal, dealer)

    def act(self, action: Action) -> RefusalCode | None:
        try:
            return self.mock.act(action)
        except ValueError:
            # a number no pad can show (no hand has those points): the rules refuse it too
            code = self.game.refusal(action)
            if code is None:
                raise
            return code

    def close(self) -> None:
        self.mock.close()


def mock_target(game: Game) -> _MockTarget:
    """Seat nodes for every seat (buttons and readers over USB serial)."""
    return _MockTarget(game)


def mock_gpio_target(game: Game) -> _MockTarget:
    """Two seats with their pads on the Pi's GPIO (gpiozero mock pins), readers on nodes."""
    return _MockTarget(game, topology="gpio")
