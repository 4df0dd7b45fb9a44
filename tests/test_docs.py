"""The examples in the README and in the docstrings run as written (doctest)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent

MODULES = [
    "controller.engine.cards",
    "controller.engine.actions",
    "controller.engine.game",
    "controller.transcript",
]


def test_readme_examples() -> None:
    result = doctest.testfile(str(ROOT / "README.md"), module_relative=False, verbose=False)
    assert result.attempted >= 5
    assert result.failed == 0


@pytest.mark.parametrize("name", MODULES)
def test_module_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), verbose=False)
    assert result.attempted > 0
    assert result.failed == 0
