"""The firmware's checks (tests/firmware/mpy/fw_checks.py) under real MicroPython and CPython.

The same functions run in both: CPython calls them here, one test each; a real
MicroPython process (the unix port) runs them all and reports each one.
"""

from __future__ import annotations

from collections.abc import Callable

import fw_checks
import pytest
from micropython_unix import MPY_DIR, run_script

NAMES = [check.__name__ for check in fw_checks.CHECKS]


@pytest.fixture(scope="module")
def micropython_results() -> dict[str, str]:
    result = run_script(MPY_DIR / "fw_checks.py")
    outcomes: dict[str, str] = {}
    current = ""
    for line in result.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASS", "FAIL"):
            current = rest
            outcomes[current] = word
        elif current and outcomes.get(current, "").startswith("FAIL"):
            outcomes[current] += "\n" + line
    assert "DONE" in result.stdout, result.stdout + result.stderr
    return outcomes


@pytest.mark.parametrize("name", NAMES)
def test_on_micropython(name: str, micropython_results: dict[str, str]) -> None:
    assert micropython_results.get(name) == "PASS", micropython_results.get(name)


@pytest.mark.parametrize("check", fw_checks.CHECKS, ids=NAMES)
def test_on_cpython(check: Callable[[], None]) -> None:
    check()
