"""A profiling aid: CPU per hardware event through an in-process mock table.

Not the figure the README quotes: ``bench/table.py`` measures the service the Pi runs
(``truco-table run --config`` as a process). This one steps the table in this process,
with no process boundary and no run loop of its own, which makes it the quicker to
profile (``py-spy``, ``pyinstrument``) the table's, the screens' and the writers' share.

Bots play whole games (seeded; see ``READINGS``) on the mock table, its record written
to a real state directory (``current.truco``, appended and fsynced, archived when won);
every button press, hold, card laid on a reader (tag on) and card lifted off it (tag
off) is sent on its own and waited for. Two topologies:

``topology=node`` (one cable per seat: the panels hang on the seat nodes)::

    seat node frame -> pty -> the service loop's wait (SeatBus: one select) -> SeatLink
    parse -> queue -> TableService -> Table -> engine -> every changed seat screen
    (screen_for, render_pages) -> NodeDisplay -> DisplayWriter -> NodePort: protocol 4's
    DU/DR display frames encoded -> pty; the node writes them into its RAM and answers
    the DACKs asked for (its heartbeats acknowledge the rest) -> read in the loop's waits

``topology=pi`` (panels on the Pi's own I2C)::

    ... -> render_pages -> OledDisplay -> DisplayWriter -> luma's ssd1306 on its own i2c
    interface -> a bus that counts the bytes

An event's CPU is the CPU time of the Pi's threads (each thread's own clock from the
kernel: the service loop's, which reads the seat nodes itself, and any other but the
simulated nodes'), from the frame being written until the table has handled it, redrawn,
and, on the nodes, every display update it sent has been written by its node and every
DACK it asked for read; less the CPU of writing the event's frame (the seat node's work,
not the Pi's) and of the wait for the simulated nodes to write what they were sent
(their work, on chips of their own on a real table; left to run in this process while
the next event is measured, it would take the interpreter from it). While an event is
measured the simulated nodes that hold the panels (``topology=node``) are paused
(``MockNode.pause``: their threads parked, not reading their ptys; what the Pi writes
waits there, as in a real node's USB buffer), from the end of the event before (once
they have written what they were sent and answered the DACKs asked for) to the end of
the event's own handling: left to run, each would wake at the first display frame it is
sent and take this process's interpreter from the loop, which would then pay the
hand-overs of the interpreter lock and six readers' wake-ups, costs a real node,
another processor, cannot put on the Pi. The wait for the
DACKs asked for steps the service loop (``TableService.step``: it reads them, and the
heartbeats that acknowledge the rest; each seat's ``NodePort`` hears them and sends
what waited for them), which is the Pi's work and counted (the bench's own look at
whether one is awaited is not). The simulated nodes' threads (their reading of the
display frames, their heartbeats and DACKs) are not counted. The interpreter switches
threads every 0.5 ms, as ``TableService.run`` sets it (the bench steps the service
itself), and the heap as a run's first table started is frozen out of the garbage
collector's full passes, as ``truco-table run`` freezes its own once started
(``freeze_heap``). Prints, for each topology::

    topology=node players=6 events=... cpu_ms_mean=... cpu_ms_p99=... noop_events=...
        noop_cpu_ms_mean=... panel_bytes_mean=... p99_set_by=tag_on:23,press:17,...
    topology=node players=6 kind=press events=... cpu_ms_mean=... ...
    topology=node players=6 what=deal events=... cpu_ms_mean=... ...
    topology=pi players=6 part=writer updates=... us_per_update_min=...

A *noop* event is one after which nothing went to any panel (a card lifted, a press that
changes nothing on any screen). ``panel_bytes_mean``: bytes per event to the panels (the
node topology: display frames on the pty; the pi topology: I2C bytes). ``p99_set_by``:
the events at or above the 99th percentile, by kind; ``what=`` splits the events by what
they did: ``deal`` (a hand's cards all read, play starts), ``hand_end`` (a hand scored),
``accepted`` (another action in the record), ``other`` (nothing recorded).
``part=writer`` (pi): the first game's frames, as the panels took them, replayed through
fresh ``OledDisplay``s alone (the writer's plan, luma's ``i2c``, the counting bus), CPU
per update, the least of five rounds: the writer's share without the neighbours' noise.

Left out: the kernel's side of the ptys and of the I2C transfer (the ioctl is not made),
the time on the wire, starting each hand (the dealer's ``new_hand``, the table's timer on
a real table), the bots' thinking, and a few microseconds of the measuring itself (the
threads' clocks read). The seat nodes' heartbeats' share is in (they are real
traffic). Wall time is not reported: on a shared machine it measures the
neighbours.

``--runs 3`` plays each topology three times and prints, after each run's lines, the
medians of their three headline figures (``runs=3 median_cpu_ms_mean=...
median_cpu_ms_p99=... median_noop_cpu_ms_mean=...``: what the targets are checked on).
The ``kind=``, ``what=`` and ``part=writer`` lines are the last run's. ``loadavg=``: the
machine's one-minute load average as the run ended.

Run: ``.venv/bin/python bench/table_inprocess.py [--games N] [--players 6] [--topology node pi]
[--runs 3]``.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from controller.engine import HouseRules
from controller.hal.display import DisplayConfig, OledDisplay
from controller.hal.display_bus import forget_plans
from controller.hal.mock import CountingI2CBus, counting_i2c
from controller.hal.node_display import NodeDisplay
from controller.table.mock_table import MockTable
from controller.table.run_mock import MockRun
from controller.table.service import SWITCH_INTERVAL_S, freeze_heap
from controller.table.table import DealReading

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import rig

#: the longest the simulated nodes may take to write what they were sent, or a DACK to
#: come: a bound for a broken link, never reached by a slow machine (the bench crashed at
#: load 25 with 2 s)
ACK_WAIT_S = 120.0
ACK_STEP_S = 0.05  # the longest one step of the loop waits for a DACK


def _pi_threads() -> list[int]:
    """The CPU clocks of the Pi's threads: every thread but the simulated nodes', the
    measuring (main) thread's last."""
    main = threading.current_thread()
    others = [
        time.pthread_getcpuclockid(thread.ident)
        for thread in threading.enumerate()
        if thread.ident is not None
        and thread is not main
        and not thread.name.startswith("mocknode")
    ]
    return [*others, time.pthread_getcpuclockid(main.ident or threading.get_ident())]


