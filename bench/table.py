"""CPU per player's event of the service the Pi runs: ``truco-table run --config``.

The service is started as systemd starts it, a process of its own
(``python -m controller.cli run --config table.toml``, ``NOTIFY_SOCKET`` set, in its state
folder), on the configuration ``scripts/install-pi`` writes: ``systemd/table.toml`` and
the pin maps of ``hardware/`` copied into a configuration folder, then edited as a bar
owner does (six players, the Picos' folder, the state folder; ``topology=pi`` points
``pinmap`` at ``pinmap-mux.toml``). ``next_deal_after_s`` is the shipped file's (3 s:
after a hand ends the service deals the next one by its own timer; the bench waits for
it, so a run takes some four minutes): that deal is no player's event, so it is not one
of the events measured, and its CPU is printed apart (``timer_deals=``,
``timer_deal_cpu_ms_mean=``: net of the idle baseline over the seconds waited, so
rougher than an event's). ``--next-deal-after-s 0`` runs the stress case instead: the
next deal started within the event that ended the hand, counted there (what the
benchmarks page's first seven passes ran). ``status_file`` is in the bench's folder.

Six seat nodes are simulated in this process, each on a pseudo-terminal published under
a by-id folder as udev publishes real Picos, speaking the shipped protocol 5 (HELLO,
heartbeats every second carrying ``written``, a ``DACK`` only when a ``DU`` asks for
one, the firmware's display queue of 8 KB and 128 updates: ``MockNode``); with
``topology=node`` the panels hang on them and they decode every display frame into their
panel's RAM. With ``topology=pi`` the panels are on the Pi's I2C behind the
multiplexer: the service's own ``OledDisplay`` and luma open them, and only smbus2's bus
is replaced by one that counts the bytes instead of calling the kernel
(``bench/pi_i2c/sitecustomize.py``). The record is written in a real temporary state
folder (appended and fsynced, archived when won), the heap frozen as ``run`` freezes it.

Bots play whole games (seeded; each seed with the deal read at the seats and with hands
unknown). Which event a player makes next is decided on a shadow table in this process
(``MockTable``, the same rules and events); each event (a press, a hold, a card laid on a
reader, a card lifted) goes to the real service alone and is waited for: until the
service has read every byte the nodes sent, its loop is back in its wait (the same
system call it idles in) with nothing unread on any port, and every node has read and
written what the service sent it (and the service has read the DACKs that asked for);
twice in a row. The event's CPU is the service process's, every thread, from the kernel
(``/proc/PID/task/*/schedstat``: nanoseconds run), from before the frame is written to
then. The service's idle CPU (the heartbeats, its timers) is measured for ``IDLE_S``
seconds before the games and subtracted, at its rate, for each event's wall time; both
are printed, and the share of it spent in the kernel (``system_pct``: the process's
system time over its user and system time while the games ran, in the kernel's ticks:
system calls, the pty's and the file system's work). At each game's end the real
record is compared with the shadow's, and with ``topology=node`` every panel's RAM with
the screen the shadow table says it shows.

Prints key=value lines, for each topology::

    topology=node players=6 build=pure events=... cpu_ms_mean=... cpu_ms_p99=...
        noop_events=... noop_cpu_ms_mean=... panel_bytes_mean=... p99_set_by=...
        hands=... timer_deals=... timer_deal_cpu_ms_mean=... idle_cpu_ms_per_s=...
        raw_cpu_ms_mean=... raw_noop_cpu_ms_mean=... dacks=... node_overflows=0 loop_cpus=...
        event_gap_ms_median=... floor_noop_us=... floor_fsync_us=... host_ref_us_p10=...
        host_slow_hands=K/N
        host_fast_events=... host_fast_cpu_ms_mean=... host_fast_cpu_ms_p99=...
        host_fast_noop_cpu_ms_mean=... host_slow_cpu_ms_mean=... host_slow_noop_cpu_ms_mean=...
        service_python=... loadavg=...
    topology=node players=6 build=pure kind=press events=... cpu_ms_mean=... ...
    topology=node players=6 build=pure what=deal events=... cpu_ms_mean=... ...

``cpu_ms_*``: net of the idle baseline (``raw_*``: as read). A *noop* event is one after
which nothing went to any panel (a card lifted, a press that changes no screen).
``panel_bytes_mean``: the display frames' bytes on the ptys (node) or the I2C bytes (pi)
per event. ``dacks``: the ``DACK``s the nodes sent (the updates that asked for one),
from the service's start to the games' end, every game of the run; ``node_overflows``:
times a node's display queue overflowed (a Pi past its window: never). ``p99_set_by``:
the events at or above the 99th percentile, by kind and what they did; ``what=``:
``deal`` (a hand's cards all read, play starts), ``hand_end`` (a hand scored),
``accepted`` (another action in the record), ``other`` (nothing recorded).
``--runs 3`` plays each topology three times and prints the medians of the headline
figures (``runs=3 median_cpu_ms_mean=... median_cpu_ms_p99=...
median_noop_cpu_ms_mean=...``: what the targets are checked on); the ``kind=`` and
``what=`` lines are the last run's. ``loop_cpus``: the CPUs the service's loop thread
may run on once it is up, as the kernel lists them (``[table] loop_cpu`` of the
configuration keeps it on one: ``1`` on a two-core machine; each game's, ``/`` between
when they differ). ``event_gap_ms_median``: how long the service was quiet before a
player's event, at the median (the bench's own work between events; the service settled
up to two of its looks, 0.4 ms, before); ``floor_noop_us``: what a bare process that
only waits in ``epoll`` and reads the frame pays for a card lifted at that pace
(``bench/floor.py --gap-ms``, 500 no-ops after the run): the machine's floor under
``noop_cpu_ms_mean`` as the run found it (on a virtual machine a wake can cost more the
longer the process slept before it). ``floor_fsync_us``: the CPU the same bare process's
thread spends in the ``fsync`` of a statement appended to a record in the run's folder
(200 of them after the no-ops, each followed by an update to the six ports), the disk's
share of an action as the run found it: this machine's ext4 writes the blocks back in
the caller, and what that costs moves from one day to the next. ``host_*``: the host's
speed, a reading aid (``bench/host.py``): at each hand's start, while the service is
idle, a fixed piece of Python is timed on the loop's CPU (a yardstick of some
microseconds); a hand is *slow* when its yardstick is over 1.5 times the run's tenth
percentile (a virtual machine's CPU can run the same code at half its speed for
seconds, as the host places it), and the headline figures are printed again for the
events of the fast hands and of the slow ones; with ``--runs`` the medians line has the
fast hands' too (``median_host_fast_*``). The targets are checked on the whole run's
figures, never on these. ``loadavg``: the one-minute load average as the run ended.
``--build compiled`` runs the service on ``build/compiled`` (``scripts/compile``).
``--node-protocol 4`` makes the simulated nodes speak protocol 4 at most, as firmware 0.6
(the 2 KB window): the shipped protocol 5's gain measured in one tree.

Left out: the kernel's side of the I2C transfer (topology pi: no ``ioctl``), the USB
wire and the nodes' own work (their threads are this process's, not the service's), the
bots' thinking and the shadow table (this process). Wall time is not reported: on a
shared machine it measures the neighbours. ``bench/table_inprocess.py`` steps an
in-process table instead (a profiling aid, no process boundary, no run loop).

Run: ``.venv/bin/python bench/table.py [--games N] [--players 6] [--topology node pi]
[--runs 3] [--build pure|compiled]``.
"""

