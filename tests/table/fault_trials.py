"""Fault injection in the spirit of SQLite's crash tests, for the table's record.

A scripted game (a seeded random game, played through the real ``TableService`` with
the presses, holds and taps a player would make) is run again and again, each time with
one fault at one step of the state directory's system calls (``FaultyDisk``):

- ``errno``: the k-th system call fails with ENOSPC, EROFS or EIO (once, or for a while);
- ``cut``: the power goes just before the k-th disk-changing call (the process stops
  there; a fresh service restarts from what is on disk) - in process, and as a real
  ``kill -9`` of a child process (``kill_trial``);
- ``tail``: the game stops after some action and the record is damaged the way an SD
  card damages it (truncated, a zeroed 4 KiB page or 512-byte sector, a NUL tail,
  garbage) before the restart.

Every trial checks the invariant: the service never raises, every action acknowledged
on a display (shown while the record was durable) is in the record after the restart,
the record never holds an action twice or one that was not made (it is a prefix of the
uninterrupted run's), damage that lost acknowledged lines is reported, and the game
played on from there ends with the same archived record as the uninterrupted run.

Run by tests/table/test_fault_injection.py (bounded; ``TRUCO_FULL_FAULTS=1`` for every
step of bigger games), or by hand: ``.venv/bin/python -m tests.table.fault_trials``.
"""

from __future__ import annotations

import errno
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from controller.engine import Action, Card, Game, HouseRules
from controller.engine.playout import random_game
from controller.hal.events import ButtonHeld, ButtonPressed, TagArrived, TagLeft
from controller.hal.mock import MockDeck
from controller.table.controls import gestures_for
from controller.table.service import ServiceConfig, TableService
from controller.table.store import GameStore, plain
from controller.transcript import ActionStmt, DealStmt, HandStmt, parse, write
from tests.helpers import Clock

from .faulty_disk import FaultyDisk

DECK = MockDeck(5)
ERRNOS = (errno.ENOSPC, errno.EROFS, errno.EIO)


@dataclass
class Step:
    deal: dict[int, tuple[Card, ...]] | None = None
    action: Action | None = None


@dataclass
class Script:
    rules: HouseRules
    steps: list[Step]
    reference: str = ""  # the uninterrupted run's archived record (checks removed)
    lines: list[list[str]] = field(default_factory=list)  # record lines each step added
    ops: int = 0  # system calls of the uninterrupted run
    mutations: int = 0  # disk-changing ones


class Screen:
    def show(self, image: Image.Image) -> None:
        pass


def script(seed: int, players: int = 2, target: int = 15) -> Script:
    rules = HouseRules(players=players, target=target)
    game = random_game(Game(rules), random.Random(seed))
    steps: list[Step] = []
    for stmt in parse(write(game)):
        if isinstance(stmt, HandStmt):
            steps.append(Step(deal={}))
        elif isinstance(stmt, DealStmt):
            assert steps[-1].deal is not None
            steps[-1].deal[stmt.seat] = stmt.cards
        elif isinstance(stmt, ActionStmt):
            steps.append(Step(action=stmt.action))
    return Script(rules, steps)


class Run:
    """One service over ``state`` with ``disk``; ``acked``: steps shown while durable."""

    def __init__(self, s: Script, state: Path, disk: FaultyDisk) -> None:
        self.script, self.disk, self.clock = s, disk, Clock(10_000.0)
        self.added: list[str] = []
        self.store = GameStore(state, disk=disk, clock=lambda: 1_700_000_000.0)
        self.service = TableService(
            ServiceConfig(s.rules, state_dir=state, next_deal_after_s=0.0, new_game_after_s=0.0),
            DECK.lookup,
            [Screen() for _ in range(s.rules.players)],
            clock=self.clock,
            store=self.store,
            on_record=lambda line: self.added.extend(line.split("\n")),
        )
        self.service.ready()
        self.acked = 0

    def settle(self) -> None:
        """Handle what was posted; the clock passes the store's retry interval."""
        for _ in range(1_000):
            self.clock.now += 1.5
            if not self.service.step(0.0):
                return

    def play(
        self, first: int, last: int | None = None, on_step: Callable[[int], None] = lambda i: None
    ) -> None:
        steps = self.script.steps
        for i in range(first, len(steps) if last is None else last):
            step = steps[i]
            post = self.service.post
            if step.deal is not None:
                for seat, cards in step.deal.items():
                    for card in cards:
                        uid = DECK.uid(card)
                        post(seat, TagArrived(uid))
                        post(seat, TagLeft(uid))
            else:
                action = step.action
                assert action is not None
                table = self.service.table
                for g in gestures_for(table.game, action, table.inputs[action.seat]):
                    if g.kind == "tap":
                        assert g.card is not None
                        uid = DECK.uid(g.card)
                        post(g.seat, TagArrived(uid))
                        post(g.seat, TagLeft(uid))
                    else:
                        assert g.button is not None
                        event = ButtonPressed if g.kind == "press" else ButtonHeld
                        post(g.seat, event(g.button.value))
                    self.settle()
            self.settle()
            if self.store.problem is None and not self.store.pending:
                self.acked = i + 1  # shown on the displays while the record was durable
            on_step(i)
        self.settle()


