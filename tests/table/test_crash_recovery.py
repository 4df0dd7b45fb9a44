"""The mock table service survives 100 power cuts (kill -9) and finishes every game
exactly as an uninterrupted run: same record, same score."""

from __future__ import annotations

from pathlib import Path

from .crash_trials import run_trials


def test_one_hundred_kill_9_trials(tmp_path: Path) -> None:
    failures = run_trials(100, seed=7, workdir=tmp_path)
    assert failures == []