from __future__ import annotations

import argparse
import array
import contextlib
import fcntl
import itertools
import math
import mmap
import os
import re
import select
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
import tomllib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from controller.engine import Card, HouseRules
from controller.hal.deck import Deck, DeckRegistry, save_registry
from controller.hal.events import PROTOCOL_VERSION, PROTOCOL_VERSIONS
from controller.hal.frames import encode_frame
from controller.hal.mock import MockDeck, MockNode
from controller.render.screen import render_pages, screen_content
from controller.table.config import load_config
from controller.table.controls import Gesture
from controller.table.mock_table import MockTable
from controller.table.run_mock import MockRun
from controller.table.screens import screen_for
from controller.table.table import DealReading, Phase
from controller.transcript import write

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.floor import measure_floor  # noqa: E402
from bench.host import reference_us, slow_above, slow_marks, tenth_percentile  # noqa: E402
from bench.rig import (  # noqa: E402
    READINGS,
    TOPOLOGIES,
    Sample,
    game_mark,
    headline,
    load_average,
    medians,
    ms,
    plugged,
    print_breakdown,
    summary,
    what_it_did,
)

IDLE_S = 3.0  # the idle baseline's length
POLL_S = 0.0002  # how often the bench looks whether an event is done
FLOOR_EVENTS = 500  # the bare process's no-ops at the run's pace (``floor_noop_us``)
FSYNC_EVENTS = 200  # its statements appended and synced after them (``floor_fsync_us``)
#: the longest an event may take before the bench says the service is stuck (a bound
#: for a broken service, never reached by a slow one: minutes of a loaded machine)
STUCK_S = 120.0
READY_S = 180.0  # the same, for the service's start-up (READY=1)
I2C_BASE = 10  # the fake mux channels' bus numbers: i2c-10, i2c-11, ...


