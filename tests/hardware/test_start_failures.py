"""A table whose hardware cannot start says so in one journal line and exits with a
status systemd does not restart on (the unit's RestartPreventExitStatus)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from controller.table.hardware import HARDWARE_EXIT

from .unit import service_section, unit_command

ROOT = Path(__file__).resolve().parents[2]


def test_systemd_does_not_restart_on_a_bad_config_or_missing_hardware() -> None:
    service = service_section()
    assert service["Restart"] == "on-failure"
    assert {"2", str(HARDWARE_EXIT)} <= set(service["RestartPreventExitStatus"].split())


@pytest.mark.skipif(Path("/dev/gpiochip0").exists(), reason="this machine has GPIO")
def test_a_gpio_table_without_gpio_is_one_line_and_exit_3(tmp_path: Path) -> None:
    shutil.copy(ROOT / "hardware" / "pinmap-gpio.toml", tmp_path)
    table = (ROOT / "systemd" / "table.toml").read_text(encoding="utf-8")
    table = table.replace("players = 4", "players = 2")
    table = table.replace('pinmap = "pinmap.toml"', 'pinmap = "pinmap-gpio.toml"')
    table = table.replace("/var/lib/truco-table", str(tmp_path / "state"))
    (tmp_path / "table.toml").write_text(table, encoding="utf-8")
    argv, env = unit_command(tmp_path / "table.toml")
    for unit_env in (env, {}):  # the unit's pin factory (lgpio), and gpiozero's search
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": "/usr/bin:/bin", **unit_env},
        )
        assert done.returncode == HARDWARE_EXIT, done.stderr
        assert "Traceback" not in done.stderr and "warnings.warn" not in done.stderr
        failure = [line for line in done.stderr.splitlines() if "cannot start" in line]
        assert len(failure) == 1, done.stderr
        assert failure[0].startswith("truco-table: the hardware cannot start: seat 0: ")
        assert "/dev/gpiochip" in failure[0]