def reference(s: Script, workdir: Path) -> Script:
    """The uninterrupted run: its archived record and the lines each step added."""
    disk = FaultyDisk(sync=False)
    run = Run(s, workdir / "reference", disk)
    s.lines = []

    def note(i: int) -> None:
        s.lines.append(list(run.added))
        run.added.clear()

    run.play(0, on_step=note)
    [archived] = run.store.archived()
    s.reference = plain(archived.read_text(encoding="utf-8"))
    s.ops, s.mutations = disk.ops, disk.mutations
    return s


def content(lines: list[str]) -> list[str]:
    return [line for line in lines if line.split("#", 1)[0].strip()]


def resume_point(s: Script, restored: list[str]) -> int | str:
    """The step to go on from, given the restored record; a string says what is wrong."""
    got = content(restored)[1:]  # without the table line
    done = 0
    for i, added in enumerate(s.lines):
        if done == len(got):
            return i
        want = content(added)
        if got[done : done + len(want)] != want:
            return f"restored record differs at step {i}: {got[done : done + len(want)]} != {want}"
        done += len(want)
    return len(s.lines) if done == len(got) else "restored record longer than the game"


def finish(
    s: Script, state: Path, acked: int, *, damaged_ok: bool = False, truncated: bool = False
) -> str | None:
    """Restart on a good disk, check the invariant, play on to the end; None if all well."""
    try:
        run = Run(s, state, FaultyDisk(sync=False))
    except Exception as e:  # the service must always come up
        return f"restart raised {type(e).__name__}: {e}"
    archived = run.store.archived()
    if archived:  # the game was won before the cut: its record must be whole
        text = plain(archived[-1].read_text(encoding="utf-8"))
        if len(archived) != 1 or text != s.reference:
            return f"{len(archived)} archived record(s), not the uninterrupted one"
        return None
    point = resume_point(s, run.store.lines)
    if isinstance(point, str):
        return point
    # a hand whose deal was shown but that saw no action is read again (by design)
    lost = [i for i in range(point, acked) if s.steps[i].action is not None]
    if lost and not damaged_ok:
        return f"acknowledged actions lost: {acked} steps shown, {point} in the record"
    if lost and run.store.damage is None and not truncated:
        return f"acknowledged actions lost without a word: {acked} shown, {point} kept"
    try:
        run.play(point)
    except Exception as e:
        return f"playing on raised {type(e).__name__}: {e}"
    archived = run.store.archived()
    if len(archived) != 1:
        return f"{len(archived)} archived records after the game"
    if plain(archived[0].read_text(encoding="utf-8")) != s.reference:
        return "the finished record differs from the uninterrupted run's"
    return None


# ---------------------------------------------------------------------------- trials


class Stop(Exception):
    pass