class BenchNode(MockNode):
    """A seat node of the shipped protocol (MockNode's, 5) whose every byte in and out is
    counted, and whose reading is done under a lock (so the bench can tell "read and
    handled" from "in flight")."""

    def __init__(
        self, seat: int, serial: str, *, panel: bool, protocol: int = PROTOCOL_VERSION
    ) -> None:
        super().__init__(seat, serial, panel=panel, protocol=protocol)
        self.dacks = 0  # DACKs sent (updates that asked for one)
        self.sent_bytes = 0
        self.display_bytes = 0  # the display frames' bytes the Pi sent (DU and blocks)
        self.work = threading.Lock()

    def send(self, kind: str, *args: str) -> None:
        with self._lock:
            frame = encode_frame(self._seq, kind, *args)
            self._seq += 1
            try:
                os.write(self._master, frame)
            except BlockingIOError:  # nobody reads the Pi's side: dropped, as USB does
                self.dropped += 1
                return
            self.sent_bytes += len(frame)
            self.dacks += kind == "DACK"

    def _line(self, line: bytes) -> None:
        if line[1:].split(b" ", 2)[1:2] in ([b"DU"], [b"DW"], [b"DT"]):  # DT: --ablate text
            self.display_bytes += len(line) + 1
        super()._line(line)

    def _regions(self, update: int, regions: int, block: bytes, ack: bool) -> None:
        self.display_bytes += len(block)
        super()._regions(update, regions, block, ack)

    def _run(self) -> None:  # MockNode's loop, its reading under ``work``
        started = next_beat = time.monotonic()
        while not self._stop.is_set():
            wait = max(0.0, next_beat - time.monotonic())
            try:
                ready, _, _ = select.select([self._master, self._wake_r], [], [], wait)
            except (OSError, ValueError):
                return
            if self._stop.is_set():
                return
            with self.work:
                if self._wake_r in ready:
                    with contextlib.suppress(OSError):
                        os.read(self._wake_r, 4096)
                now = time.monotonic()
                if now >= next_beat:
                    next_beat = now + self.heartbeat_s
                    written = "-" if self.written is None else str(self.written)
                    with contextlib.suppress(OSError):
                        self.send("HB", str(int(now - started)), "0", "OK", written)
                if self._master in ready:
                    try:
                        data = os.read(self._master, 65536)
                    except OSError:
                        return
                    self._buffer += data
                    self._take_input()

    def idle(self) -> bool:
        """Nothing the Pi wrote waits unread, and nothing read is being handled."""
        with self.work:
            return _unread(self._master) == 0 and not self._buffer

    def unread_by_pi(self) -> int:
        return _unread(self._slave)


def _unread(fd: int) -> int:
    """The bytes waiting to be read on ``fd``, a pty's end. ``FIONREAD`` alone counts only
    what the line discipline holds: a write a moment ago may still sit in the pty's flip
    buffer, whose work the kernel runs later (seen right after one write in about one
    read in five). A poll with no timeout runs that work first (``n_tty_poll``), so the
    bytes are counted and no event's frames are taken for the next event's."""
    try:
        ready = select.select([fd], [], [], 0)[0]
    except (OSError, ValueError):
        return 0
    buf = array.array("i", [0])
    try:
        fcntl.ioctl(fd, termios.FIONREAD, buf, True)
    except OSError:
        return 0
    return max(buf[0], 1 if ready else 0)


