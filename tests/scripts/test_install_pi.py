"""scripts/install-pi checks the machine before it installs anything: a 32-bit system,
another release or an old Python is refused in one Spanish line (exit status 3)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "scripts" / "install-pi"

TRIXIE = 'PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nID=debian\nVERSION_CODENAME=trixie\n'
BOOKWORM = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_CODENAME=bookworm\n'
BULLSEYE = 'PRETTY_NAME="Raspbian GNU/Linux 11 (bullseye)"\nID=raspbian\nID_LIKE=debian\n'
BULLSEYE += "VERSION_CODENAME=bullseye\n"
UBUNTU = 'PRETTY_NAME="Ubuntu 24.04 LTS"\nID=ubuntu\nID_LIKE=debian\nVERSION_CODENAME=noble\n'


def check(
    tmp_path: Path, arch: str, os_release: str, python: str = "3.13.5", *options: str
) -> subprocess.CompletedProcess[str]:
    """`install-pi --check` on a machine that says it is ``arch``, with that os-release
    and that python3 (stand-ins for uname and python3 first on PATH)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "uname").write_text(f'#!/bin/sh\n[ "$1" = -m ] && echo {arch}\n')
    old = tuple(int(p) for p in python.split(".")[:2]) < (3, 11)
    (bin_dir / "python3").write_text(
        "#!/bin/sh\n"
        f'[ "$1" = --version ] && {{ echo "Python {python}"; exit 0; }}\n'
        f"exit {1 if old else 0}\n"
    )
    for tool in ("uname", "python3"):
        (bin_dir / tool).chmod(0o755)
    release = tmp_path / "os-release"
    release.write_text(os_release)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", TRUCO_OS_RELEASE=str(release))
    return subprocess.run(
        ["sh", str(INSTALL), "--check", *options],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


@pytest.mark.parametrize("release", [TRIXIE, BOOKWORM])
def test_a_64_bit_pi_with_bookworm_or_trixie_can_install(tmp_path: Path, release: str) -> None:
    done = check(tmp_path, "aarch64", release, "3.13.5" if "trixie" in release else "3.11.2")
    assert done.returncode == 0, done.stderr
    assert "se puede instalar" in done.stdout and done.stderr == ""


@pytest.mark.parametrize(
    ("arch", "release", "python", "words"),
    [
        ("armv7l", BOOKWORM, "3.11.2", ["32 bits (armv7l)", "Raspberry Pi OS Lite (64-bit)"]),
        ("armv6l", BOOKWORM, "3.11.2", ["32 bits (armv6l)"]),
        ("x86_64", TRIXIE, "3.13.5", ["no es una Raspberry Pi", "--not-a-pi"]),
        ("riscv64", TRIXIE, "3.13.5", ["no sé instalar en esta arquitectura (riscv64)"]),
        ("aarch64", BULLSEYE, "3.9.2", ["Raspbian GNU/Linux 11 (bullseye)", "trixie"]),
        ("aarch64", UBUNTU, "3.12.3", ["Ubuntu 24.04 LTS", "Raspberry Pi OS"]),
        ("aarch64", BOOKWORM, "3.9.2", ["Python de este sistema es 3.9.2", "3.11"]),
    ],
)
def test_what_cannot_work_is_refused_in_one_line(
    tmp_path: Path, arch: str, release: str, python: str, words: list[str]
) -> None:
    done = check(tmp_path, arch, release, python)
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout == ""  # refused before anything: not even the root check
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("install-pi: ")
    for word in words:
        assert word in lines[0]


def test_a_pc_may_try_the_install_when_asked(tmp_path: Path) -> None:
    done = check(tmp_path, "x86_64", BOOKWORM, "3.11.2", "--not-a-pi")
    assert done.returncode == 0 and "se puede instalar" in done.stdout


def test_the_checks_come_before_anything_is_installed() -> None:
    text = INSTALL.read_text(encoding="utf-8")
    checks = text.index("arch=$(uname -m)")
    for later in ("apt-get update", '[ "$(id -u)" = 0 ]', "useradd", "pip install"):
        assert checks < text.index(later), later
