"""The optional compiled build: ``TRUCO_TABLE_MYPYC=1`` compiles the modules listed in
pyproject.toml ``[tool.truco-table.compiled]`` with mypyc (needs mypy and a C compiler);
without it this is the plain pure-Python package. README: "The compiled build"."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from setuptools import setup


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


if __name__ == "__main__":  # pip and setuptools run this file as __main__
    ext_modules = []
    if os.environ.get("TRUCO_TABLE_MYPYC") == "1":
        from mypyc.build import mypycify

        # multi_file: one C file per module, not one 4 MB file: the compile's peak
        # memory falls from about 350 MB to about 220 MB, the engine as fast (README
        # "The compiled build").
        ext_modules = mypycify(
            compiled_modules(Path(__file__).parent), opt_level="3", multi_file=True
        )
    setup(ext_modules=ext_modules)