class Service:
    """``truco-table run --config`` in a process of its own, read from /proc."""

    def __init__(
        self, config: Path, state: Path, env: dict[str, str], log: Path, python: str
    ) -> None:
        notify = state.parent / "notify"
        with contextlib.suppress(FileNotFoundError):
            notify.unlink()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.bind(str(notify))
        self._log = log.open("ab")
        self.proc = subprocess.Popen(
            [python, "-m", "controller.cli", "run", "--config", str(config)],
            cwd=state,  # the unit's WorkingDirectory
            env={**env, "NOTIFY_SOCKET": str(notify), "PYTHONUNBUFFERED": "1"},
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        self.pid = self.proc.pid
        self.idle_call: str | None = None  # the system call its loop waits in

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_S
        while True:
            self.alive()
            ready, _, _ = select.select([self._sock], [], [], 0.5)
            if ready and self._sock.recv(4096).startswith(b"READY=1"):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the service sent no READY=1 in {READY_S:.0f} s")

    def alive(self) -> None:
        if self.proc.poll() is not None:
            raise RuntimeError(f"the service exited with status {self.proc.returncode}")

    def cpu_ns(self) -> int:
        """Nanoseconds every thread of the service has run (the kernel's schedstat)."""
        total = 0
        for task in os.listdir(f"/proc/{self.pid}/task"):
            path = f"/proc/{self.pid}/task/{task}/schedstat"
            with contextlib.suppress(OSError), open(path, "rb") as f:
                total += int(f.read().split()[0])
        return total

    def user_system(self) -> tuple[int, int]:
        """The process's user and system CPU so far, in the kernel's ticks."""
        with open(f"/proc/{self.pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[11]), int(fields[12])

    def read_bytes(self) -> int:
        """The bytes its read() calls returned (``rchar``), every thread."""
        with open(f"/proc/{self.pid}/io", "rb") as f:
            for line in f:
                if line.startswith(b"rchar:"):
                    return int(line.split()[1])
        return 0

    def loop_call(self) -> str | None:
        """The system call the loop's (main) thread is in; None while it runs."""
        try:
            with open(f"/proc/{self.pid}/task/{self.pid}/syscall", "rb") as f:
                text = f.read().split()
        except OSError:
            return None
        if not text or text[0] == b"running":
            return None
        return text[0].decode()

    def loop_cpus(self) -> str:
        """The CPUs the loop's (main) thread may run on, as the kernel lists them
        (``[table] loop_cpu`` keeps it on one)."""
        with open(f"/proc/{self.pid}/task/{self.pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Cpus_allowed_list:"):
                    return line.split()[1]
        return "-"

    def others_asleep(self) -> bool:
        for task in os.listdir(f"/proc/{self.pid}/task"):
            if task == str(self.pid):
                continue
            path = f"/proc/{self.pid}/task/{task}/stat"
            with contextlib.suppress(OSError), open(path, "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"R":
                    return False
        return True

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._sock.close()
        self._log.close()


def _set(text: str, key: str, value: str, after: str | None = None) -> str:
    """``key = value`` in a shipped TOML file's text (its comment kept); a key the file
    lacks is added after the line ``after``."""
    pattern = re.compile(rf"^{re.escape(key)} = [^#\n]*?(\s*#.*)?$", re.M)
    if pattern.search(text):
        return pattern.sub(lambda m: f"{key} = {value}{m.group(1) or ''}", text, count=1)
    if after is None or f"\n{after}\n" not in text:
        raise RuntimeError(f"the shipped configuration has no {key!r}: the bench needs updating")
    return text.replace(f"\n{after}\n", f"\n{after}\n{key} = {value}\n", 1)


def install_config(
    tmp: Path,
    topology: str,
    players: int,
    reading: DealReading,
    deal_after: float | None = None,
) -> tuple[Path, list[str]]:
    """The configuration as ``scripts/install-pi`` writes it (its step 5), then edited
    as a bar owner does (``deal_after``: ``next_deal_after_s`` if not the shipped one);
    returns the table.toml and the Picos' serial numbers."""
    etc = tmp / "etc"
    etc.mkdir()
    for name in ("systemd/table.toml", "hardware/pinmap.toml", "hardware/pinmap-mux.toml"):
        shutil.copy(ROOT / name, etc / Path(name).name)
    table = (etc / "table.toml").read_text(encoding="utf-8")
    table = _set(table, "players", str(players))
    table = _set(table, "deal_reading", f'"{reading.value}"')
    table = _set(table, "state_dir", f'"{tmp / "state"}"')
    table = _set(table, "decks", f'"{tmp / "state" / "decks.toml"}"')
    if deal_after is not None and deal_after != shipped_deal_after():
        table = _set(table, "next_deal_after_s", f"{deal_after:g}")
    table = _set(table, "status_file", f'"{tmp / "run" / "seats.json"}"', after="[table]")
    if topology == "pi":
        table = _set(table, "pinmap", '"pinmap-mux.toml"')
    (etc / "table.toml").write_text(table, encoding="utf-8")
    pinmap = etc / ("pinmap-mux.toml" if topology == "pi" else "pinmap.toml")
    text = _set(pinmap.read_text(encoding="utf-8"), "by_id_dir", f'"{tmp / "by-id"}"')
    pinmap.write_text(text, encoding="utf-8")
    serials = re.findall(r'^serial = "([0-9a-f]{16})"', text, re.M)[:players]
    if len(serials) < players:
        raise RuntimeError(f"{pinmap.name} lists {len(serials)} seats, not {players}")
    return etc / "table.toml", serials


def shipped_deal_after() -> float:
    """``next_deal_after_s`` as the shipped configuration (``systemd/table.toml``) has it."""
    with open(ROOT / "systemd" / "table.toml", "rb") as f:
        return float(tomllib.load(f)["table"]["next_deal_after_s"])


def fake_mux(tmp: Path, players: int) -> dict[str, str]:
    """The sysfs names of the multiplexer's channels and the byte counters (topology pi)."""
    sysfs = tmp / "sys-i2c"
    for seat in range(players):
        bus = sysfs / f"i2c-{I2C_BASE + seat}"
        bus.mkdir(parents=True)
        (bus / "name").write_text(f"i2c-1-mux (chan_id {seat})\n")
    counts = tmp / "i2c-bytes"
    counts.write_bytes(bytes(8 * players))
    return {
        "TRUCO_BENCH_I2C": str(counts),
        "TRUCO_BENCH_I2C_SYSFS": str(sysfs),
        "TRUCO_BENCH_I2C_BASE": str(I2C_BASE),
    }


class RealTable(MockTable):
    """The shadow table (this process) whose every event also goes, first, to the real
    service's seat node, where it is measured."""

    def __init__(
        self,
        rules: HouseRules,
        *,
        seed: int,
        deal_reading: DealReading,
        service: Service,
        nodes: list[BenchNode],
        i2c: mmap.mmap | None,
        deal_after: float = 0.0,
    ) -> None:
        super().__init__(rules, seed=seed, deal_reading=deal_reading, timeout=STUCK_S)
        self.deal_after = deal_after  # the service's next_deal_after_s
        self.real = service
        self.nodes = nodes
        self.i2c = i2c
        self.samples: list[Sample] = []
        #: the deals the service's timer started (no player's event), CPU net of the idle
        #: baseline over the seconds waited for each, in seconds
        self.timer_deals: list[float] = []
        self.idle_rate = 0.0  # the service's idle CPU, ns per ns of wall time
        self.loop_cpus = "-"  # the CPUs its loop's thread may run on (the kernel's list)
        self.ticks = (0, 0)  # user and system ticks from the first event to the last
        self.dacks = self.overflows = 0  # the nodes' DACKs and queue overflows, the game's
        self._offset = 0  # the service's reads of other things than the nodes' frames
        #: how long the service was quiet before each player's event (the time since the
        #: last wait ended; it settled up to two of the bench's looks before that), s
        self.gaps: list[float] = []
        self._settled = time.monotonic()
        #: the host's yardstick (``bench/host.py``) on the loop's CPU at each hand's start,
        #: µs; ``host_us``: the current hand's
        self.host_refs: list[float] = []
        self.host_us = math.nan

    # -- the real service's state --------------------------------------------------------
    def _sent(self) -> int:
        return sum(node.sent_bytes for node in self.nodes)

    def _quiet(self) -> bool:
        real = self.real
        if real.read_bytes() - self._sent() < self._offset:
            return False  # a frame the nodes wrote is not read yet
        call = real.loop_call()
        if call is None or (real.idle_call is not None and call != real.idle_call):
            return False
        if any(node.unread_by_pi() for node in self.nodes):
            return False
        if not all(node.idle() for node in self.nodes) or not real.others_asleep():
            return False
        return call == real.loop_call()

    def wait_quiet(self) -> None:
        """Until the event (and what it made) is done: quiet twice in a row."""
        deadline = time.monotonic() + STUCK_S
        streak = 0
        while streak < 2:
            self.real.alive()
            streak = streak + 1 if self._quiet() else 0
            if time.monotonic() > deadline:
                raise RuntimeError(f"the service did not settle in {STUCK_S:.0f} s")
            time.sleep(POLL_S)
        self._settled = time.monotonic()

    def start_real(self) -> None:
        """Once the service is READY: its nodes connected and their panels drawn, the
        system call its loop idles in learnt, the idle baseline measured."""
        deadline = time.monotonic() + READY_S
        while not all("HELLO" in node.received for node in self.nodes) or (
            self.i2c is None and not all(node.written is not None for node in self.nodes)
        ):
            self.real.alive()
            if time.monotonic() > deadline:
                raise RuntimeError("the service did not greet every node, or draw its panel")
            time.sleep(0.01)
        calls: Counter[str] = Counter()
        while sum(calls.values()) < 200 or calls.most_common(1)[0][1] < 150:
            call = self.real.loop_call()
            if call is not None:
                calls[call] += 1
            time.sleep(0.001)
        self.real.idle_call = calls.most_common(1)[0][0]
        self._offset = -(1 << 62)
        self.wait_quiet()
        self._offset = self.real.read_bytes() - self._sent()
        cpu, wall = self.real.cpu_ns(), time.monotonic_ns()
        time.sleep(IDLE_S)
        self.wait_quiet()
        self.idle_rate = (self.real.cpu_ns() - cpu) / (time.monotonic_ns() - wall)
        self.ticks = self.real.user_system()
        self.loop_cpus = self.real.loop_cpus()

    def end_real(self) -> None:
        """The user and system ticks the games cost (``system_pct``)."""
        user, system = self.real.user_system()
        self.ticks = (user - self.ticks[0], system - self.ticks[1])

    def _panel_bytes(self) -> int:
        if self.i2c is not None:
            count = len(self.i2c) // 8
            return sum(struct.unpack_from(f"<{count}Q", self.i2c, 0))
        return sum(node.display_bytes for node in self.nodes)

    def deal(
        self, hands: Mapping[int, tuple[Card, ...] | list[Card]], dealer: int | None = None
    ) -> None:
        """A hand's deal: with ``next_deal_after_s`` above 0, the service starts it by its
        timer, some seconds after the hand ended; its cards are tapped once its panels
        show it (the timer's redraw is no player's event: waited for, not measured)."""
        if self.deal_after and self.table.phase is Phase.WAITING and self.game.hand_number:
            before = self._panel_bytes()
            wall, cpu = time.monotonic_ns(), self.real.cpu_ns()
            deadline = time.monotonic() + self.deal_after + STUCK_S
            while self._panel_bytes() == before:
                self.real.alive()
                if time.monotonic() > deadline:
                    raise RuntimeError("the service's timer did not start the next deal")
                time.sleep(0.005)
            self.wait_quiet()
            raw = self.real.cpu_ns() - cpu
            self.timer_deals.append((raw - self.idle_rate * (time.monotonic_ns() - wall)) / 1e9)
        # the host's speed for this hand, on the loop's CPU while the service is idle
        self.host_us = reference_us(self._loop_cpu())
        self.host_refs.append(self.host_us)
        super().deal(hands, dealer)

    def _loop_cpu(self) -> int | None:
        """The one CPU the service's loop keeps to (None: it may run on several)."""
        cpus = self.loop_cpus
        return int(cpus) if cpus.isdigit() and int(cpus) in os.sched_getaffinity(0) else None

    # -- each event ------------------------------------------------------------------------
    def perform(self, gesture: Gesture) -> None:
        node = self.nodes[gesture.seat]
        real: list[tuple[str, Callable[[], None]]]
        if gesture.kind == "tap":
            assert gesture.card is not None
            uid = self.deck.uid(gesture.card)
            real = [("tag_on", lambda: node.tag_on(uid)), ("tag_off", lambda: node.tag_off(uid))]
        else:
            assert gesture.button is not None
            name, hold = gesture.button.value, gesture.kind == "hold"
            real = [(gesture.kind, lambda: node.hold(name) if hold else node.press(name))]
        for (kind, send), (_, shadow) in zip(real, self.hardware_events(gesture), strict=True):
            before = game_mark(self.game)
            panel = self._panel_bytes()
            wall, cpu = time.monotonic_ns(), self.real.cpu_ns()
            self.gaps.append(wall / 1e9 - self._settled)
            send()
            self.wait_quiet()
            raw = self.real.cpu_ns() - cpu
            net = raw - self.idle_rate * (time.monotonic_ns() - wall)
            panel = self._panel_bytes() - panel
            super().send_event(kind, shadow)  # the shadow table takes it too
            what = what_it_did(before, self.game)
            self.samples.append(
                Sample(kind, what, net / 1e9, panel, raw=raw / 1e9, host_us=self.host_us)
            )

    # -- the game's end ----------------------------------------------------------------
    def check(self, state: Path, panels: bool = True) -> None:
        """The real record is the shadow's, and (panels on the nodes, ``panels``: not
        with ``--ablate``) every panel shows what the shadow's table says it shows."""
        records = sorted((state / "archive").rglob("*.truco")) or [state / "current.truco"]
        real = _statements(records[-1].read_text(encoding="utf-8"))
        shadow = _statements(write(self.game))
        if real != shadow:
            import difflib

            print("\n".join(difflib.unified_diff(shadow, real, lineterm="", n=1)), file=sys.stderr)
            raise RuntimeError(
                f"the service's record ({records[-1]}) is not the bench's game: the bench's "
                "shadow table and the service disagree"
            )
        if self.i2c is not None or not panels:
            return
        for seat, node in enumerate(self.nodes):
            pages = render_pages(screen_content(screen_for(self.table, seat)))
            if bytes(node.ram) != pages:
                raise RuntimeError(f"seat {seat}: the panel does not show the table's screen")


def _statements(record: str) -> list[str]:
    """A record's statements, without comments or the store's line checksums."""
    lines = (re.sub(r"\s+#c=[0-9a-f]+$", "", line).strip() for line in record.splitlines())
    return [line for line in lines if line and line[:1] != "#"]


#: what ``--ablate`` can leave out (bench/ablate/sitecustomize.py)
ABLATIONS = ("redraw", "send", "text")


def service_env(build: str, ablate: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    path = ROOT / "build" / "compiled" if build == "compiled" else ROOT
    if build == "compiled" and not path.is_dir():
        raise SystemExit("bench/table.py: no build/compiled: run sh scripts/compile first")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(path), env.get("PYTHONPATH")]))
    env.pop("TRUCO_BENCH_ABLATE", None)
    if ablate is not None:  # a profiling aid (bench/ablate/sitecustomize.py)
        env["TRUCO_BENCH_ABLATE"] = ablate
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "bench" / "ablate"), env["PYTHONPATH"]])
    return env


