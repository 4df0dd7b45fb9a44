"""What the table benches share (``bench/table.py``, ``bench/table_inprocess.py``,
``bench/service.py``): the mock seat nodes plugged in where the service looks for them,
the events measured and the key=value lines their figures are printed in.

Not a bench of its own; the benches put the repository on ``sys.path`` and import it as
``bench.rig``. It imports nothing from the tests.
"""

from __future__ import annotations

import contextlib
import math
import os
import statistics
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from controller.engine import Game
from controller.hal.mock import MockNode
from controller.table.table import DealReading

KINDS = ("press", "hold", "tag_on", "tag_off")
WHATS = ("deal", "hand_end", "accepted", "other")
TOPOLOGIES = ("node", "pi")
# Each seed is played twice: the deal read at the seats (every card tapped twice: dealt,
# played), and not read (hands unknown: envido proven by showing cards through the
# envido menu, the holds).
READINGS = (DealReading.SEATS, DealReading.NONE)

Node = TypeVar("Node", bound=MockNode)


@contextlib.contextmanager
def plugged(by_id: Path, nodes: Sequence[Node]) -> Iterator[list[Node]]:
    """``nodes`` started and linked in ``by_id`` under the names the Pi's udev gives a
    Pico's port (``usb-MicroPython_Board_in_FS_mode_<serial>-if00``); closed at the end."""
    by_id.mkdir(exist_ok=True)
    for node in nodes:
        (by_id / f"usb-MicroPython_Board_in_FS_mode_{node.serial}-if00").symlink_to(node.path)
        node.start()
    try:
        yield list(nodes)
    finally:
        for node in nodes:
            node.close()


@dataclass(frozen=True, slots=True)
class Sample:
    """One event the table handled, and what it cost."""

    kind: str  # press, hold, tag_on, tag_off
    what: str  # deal, hand_end, accepted, other
    cpu: float  # seconds (bench/table.py: net of the idle baseline)
    panel_bytes: int
    raw: float = math.nan  # seconds, as read (bench/table.py)
    #: the host's yardstick at its hand's start, µs (bench/table.py; ``bench/host.py``)
    host_us: float = math.nan


def game_mark(game: Game) -> tuple[int, int, tuple[int, int], bool]:
    """What :func:`what_it_did` compares: the hand, the actions, the score, a hand on."""
    return game.hand_number, len(game.hand_actions), game.score, game.hand_in_progress


def what_it_did(before: tuple[int, int, tuple[int, int], bool], game: Game) -> str:
    """What an event did to the game (``before``: its :func:`game_mark` before it)."""
    hand, moves, scored, playing = before
    if game.hand_number != hand or game.hand_in_progress != playing:
        return "deal" if game.hand_in_progress else "hand_end"
    if game.score != scored:
        return "hand_end"
    if len(game.hand_actions) != moves:
        return "accepted"
    return "other"


def headline(samples: Sequence[Sample], raw: bool = False) -> tuple[float, float, float]:
    """(mean, 99th percentile, no-op mean) CPU in seconds, the figures the targets are
    set on; the no-op mean is NaN when no event was one."""
    cpu = [s.raw if raw else s.cpu for s in samples]
    noop = [c for s, c in zip(samples, cpu, strict=True) if s.panel_bytes == 0]
    p99 = statistics.quantiles(cpu, n=100)[98] if len(cpu) > 1 else cpu[0]
    return statistics.fmean(cpu), p99, statistics.fmean(noop) if noop else math.nan


def ms(value: float) -> str:
    """Seconds as milliseconds (``-``: none)."""
    return "-" if math.isnan(value) else f"{value * 1e3:.3f}"


def summary(samples: Sequence[Sample], p99_kinds: bool = False) -> str:
    mean, p99, noop = headline(samples)
    noop_events = sum(1 for s in samples if s.panel_bytes == 0)
    line = (
        f"events={len(samples)} cpu_ms_mean={ms(mean)} cpu_ms_p99={ms(p99)} "
        f"noop_events={noop_events} noop_cpu_ms_mean={ms(noop)} "
        f"panel_bytes_mean={statistics.fmean(s.panel_bytes for s in samples):.0f}"
    )
    if p99_kinds:
        top = Counter(f"{s.kind}/{s.what}" for s in samples if s.cpu >= p99)
        line += " p99_set_by=" + ",".join(f"{k}:{n}" for k, n in top.most_common(4))
    return line


def medians(runs: Sequence[tuple[float, float, float]]) -> str:
    """The medians of several runs' headlines."""
    mean, p99, noop = (statistics.median(figure) for figure in zip(*runs, strict=True))
    return (
        f"runs={len(runs)} median_cpu_ms_mean={ms(mean)} median_cpu_ms_p99={ms(p99)} "
        f"median_noop_cpu_ms_mean={ms(noop)}"
    )


def print_breakdown(head: str, samples: Sequence[Sample]) -> None:
    """A ``kind=`` line for each kind of event, a ``what=`` line for each thing done."""
    for kind in KINDS:
        some = [s for s in samples if s.kind == kind]
        if some:
            print(f"{head} kind={kind} {summary(some)}", flush=True)
    for what in WHATS:
        some = [s for s in samples if s.what == what]
        if some:
            print(f"{head} what={what} {summary(some)}", flush=True)


def load_average() -> str:
    """The machine's one-minute load average when a run ends ("-" where none is read):
    the figures move with the neighbours' work."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "-"
