"""The optional compiled build: ``TRUCO_TABLE_MYPYC=1`` compiles the modules listed in
pyproject.toml ``[tool.truco-table.compiled]`` with mypyc (needs mypy and a C compiler);
without it this is the plain pure-Python package. README: "The compiled build"."""

from __future__ import annotations

import multiprocessing
import os
import sys
import tomllib
from multiprocessing.connection import Connection
from pathlib import Path

from setuptools import Extension, setup


def compiled_modules(root: Path) -> list[str]:
    """The source files to compile: each listed module, or every module of a listed package."""
    with open(root / "pyproject.toml", "rb") as f:
        listed = tomllib.load(f)["tool"]["truco-table"]["compiled"]["modules"]
    files: list[str] = []
    for name in listed:
        path = root / name
        found = sorted(path.glob("*.py")) if path.is_dir() else [path.with_suffix(".py")]
        files += [str(p.relative_to(root)) for p in found]
    return files


def _generate(root: Path, send: Connection) -> None:
    from mypyc.build import mypycify

    # multi_file: one C file per module, not one 4 MB file: the compile's peak memory
    # falls from about 350 MB to about 220 MB, the engine as fast (README "The compiled
    # build").
    send.send(mypycify(compiled_modules(root), opt_level="3", multi_file=True))
    send.close()


def mypyc_extensions(root: Path) -> list[Extension]:
    """mypyc's extensions, their C files written in build/, by a child process that exits
    before the C compiler starts: mypy's and mypyc's memory (some 150 MB) is given back
    first, and the compile's peak is the compiler's alone, not the two together (README
    "The compiled build"). Forked, not spawned: pip runs this file under its own __main__."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_generate, args=(root, send))
    child.start()
    send.close()
    try:
        extensions: list[Extension] | None = receive.recv()
    except EOFError:  # the child failed: mypyc printed why
        extensions = None
    child.join()
    if extensions is None or child.exitcode != 0:
        sys.exit(f"setup.py: mypyc failed (exit status {child.exitcode}; its messages above)")
    return extensions


if __name__ == "__main__":  # pip and setuptools run this file as __main__
    ext_modules: list[Extension] = []
    if os.environ.get("TRUCO_TABLE_MYPYC") == "1":
        ext_modules = mypyc_extensions(Path(__file__).parent)
    setup(ext_modules=ext_modules)
