"""A whole table on mock hardware, wired by the Pi's own ``build_hardware``.

``MockTable`` is what ``truco-table run --mock`` plays on, what the tests drive, and
what ``replay --through mock`` feeds a transcript through: every action becomes the
button presses, holds and card taps a player would make (``controls.gestures_for``).
The table's configuration (``mock_config``) goes through the same wiring as on a Pi
(``controller.hal.wiring``) with ``MockHardware`` parts:

- ``topology="nodes"``: a simulated seat node on a pty per seat writes the protocol
  frames, read back by the real ``SeatLink``;
- ``topology="gpio"`` (two seats): the buttons are gpiozero ``MockFactory`` pins under
  the real ``GpioPad``, the cards are tags laid on a simulated MFRC522 under the real
  ``SpiReader``, as on a two-seat table wired straight to the Pi.

Either way the events are queued and handled by the ``Table`` in order. The seat links
are read in the service loop's own wait (``TableService.step``, on the thread that calls
``pump``): no thread of the table's reads the nodes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..engine import Action, Card, Game, HouseRules, RefusalCode
from ..hal.display import Display, DisplayConfig
from ..hal.events import TagArrived, TagLeft
from ..hal.gpio_pad import DEFAULT_PINS
from ..hal.mock import MockDeck, MockHardware
from ..hal.mock_mfrc522 import SimTag
from ..hal.wiring import GpioSeat, Hardware, NodeSeat, build_hardware
from .chord import REFEREE_CHORD
from .config import TableConfig
from .controls import Button, Gesture, gestures_for
from .hardware import SeatStatus
from .notify import Notifier
from .service import ServiceConfig, TableService
from .table import DealReading, Phase, Table

__all__ = [
    "MockTable",
    "MockTableError",
    "mock_config",
    "mock_gpio_target",
    "mock_target",
]

READER_RESET_PIN = 25  # hardware/pinmap.toml: both readers' RST


def mock_config(
    rules: HouseRules,
    topology: str = "nodes",
    deal_reading: DealReading = DealReading.SEATS,
    panels: str = "pi",
) -> TableConfig:
    """A table's configuration as ``hardware/pinmap.toml`` describes it, for mock parts.

    ``panels``: ``"pi"``, every seat's panel on the Pi's bus (luma's ``dummy``), or
    ``"node"``, on its seat node (one cable per seat: a ``NodeDisplay`` whose windows the
    ``MockNode`` writes into its ``ram``)."""
    players = rules.players
    if topology not in ("nodes", "gpio"):
        raise ValueError(f"topology must be nodes or gpio, not {topology!r}")
    if topology == "gpio" and players != 2:
        raise ValueError("GPIO pads are for two-seat tables")
    if panels not in ("pi", "node"):
        raise ValueError(f"panels must be pi or node, not {panels!r}")
    if panels == "node" and topology != "nodes":
        raise ValueError("panels on the nodes need the seat nodes' topology")
    return TableConfig(
        rules=rules,
        deal_reading=deal_reading,
        topology=topology,
        nodes=tuple(NodeSeat(s, f"e66141{s:010x}") for s in range(players))
        if topology == "nodes"
        else (),
        gpio=tuple(GpioSeat(s, DEFAULT_PINS[s], reader_cs=s) for s in range(players))
        if topology == "gpio"
        else (),
        reader_reset_pin=READER_RESET_PIN,
        displays={
            s: DisplayConfig(mux_channel=s)
            if panels == "pi"
            else DisplayConfig(connected_to="node")
            for s in range(players)
        },
    )


class MockTableError(RuntimeError):
    """The mock hardware did not deliver what was sent (a bug, never a rules matter)."""


class MockTable:
    """A ``TableService`` wired to mock seat nodes; ``close()`` (or ``with``) stops them."""

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
        panels: str = "pi",
    ) -> None:
        """``displays``: the seats' panels (default: the mock seats' luma ``dummy`` ones,
        or with ``panels="node"`` the panels on the seat nodes, see ``mock_config``)."""
        self.deck = MockDeck(seed)
        self.timeout = timeout
        self.on_change = on_change
        self.config = mock_config(rules, topology, deal_reading, panels)
        self.parts = MockHardware()
        self.hardware: Hardware = build_hardware(
            self.config, self.parts, SeatStatus(self.config.status_file)
        )
        self.service = TableService(
            ServiceConfig(rules, deal_reading, state_dir, watchdog_s),
            self.deck.lookup,
            self.hardware.displays if displays is None else displays,
            notifier=notifier,
            game=game,
            on_record=on_record,
        )
        self.sent = 0  # counted events sent (presses, holds, tag on/off)
        # as the daemon wires it: the links post to the service on the loop's thread (its
        # wait reads them)
        self.hardware.start(self.service.post, self.service.bus)
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

    def _wait_connected(self) -> None:
        deadline = time.monotonic() + self.timeout
        links = self.hardware.links.values()
        while not all(self.table.node_ok) or not all(link.connected for link in links):
            self.pump(0.05)
            if time.monotonic() > deadline:
                raise MockTableError("mock seat nodes did not connect")
        self.pump(0.0)

    def close(self) -> None:
        self.hardware.close()
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
        if self.config.topology == "gpio":
            self._perform_on_gpio(gesture)
            self.settle()
            return
        for kind, send in self.hardware_events(gesture):
            self.send_event(kind, send)

    def hardware_events(self, gesture: Gesture) -> list[tuple[str, Callable[[], None]]]:
        """The hardware events a gesture makes at a seat node, in order, as (kind, send):
        ``press`` or ``hold`` (a frame from the node), ``tag_on`` and ``tag_off`` (a card
        tapped: laid on the reader, then lifted)."""
        node = self.parts.nodes[gesture.seat]
        if gesture.kind == "tap":
            assert gesture.card is not None
            uid = self.deck.uid(gesture.card)
            return [("tag_on", lambda: node.tag_on(uid)), ("tag_off", lambda: node.tag_off(uid))]
        assert gesture.button is not None
        name, hold = gesture.button.value, gesture.kind == "hold"
        return [(gesture.kind, lambda: node.hold(name) if hold else node.press(name))]

    def send_event(self, kind: str, send: Callable[[], None]) -> None:
        """Send one hardware event and wait until the table has handled it."""
        send()
        self.sent += 1
        self.settle()

    def _perform_on_gpio(self, gesture: Gesture) -> None:
        """A finger on a mock pin or a card on the simulated reader, on the mock clock."""
        parts, seat = self.parts, gesture.seat
        if gesture.kind == "tap":
            assert gesture.card is not None
            uid = self.deck.uid(gesture.card)
            reader = self.hardware.readers[seat]
            spi = parts.spi[seat]
            spi.put(SimTag(uid))
            self._poll_until(lambda: reader.present == uid, TagArrived(uid))
            spi.put()
            self._poll_until(lambda: reader.present is None, TagLeft(uid))
            self.sent += 2
            return
        assert gesture.button is not None
        pad = self.hardware.pads[seat]
        pin = parts.pin_factory.pin(pad.pins[gesture.button.value])
        pin.drive_low()
        parts.now += self.config.hold_s + 0.1 if gesture.kind == "hold" else 0.05
        pad.poll()
        pin.drive_high()
        parts.now += 0.05
        pad.poll()
        self.sent += 1

    def _poll_until(self, done: Callable[[], bool], what: object) -> None:
        for _ in range(100):  # 5 s on the mock clock: the reader's grace is 0.5 s
            self.hardware.poll()
            if done():
                return
            self.parts.now += 0.05
        raise MockTableError(f"the simulated reader did not report {what}")

    def press(self, seat: int, button: Button) -> None:
        self.perform(Gesture(seat, "press", button))

    def hold(self, seat: int, button: Button) -> None:
        self.perform(Gesture(seat, "hold", button))

    def tap(self, seat: int, card: Card) -> None:
        self.perform(Gesture(seat, "tap", card=card))

    def call_referee(self, seat: int) -> None:
        """Hold *quiero* and *no quiero* together at ``seat`` (``controller.table.chord``):
        on a seat node, its two HOLD frames; on GPIO, both pins low past the hold time."""
        first, second = sorted(REFEREE_CHORD)
        if self.config.topology != "gpio":
            node = self.parts.nodes[seat]
            self.send_event("hold", lambda: node.hold(first))
            self.send_event("hold", lambda: node.hold(second))
            return
        pad = self.hardware.pads[seat]
        pins = [self.parts.pin_factory.pin(pad.pins[name]) for name in (first, second)]
        for pin in pins:
            pin.drive_low()
        self.parts.now += self.config.hold_s + 0.1
        pad.poll()
        for pin in pins:
            pin.drive_high()
        self.parts.now += 0.05
        pad.poll()
        self.sent += 2
        self.settle()

    def act(self, action: Action) -> RefusalCode | None:
        """Make ``action`` with the seat's pad and reader; returns the refusal, if any."""
        self.table.last = None
        try:
            gestures = gestures_for(self.game, action, self.table.inputs[action.seat])
        except ValueError as error:  # a number no pad can enter (a declared 39)
            code = self.game.refusal(action)
            if code is None:
                raise MockTableError(str(error)) from error
            return code  # what the table says of it: no pad makes it, nothing changes
        for gesture in gestures:
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
