"""Seat displays: render time per screen and bytes on the shared I2C bus per event.

A scripted game per table size (2, 4, 6 seats): seeded bots play a whole game through
the real ``Table`` (every card of every deal tapped on its seat's reader, every call
made with the pad gestures the mock table uses, now and then a player's mistake that is
refused). After each hardware event every seat's screen is drawn (``screen_for`` then
``render_screen``) and handed to that seat's ``DisplayWriter`` on a recording
interface, which counts what would go on the wire.

The displays share one I2C bus behind a TCA9548A: before a seat's panel is written its
channel is selected (a 2-byte write: address + channel mask). An event's bytes are the
sum over the seats whose frame changed of that select plus the writer's bytes (commands,
data, I2C address and control bytes; luma's ``i2c(port=...)`` sends blocks of up to
4096 bytes). ``full_refresh_bytes`` is every panel sent whole, selects included. The
clock advances 2 s per event, so a message (3 s) goes away two events later and its
removal is counted too.

Printed, one line per seat count::

    seats=6 events=... render_ms=... render_ms_max=... bytes_per_event_mean=...
    bytes_per_event_max=... full_refresh_bytes=... mean_pct=... play_pct=...
    call_pct=... score_pct=... bus_ms_400khz_max=... bus_ms_1mhz_max=...
    tap_to_photon_ms_400khz_max=...

``render_ms`` is the mean time of ``render_screen`` per seat screen over the game (its
tiles cached as in the running service), ``render_ms_cold`` the same with every cache
cleared before each screen. ``*_pct`` are mean bytes per event of a kind as a percent
of ``full_refresh_bytes``: ``play`` a card tapped, ``call`` a call or an answer
(truco ... mazo), ``score`` any event that changed the score. ``bus_ms_*_max`` is the
worst event's bytes at 400 kHz and 1 MHz (9 clock bits a byte), and
``tap_to_photon_ms_400khz_max`` models the worst event end to end: the CPU time measured
here for the table to handle it and for every seat's ``screen_for`` + ``render_screen``
+ diff, plus its bus time at 400 kHz.

Run: ``.venv/bin/python bench/display.py [--seed N] [--sh1106] [--smbus]``.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from controller.engine import CARDS, Action, Card, HouseRules, Kind
from controller.hal.display_writer import BusModel, Controller, DisplayWriter
from controller.hal.mock import MockDeck
from controller.hal.seatlink import ButtonHeld, ButtonPressed, LinkEvent, TagArrived, TagLeft
from controller.render import screen as screen_module
from controller.render.screen import render_screen
from controller.table.bots import Bot
from controller.table.controls import gestures_for
from controller.table.screens import screen_for
from controller.table.table import Phase, Table

MUX_SELECT_BYTES = 2  # TCA9548A: address byte + channel mask
EVENT_SECONDS = 2.0
MISTAKE_RATE = 0.04
CALLS = {
    Kind.TRUCO,
    Kind.RETRUCO,
    Kind.VALE_CUATRO,
    Kind.ENVIDO,
    Kind.REAL_ENVIDO,
    Kind.FALTA_ENVIDO,
    Kind.FLOR,
    Kind.CONTRAFLOR,
    Kind.CONTRAFLOR_AL_RESTO,
    Kind.CON_FLOR_ME_ACHICO,
    Kind.QUIERO,
    Kind.NO_QUIERO,
    Kind.MAZO,
}


_NEW_HAND = None


class CountingInterface:
    """A luma-like serial interface that only counts (the writer prices the bytes)."""

    def __init__(self) -> None:
        self.calls = 0

    def command(self, *cmd: int) -> None:
        self.calls += 1

    def data(self, data: list[int]) -> None:
        self.calls += 1


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class EventCost:
    kind: str  # "deal", "play", "call", "other", "refused"
    bus_bytes: int
    seats_changed: int
    cpu_s: float
    scored: bool


@dataclass
class Run:
    seats: int
    events: list[EventCost] = field(default_factory=list)
    render_s: list[float] = field(default_factory=list)
    render_cold_s: list[float] = field(default_factory=list)
    full_refresh: int = 0


class Bench:
    def __init__(self, players: int, seed: int, controller: Controller, bus: BusModel) -> None:
        self.rng = random.Random(seed)
        self.deck = MockDeck(seed)
        self.clock = Clock()
        self.table = Table(HouseRules(players=players), self.deck.lookup, clock=self.clock)
        self.game = self.table.game
        self.players = players
        self.bots = [Bot(s, random.Random(seed * 1009 + s)) for s in range(players)]
        self.hands: dict[int, tuple[Card, ...]] = {}
        self.writers = [
            DisplayWriter.for_interface(CountingInterface(), controller, bus=bus)
            for _ in range(players)
        ]
        self.run = Run(players)
        self.full_frame = self._full_refresh()

    def _full_refresh(self) -> int:
        total = 0
        for seat, writer in enumerate(self.writers):
            writer.invalidate()
            total += writer.update(render_screen(screen_for(self.table, seat))).bus_bytes
            total += MUX_SELECT_BYTES
        return total

    # ------------------------------------------------------------------ events

    def event(self, seat: int, event: LinkEvent | None, kind: str, counted: bool = True) -> None:
        """One hardware event (``None``: the table starts a new hand) and every redraw.

        Time passes first; messages that expired meanwhile are taken off by a redraw of
        their own (the service's timer), counted as an ``expire`` event."""
        if counted:
            self.clock.now += EVENT_SECONDS
            self.redraw(None, "expire")
        self.redraw(lambda: self._apply(seat, event), kind, counted)

    def _apply(self, seat: int, event: LinkEvent | None) -> None:
        if event is _NEW_HAND:
            self.table.new_hand()
        else:
            self.table.handle(seat, event)

    def redraw(self, change: Callable[[], None] | None, kind: str, counted: bool = True) -> None:
        before = self.game.score
        start = time.perf_counter()
        if change is not None:
            change()
        cost = 0
        changed = 0
        for s, writer in enumerate(self.writers):
            screen = screen_for(self.table, s)
            t0 = time.perf_counter()
            image = render_screen(screen)
            self.run.render_s.append(time.perf_counter() - t0)
            report = writer.update(image)
            if not report.skipped:
                cost += report.bus_bytes + MUX_SELECT_BYTES
                changed += 1
        cpu = time.perf_counter() - start
        if change is None and not changed:
            return  # nothing expired
        if counted:
            scored = self.game.score != before
            self.run.events.append(EventCost(kind, cost, changed, cpu, scored))

    def deal(self) -> None:
        self.event(0, _NEW_HAND, "new_hand")
        cards = self.rng.sample(CARDS, 3 * self.players)
        self.hands = {s: tuple(cards[3 * s : 3 * s + 3]) for s in range(self.players)}
        for seat in range(self.players):
            for card in self.hands[seat]:
                uid = self.deck.uid(card)
                self.event(seat, TagArrived(uid), "deal")
                self.event(seat, TagLeft(uid), "deal", counted=False)

    def act(self, action: Action, kind: str) -> None:
        for gesture in gestures_for(self.game, action, self.table.inputs[action.seat]):
            seat = gesture.seat
            if gesture.kind == "tap":
                assert gesture.card is not None
                uid = self.deck.uid(gesture.card)
                self.event(seat, TagArrived(uid), kind)
                self.event(seat, TagLeft(uid), kind, counted=False)
            else:
                assert gesture.button is not None
                cls = ButtonHeld if gesture.kind == "hold" else ButtonPressed
                self.event(seat, cls(gesture.button.value), kind)

    def mistake(self) -> None:
        """A player taps a card out of turn, or presses quiero with nothing to answer."""
        seat = self.rng.randrange(self.players)
        if self.game.turn == seat or self.game.telling is not None:
            return
        if self.rng.random() < 0.5 and self.hands.get(seat):
            played = set(self.game.seen_cards(seat))
            left = [c for c in self.hands[seat] if c not in played]
            if left:
                self.act(Action(seat, Kind.PLAY, card=left[0]), "refused")
                return
        if not self.game.legal_actions.for_seat(seat):
            self.act(Action(seat, Kind.QUIERO), "refused")

    def play(self) -> Run:
        for _ in range(20000):
            if self.game.winner is not None:
                break
            if self.table.phase is Phase.WAITING:
                self.deal()
                continue
            if self.rng.random() < MISTAKE_RATE:
                self.mistake()
                continue
            action = self._bot_action()
            if action is None:
                raise RuntimeError("the bots are stuck")
            kind = (
                "play" if action.kind is Kind.PLAY else "call" if action.kind in CALLS else "other"
            )
            self.act(action, kind)
        self.run.full_refresh = self.full_frame
        return self.run

    def _bot_action(self) -> Action | None:
        start = self.game.turn or 0
        for i in range(self.players):
            seat = (start + i) % self.players
            action = self.bots[seat].choose(self.game, self.hands.get(seat))
            if action is not None:
                return action
        return None


def cold_render_times(seed: int, players: int, samples: int = 200) -> list[float]:
    """``render_screen`` with every cache cleared first (the worst case)."""
    bench = Bench(players, seed, Controller.SSD1306, BusModel.i2c(4096))
    screens = []
    for seat in range(players):
        screens.append(screen_for(bench.table, seat))
    times = []
    clear: Callable[[], None] = screen_module.clear_caches
    for i in range(samples):
        clear()
        t0 = time.perf_counter()
        render_screen(screens[i % len(screens)])
        times.append(time.perf_counter() - t0)
    return times


def _quantile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def percent(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole else 0.0


def summary(run: Run, bus: BusModel, seed: int) -> str:
    events = [e for e in run.events if e.kind not in ("new_hand", "expire")]  # taps, presses
    new_hands = [e.bus_bytes for e in run.events if e.kind == "new_hand"]
    expiries = [e.bus_bytes for e in run.events if e.kind == "expire"]
    costs = [e.bus_bytes for e in events]
    full = run.full_refresh

    def kind_pct(pred: Callable[[EventCost], bool]) -> float:
        chosen = [e.bus_bytes for e in events if pred(e)]
        return percent(statistics.fmean(chosen), full) if chosen else 0.0

    worst = max(events, key=lambda e: e.bus_bytes)
    bus_400 = bus.seconds(worst.bus_bytes, 400e3) * 1e3
    bus_1m = bus.seconds(worst.bus_bytes, 1e6) * 1e3
    photon = sorted(e.cpu_s * 1e3 + bus.seconds(e.bus_bytes, 400e3) * 1e3 for e in events)
    cold = cold_render_times(seed, run.seats)
    fields = {
        "seats": run.seats,
        "events": len(events),
        "render_ms": f"{statistics.fmean(run.render_s) * 1e3:.3f}",
        "render_ms_max": f"{max(run.render_s) * 1e3:.3f}",
        "render_ms_cold": f"{statistics.fmean(cold) * 1e3:.3f}",
        "bytes_per_event_mean": f"{statistics.fmean(costs):.0f}",
        "bytes_per_event_max": max(costs),
        "full_refresh_bytes": full,
        "mean_pct": f"{percent(statistics.fmean(costs), full):.1f}",
        "play_pct": f"{kind_pct(lambda e: e.kind == 'play'):.1f}",
        "call_pct": f"{kind_pct(lambda e: e.kind == 'call'):.1f}",
        "score_pct": f"{kind_pct(lambda e: e.scored):.1f}",
        "bus_ms_400khz_max": f"{bus_400:.1f}",
        "bus_ms_1mhz_max": f"{bus_1m:.1f}",
        "cpu_ms_p50": f"{statistics.median(e.cpu_s for e in events) * 1e3:.2f}",
        "tap_to_photon_ms_400khz_p50": f"{_quantile(photon, 0.5):.1f}",
        "tap_to_photon_ms_400khz_p99": f"{_quantile(photon, 0.99):.1f}",
        "tap_to_photon_ms_400khz_max": f"{photon[-1]:.1f}",
        "new_hand_bytes_max": max(new_hands, default=0),
        "expire_bytes_max": max(expiries, default=0),
    }
    return " ".join(f"{key}={value}" for key, value in fields.items())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sh1106", action="store_true", help="SH1106 panels (default SSD1306)")
    parser.add_argument(
        "--smbus", action="store_true", help="32-byte SMBus blocks (default: 4096, i2c_rdwr)"
    )
    args = parser.parse_args(argv)
    controller = Controller.SH1106 if args.sh1106 else Controller.SSD1306
    bus = BusModel.i2c(32 if args.smbus else 4096)
    for players in (2, 4, 6):
        gc.collect()
        gc.disable()  # no collector pauses in the CPU times
        try:
            run = Bench(players, args.seed, controller, bus).play()
        finally:
            gc.enable()
        print(summary(run, bus, args.seed), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
