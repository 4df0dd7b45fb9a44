"""The two builds: the pure-Python sources (the default) and the optional compiled one.

``scripts/test-compiled`` runs the compiled modules' tests (pyproject.toml's
``[tool.truco-table.compiled] tests``, this file among them) again with the
mypyc-compiled modules first on the path and ``TRUCO_TABLE_BUILD=compiled``; these tests
make sure each run really imports the build it claims to test, and that the list holds
the tests of every compiled module.
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


def test_the_compiled_build_runs_the_tests_of_every_compiled_module() -> None:
    """scripts/test-compiled runs only pyproject's ``tests`` on the compiled build: each
    module listed for compiling is imported by one of them (its own tests are there)."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        compiled = tomllib.load(f)["tool"]["truco-table"]["compiled"]
    sources: list[str] = []
    for listed in compiled["tests"]:
        path = ROOT / listed
        assert path.exists(), listed
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        sources += [p.read_text(encoding="utf-8") for p in files]
    assert any("TRUCO_TABLE_BUILD" in text for text in sources)  # this file is among them
    for name in compiled["modules"]:
        dotted = name.removesuffix(".py").replace("/", ".")
        package, _, last = dotted.rpartition(".")
        imports = (f"import {dotted}", f"from {dotted} import", f"from {package} import {last}")
        assert any(i in text for text in sources for i in imports), f"no test imports {dotted}"