def errno_trial(s: Script, state: Path, error: int, at: int, window: int) -> str | None:
    """System call ``at`` fails (and every one after it for ``window`` steps)."""
    disk = FaultyDisk(error, sync=False)
    if window == 0:
        disk.fail_at = at
    steps_failing = [0]

    def start(name: str, detail: str) -> None:
        if window and disk.ops == at:
            disk.failing = True

    def on_step(i: int) -> None:
        if disk.failing:
            steps_failing[0] += 1
            if steps_failing[0] >= window:
                disk.failing = False

    disk.on_op = start
    try:
        run = Run(s, state, disk)
        run.play(0, on_step=on_step)
        disk.failing = False
        run.settle()
    except Exception as e:
        return f"the service raised {type(e).__name__}: {e}"
    if run.store.pending or run.store.problem:
        return "the record never caught up"
    # the table itself went on through the spell: the game it played was won and
    # archived in play (issue 45: once seen stuck at a deal after a read-only spell,
    # never archived; finish() alone would have played the rest on a fresh service)
    disk.fail_at = None  # the check's own reads are not the trial's fault
    archived = run.store.archived()
    if len(archived) != 1 or plain(archived[0].read_text(encoding="utf-8")) != s.reference:
        return f"{len(archived)} archived record(s) in play, not the uninterrupted one"
    return finish(s, state, len(s.steps))


def cut_trial(s: Script, state: Path, at: int) -> str | None:
    """The power goes before disk-changing call ``at``; restart; invariant; play on."""
    from .faulty_disk import PowerCut

    disk = FaultyDisk(sync=False)
    disk.cut_at = at
    acked = 0
    try:
        run = Run(s, state, disk)
        try:
            run.play(0)
        finally:
            acked = run.acked
    except PowerCut:
        pass
    except Exception as e:
        return f"the service raised {type(e).__name__}: {e}"
    return finish(s, state, acked)


