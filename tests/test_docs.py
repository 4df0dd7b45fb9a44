"""The examples in the README and in the docstrings run as written (doctest)."""

from __future__ import annotations

import ast
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


def docstrings(source: str) -> list[tuple[str, str, int]]:
    """(name, docstring, line) of the module and of every class and function in it."""
    tree = ast.parse(source)
    found: list[tuple[str, str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            text = ast.get_docstring(node, clean=False)
            if text and node.body:
                found.append((getattr(node, "name", "<module>"), text, node.body[0].lineno))
    return found


@pytest.mark.parametrize("name", MODULES)
def test_module_examples(name: str) -> None:
    """The examples are read from the module's source and run in the namespace of the
    module as imported: on the compiled build (``tests/test_build.py``) they run against
    the compiled module, whose functions doctest cannot look into."""
    module = importlib.import_module(name)
    source = Path(name.replace(".", "/") + ".py")
    path = ROOT / source
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(verbose=False)
    for where, text, line in docstrings(path.read_text(encoding="utf-8")):
        test = parser.get_doctest(text, dict(vars(module)), f"{name}.{where}", str(path), line)
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0
    assert result.failed == 0
