"""A profiling aid: the real service's card lifted alone, and after its CPU's caches were filled.

Not a figure the README quotes as the service's (``bench/table.py`` measures the service
in whole games). This asks what a card lifted (an event that changes no screen) costs the
real ``truco-table run --config`` when nothing else runs between them, and what it costs
when something else has filled the caches of the CPU the service's loop keeps to
(``[table] loop_cpu = "last"``) just before, as a heavy event (a call that redraws six
panels, a record's ``fsync``) does in a game.

The service is started as ``bench/table.py`` starts it (the configuration
``scripts/install-pi`` writes, six simulated seat nodes on pseudo-terminals with their
panels, the record in a real state folder). Once it is READY and its nodes are greeted,
``--events`` cards are lifted, seat after seat, each waited out as ``bench/table.py``
waits for an event (the service back in its wait, nothing unread, twice in a row); the
CPU of each is the service's, every thread, from the kernel (schedstat), net of the idle
baseline. Before each card this process, kept on the loop's CPU for the while:

- ``--evict-kb N``: writes one byte in every 64 of an N KiB buffer (the CPU's caches
  filled with other data, as a heavy event's working set fills them);
- ``--fsync``: appends 200 bytes to a file in the same folder as the record and
  ``fsync``s it (the kernel's work for a statement, on that CPU).

Prints::

    events=... evict_kb=... fsync=0|1 loop_cpu=... noop_us_mean=... noop_us_median=...
        noop_us_p90=... idle_cpu_ms_per_s=... service_python=... loadavg=...

Run: ``.venv/bin/python bench/noop.py [--events 1500] [--evict-kb 0] [--fsync]
[--service-python PY]``. Compare ``noop_us_median`` at ``--evict-kb 0`` with the games'
``kind=tag_off`` line of ``bench/table.py``, and with ``--evict-kb`` larger than the
CPU's second-level cache.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.rig import READINGS, load_average, plugged  # noqa: E402
from bench.table import (  # noqa: E402
    BenchNode,
    RealTable,
    Service,
    enroll_deck,
    install_config,
    interpreter,
    print_log_end,
    service_env,
    shipped_deal_after,
)
from controller.engine import Card  # noqa: E402
from controller.table.config import load_config  # noqa: E402

FSYNC_BYTES = 200  # a statement's size, about


@dataclass(frozen=True)
class NoOps:
    """The cards lifted of one run: CPU of each, net of the idle baseline, µs."""

    cpu_us: tuple[float, ...]
    loop_cpu: str  # the CPUs the loop's thread may run on (the kernel's list)
    idle_ms_per_s: float


@contextmanager
def on_cpus(cpus: str) -> Iterator[None]:
    """This thread kept on ``cpus`` (the kernel's list, ``1`` or ``0-1``) for the while."""
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, _cpu_list(cpus))
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)


def _cpu_list(text: str) -> set[int]:
    cpus: set[int] = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


@contextmanager
def before_each(
    loop_cpu: str, evict_kb: int, fsync_in: Path | None
) -> Iterator[Callable[[], None]]:
    """What runs on the loop's CPU before each card lifted (nothing when neither is asked);
    the statements' file is closed on leaving."""
    buffer = bytearray(evict_kb * 1024)
    fill = bytes(len(buffer[::64]))
    fd = None if fsync_in is None else os.open(fsync_in, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    statement = b"x" * (FSYNC_BYTES - 1) + b"\n"

    def run() -> None:
        if not buffer and fd is None:
            return
        with on_cpus(loop_cpu):
            if buffer:
                buffer[::64] = fill
            if fd is not None:
                os.write(fd, statement)
                os.fsync(fd)

    try:
        yield run
    finally:
        if fd is not None:
            os.close(fd)


def lift_cards(events: int, evict_kb: int, fsync: bool, python: str) -> NoOps:
    """``events`` cards lifted on a service started for them (see the module docstring)."""
    reading = READINGS[0]
    with tempfile.TemporaryDirectory(prefix="bench-noop-") as name:
        tmp = Path(name)
        config_path, serials = install_config(tmp, "node", 6, reading, shipped_deal_after())
        config = load_config(config_path)
        (tmp / "state").mkdir()
        (tmp / "run").mkdir()
        bench_nodes = [BenchNode(seat, serial, panel=True) for seat, serial in enumerate(serials)]
        with plugged(tmp / "by-id", bench_nodes) as nodes:
            deck = enroll_deck(0, config.decks)
            service = Service(config_path, tmp / "state", service_env("pure"), tmp / "log", python)
            table: RealTable | None = None
            try:
                service.wait_ready()
                table = RealTable(
                    config.rules, seed=0, deal_reading=reading, service=service, nodes=nodes,
                    i2c=None,
                )  # fmt: skip
                table.start_real()
                loop_cpu = service.loop_cpus()
                statements = tmp / "state" / "fsync" if fsync else None
                uid = deck.uid(Card.from_index(5))  # never laid: its leaving changes nothing
                spent: list[float] = []
                with before_each(loop_cpu, evict_kb, statements) as first:
                    for event in range(events):
                        first()
                        wall, cpu = time.monotonic_ns(), service.cpu_ns()
                        nodes[event % len(nodes)].tag_off(uid)
                        table.wait_quiet()
                        raw = service.cpu_ns() - cpu
                        spent.append((raw - table.idle_rate * (time.monotonic_ns() - wall)) / 1e3)
                return NoOps(tuple(spent), loop_cpu, table.idle_rate * 1e3)
            except BaseException:
                print_log_end("bench/noop.py", tmp / "log")
                raise
            finally:
                service.stop()
                if table is not None:
                    table.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--events", type=int, default=1500, help="cards lifted")
    parser.add_argument(
        "--evict-kb", type=int, default=0, help="KiB written on the loop's CPU before each"
    )
    parser.add_argument(
        "--fsync", action="store_true", help="a statement appended and fsynced there before each"
    )
    parser.add_argument(
        "--service-python", default=sys.executable, help="the interpreter the service runs on"
    )
    args = parser.parse_args(argv)
    if args.events < 1 or args.evict_kb < 0:
        parser.error("--events must be at least 1 and --evict-kb not negative")
    python = interpreter(parser, args.service_python)
    noops = lift_cards(args.events, args.evict_kb, args.fsync, args.service_python)
    spent = sorted(noops.cpu_us)
    print(
        f"events={args.events} evict_kb={args.evict_kb} fsync={int(args.fsync)} "
        f"loop_cpu={noops.loop_cpu} noop_us_mean={statistics.fmean(spent):.1f} "
        f"noop_us_median={statistics.median(spent):.1f} "
        f"noop_us_p90={spent[len(spent) * 9 // 10]:.1f} "
        f"idle_cpu_ms_per_s={noops.idle_ms_per_s:.3f} service_python={python} "
        f"loadavg={load_average()}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
