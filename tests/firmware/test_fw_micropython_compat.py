"""A static check that the firmware stays inside what MicroPython runs.

(The firmware also runs on a real MicroPython in test_fw_on_micropython.py and
test_fw_e2e_micropython.py; this check names the construct and the line, and covers
what the unix port has but the Pico's rp2 port lacks, such as extra modules.)
CPython imports these modules for the tests, but the Pico runs them on
MicroPython, which lacks typing, dataclasses, f-string ``=``, positional-only
parameters, generalized unpacking in displays, ``zip(strict=)`` and most of
the standard library.  This walks the syntax tree of every firmware file.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

FIRMWARE_DIR = Path(__file__).resolve().parents[2] / "firmware"
FILES = sorted(FIRMWARE_DIR.rglob("*.py"))
# Modules MicroPython's rp2 port has built in (plus our own package).
ALLOWED_IMPORTS = {
    "sys", "time", "machine", "micropython", "select", "binascii", "os", "gc", "array",
}  # fmt: skip
ALLOWED_DECORATORS = {"property", "staticmethod", "classmethod"}
# MicroPython's code emitters: a viper function's annotations are its machine types.
EMITTERS = {"micropython.viper", "micropython.native"}


def problems(path: Path) -> list[str]:
    source = path.read_text()
    tree = ast.parse(source)
    found = []
    # Imports in an ``except ImportError:`` block are the CPython fallbacks (compat.py).
    fallback = {
        id(inner)
        for handler in ast.walk(tree)
        if isinstance(handler, ast.ExceptHandler)
        and isinstance(handler.type, ast.Name)
        and handler.type.id == "ImportError"
        for inner in ast.walk(handler)
    }
    for node in ast.walk(tree):
        where = f"{path.name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.AnnAssign):
            found.append(f"{where}: variable annotation")
        emitted = isinstance(node, ast.FunctionDef) and any(
            ast.unparse(deco) in EMITTERS for deco in node.decorator_list
        )
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and emitted:
            pass  # annotations are viper's types; MicroPython compiles it as such
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            args = node.args
            if args.posonlyargs:
                found.append(f"{where}: positional-only parameters")
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                if arg.annotation is not None:
                    found.append(f"{where}: parameter annotation")
            if not isinstance(node, ast.Lambda):
                if node.returns is not None:
                    found.append(f"{where}: return annotation")
                for deco in node.decorator_list:
                    if not (isinstance(deco, ast.Name) and deco.id in ALLOWED_DECORATORS):
                        found.append(f"{where}: decorator {ast.unparse(deco)}")
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in fallback:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            for name in names:
                root = (name or "").split(".")[0]
                if root not in ALLOWED_IMPORTS and root != "seatnode":
                    found.append(f"{where}: import {name}")
        if (
            isinstance(node, ast.List | ast.Tuple | ast.Set)
            and (isinstance(node, ast.Set) or isinstance(node.ctx, ast.Load))
            and any(isinstance(e, ast.Starred) for e in node.elts)
        ):
            found.append(f"{where}: unpacking in a display")
        if isinstance(node, ast.Dict) and None in node.keys:
            found.append(f"{where}: ** in a dict display")
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "strict":
                    found.append(f"{where}: strict= keyword")
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in ("hex", "fromhex"):
                found.append(f"{where}: .{func.attr}() (use binascii)")
        if isinstance(node, ast.Match | ast.TryStar):
            found.append(f"{where}: {type(node).__name__}")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        is_fstring = token.string.lstrip("rbRB").startswith(("f", "F"))
        if (
            token.type == tokenize.STRING
            and is_fstring
            and re.search(r"=\s*(![rsa])?(:[^}]*)?\}", token.string)
        ):
            found.append(f"{path.name}:{token.start[0]}: f-string '=' specifier")
    return found


def test_there_are_firmware_files() -> None:
    names = {p.name for p in FILES}
    assert {"protocol.py", "debounce.py", "tags.py", "mfrc522.py", "main.py"} <= names


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(FIRMWARE_DIR)))
def test_firmware_file_is_micropython_compatible(path: Path) -> None:
    assert problems(path) == []


def test_the_checker_catches_things(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from dataclasses import dataclass\n"
        "x: int = 1\n"
        "def f(a: int, /) -> None:\n"
        "    return [*a, f'{a=}', zip(a, a, strict=True), b'1'.hex()]\n"
    )
    found = problems(bad)
    assert len(found) >= 7, found