def _others_cpu(clocks: Sequence[int]) -> float:
    """The CPU time of the threads but the measuring one (the last clock)."""
    total = 0.0
    for clock in clocks[:-1]:
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            total += time.clock_gettime(clock)
    return total


def _cpu_before(clocks: Sequence[int]) -> float:
    """The threads' CPU time before an event: the event's own thread (the last clock)
    read last, nothing of the measuring after it. The other threads' clocks (a system
    call each) are the measuring's, not the event's; they sleep meanwhile."""
    others = _others_cpu(clocks)
    return others + time.clock_gettime(clocks[-1])


def _cpu_after(clocks: Sequence[int]) -> float:
    """The threads' CPU time after an event: the event's own thread read first."""
    own = time.clock_gettime(clocks[-1])
    return own + _others_cpu(clocks)


class RecordedOled(OledDisplay):
    """The Pi-bus panel, noting each frame it takes (to replay the writer alone)."""

    def __init__(
        self, config: DisplayConfig, *, seat: int, interface: Any, frames: list[tuple[int, bytes]]
    ) -> None:
        super().__init__(config, seat=seat, interface=interface)
        self.frames = frames

    def show_pages(self, pages: bytes) -> None:
        self.frames.append((self.seat, pages))
        super().show_pages(pages)


