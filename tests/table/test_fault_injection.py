"""The fault-injection suite (tests/table/fault_trials.py): ENOSPC, EROFS and EIO at the
state directory's system calls through whole games and their archive, power cuts before
disk-changing calls (in process and as a real kill -9), SD-card damage before restarts;
the invariant holds in every trial. Bounded here; ``TRUCO_FULL_FAULTS=1`` runs every
step of four games (the figures: docs/dev/service.md, "When the disk or a node misbehaves")."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from .fault_trials import run_all


def test_every_fault_keeps_the_invariant(
    tmp_path: Path, full_run: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    logging.disable(logging.CRITICAL)  # thousands of disk errors are logged otherwise
    try:
        figures = run_all(tmp_path, full=full_run)
    finally:
        logging.disable(logging.NOTSET)
    with capsys.disabled():
        print(f"\nfault injection ({'full' if full_run else 'quick'}): {figures.line()}")
    assert figures.failures == []
    assert figures.trials >= 200
    assert {"cut", "kill-9", "errno-ENOSPC", "errno-EROFS", "errno-EIO"} <= set(figures.kinds)