def kill_trial(seed: int, players: int, target: int, s: Script, state: Path, at: int) -> str | None:
    """A real ``kill -9`` of a child process just before disk-changing call ``at``."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.table.fault_trials",
            "--child",
            str(state),
            str(seed),
            str(players),
            str(target),
            str(at),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parent.parent.parent,
    )
    if out.returncode not in (-signal.SIGKILL, 0):
        return f"the child failed ({out.returncode}): {out.stderr[-300:]}"
    acked = [int(line.split()[1]) for line in out.stdout.splitlines() if line.startswith("acked ")]
    return finish(s, state, acked[-1] if acked else 0)


def child(state: str, seed: int, players: int, target: int, at: int) -> None:
    """The killed process: plays the script and says which steps were acknowledged."""
    import logging

    logging.disable(logging.CRITICAL)
    s = script(seed, players, target)
    disk = FaultyDisk()  # real fsyncs: this process really dies
    disk.kill_at = at
    run = Run(s, Path(state), disk)

    def say(i: int) -> None:
        print(f"acked {run.acked}", flush=True)

    run.play(0, on_step=say)


TAILS = ("truncate", "zero-page", "zero-sector", "nul-tail", "garbage")


def damage(path: Path, kind: str, rng: random.Random) -> None:
    data = bytearray(path.read_bytes())
    if not data:
        return
    if kind == "truncate":
        del data[rng.randrange(len(data)) :]
    elif kind in ("zero-page", "zero-sector"):
        size = 4096 if kind == "zero-page" else 512
        start = rng.randrange(0, len(data), size) if len(data) > size else 0
        data[start : start + size] = bytes(min(size, len(data) - start))
    elif kind == "nul-tail":
        cut = rng.randrange(len(data))
        data[cut:] = bytes(len(data) - cut + rng.randrange(1, 64))
    else:
        cut = rng.randrange(len(data))
        data[cut:] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    path.write_bytes(bytes(data))


def tail_trial(s: Script, state: Path, stop: int, kind: str, seed: int) -> str | None:
    run = Run(s, state, FaultyDisk(sync=False))
    run.play(0, stop)
    damage(state / "current.truco", kind, random.Random(seed))
    # A file cut at a line's end looks like a torn write: nothing tells the store that
    # more lines were there (no log can tell without a length kept elsewhere).
    return finish(s, state, run.acked, damaged_ok=True, truncated=kind == "truncate")


@dataclass
class Figures:
    trials: int = 0
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    kinds: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str, result: str | None, label: str) -> None:
        self.trials += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if result is not None:
            self.failures.append(f"{label}: {result}")

    def line(self) -> str:
        kinds = " ".join(f"{k}={v}" for k, v in sorted(self.kinds.items()))
        return (
            f"trials={self.trials} failures={len(self.failures)} seconds={self.seconds:.1f} {kinds}"
        )


def every(n: int, total: int) -> Iterator[int]:
    """1..total, every n-th (n = 1: all), always with the first and last."""
    picks = set(range(1, total + 1, n)) | {1, total}
    yield from sorted(p for p in picks if p >= 1)


def run_all(workdir: Path, *, full: bool) -> Figures:
    figures = Figures()
    start = time.monotonic()
    configs = [(8, 2, 15), (9, 4, 15)] + ([(9, 6, 15), (10, 2, 30)] if full else [])
    n = 0
    for seed, players, target in configs:
        s = reference(script(seed, players, target), workdir / f"ref-{seed}-{players}-{target}")
        stride = 1 if full else max(1, s.ops // 10)
        for error in ERRNOS:
            for at in every(stride, s.ops):
                for window in (0, 3):
                    n += 1
                    r = errno_trial(s, workdir / f"t{n}", error, at, window)
                    figures.add(
                        f"errno-{errno.errorcode[error]}", r, f"seed {seed} op {at} {window}"
                    )
        stride = 1 if full else max(1, s.mutations // 20)
        for at in every(stride, s.mutations):
            n += 1
            figures.add("cut", cut_trial(s, workdir / f"t{n}", at), f"seed {seed} cut {at}")
        stride = 1 if full else max(1, s.mutations // 4)
        for at in every(stride, s.mutations):
            n += 1
            r = kill_trial(seed, players, target, s, workdir / f"t{n}", at)
            figures.add("kill-9", r, f"seed {seed} kill -9 {at}")
        rng = random.Random(seed)
        for kind in TAILS:
            for _ in range(12 if full else 2):
                n += 1
                stop = rng.randrange(1, len(s.steps))
                r = tail_trial(s, workdir / f"t{n}", stop, kind, rng.randrange(1 << 30))
                figures.add(f"tail-{kind}", r, f"seed {seed} {kind} after step {stop}")
    figures.seconds = time.monotonic() - start
    return figures


def errno_sweep(
    workdir: Path,
    seed: int,
    players: int,
    error: int,
    *,
    windows: tuple[int, ...],
    target: int = 15,
) -> Figures:
    """One game's errno trials at every system call of its run, for each window (0: the
    call fails once; n: every call fails for n steps): the issue-45 sweep of seed 34, 4
    players, EROFS is ``--seed 34 --players 4 --errno EROFS``."""
    figures = Figures()
    start = time.monotonic()
    s = reference(script(seed, players, target), workdir / "reference")
    for n, (at, window) in enumerate(
        (at, window) for at in range(1, s.ops + 1) for window in windows
    ):
        r = errno_trial(s, workdir / f"t{n}", error, at, window)
        figures.add(f"errno-{errno.errorcode[error]}", r, f"seed {seed} op {at} window {window}")
    figures.seconds = time.monotonic() - start
    return figures


def main() -> None:
    import argparse
    import logging
    import tempfile

    if sys.argv[1:2] == ["--child"]:
        state, seed, players, target, at = sys.argv[2:7]
        child(state, int(seed), int(players), int(target), int(at))
        return
    if "--seed" in sys.argv:
        parser = argparse.ArgumentParser(prog="python -m tests.table.fault_trials")
        parser.add_argument("--seed", type=int, required=True)
        parser.add_argument("--players", type=int, default=2)
        parser.add_argument("--errno", default="EROFS", choices=["ENOSPC", "EROFS", "EIO"])
        parser.add_argument("--windows", default="0,1,3,10,1000")
        args = parser.parse_args()
        logging.disable(logging.CRITICAL)
        windows = tuple(int(w) for w in args.windows.split(","))
        with tempfile.TemporaryDirectory() as tmp:
            figures = errno_sweep(
                Path(tmp), args.seed, args.players, getattr(errno, args.errno), windows=windows
            )
        print(figures.line())
        for failure in figures.failures[:50]:
            print(failure)
        sys.exit(1 if figures.failures else 0)
    full = "--full" in sys.argv or os.environ.get("TRUCO_FULL_FAULTS") == "1"
    with tempfile.TemporaryDirectory() as tmp:
        figures = run_all(Path(tmp), full=full)
    print(figures.line())
    for failure in figures.failures[:50]:
        print(failure)
    sys.exit(1 if figures.failures else 0)


if __name__ == "__main__":
    main()
