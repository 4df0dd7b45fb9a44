"""Power-cut trials: ``kill -9`` the mock table service at random points, restart it, and
check that the finished game equals an uninterrupted run, every time.

Run by the test suite (tests/table/test_crash_recovery.py), or by hand:

    .venv/bin/python -m tests.table.crash_trials [TRIALS] [SEED]
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from controller.engine import Game, HouseRules
from controller.engine.playout import random_game
from controller.transcript import write


@dataclass
class Reference:
    script: Path
    record: str
    score: list[int]
    seconds: float
    rules: HouseRules


def command(rules: HouseRules, state: Path, script: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "controller.cli",
        "run",
        "--mock",
        "--players",
        str(rules.players),
        "--flor",
        "on" if rules.flor else "off",
        "--target",
        str(rules.target),
        "--pica-pica",
        "on" if rules.pica_pica else "off",
        "--state",
        str(state),
        "--script",
        str(script),
    ]


def finished(state: Path) -> str:
    [record] = sorted((state / "archive").glob("*.truco"))
    return record.read_text(encoding="utf-8")


def reference(workdir: Path, rules: HouseRules, seed: int) -> Reference:
    game = random_game(Game(rules), random.Random(seed))
    script = workdir / f"script-{seed}.truco"
    script.write_text(write(game), encoding="utf-8")
    state = workdir / f"reference-{seed}"
    start = time.monotonic()
    out = subprocess.run(command(rules, state, script), capture_output=True, text=True, check=True)
    seconds = time.monotonic() - start
    return Reference(script, finished(state), json.loads(out.stdout)["score"], seconds, rules)


def trial(ref: Reference, state: Path, rng: random.Random) -> str | None:
    """One trial: 1 to 3 kills at random moments, then run to the end. None if all well."""
    kills = rng.randint(1, 3)
    for _ in range(kills):
        proc = subprocess.Popen(
            command(ref.rules, state, ref.script),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.0, ref.seconds))
        proc.kill()  # SIGKILL: no cleanup at all, like a power cut
        proc.wait()
    for _ in range(3):
        out = subprocess.run(command(ref.rules, state, ref.script), capture_output=True, text=True)
        if out.returncode == 0:
            break
    else:
        return f"{state.name}: did not finish: {out.stderr[-500:]}"
    score = json.loads(out.stdout)["score"]
    if score != ref.score:
        return f"{state.name}: score {score}, uninterrupted {ref.score}"
    record = finished(state)
    if record != ref.record:
        return f"{state.name}: the record differs from the uninterrupted run's"
    return None


@dataclass
class TrialsRun:
    ran: int  # trials played (the first ``ran`` of the seeded list, always the same ones)
    failures: list[str]


def run_bounded(
    trials: int,
    seed: int,
    workdir: Path,
    *,
    budget_s: float | None,
    at_least: int,
    workers: int = 2,
    rules: tuple[HouseRules, ...] = (HouseRules(players=4), HouseRules(players=2, flor=True)),
) -> TrialsRun:
    """Up to ``trials`` trials; after ``budget_s`` seconds (None: no bound) no further
    trial starts once ``at_least`` have."""
    refs = [reference(workdir, r, seed + i) for i, r in enumerate(rules)]
    rng = random.Random(seed)
    jobs = [
        (i, refs[i % len(refs)], workdir / f"trial-{i}", random.Random(rng.random()))
        for i in range(trials)
    ]
    deadline = None if budget_s is None else time.monotonic() + budget_s
    skipped = "skipped"

    def run(index: int, ref: Reference, folder: Path, trial_rng: random.Random) -> str | None:
        if index >= at_least and deadline is not None and time.monotonic() > deadline:
            return skipped
        return trial(ref, folder, trial_rng)

    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(lambda job: run(*job), jobs))
    played = [r for r in results if r is not skipped]
    return TrialsRun(len(played), [r for r in played if r is not None])


def run_trials(
    trials: int,
    seed: int,
    workdir: Path,
    workers: int = 2,
    rules: tuple[HouseRules, ...] = (HouseRules(players=4), HouseRules(players=2, flor=True)),
) -> list[str]:
    """Every one of ``trials`` trials; the failures."""
    run = run_bounded(
        trials, seed, workdir, budget_s=None, at_least=trials, workers=workers, rules=rules
    )
    return run.failures


def main() -> None:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    with tempfile.TemporaryDirectory() as tmp:
        start = time.monotonic()
        failures = run_trials(trials, seed, Path(tmp))
        print(f"trials={trials} failures={len(failures)} seconds={time.monotonic() - start:.0f}")
        for failure in failures:
            print(failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