class MeteredTable(MockTable):
    """The mock table on one topology's real panels; times every event."""

    def __init__(
        self,
        rules: HouseRules,
        topology: str,
        *,
        seed: int,
        deal_reading: DealReading,
        state_dir: Path,
    ) -> None:
        self.topology = topology
        self.buses: list[CountingI2CBus] = []
        self.samples: list[rig.Sample] = []
        self.frames: list[tuple[int, bytes]] = []  # (seat, pages) as the panels took them
        displays: list[OledDisplay] | None = None
        if topology == "pi":
            displays = []
            for seat in range(rules.players):
                serial, bus = counting_i2c()
                self.buses.append(bus)
                displays.append(
                    RecordedOled(DisplayConfig(), seat=seat, interface=serial, frames=self.frames)
                )
        super().__init__(
            rules,
            seed=seed,
            deal_reading=deal_reading,
            displays=displays,
            state_dir=state_dir,
            panels="node" if topology == "node" else "pi",
        )
        self.nodes: list[NodeDisplay] = [
            d for d in self.service.displays if isinstance(d, NodeDisplay)
        ]
        deadline = time.monotonic() + self.timeout
        while not all(d.port.ready for d in self.nodes):  # the nodes' PANEL reports
            self.pump(0.01)
            if time.monotonic() > deadline:
                raise RuntimeError("the mock nodes' panels did not report")
        self._wait_nodes()
        self._wait_acks()
        self._clocks = _pi_threads()
        # the nodes the panels hang on, held while an event is measured (see the docstring)
        self._simulated = [self.parts.nodes[d.seat] for d in self.nodes]
        for simulated in self._simulated:
            simulated.pause(ACK_WAIT_S)

    def _wait_nodes(self) -> None:
        """Until every simulated node has written the last display update it was sent
        (its own work, on its own chip on a real table: not measured, and not left to
        run in this process while the next event is measured)."""
        deadline = time.monotonic() + ACK_WAIT_S
        for display in self.nodes:
            node = self.parts.nodes[display.seat]
            while (sent := display.port.awaiting) is not None and node.written != sent:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"seat {display.seat}: update {sent} not written")
                time.sleep(0.0002)

    def _acks_due(self) -> bool:
        """Whether a display update that asked for its DACK (protocol 4: when the window
        fills, a whole screen; protocol 3: all) has not had it yet."""
        return any(d.port.stats.acks < d.port.stats.asked for d in self.nodes)

    def _wait_acks(self) -> None:
        """Until every display update that asked for its DACK has it: the service's loop
        steps, which reads them (the Pi's work: its NodePorts hear them in the loop's
        wait)."""
        deadline = time.monotonic() + ACK_WAIT_S
        while self._acks_due():
            if time.monotonic() > deadline:
                raise RuntimeError("a display update had no DACK")
            self.service.step(ACK_STEP_S)

    def send_event(self, kind: str, send: Callable[[], None]) -> None:
        before = rig.game_mark(self.service.table.game)
        sent_before = self._panel_wire()
        start = _cpu_before(self._clocks)
        node_start = time.thread_time()
        send()
        node = time.thread_time() - node_start
        self.sent += 1
        self.settle()
        handled = _cpu_after(self._clocks)
        for simulated in self._simulated:
            simulated.resume()
        self._wait_nodes()  # the nodes' work, not measured
        cpu = handled - start - node
        if self._acks_due():  # (looked at unmeasured: the measuring's, not the Pi's)
            resumed = _cpu_before(self._clocks)
            self._wait_acks()  # the loop reading the DACKs: the Pi's work
            cpu += _cpu_after(self._clocks) - resumed
        for simulated in self._simulated:  # out of the interpreter until the next is measured
            simulated.pause(ACK_WAIT_S)
        what = rig.what_it_did(before, self.service.table.game)
        self.samples.append(rig.Sample(kind, what, cpu, self._panel_wire() - sent_before))

    def _panel_wire(self) -> int:
        if self.topology == "pi":
            return sum(bus.bytes for bus in self.buses)
        # the display frames' bytes on the pty (NodePort's reports: data and framing)
        return sum(d.writer.totals.bus_bytes for d in self.nodes)


