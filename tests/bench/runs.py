"""A bench run as a developer runs it (``.venv/bin/python bench/NAME.py`` from the
repository), and its key=value lines read back: what the bench tests share."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_bench(
    script: str, *args: str, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``script`` (``bench/table.py``) run with this Python, from the repository; its
    output as text, whatever its exit status."""
    return subprocess.run(
        [sys.executable, script, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def key_values(output: str, *, only: bool = False) -> list[dict[str, str]]:
    """Each line's key=value pairs; ``only``: asserts each line is nothing else."""
    lines = []
    for line in output.splitlines():
        pairs = dict(re.findall(r"(\w+)=(\S+)", line))
        if only:
            assert len(pairs) == line.count("="), line  # every word a key=value
        lines.append(pairs)
    return lines
