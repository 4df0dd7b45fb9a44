"""CPU per hardware event through the table's real path, one event at a time.

Bots play whole games (seeded; see ``READINGS``) on the mock table; every button press,
hold, card laid on a reader (tag on) and card lifted off it (tag off) is sent on its own
and waited for:

    seat node frame -> pty -> SeatLink thread -> queue -> TableService -> Table -> engine
    -> every seat's screen (screen_for, render_screen) -> OledDisplay -> DisplayWriter
    -> luma's ssd1306 on its own i2c interface -> a bus that counts the bytes

An event's CPU is the process CPU time (every thread: the links' readers, the service
loop) from the frame being written until the table has handled it and redrawn, minus
the CPU of writing the frame (the seat node's work, not the Pi's). Prints, for 2, 4 and
6 seats::

    players=6 events=... cpu_ms_mean=... cpu_ms_p99=... noop_events=... noop_cpu_ms_mean=...
    players=6 kind=press events=... cpu_ms_mean=... cpu_ms_p99=... noop_events=... ...

A *noop* event is one after which no byte went to any panel (a card lifted, a press
that changes nothing on any screen). ``bus_bytes_mean`` is the I2C bytes per event.

Left out: the kernel's side of the pty and of the I2C transfer (the ioctl is not made),
the time on the wire, starting each hand (the dealer's ``new_hand``, the table's timer
on a real table), the bots' thinking, and the seat nodes' heartbeats' share is in
(they are real traffic). Wall time is not reported: on a shared machine it measures
the neighbours. Run: ``.venv/bin/python bench/table.py [games]``.
"""

from __future__ import annotations

import itertools
import statistics
import sys
import time
from collections.abc import Callable

from controller.engine import HouseRules
from controller.hal.display import DisplayConfig, OledDisplay
from controller.hal.mock import CountingI2CBus, counting_i2c
from controller.table.mock_table import MockTable
from controller.table.run_mock import MockRun
from controller.table.table import DealReading

KINDS = ("press", "hold", "tag_on", "tag_off")
# Each seed is played twice: the deal read at the seats (every card tapped twice: dealt,
# played), and not read (hands unknown: envido proven by showing cards through the
# envido menu, the holds).
READINGS = (DealReading.SEATS, DealReading.NONE)


class MeteredTable(MockTable):
    """The mock table with real OLED displays on counting buses; times every event."""

    def __init__(
        self, rules: HouseRules, *, seed: int, deal_reading: DealReading = DealReading.SEATS
    ) -> None:
        self.buses: list[CountingI2CBus] = []
        displays = []
        for seat in range(rules.players):
            serial, bus = counting_i2c()
            self.buses.append(bus)
            displays.append(OledDisplay(DisplayConfig(), seat=seat, interface=serial))
        self.samples: list[tuple[str, float, int]] = []  # (kind, cpu s, bus bytes)
        super().__init__(rules, seed=seed, deal_reading=deal_reading, displays=displays)

    def send_event(self, kind: str, send: Callable[[], None]) -> None:
        sent_before = sum(bus.bytes for bus in self.buses)
        start = time.process_time()
        node_start = time.thread_time()
        send()
        node = time.thread_time() - node_start
        self.sent += 1
        self.settle()
        cpu = time.process_time() - start - node
        self.samples.append((kind, cpu, sum(bus.bytes for bus in self.buses) - sent_before))


def measure(players: int, games: int) -> list[tuple[str, float, int]]:
    samples: list[tuple[str, float, int]] = []
    for seed, reading in itertools.product(range(games), READINGS):
        rules = HouseRules(players=players)
        table = MeteredTable(rules, seed=seed, deal_reading=reading)
        run = MockRun(rules, seed=seed, human=None, mock=table, deal_reading=reading)
        try:
            run.play_out()
            samples += table.samples
        finally:
            run.close()
    return samples


def summary(samples: list[tuple[str, float, int]]) -> str:
    cpu = [c for _, c, _ in samples]
    noop = [c for _, c, sent in samples if sent == 0]
    p99 = statistics.quantiles(cpu, n=100)[98] if len(cpu) > 1 else cpu[0]
    noop_mean = f"{statistics.fmean(noop) * 1e3:.3f}" if noop else "-"
    return (
        f"events={len(samples)} cpu_ms_mean={statistics.fmean(cpu) * 1e3:.3f} "
        f"cpu_ms_p99={p99 * 1e3:.3f} noop_events={len(noop)} noop_cpu_ms_mean={noop_mean} "
        f"bus_bytes_mean={statistics.fmean(b for _, _, b in samples):.0f}"
    )


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    for players in (2, 4, 6):
        samples = measure(players, games)
        print(f"players={players} {summary(samples)}", flush=True)
        for kind in KINDS:
            some = [s for s in samples if s[0] == kind]
            if some:
                print(f"players={players} kind={kind} {summary(some)}", flush=True)


if __name__ == "__main__":
    main()
