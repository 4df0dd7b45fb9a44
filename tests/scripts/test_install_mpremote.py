"""scripts/install-mpremote: mpremote the way Bookworm allows, on this machine's Python.

Where the system Python is Debian's (EXTERNALLY-MANAGED, as on Raspberry Pi OS), the old
instruction `pip install --user mpremote` is shown to fail first. Needs PyPI.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEBIAN_PYTHON = Path("/usr/bin/python3")


def externally_managed(python: Path) -> bool:
    if not python.exists():
        return False
    done = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('stdlib'))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return (Path(done.stdout.strip()) / "EXTERNALLY-MANAGED").exists()


def venv_python() -> str:
    """A Python that can make venvs: Debian's where it has python3-venv, else this one."""
    if DEBIAN_PYTHON.exists():
        probe = subprocess.run([str(DEBIAN_PYTHON), "-c", "import ensurepip"], check=False)
        if probe.returncode == 0:
            return str(DEBIAN_PYTHON)
    return sys.executable


@pytest.mark.skipif(not externally_managed(DEBIAN_PYTHON), reason="no Debian system Python here")
def test_pip_install_user_is_refused_on_debian(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(DEBIAN_PYTHON), "-m", "pip", "install", "--user", "--dry-run", "mpremote"],
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(tmp_path)},
        timeout=120,
        check=False,
    )
    assert done.returncode != 0 and "externally-managed-environment" in done.stderr


def install_mpremote(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", str(ROOT / "scripts" / "install-mpremote")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_install_mpremote_makes_a_working_command(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "PYTHON": venv_python(),
        "PATH": f"{tmp_path / '.local' / 'bin'}:{os.environ['PATH']}",
    }
    done = install_mpremote(env)
    assert done.returncode == 0, done.stdout + done.stderr
    command = tmp_path / ".local" / "bin" / "mpremote"
    assert command.is_symlink() and str(tmp_path / ".local" / "share") in os.readlink(command)
    listed = subprocess.run(
        [str(command), "connect", "list"], capture_output=True, text=True, env=env, timeout=60
    )
    assert listed.returncode == 0, listed.stderr  # no Pico here: an empty list, no error
    again = install_mpremote(env)
    assert again.returncode == 0 and shutil.which("mpremote", path=env["PATH"]) == str(command)


def test_the_firmware_readme_no_longer_says_pip_install_user() -> None:
    text = (ROOT / "firmware" / "README.md").read_text(encoding="utf-8")
    assert "python3 -m pip install --user" not in text  # refused on Bookworm (PEP 668)
    assert "sh scripts/install-mpremote" in text