def writer_replay(frames: Sequence[tuple[int, bytes]], players: int, rounds: int = 5) -> float:
    """CPU seconds per update of the Pi-bus writer alone (``OledDisplay.show_pages``:
    the plan and luma's ``i2c`` on the counting bus) replaying a game's frames on fresh
    panels, the least of ``rounds`` (one process, one thread: less noise from the
    neighbours than the events' figures), as the loop pays it:

    - each round starts as the game did, with no plan kept (``forget_plans``): the
      writers keep plans and their transfers across panels and games, and a second pass
      over the same frames (the rounds after the first; the first, after the games just
      played) would find every one;
    - the core's second-level cache is written over before each update, untimed: in
      the loop the rest of an event's work (the next seat's screen and pages, the
      table, the record's fsync, the nodes' frames read) runs between two updates and leaves
      little of the writer in it; back to back, the replay measured half of what the
      loop's own counters (``show_pages`` timed in the service) say;
    - each update is timed on its own, less the cost of reading the clock."""
    clock = time.thread_time_ns
    l2 = 2 << 20  # the first core's second-level cache, 2 MiB if its size cannot be read
    with contextlib.suppress(OSError, ValueError):
        for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
            if (index / "level").read_text().strip() == "2":
                size = (index / "size").read_text().strip()
                l2 = int(size.rstrip("KM")) << {"K": 10, "M": 20}.get(size[-1:], 0)
    sweep = bytearray(l2)
    lines = bytes(len(sweep[::64]))
    reading = min(-clock() + clock() for _ in range(1000))
    best = float("inf")
    for _ in range(rounds):
        forget_plans()
        displays = []
        for seat in range(players):
            serial, _bus = counting_i2c()
            displays.append(OledDisplay(DisplayConfig(), seat=seat, interface=serial))
            displays[-1].show_pages(bytes(1024))  # opened (luma's init), not timed
        spent = 0
        for seat, pages in frames:
            sweep[::64] = lines  # every cache line of it written
            start = clock()
            displays[seat].show_pages(pages)
            spent += clock() - start - reading
        best = min(best, spent / 1e9 / max(1, len(frames)))
    return best


def measure(
    topology: str, players: int, games: int, frames: list[tuple[int, bytes]] | None = None
) -> list[rig.Sample]:
    # The loop's thread switch as ``TableService.run`` sets it (the bench steps the
    # service itself): the interpreter's default, 5 ms, costs more CPU an event.
    sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
    samples: list[rig.Sample] = []
    frozen = False
    for seed, reading in itertools.product(range(games), rig.READINGS):
        rules = HouseRules(players=players)
        with tempfile.TemporaryDirectory(prefix="bench-table-") as state:
            table = MeteredTable(
                rules, topology, seed=seed, deal_reading=reading, state_dir=Path(state)
            )
            if not frozen:  # as ``truco-table run`` does once started (each run a table)
                freeze_heap()
                frozen = True
            run = MockRun(rules, seed=seed, human=None, mock=table, deal_reading=reading)
            try:
                run.play_out()
                samples += table.samples
                if frames is not None and not frames:  # the first game's, to replay
                    frames += table.frames
            finally:
                run.close()
    return samples


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--games", type=int, default=3, help="seeds (each played twice)")
    parser.add_argument("--players", type=int, nargs="+", default=[6])
    parser.add_argument(
        "--topology", nargs="+", choices=rig.TOPOLOGIES, default=list(rig.TOPOLOGIES)
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        help="runs of each topology; more than one also prints their medians (runs=...)",
    )
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    for topology, players in itertools.product(args.topology, args.players):
        head = f"topology={topology} players={players}"
        runs = []
        for run in range(args.runs):
            frames: list[tuple[int, bytes]] = []
            samples = measure(topology, players, args.games, frames)
            runs.append(rig.headline(samples))
            which = f" run={run + 1}" if args.runs > 1 else ""
            print(
                f"{head}{which} {rig.summary(samples, p99_kinds=True)} "
                f"loadavg={rig.load_average()}",
                flush=True,
            )
        if args.runs > 1:
            print(f"{head} {rig.medians(runs)}", flush=True)
        if frames:
            per_update = writer_replay(frames, players)
            print(
                f"{head} part=writer updates={len(frames)} us_per_update_min={per_update * 1e6:.1f}"
            )
        rig.print_breakdown(head, samples)


if __name__ == "__main__":
    main()