def enroll_deck(seed: int, decks: Path) -> MockDeck:
    """``MockDeck(seed)``'s forty cards enrolled as the bar's deck in ``decks`` (the
    configuration's deck registry), as ``truco-table enroll`` leaves them."""
    deck = MockDeck(seed)
    cards = {deck.uid(c): c for c in (Card.from_index(i) for i in range(40))}
    save_registry(DeckRegistry((Deck("bar", cards),)), decks)
    return deck


def print_log_end(bench: str, log: Path) -> None:
    """A failed run: the end of the service's log on standard error, said to be its."""
    end = log.read_text(errors="replace")[-3000:] if log.exists() else "(no log)"
    print(f"{bench}: the service's log ends:\n{end}", file=sys.stderr)


@dataclass(frozen=True)
class ServiceSetup:
    """How the bench starts the service: its build, ``next_deal_after_s``, the
    interpreter it runs on and what ``--ablate`` leaves out of it."""

    build: str = "pure"
    deal_after: float = 0.0
    python: str = sys.executable
    ablate: str | None = None
    protocol: int = PROTOCOL_VERSION  # the newest the simulated nodes speak


def play(
    topology: str, players: int, seed: int, reading: DealReading, setup: ServiceSetup
) -> RealTable:
    """One game on a service started for it (a table started afresh)."""
    build, deal_after, python, ablate = setup.build, setup.deal_after, setup.python, setup.ablate
    with tempfile.TemporaryDirectory(prefix="bench-table-") as name:
        tmp = Path(name)
        config_path, serials = install_config(tmp, topology, players, reading, deal_after)
        config = load_config(config_path)
        (tmp / "state").mkdir()
        (tmp / "run").mkdir()
        rules = config.rules
        env = service_env(build, ablate)
        i2c: mmap.mmap | None = None
        if topology == "pi":
            extra = fake_mux(tmp, players)
            env.update(extra)
            env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "bench" / "pi_i2c"), env["PYTHONPATH"]])
        panels = topology == "node"
        bench_nodes = [
            BenchNode(seat, serial, panel=panels, protocol=setup.protocol)
            for seat, serial in enumerate(serials)
        ]
        with plugged(tmp / "by-id", bench_nodes) as nodes:
            enroll_deck(seed, config.decks)  # the shadow table's deck, for the service
            service = Service(config_path, tmp / "state", env, tmp / "service.log", python)
            table: RealTable | None = None
            try:
                service.wait_ready()
                if topology == "pi":
                    fd = os.open(tmp / "i2c-bytes", os.O_RDONLY)
                    i2c = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
                    os.close(fd)
                table = RealTable(
                    rules,
                    seed=seed,
                    deal_reading=reading,
                    service=service,
                    nodes=nodes,
                    i2c=i2c,
                    deal_after=deal_after,
                )
                table.start_real()
                run = MockRun(rules, seed=seed, human=None, mock=table, deal_reading=reading)
                run.play_out()
                table.wait_quiet()
                table.end_real()
                table.check(tmp / "state", panels=ablate is None)
                table.dacks = sum(node.dacks for node in nodes)
                table.overflows = sum(node.overflows for node in nodes)
            except BaseException:
                print_log_end("bench/table.py", tmp / "service.log")
                raise
            finally:
                service.stop()
                if table is not None:
                    table.close()
                if i2c is not None:
                    i2c.close()
    return table


