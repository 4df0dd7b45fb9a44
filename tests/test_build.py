"""The two builds: the pure-Python sources (the default) and the optional compiled one.

``scripts/test-compiled`` runs the whole suite again with the mypyc-compiled modules
first on the path and ``TRUCO_TABLE_BUILD=compiled``; these tests make sure each run
really imports the build it claims to test.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from setup import compiled_modules  # noqa: E402

del sys.path[0]

BUILD = os.environ.get("TRUCO_TABLE_BUILD", "pure")


def module_names() -> list[str]:
    return [
        name.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        for name in compiled_modules(ROOT)
    ]


def test_the_build_lists_modules_that_exist() -> None:
    with open(ROOT / "pyproject.toml", "rb") as f:
        listed = tomllib.load(f)["tool"]["truco-table"]["compiled"]["modules"]
    assert listed
    names = module_names()
    assert "controller.engine.game" in names and "controller.engine" in names
    for name in names:
        assert importlib.util.find_spec(name) is not None, name


@pytest.mark.parametrize("name", module_names())
def test_each_module_is_the_build_under_test(name: str) -> None:
    module = importlib.import_module(name)
    path = str(module.__file__)
    extension = path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    assert BUILD in ("pure", "compiled"), BUILD
    assert extension == (BUILD == "compiled"), path
