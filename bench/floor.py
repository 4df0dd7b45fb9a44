"""A profiling aid: the least CPU an event can cost the service in the kernel and the loop.

Not a figure the README quotes as the service's (``bench/table.py`` measures the service
the Pi runs). This is the floor under it: a process that does only the system calls the
real service makes for an event, with no table, no engine, no screens, in the same
shape (one ``epoll`` wait over six pseudo-terminals opened as the service opens the
nodes' ports, raw):

- ``noop``: a node's 32-byte frame (a card lifted) is waited for and read; nothing else.
- ``accepted``: the same, then a statement appended to a record in a real folder and
  ``fsync``ed (as ``controller.table.store`` does), then an update of ``--panel-bytes``
  bytes written to each of the six ports (as the panels' updates are).

The driver (this process) writes each frame to a node's end and reads back what the
floor process wrote, one event at a time, as ``bench/table.py`` does; the floor's CPU
per event is read from the kernel (``/proc/PID/schedstat``). Prints::

    events=... floor_noop_us_mean=... floor_accepted_us_mean=... floor_fsync_us_mean=...
        panel_bytes=... gap_ms=... loadavg=...

``floor_fsync_us_mean``: the ``fsync`` alone, timed in the floor process (its thread
clock). Compare with ``bench/table.py``'s ``kind=tag_off`` (a no-op) and ``what=accepted``
lines: what is above the floor is the service's Python.

``--gap-ms``: each event sent that long after the last was done (0, the default: at
once). On a virtual machine a wake can cost more the longer the process slept before it
(the host's work on the guest's memory and caches meanwhile); ``bench/table.py`` prints
its own events' spacing and this floor's no-op at it (``event_gap_ms_median=``,
``floor_noop_us=``), so a run's figures can be read against what any process pays there.

Run: ``.venv/bin/python bench/floor.py [--events 2000] [--panel-bytes 60] [--gap-ms 0]``.
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import statistics
import sys
import tempfile
import time
import tty
from dataclasses import dataclass
from pathlib import Path

SEATS = 6
FRAME = b"$3 TAGOFF 04A1B2C3D4E5F6 -*1a2b\n"  # 32 bytes, a node's frame's size


def _floor(ports: list[str], record: Path, panel_bytes: int, control: int, report: int) -> None:
    """The floor process: wait, read, and for an accepted event record and write."""
    fds = [os.open(p, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK) for p in ports]
    for fd in fds:
        tty.setraw(fd)
    log = os.open(record, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    update = b"$DU 1 0 8 " + b"x" * max(0, panel_bytes - 11) + b"\n"
    poller = select.epoll()
    for fd in fds:
        poller.register(fd, select.EPOLLIN)
    poller.register(control, select.EPOLLIN)
    fsync_ns = 0
    while True:
        for fd, _ in poller.poll():
            if fd == control:
                os.write(report, str(fsync_ns).encode())
                return
            data = os.read(fd, 4096)
            if data[3:6] == b"ACC":  # an accepted action
                os.write(log, b"3 juega 4O #c=0123abcd\n")
                start = time.thread_time_ns()
                os.fsync(log)
                fsync_ns += time.thread_time_ns() - start
                for out in fds:
                    os.write(out, update)


def _cpu(pid: int) -> int:
    with open(f"/proc/{pid}/schedstat", encoding="ascii") as f:
        return int(f.read().split()[0])


@dataclass(frozen=True)
class Floor:
    """What the floor process cost, µs of CPU an event (``fsync_us``: the fsync alone)."""

    noop_us: float
    accepted_us: float
    fsync_us: float


def measure_floor(events: int, panel_bytes: int = 60, gap_s: float = 0.0,
                  kinds: tuple[str, ...] = ("noop", "accepted")) -> Floor:  # fmt: skip
    """``events`` of each of ``kinds``, alternating, each sent ``gap_s`` after the last was
    done (0: at once; ``bench/table.py`` passes its own events' spacing: on a virtual
    machine a wake costs more the longer the process slept)."""
    nodes, ports = [], []
    for _ in range(SEATS):
        master, slave = pty.openpty()
        tty.setraw(master)
        nodes.append(master)
        ports.append(os.ttyname(slave))
        os.close(slave)
    control_r, control_w = os.pipe()
    report_r, report_w = os.pipe()
    costs: dict[str, list[float]] = {kind: [] for kind in kinds}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-floor-") as folder:
            pid = os.fork()
            if pid == 0:
                try:
                    _floor(ports, Path(folder) / "partida.txt", panel_bytes, control_r, report_w)
                finally:
                    os._exit(0)
            time.sleep(0.5)  # the floor opens its ports
            for i in range(len(kinds) * events):
                kind = kinds[i % len(kinds)]
                node = nodes[i % SEATS]
                frame = FRAME.replace(b"TAG", b"ACC") if kind == "accepted" else FRAME
                if gap_s:
                    time.sleep(gap_s)
                before = _cpu(pid)
                os.write(node, frame)
                if kind == "accepted":  # every port's update read back
                    for other in nodes:
                        got = b""
                        while not got.endswith(b"\n"):
                            select.select([other], [], [])
                            got += os.read(other, 4096)
                else:  # the floor back in its wait: its CPU clock still for a moment
                    while True:
                        start = _cpu(pid)
                        time.sleep(0.0005)
                        if _cpu(pid) == start:
                            break
                costs[kind].append((_cpu(pid) - before) / 1000)
            os.write(control_w, b"x")
            fsync_ns = int(os.read(report_r, 64) or b"0")
            os.waitpid(pid, 0)
    finally:
        for fd in (*nodes, control_r, control_w, report_r, report_w):
            os.close(fd)
    accepted = costs.get("accepted", [])
    return Floor(
        statistics.fmean(costs["noop"]) if costs.get("noop") else float("nan"),
        statistics.fmean(accepted) if accepted else float("nan"),
        fsync_ns / len(accepted) / 1000 if accepted else float("nan"),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--events", type=int, default=2000, help="events of each kind")
    parser.add_argument("--panel-bytes", type=int, default=60, help="an update's bytes a port")
    parser.add_argument(
        "--gap-ms", type=float, default=0.0, help="the wait before each event (ms; 0: none)"
    )
    args = parser.parse_args(argv)
    floor = measure_floor(args.events, args.panel_bytes, args.gap_ms / 1000)
    print(
        f"events={args.events} floor_noop_us_mean={floor.noop_us:.1f} "
        f"floor_accepted_us_mean={floor.accepted_us:.1f} "
        f"floor_fsync_us_mean={floor.fsync_us:.1f} "
        f"panel_bytes={args.panel_bytes} gap_ms={args.gap_ms:g} loadavg={os.getloadavg()[0]:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