@dataclass
class Measured:
    """What the games of one run measured."""

    samples: list[Sample]  # the players' events
    idle: float  # the service's idle CPU rate, ns per ns
    system: float  # the share of system time, percent
    dacks: int  # the nodes' DACKs
    overflows: int  # times a node's display queue overflowed
    timer_deals: list[float]  # the deals the service's timer started: CPU, seconds
    hands: int  # the hands the games had
    loop_cpus: str  # the CPUs the loop's thread might run on, each game's ("/" between)
    gaps: list[float]  # how long the service was quiet before each event, s
    host_refs: list[float]  # the host's yardstick at each hand's start, µs (bench/host.py)


def measure(topology: str, players: int, games: int, setup: ServiceSetup) -> Measured:
    """Every game of a run, seed by seed, each deal reading (``READINGS``)."""
    samples: list[Sample] = []
    timer_deals: list[float] = []
    hands = 0
    idle: list[float] = []
    user = system = dacks = overflows = 0
    cpus: list[str] = []
    gaps: list[float] = []
    host_refs: list[float] = []
    for seed, reading in itertools.product(range(games), READINGS):
        table = play(topology, players, seed, reading, setup)
        samples += table.samples
        timer_deals += table.timer_deals
        hands += table.game.hand_number
        idle.append(table.idle_rate)
        user, system = user + table.ticks[0], system + table.ticks[1]
        dacks, overflows = dacks + table.dacks, overflows + table.overflows
        cpus.append(table.loop_cpus)
        gaps += table.gaps
        host_refs += table.host_refs
    share = 100.0 * system / max(1, user + system)
    loop_cpus = "/".join(dict.fromkeys(cpus))
    return Measured(
        samples, statistics.fmean(idle), share, dacks, overflows, timer_deals, hands, loop_cpus,
        gaps, host_refs,
    )


