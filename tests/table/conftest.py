"""``full_run``: the fault-injection and fuzz tests run their fuller sizes when the
environment sets ``TRUCO_FULL_FAULTS=1`` (bounded sizes otherwise, for CI)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture
def full_run() -> bool:
    return os.environ.get("TRUCO_FULL_FAULTS") == "1"
