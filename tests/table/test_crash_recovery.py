"""The mock table service survives power cuts (kill -9) and finishes every game exactly
as an uninterrupted run: same record, same score.

Bounded here (CI): the first trials of the seeded hundred, as many as a minute allows
and at least 20; ``TRUCO_FULL_FAULTS=1`` runs all 100 (or by hand:
``.venv/bin/python -m tests.table.crash_trials 100 7``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .crash_trials import run_bounded

TRIALS = 100
AT_LEAST = 20
BUDGET_S = 60.0


def test_kill_9_trials(tmp_path: Path, full_run: bool, capsys: pytest.CaptureFixture[str]) -> None:
    run = run_bounded(
        TRIALS,
        seed=7,
        workdir=tmp_path,
        budget_s=None if full_run else BUDGET_S,
        at_least=TRIALS if full_run else AT_LEAST,
    )
    with capsys.disabled():
        print(f"\nkill -9 trials ({'full' if full_run else 'bounded'}): {run.ran} of {TRIALS}")
    assert run.failures == []
    assert run.ran >= (TRIALS if full_run else AT_LEAST)