def host_fast(samples: Sequence[Sample], refs: Sequence[float]) -> list[Sample]:
    """The events of the hands the host's yardstick found at its fast speed."""
    limit = slow_above(refs)
    return [sample for sample in samples if sample.host_us <= limit]


def host_split(samples: Sequence[Sample], refs: Sequence[float]) -> str:
    """The run's figures split by the host's speed at each hand's start (``bench/host.py``):
    a reading aid, never what the targets are checked on."""
    limit = slow_above(refs)
    fast = host_fast(samples, refs)
    slow = [sample for sample in samples if sample.host_us > limit]
    nothing = (math.nan, math.nan, math.nan)
    mean, p99, noop = headline(fast) if fast else nothing
    slow_mean, _, slow_noop = headline(slow) if slow else nothing
    return (
        f"host_ref_us_p10={tenth_percentile(refs):.2f} "
        f"host_slow_hands={sum(slow_marks(refs))}/{len(refs)} "
        f"host_fast_events={len(fast)} host_fast_cpu_ms_mean={ms(mean)} "
        f"host_fast_cpu_ms_p99={ms(p99)} host_fast_noop_cpu_ms_mean={ms(noop)} "
        f"host_slow_cpu_ms_mean={ms(slow_mean)} host_slow_noop_cpu_ms_mean={ms(slow_noop)}"
    )


def service_python_path(python: str) -> str:
    """``--service-python`` as the service is given it: the service starts in its state
    folder, so a path given from here is made absolute (not resolved: a venv's python is
    a link to its base, and the venv is the point); a bare name is looked up on the PATH."""
    if os.sep in python:
        return os.path.abspath(python)
    return shutil.which(python) or python


