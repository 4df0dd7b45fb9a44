"""The examples in the competition's docstrings run as written (doctest)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["entrants", "pairing", "tournament", "codec"]


@pytest.mark.parametrize("name", MODULES)
def test_module_examples(name: str) -> None:
    module = importlib.import_module(f"controller.tournament.competition.{name}")
    result = doctest.testmod(module, verbose=False)
    assert result.attempted > 0
    assert result.failed == 0
