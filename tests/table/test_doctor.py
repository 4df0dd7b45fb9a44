"""truco-table doctor on simulated tables: healthy, and with each fault a builder meets."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from controller.hal.mock import MockNode
from controller.table.doctor import Finding, Place, Verdict, examine, mock_place, report


def failing(findings: list[Finding]) -> dict[str, str]:
    return {f.what: f.says for f in findings if f.verdict is Verdict.FAIL}


def test_a_healthy_table_lists_every_part() -> None:
    with mock_place(4) as (config, place):
        findings = examine(config, place)
    text, code = report(findings)
    assert code == 0, text
    whats = [f.what for f in findings]
    for seat in range(4):
        assert f"Asiento {seat}: nodo" in whats and f"Asiento {seat}: pantalla" in whats
    assert "Registro de mazos" in whats and "Carpeta de la partida" in whats
    assert "canal 2 del multiplexor), dirección 0x3C: contesta" in text
    assert "casa (40 cartas)" in text
    assert text.endswith("Todo en orden: la mesa está lista para jugar.")


def test_a_missing_node_and_a_silent_panel_are_named_with_what_to_do() -> None:
    with mock_place(4, missing_nodes=frozenset({2}), silent_panels=frozenset({1})) as (c, p):
        findings = examine(c, p)
    bad = failing(findings)
    assert set(bad) == {"Asiento 2: nodo", "Asiento 1: pantalla"}
    assert "no encuentro el nodo e661410000000002" in bad["Asiento 2: nodo"]
    assert "Revisá su cable USB" in bad["Asiento 2: nodo"]
    assert "no contesta" in bad["Asiento 1: pantalla"]
    text, code = report(findings)
    assert code == 1 and "2 problemas" in text


def test_an_unknown_node_plugged_in_is_a_warning(tmp_path: Path) -> None:
    with mock_place(2) as (config, place):
        by_id = Path(str(config.read_text()).split('by_id_dir = "')[1].split('"')[0])
        stray = MockNode(5, "e6614103deadbeef")
        try:
            (by_id / "usb-MicroPython_Board_in_FS_mode_e6614103deadbeef-if00").symlink_to(
                stray.path
            )
            findings = examine(config, place)
        finally:
            stray.close()
    warn = [f for f in findings if f.verdict is Verdict.WARN]
    assert [f.what for f in warn] == ["Nodo sin asiento"]
    assert "e6614103deadbeef" in warn[0].says and report(findings)[1] == 0


def test_no_i2c_dev_and_no_multiplexer(tmp_path: Path) -> None:
    with mock_place(2, root=tmp_path) as (config, place):
        (tmp_path / "dev" / "i2c-1").unlink()  # i2c-dev not loaded
        for name in (tmp_path / "sys").iterdir():  # the i2c-mux overlay missing
            (name / "name").unlink()
            name.rmdir()
        bad = failing(examine(config, place))
    assert "raspi-config nonint do_i2c 0" in bad["Bus I2C 1"]
    assert "dtoverlay=i2c-mux" in bad["Asiento 0: pantalla"]


def test_no_deck_enrolled_and_a_damaged_registry(tmp_path: Path) -> None:
    with mock_place(2, enrolled=False, root=tmp_path) as (config, place):
        assert "truco-table enroll" in failing(examine(config, place))["Registro de mazos"]
        (tmp_path / "state" / "decks.toml").write_text("[deck.casa]\n'zz' = 'nope'\n")
        assert "está dañado" in failing(examine(config, place))["Registro de mazos"]


def test_a_bad_configuration_stops_the_checks(tmp_path: Path) -> None:
    config = tmp_path / "table.toml"
    config.write_text("[table]\nplayers = 5\n")
    findings = examine(config, Place(dev=tmp_path))
    assert [f.what for f in findings] == ["Configuración"]
    assert findings[0].verdict is Verdict.FAIL and str(config) in findings[0].says


def test_the_state_directory_missing_and_the_service_stopped(tmp_path: Path) -> None:
    with mock_place(2, root=tmp_path) as (config, place):
        for child in (tmp_path / "state").iterdir():
            child.unlink()
        (tmp_path / "state").rmdir()
        stopped = Place(place.dev, place.sys_i2c, place.probe, service=lambda: "failed")
        bad = failing(examine(config, stopped))
    assert "systemctl start truco-table" in bad["Carpeta de la partida"]
    assert "journalctl -u truco-table" in bad["Servicio truco-table"]


def test_devices_without_permission_name_the_group() -> None:
    def access(path: str | Path, mode: int) -> bool:  # as for a user in no group
        real = os.path.realpath(path)
        return not real.startswith("/dev/pts/") and "i2c-" not in real

    with mock_place(2) as (config, place):
        bad = failing(examine(config, replace(place, access=access)))
    assert "grupo dialout" in bad["Asiento 0: nodo"]
    assert "falta el grupo i2c" in bad["Asiento 1: pantalla"]


def test_the_command_on_a_simulated_table() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "doctor", "--mock", "--players", "6"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Asiento 5: pantalla" in done.stdout and done.stderr == ""


def test_the_command_on_a_missing_configuration(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "doctor", "--config", str(tmp_path / "no.toml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "MAL  Configuración" in done.stdout
    assert "Traceback" not in done.stderr