def interpreter(parser: argparse.ArgumentParser, python: str) -> str:
    """``--service-python`` as the run's lines name it (``3.11.2 service_python_home=/usr``:
    its version, and where the interpreter itself lives, a venv's base), or the parser's
    error when it cannot start the service (not found, or without the service's packages)."""
    probe = (
        "import platform, sys, PIL, serial, paho.mqtt, luma.oled;"
        "print(platform.python_version(), sys.base_prefix)"
    )
    try:
        done = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=60)
    except OSError as error:
        parser.error(f"--service-python {python}: {error.strerror or error}")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        parser.error(f"--service-python {python} cannot run the service: {last}")
    version, home = done.stdout.split(maxsplit=1)
    return f"{version} service_python_home={home.strip()}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--games", type=int, default=3, help="seeds (each played twice)")
    parser.add_argument("--players", type=int, nargs="+", default=[6])
    parser.add_argument("--topology", nargs="+", choices=TOPOLOGIES, default=list(TOPOLOGIES))
    parser.add_argument("--runs", type=int, default=1, help="runs; more than one: medians too")
    parser.add_argument("--build", choices=("pure", "compiled"), default="pure")
    parser.add_argument(
        "--next-deal-after-s",
        type=float,
        default=None,
        help="the service's next_deal_after_s (default: the shipped file's, 3 s, the next "
        "deal started by the service's timer and measured apart; 0: the next deal within "
        "the event that ended the hand, counted there; 0 with --ablate)",
    )
    parser.add_argument(
        "--service-python",
        default=sys.executable,
        help="the interpreter the service runs on (default: this one); a Pi runs Debian's "
        "python3 in the venv install-pi makes: give one made the same way (docs/dev/"
        "benchmarks.md) to measure that interpreter",
    )
    parser.add_argument(
        "--ablate",
        choices=ABLATIONS,
        help="a profiling aid, not the product's figure: the service with its panels' "
        "redraw (redraw) or their rendering and sending (send) left out after each seat's "
        "first screen, or their changed texts sent instead (text: the nodes drawing their "
        "own text, estimated; bench/ablate/sitecustomize.py); node topology only",
    )
    parser.add_argument(
        "--node-protocol",
        type=int,
        choices=PROTOCOL_VERSIONS[2:],
        default=PROTOCOL_VERSION,
        help="the newest protocol the simulated nodes speak (default: the shipped one; 4: "
        "nodes of firmware 0.6, the 2 KB window, as a comparison in the same tree)",
    )
    args = parser.parse_args(argv)
    # Stopped (SIGTERM, as kill and pkill send it): the games' ``finally`` blocks stop the
    # service and delete its folders. Without this the service would go on alone, and
    # retry its by-id links, whose ptys a later run may be given.
    signal.signal(signal.SIGTERM, lambda _signum, _frame: sys.exit(128 + signal.SIGTERM))
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.ablate is not None and args.topology != ["node"]:
        parser.error("--ablate measures the node topology alone: add --topology node")
    # a service ablated of its panels sends none to wait for (``text`` sends its texts)
    dark = args.ablate in ("redraw", "send")
    if args.next_deal_after_s is None:
        args.next_deal_after_s = 0.0 if dark else shipped_deal_after()
    elif dark and args.next_deal_after_s != 0:
        parser.error("--ablate runs with --next-deal-after-s 0 (no panel tells the deal)")
    args.service_python = service_python_path(args.service_python)
    service_python = interpreter(parser, args.service_python)
    setup = ServiceSetup(
        args.build, args.next_deal_after_s, args.service_python, args.ablate, args.node_protocol
    )
    for topology, players in itertools.product(args.topology, args.players):
        head = (
            f"topology={topology} players={players} build={args.build} "
            f"next_deal_after_s={args.next_deal_after_s:g}"
        )
        if args.ablate is not None:
            head += f" ablate={args.ablate}"
        if args.node_protocol != PROTOCOL_VERSION:
            head += f" node_protocol={args.node_protocol}"
        runs = []
        fast_runs = []  # the same headlines, of the hands the host ran at its fast speed
        samples: list[Sample] = []
        for run in range(args.runs):
            measured = measure(topology, players, args.games, setup)
            samples, idle, system = measured.samples, measured.idle, measured.system
            runs.append(headline(samples))
            fast = host_fast(samples, measured.host_refs)
            fast_runs.append(headline(fast) if fast else (math.nan, math.nan, math.nan))
            deals = measured.timer_deals
            timer = f"hands={measured.hands} timer_deals={len(deals)} timer_deal_cpu_ms_mean=" + (
                ms(statistics.fmean(deals)) if deals else "-"
            )
            raw_mean, _, raw_noop = headline(samples, raw=True)
            # the machine's own floor at this run's pace: a bare process's wake and read
            gap = statistics.median(measured.gaps)
            floor = measure_floor(FLOOR_EVENTS, gap_s=gap, kinds=("noop",))
            disk = measure_floor(FSYNC_EVENTS, gap_s=gap, kinds=("accepted",))
            which = f" run={run + 1}" if args.runs > 1 else ""
            print(
                f"{head}{which} {summary(samples, p99_kinds=True)} {timer} "
                f"idle_cpu_ms_per_s={idle * 1e3:.3f} raw_cpu_ms_mean={ms(raw_mean)} "
                f"raw_noop_cpu_ms_mean={ms(raw_noop)} system_pct={system:.0f} "
                f"dacks={measured.dacks} node_overflows={measured.overflows} "
                f"loop_cpus={measured.loop_cpus} event_gap_ms_median={gap * 1e3:.2f} "
                f"floor_noop_us={floor.noop_us:.1f} floor_fsync_us={disk.fsync_us:.1f} "
                f"{host_split(samples, measured.host_refs)} "
                f"service_python={service_python} loadavg={load_average()}",
                flush=True,
            )
        if args.runs > 1:
            host = " ".join(
                f"median_host_fast_{key.removeprefix('median_')}"
                for key in medians(fast_runs).split()[1:]
            )
            print(f"{head} {medians(runs)} {host} loadavg={load_average()}", flush=True)
        print_breakdown(head, samples)


if __name__ == "__main__":
    main()
