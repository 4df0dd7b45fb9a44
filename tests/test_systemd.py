"""The service unit: systemd-analyze verify passes, and the settings the product needs."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

UNIT = Path(__file__).parent.parent / "systemd" / "truco-table.service"


def unit(path: Path = UNIT) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(path)
    return parser


def installed_copy(unit: Path, folder: Path) -> Path:
    """``unit`` copied into ``folder``, its ExecStart pointed at this checkout's command
    (verify checks that the program exists)."""
    exe = Path(sys.executable).with_name("truco-table")
    copy = folder / unit.name
    copy.write_text(unit.read_text().replace("/opt/truco-table/.venv/bin/truco-table", str(exe)))
    return copy


def verify(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True, text=True)


def test_settings() -> None:
    service = unit()["Service"]
    assert service["Type"] == "notify"
    assert service["Restart"] == "on-failure"
    # issue 13, 2: with Restart=on-failure and no start limits systemd looped
    limits = unit()["Unit"]
    assert int(limits["StartLimitBurst"]) >= 1 and int(limits["StartLimitIntervalSec"]) > 0
    assert service["RestartPreventExitStatus"].split() == ["2", "3"]  # bad config, no hardware
    assert service["RuntimeDirectory"] == "truco-table"  # seats.json for the doctor
    assert int(service["WatchdogSec"]) > 0
    assert service["StateDirectory"] == "truco-table"
    assert service["DevicePolicy"] == "closed"
    assert set(service["SupplementaryGroups"].split()) == {"gpio", "i2c", "spi", "dialout"}
    assert service["IPAddressDeny"] == "any" and service["RestrictAddressFamilies"] == "AF_UNIX"
    text = UNIT.read_text()
    for device in ("char-ttyACM", "char-gpiochip", "char-i2c", "char-spi"):
        assert f"DeviceAllow={device} rw" in text


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_systemd_analyze_verify(tmp_path: Path) -> None:
    out = verify(installed_copy(UNIT, tmp_path))
    assert out.returncode == 0, out.stderr
    assert "truco-table.service" not in out.stderr, out.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_tournament_drop_in_verifies(tmp_path: Path) -> None:
    copy = installed_copy(UNIT, tmp_path)
    drop_in = tmp_path / "truco-table.service.d"
    drop_in.mkdir()
    (drop_in / "tournament.conf").write_text((UNIT.parent / "tournament.conf").read_text())
    out = verify(copy)
    assert out.returncode == 0, out.stderr
    # verify reads the drop-in and only warns about its mistakes: no warning allowed
    assert "tournament.conf" not in out.stderr, out.stderr


VENUE = UNIT.parent / "truco-venue.service"


def test_the_venue_unit_runs_the_night_in_one_command() -> None:
    parser = unit(VENUE)
    service = parser["Service"]
    argv = service["ExecStart"].split()
    assert argv[0].endswith("/truco-table") and argv[1] == "venue-night"
    assert "--venue" in argv and "--out" in argv
    assert service["KillMode"] == "mixed"  # venue-night stops the desk, then the broker
    assert service["Restart"] == "on-failure"
    assert service["RestartPreventExitStatus"].split() == ["2"]
    assert parser["Install"]["WantedBy"] == "multi-user.target"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_the_venue_unit_verifies(tmp_path: Path) -> None:
    out = verify(installed_copy(VENUE, tmp_path))
    assert out.returncode == 0, out.stderr
    assert "truco-venue.service" not in out.stderr, out.stderr
