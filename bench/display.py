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

Printed, one line per seat count (for the first seed)::

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

Both topologies, from the same events of ``--seeds`` games (30 by default, from
``--seed``) per table size (``--seats``, six by default). Every seat's screen goes to two
writers: one on the Pi's shared bus (as above) and one on the real ``NodePort`` over a
link that speaks the shipped protocol 5 (protocol 4's frames: a ``DU`` and its counted
block of ``DR`` windows, a ``DACK`` only when asked; counted as encoded; the node's own I2C
bytes counted by the firmware's panel driver, ``seatnode.panel``, on a counting bus).
The node's port is given each screen as the service gives it (``TableService._show``):
its kept tiles, only the changed tiles' windows sent (``NodePort.show_tiles``), a banner
or a card as a frame.
Printed per topology::

    topology=node seats=6 bus_khz=400 seeds=30 bytes_per_event_mean=... full_refresh_bytes=...
        last_panel_ms_p99=... last_panel_ms_max=... seeds_over_target=... (one line)
    topology=pi seats=6 bus_khz=100 ...   and   topology=pi seats=6 bus_khz=400 ...

``last_panel_ms``: from the event until the last changed panel of the table shows its new
image. Measured here: the Pi's CPU (thread CPU time of Table.handle, then per seat
screen_for + render_screen + the writer's diff and, for the nodes, the display frames).
Modelled: the Pi writes the shared bus seat after seat (9 clocks a byte at 100 or 400
kHz); a node gets its frames after ``USB_LATENCY_MS`` + bytes / ``USB_BYTES_PER_MS``,
handles each in ``node_frame_ms`` and writes its I2C bytes at 400 kHz, all nodes at the
same time; every panel then waits for its scan (``SCAN_MS``, a random phase per panel and
event; ``last_panel_ms_max`` takes the worst phase). ``node_frame_ms`` is the firmware's
own handling of a protocol 4 display frame (a ``DU`` or a ``DR`` of an update of two
windows) timed under the real MicroPython (unix port, this machine;
``bench/mpy/node_updates.py``) times the Pico factor measured between an emulated
RP2040 at 125 MHz and the unix port (``bench/pico.py``: 126 to 162; ``--pico-factor``,
the slow end by default; ``--node-frame-ms`` overrides the product);
``USB_BYTES_PER_MS`` is the node's own read loop's rate, measured in the emulator too.
A seed is over its target when its 99th percentile or its worst event is: nodes 15 /
20 ms, the Pi's bus 60 ms at the 99th percentile. The node's panel bus is I2C at
400 kHz as the guide wires it (``--node-bus spi`` models SPI, 8 clocks a byte, at
``--node-bus-khz``, 10 MHz by default). The node lines end with the worst event's
breakdown (``worst_pi_ms``: the Pi until the last changed seat's frames leave,
``worst_usb_ms``, ``worst_node_cpu_ms``, ``worst_bus_ms``, ``worst_scan_ms``): where
the time goes when the target is not met; ``after_pi_ms_p99``: the 99th percentile of
the last panel's time after the Pi's share (what ``bench/card_to_light.py`` adds to the
service's own).
``bytes_per_event`` is USB bytes for the nodes (``node_i2c_bytes...`` their
I2C bytes), shared-bus bytes for the Pi; ``full_refresh_bytes`` every panel sent whole.

Run: ``.venv/bin/python bench/display.py [--seed N] [--seeds 30] [--seats 2 4 6]
[--panel ssd1306|sh1106|ssd1309] [--smbus] [--node-frame-ms MS] [--scan-ms MS]
[--pico-factor 162] [--node-bus i2c|spi] [--node-bus-khz KHZ]``.
"""

from __future__ import annotations

import argparse
import binascii
import gc
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from controller.engine import CARDS, Action, Card, HouseRules, Kind
from controller.hal.display_bus import bus_writer
from controller.hal.display_planner import BusModel, DisplayWriter, Panel
from controller.hal.events import (
    ButtonHeld,
    ButtonPressed,
    DisplayAck,
    LinkEvent,
    PanelReport,
    TagArrived,
    TagLeft,
)
from controller.hal.frames import encode_counted, encode_frame, encode_update
from controller.hal.mock import MockDeck
from controller.hal.node_display import NodePort
from controller.hal.panels import Controller
from controller.render import screen as screen_module
from controller.render.screen import render_screen, render_tiles, screen_content
from controller.table.bots import Bot
from controller.table.controls import gestures_for
from controller.table.screens import screen_for
from controller.table.table import Phase, Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "firmware"))  # the node's own panel driver counts its I2C bytes
from seatnode.panel import Panel as NodePanel  # noqa: E402

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

# What is modelled, not measured (see the module docstring):
# SSD1306/SH1106/SSD1309 at the node's init settings scan a frame in D x K x MUX / Fosc
# = 1 x (2 + 2 + 50) x 64 / 370 kHz (typical oscillator) = 9.3 ms.
SCAN_MS = 1 * (2 + 2 + 50) * 64 / 370.0
USB_LATENCY_MS = 1.0  # a full-speed bulk transfer waits for the next 1 ms USB frame
# What the node's own USB read loop takes in (seatnode.main.UsbSerial: poll and one byte
# at a time, MicroPython's stdin gives no more): 2,000 bytes in 73 ms of emulated RP2040
# time (rp2040js, tests/pico), 27 bytes a millisecond; the bus itself carries far more.
USB_BYTES_PER_MS = 27.0
NODE_FRAME_MS = 1.0  # the Pico's time for one display frame, when nothing measured it
# RP2040 at 125 MHz against this machine's core, both MicroPython: measured by
# bench/pico.py, the same firmware workload timed with ticks_us in rp2040js and under the
# unix port here: 126 to 162 times (one TAGON's parse, 2.35 ms against 13.6 us; FULL
# updates 127). The slow end by default (``--pico-factor``): rp2040js has no flash wait
# states, and a real Pico is slower still where its XIP cache misses.
PICO_SLOWDOWN = 162.0
PICO_FACTORS = (126.0, 162.0)  # the range measured


class CountingInterface:
    """A luma-like serial interface that only counts (the writer prices the bytes)."""

    def __init__(self) -> None:
        self.calls = 0

    def command(self, *cmd: int) -> None:
        self.calls += 1

    def data(self, data: list[int]) -> None:
        self.calls += 1


class CountingLink:
    """Stands in for a seat's SeatLink under a NodePort, speaking the shipped protocol 5
    (the Pi's ``SeatLink`` with firmware 0.7; protocol 4's frames, the node's queue 8 KB:
    the port's window, which this bench never fills): the display frames it would write (their
    encoded length, a ``DU`` and its counted block of ``DR`` frames, as
    ``SeatLink.send_counted`` and ``send_update`` encode them), and what the node's own
    driver (firmware ``seatnode.panel``) then writes on the node's bus for their windows."""

    protocol = 5  # what NodePort asks the link (a link without it gets protocol 2's DW)

    def __init__(self, controller: Controller) -> None:
        self.panel = NodePanel(_CountingI2C(), controller.value)
        self.panel.ok = True
        self.seq = 0
        self.usb = self.frames = 0

    def send_counted(
        self,
        header: Callable[[int], tuple[str, tuple[str, ...]]],
        block: list[tuple[bytes, bytes]],
    ) -> int:
        data, self.seq = encode_counted(self.seq, header, block)
        self._count(data)
        return len(data)

    def _count(self, data: bytes) -> None:
        """A DU and its DR frames: their bytes, and the node's bus writes for them."""
        self.usb += len(data)
        lines = data.strip(b"\n").split(b"\n")
        self.frames += len(lines)
        for line in lines[1:]:  # the DR frames: one whole window each
            body = line[1:].rpartition(b"*")[0]
            fields = body.split(b" ")
            p0, p1, c0, c1 = (int(f) for f in fields[2:6])
            self.panel.window(p0, p1, c0, c1, 0, binascii.a2b_base64(fields[6]))

    def send_many(self, messages: list[tuple[str, tuple[str, ...]]]) -> bool:
        for kind, args in messages:
            self.usb += len(encode_frame(self.seq, kind, *args))
            self.seq += 1
            self.frames += 1
            if kind == "DW":
                _index, p0, p1, c0, c1, offset = (int(a) for a in args[:6])
                data = binascii.a2b_base64(args[6])
                self.panel.window(p0, p1, c0, c1, offset, data)
        return True

    def send_update(
        self, update: int, regions: bytes, full: bool, bodies: list[bytes], ask_over: int
    ) -> tuple[int, int, bool]:
        """Protocol 4's direct way (``SeatLink.send_update``): the same bytes as
        :meth:`send_counted`'s for the same frames, counted the same way."""
        data, self.seq, size, ask = encode_update(self.seq, update, regions, full, bodies, ask_over)
        self._count(data)
        return len(data), size, ask

    def take(self) -> tuple[int, int, int]:
        """(USB bytes, frames, node I2C bytes) since the last call."""
        out = (self.usb, self.frames, self.panel.bytes_sent)
        self.usb = self.frames = self.panel.bytes_sent = 0
        return out


class _CountingI2C:
    def writeto(self, address: int, buf: bytes) -> None:
        pass


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass(frozen=True)
class SeatCost:
    """One seat's share of an event (a seat whose screen did not change costs its render)."""

    render_s: float  # screen_for + render_screen
    pi_diff_s: float  # the Pi-bus writer's diff and plan
    pi_bytes: int  # on the Pi's shared bus, mux select included (0: unchanged)
    node_diff_s: float  # the node-port writer's diff, plan and display frames
    node_frames: int  # display frames (DU + DW) to the seat's node
    node_usb_bytes: int
    node_i2c_bytes: int  # what the node's driver puts on its own I2C bus


@dataclass
class EventCost:
    kind: str  # "deal", "play", "call", "other", "refused"
    bus_bytes: int
    seats_changed: int
    cpu_s: float
    scored: bool
    table_s: float = 0.0  # Table.handle (or new_hand)
    seats: tuple[SeatCost, ...] = ()


@dataclass
class Run:
    seats: int
    events: list[EventCost] = field(default_factory=list)
    render_s: list[float] = field(default_factory=list)
    render_cold_s: list[float] = field(default_factory=list)
    full_refresh: int = 0
    node_full_refresh: int = 0  # display frames of every panel sent whole (USB bytes)
    node_full_i2c: int = 0  # and what the nodes put on their I2C for it


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
            bus_writer(CountingInterface(), controller, bus=bus)
            for _ in range(players)
        ]
        self.links = [CountingLink(controller) for _ in range(players)]
        self.node_writers = []
        self.node_ports = []
        for link in self.links:
            port = NodePort(link, Panel(controller))
            port.direct = link  # as NodeDisplay.attach makes it a SeatLink's
            port.on_event(PanelReport(controller.value, 0x3C, True))
            self.node_ports.append(port)
            self.node_writers.append(DisplayWriter(port))
        self.run = Run(players)
        self.full_frame = self._full_refresh()

    def _full_refresh(self) -> int:
        total = 0
        self.node_full = self.node_full_i2c = 0
        for seat, writer in enumerate(self.writers):
            writer.invalidate()
            image = render_screen(screen_for(self.table, seat))
            total += writer.update(image).bus_bytes
            total += MUX_SELECT_BYTES
            node = self.node_writers[seat]
            node.invalidate()
            node.update(image)
            usb, _frames, i2c = self.links[seat].take()
            self._acknowledge(seat)
            self.node_full += usb
            self.node_full_i2c += i2c
        return total

    def _acknowledge(self, seat: int) -> None:
        """The node's DACK for what its port sent: it comes before the next event (the
        model's node writes an update in well under EVENT_SECONDS), so the Pi, which
        waits for each DACK, never holds a frame here."""
        port = self.node_ports[seat]
        if port.awaiting is not None:
            port.on_event(DisplayAck(port.awaiting))

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
        start = time.thread_time()
        if change is not None:
            change()
        table_s = time.thread_time() - start
        cost = 0
        changed = 0
        seats = []
        for s, writer in enumerate(self.writers):
            t0 = time.thread_time()
            screen = screen_for(self.table, s)
            image = render_screen(screen)
            t1 = time.thread_time()
            frame = writer.frame_bytes(image)  # both writers take the same page layout
            t_pages = time.thread_time()
            report = writer.update_frame(frame)
            t2 = time.thread_time()
            # the node's panel as the service sends it (TableService._show): the screen's
            # kept tiles, only the changed ones; a banner or a card as a frame
            tiles = render_tiles(screen_content(screen))
            if tiles is not None:
                self.node_ports[s].show_tiles(tiles, self.node_writers[s])
            else:
                self.node_writers[s].update_frame(frame)
            t3 = time.thread_time()
            if tiles is None:
                t3 += t_pages - t1  # the node writer converts the image too
            self.run.render_s.append(t1 - t0)
            pi_bytes = 0
            if not report.skipped:
                pi_bytes = report.bus_bytes + MUX_SELECT_BYTES
                cost += pi_bytes
                changed += 1
            usb, frames, i2c = self.links[s].take()
            self._acknowledge(s)
            seats.append(SeatCost(t1 - t0, t2 - t1, pi_bytes, t3 - t2, frames, usb, i2c))
        # The old figures: the table, every render and the Pi-bus diffs.
        cpu = table_s + sum(c.render_s + c.pi_diff_s for c in seats)
        if change is None and not changed:
            return  # nothing expired
        if counted:
            scored = self.game.score != before
            self.run.events.append(
                EventCost(kind, cost, changed, cpu, scored, table_s, tuple(seats))
            )

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
        if self.game.turn_of(seat) == seat or self.game.play_of(seat).telling is not None:
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
        self.run.node_full_refresh = self.node_full
        self.run.node_full_i2c = self.node_full_i2c
        return self.run

    def _bot_action(self) -> Action | None:
        start = next(iter(self.game.turns), 0)  # a seat whose turn it is (one per pica)
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


# ------------------------------------------------------------------ the two topologies


@dataclass(frozen=True)
class Model:
    """The parts of tap-to-photon that are not measured here (see the module docstring)."""

    scan_ms: float = SCAN_MS
    usb_latency_ms: float = USB_LATENCY_MS
    usb_bytes_per_ms: float = USB_BYTES_PER_MS
    node_frame_ms: float = NODE_FRAME_MS
    node_khz: float = 400.0
    node_bus: str = "i2c"  # the panel's bus on the node, as the guide wires it (or "spi")

    def node_bus_ms(self, count: int) -> float:
        """The node's bus time for ``count`` bytes: I2C 9 clocks a byte (8 and the ACK),
        SPI 8."""
        return count * (9 if self.node_bus == "i2c" else 8) / self.node_khz


@dataclass(frozen=True)
class Breakdown:
    """Where the last panel's time goes for one event (ms): the Pi's CPU until the last
    changed seat's frames are handed to USB, USB, the node's CPU, the node's bus, the
    panel's scan."""

    pi_ms: float = 0.0
    usb_ms: float = 0.0
    node_cpu_ms: float = 0.0
    bus_ms: float = 0.0
    scan_ms: float = 0.0

    @property
    def total(self) -> float:
        return self.pi_ms + self.usb_ms + self.node_cpu_ms + self.bus_ms + self.scan_ms


def last_panel_pi(event: EventCost, khz: float, phases: list[float], model: Model) -> float:
    """The Pi renders and writes seat after seat on one shared bus (the service's loop)."""
    t = event.table_s * 1e3
    last = 0.0
    for seat, cost in enumerate(event.seats):
        t += (cost.render_s + cost.pi_diff_s) * 1e3
        if cost.pi_bytes:
            t += cost.pi_bytes * 9 / khz
            last = max(last, t + phases[seat] * model.scan_ms)
    return last


def last_panel_node(event: EventCost, phases: list[float], model: Model) -> float:
    """The Pi renders seat after seat and hands each seat's frames to its USB link; every
    node then writes its own panel on its own bus, all at the same time."""
    return node_breakdown(event, phases, model).total


def node_breakdown(event: EventCost, phases: list[float], model: Model) -> Breakdown:
    """``last_panel_node``'s parts, for the seat whose panel shows last."""
    t = event.table_s * 1e3
    last = Breakdown()
    for seat, cost in enumerate(event.seats):
        t += (cost.render_s + cost.node_diff_s) * 1e3
        if cost.node_frames:
            parts = Breakdown(
                pi_ms=t,
                usb_ms=model.usb_latency_ms + cost.node_usb_bytes / model.usb_bytes_per_ms,
                node_cpu_ms=cost.node_frames * model.node_frame_ms,
                bus_ms=model.node_bus_ms(cost.node_i2c_bytes),
                scan_ms=phases[seat] * model.scan_ms,
            )
            if parts.total > last.total:
                last = parts
    return last


def topology_lines(
    runs: list[Run],
    model: Model,
    p99_target: float,
    max_target: float,
    node_target: tuple[float, float],
) -> list[str]:
    lines = []
    seats = runs[0].seats
    for topology, khz in (("node", model.node_khz), ("pi", 100.0), ("pi", 400.0)):
        rng = random.Random(f"scan {topology} {khz}")  # the panels' free-running scan
        all_ms: list[float] = []
        worst = 0.0
        over = 0
        sizes: list[int] = []
        full = 0
        worst_parts = Breakdown()
        after_pi: list[float] = []
        for run in runs:
            ms = []
            for event in run.events:
                if event.kind in ("new_hand", "expire"):
                    continue
                phases = [rng.random() for _ in event.seats]
                if topology == "node":
                    if not any(c.node_frames for c in event.seats):
                        continue
                    ms.append(last_panel_node(event, phases, model))
                    seen = node_breakdown(event, phases, model)
                    after_pi.append(seen.total - seen.pi_ms)
                    parts = node_breakdown(event, [1.0] * seats, model)
                    if parts.total > worst:
                        worst, worst_parts = parts.total, parts
                    sizes.append(sum(c.node_usb_bytes for c in event.seats))
                else:
                    if not event.seats_changed:
                        continue
                    ms.append(last_panel_pi(event, khz, phases, model))
                    worst = max(worst, last_panel_pi(event, khz, [1.0] * seats, model))
                    sizes.append(event.bus_bytes)
            ms.sort()
            seed_p99, seed_max = _quantile(ms, 0.99), ms[-1]
            p99_limit, max_limit = node_target if topology == "node" else (p99_target, max_target)
            over += seed_p99 > p99_limit or seed_max > max_limit
            all_ms += ms
            full = run.node_full_refresh if topology == "node" else run.full_refresh
        all_ms.sort()
        p99_limit, max_limit = node_target if topology == "node" else (p99_target, max_target)
        fields: dict[str, object] = {
            "topology": topology,
            "seats": seats,
            "bus_khz": f"{khz:.0f}",
            "seeds": len(runs),
            "events": len(all_ms),
            "bytes_per_event_mean": f"{statistics.fmean(sizes):.0f}",
            "bytes_per_event_max": max(sizes),
            "full_refresh_bytes": full,
            "mean_pct": f"{percent(statistics.fmean(sizes), full):.1f}",
            "last_panel_ms_p50": f"{_quantile(all_ms, 0.5):.1f}",
            "last_panel_ms_p99": f"{_quantile(all_ms, 0.99):.1f}",
            "last_panel_ms_max": f"{worst:.1f}",
            "target_ms_p99": f"{p99_limit:g}",
            "target_ms_max": f"{max_limit:g}",
            "seeds_over_target": over,
        }
        if topology == "node":
            node_i2c = [
                sum(c.node_i2c_bytes for c in e.seats)
                for run in runs
                for e in run.events
                if e.kind not in ("new_hand", "expire") and any(c.node_frames for c in e.seats)
            ]
            frames = [
                max(c.node_frames for c in e.seats)
                for run in runs
                for e in run.events
                if e.kind not in ("new_hand", "expire") and any(c.node_frames for c in e.seats)
            ]
            fields["node_i2c_bytes_per_event_mean"] = f"{statistics.fmean(node_i2c):.0f}"
            fields["node_frames_per_seat_max"] = max(frames)
            fields["node_frame_ms"] = f"{model.node_frame_ms:g}"
            fields["usb_bytes_per_ms"] = f"{model.usb_bytes_per_ms:g}"
            fields["protocol"] = CountingLink.protocol
            fields["node_bus"] = model.node_bus
            # the worst event's parts (what to shorten when the target is not reached)
            fields["worst_pi_ms"] = f"{worst_parts.pi_ms:.1f}"
            fields["worst_usb_ms"] = f"{worst_parts.usb_ms:.1f}"
            fields["worst_node_cpu_ms"] = f"{worst_parts.node_cpu_ms:.1f}"
            fields["worst_bus_ms"] = f"{worst_parts.bus_ms:.1f}"
            fields["worst_scan_ms"] = f"{worst_parts.scan_ms:.1f}"
            fields["after_pi_ms_p99"] = f"{_quantile(sorted(after_pi), 0.99):.1f}"
        fields["scan_ms"] = f"{model.scan_ms:g}"
        lines.append(" ".join(f"{key}={value}" for key, value in fields.items()))
    return lines


def node_frame_us_unix() -> float | None:
    """The firmware's own handling of one protocol 4 display frame (a DU or a DR, in an
    update of two windows) under the real MicroPython (the unix port, on this machine;
    ``bench/mpy/node_updates.py``), if a ``micropython`` is at hand."""
    found = Path(sys.executable).parent / "micropython"
    exe = str(found) if found.exists() else shutil.which("micropython")
    if exe is None:
        return None
    env = dict(os.environ, MICROPYPATH=str(ROOT / "firmware"))
    # protocol 4's updates as the table sends them most: a DU and two DR windows of two
    # pages by 40 columns (a card, a score), per frame (the DU and each DR)
    script = ROOT / "bench" / "mpy" / "node_updates.py"
    done = subprocess.run(
        [exe, str(script), "2", "2", "40", "30"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    match = re.search(r"node_frame_us_unix=([0-9.]+)", done.stdout)
    return float(match.group(1)) if match else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seed", type=int, default=1, help="the first seed")
    parser.add_argument("--seeds", type=int, default=30, help="games per table size")
    parser.add_argument("--seats", type=int, nargs="+", default=[6], choices=(2, 4, 6))
    parser.add_argument(
        "--panel", choices=[c.value for c in Controller], default="ssd1306", help="all panels"
    )
    parser.add_argument(
        "--smbus", action="store_true", help="32-byte SMBus blocks (default: 4096, i2c_rdwr)"
    )
    parser.add_argument(
        "--node-frame-ms",
        type=float,
        default=None,
        help="the Pico's time for one display frame (default: the MicroPython unix port's "
        f"on this machine x {PICO_SLOWDOWN:g}, else {NODE_FRAME_MS} ms)",
    )
    parser.add_argument("--scan-ms", type=float, default=SCAN_MS)
    parser.add_argument(
        "--pico-factor",
        type=float,
        default=PICO_SLOWDOWN,
        help="the emulated Pico's time over the unix port's (measured 126-162; default the "
        "slow end)",
    )
    parser.add_argument(
        "--node-bus",
        choices=("i2c", "spi"),
        default="i2c",
        help="the panel's bus on the seat node (default: I2C, as hardware/README.md wires it)",
    )
    parser.add_argument(
        "--node-bus-khz",
        type=float,
        default=None,
        help="its clock (default: 400 kHz for I2C, 10,000 kHz for SPI)",
    )
    args = parser.parse_args(argv)
    controller = Controller(args.panel)
    bus = BusModel.i2c(32 if args.smbus else 4096)
    measured = node_frame_us_unix() if args.node_frame_ms is None else None
    frame_ms = args.node_frame_ms
    if frame_ms is None:
        frame_ms = measured * args.pico_factor / 1000 if measured is not None else NODE_FRAME_MS
    khz = args.node_bus_khz or (400.0 if args.node_bus == "i2c" else 10_000.0)
    model = Model(
        scan_ms=args.scan_ms, node_frame_ms=round(frame_ms, 3), node_khz=khz, node_bus=args.node_bus
    )
    if measured is not None:
        print(f"node_frame_us_unix={measured:.1f} pico_slowdown={args.pico_factor:g}", flush=True)
    for players in args.seats:
        runs = []
        for seed in range(args.seed, args.seed + args.seeds):
            gc.collect()
            gc.disable()  # no collector pauses in the CPU times
            try:
                runs.append(Bench(players, seed, controller, bus).play())
            finally:
                gc.enable()
        print(summary(runs[0], bus, args.seed), flush=True)
        for line in topology_lines(runs, model, 60.0, float("inf"), (15.0, 20.0)):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
