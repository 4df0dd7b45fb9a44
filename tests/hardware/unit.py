"""The installed unit's command line (systemd/truco-table.service), pointed at this
checkout: what the tests start the service with, as systemd would."""

from __future__ import annotations

import configparser
import shlex
import sys
from pathlib import Path

UNIT = Path(__file__).resolve().parents[2] / "systemd" / "truco-table.service"


def service_section() -> configparser.SectionProxy:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read(UNIT)
    return unit["Service"]


def unit_command(config: Path) -> tuple[list[str], dict[str, str]]:
    """ExecStart with this checkout's program and ``config``, and the unit's Environment."""
    service = service_section()
    argv = shlex.split(service["ExecStart"])
    assert argv[0] == "/opt/truco-table/.venv/bin/truco-table"
    assert argv[1:] == ["run", "--config", "/etc/truco-table/table.toml"]
    argv[0] = str(Path(sys.executable).with_name("truco-table"))
    argv[-1] = str(config)
    env = dict(item.split("=", 1) for item in service["Environment"].split())
    return argv, env
