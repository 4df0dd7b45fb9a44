"""truco-table doctor on simulated tables: healthy, and with each fault a builder meets."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from controller.hal.mock import MockNode
from controller.table.doctor import Finding, Place, Verdict, examine, mock_place, report


def failing(findings: list[Finding]) -> dict[str, str]:
    return {f.what: f.says for f in findings if f.verdict is Verdict.FAIL}


@pytest.mark.parametrize(
    ("panels", "line"),
    [
        ("node", "ssd1309 128x64 en el nodo, dirección 0x3C: contesta"),
        ("pi", "canal 2 del multiplexor), dirección 0x3C: contesta"),
    ],
)
def test_a_healthy_table_lists_every_part(panels: str, line: str) -> None:
    with mock_place(4, panels=panels) as (config, place):
        findings = examine(config, place)
    text, code = report(findings)
    assert code == 0, text
    whats = [f.what for f in findings]
    for seat in range(4):
        assert f"Asiento {seat}: nodo" in whats and f"Asiento {seat}: pantalla" in whats
    assert "Registro de mazos" in whats and "Carpeta de la partida" in whats
    assert line in text
    assert ("Bus I2C 1" in whats) == (panels == "pi")  # node panels never look at i2c-1
    assert "casa (40 cartas)" in text
    assert text.endswith("Todo en orden: la mesa está lista para jugar.")


@pytest.mark.parametrize("panels", ["node", "pi"])
def test_a_missing_node_and_a_silent_panel_are_named_with_what_to_do(panels: str) -> None:
    with mock_place(
        4, missing_nodes=frozenset({2}), silent_panels=frozenset({1}), panels=panels
    ) as (c, p):
        findings = examine(c, p)
    bad = failing(findings)
    assert set(bad) == {"Asiento 2: nodo", "Asiento 1: pantalla"}
    assert "no encuentro el nodo e661410000000002" in bad["Asiento 2: nodo"]
    assert "Revisá su cable USB" in bad["Asiento 2: nodo"]
    assert "no contesta" in bad["Asiento 1: pantalla"]
    if panels == "node":  # the wires that matter: the Pico's, not the multiplexer's
        assert "GP1, pin 2" in bad["Asiento 1: pantalla"]
        assert "sus cuatro cables" not in bad["Asiento 1: pantalla"]
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
    with mock_place(2, root=tmp_path, panels="pi") as (config, place):
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


def test_a_flooding_seat_reported_by_the_service_is_a_warning(tmp_path: Path) -> None:
    with mock_place(2, root=tmp_path) as (config, place):
        status = "descartados: asiento 1: 40"
        findings = examine(config, replace(place, status_text=lambda: status))
        quiet = examine(config, replace(place, status_text=lambda: "jugando"))
    warned = {f.what: f for f in findings if f.verdict is Verdict.WARN}
    assert "40 eventos descartados" in warned["Asiento 1: botonera"].says
    assert not [f for f in quiet if f.what.endswith("botonera")]
    text, status_code = report(findings)
    assert status_code == 0 and "mirá los avisos" in text


def test_devices_without_permission_name_the_group() -> None:
    def access(path: str | Path, mode: int) -> bool:  # as for a user in no group
        real = os.path.realpath(path)
        return not real.startswith("/dev/pts/") and "i2c-" not in real

    with mock_place(2, panels="pi") as (config, place):
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


def test_node_panels_without_a_running_service_are_unknown_not_wrong(tmp_path: Path) -> None:
    with mock_place(2, root=tmp_path) as (config, place):
        (tmp_path / "run" / "seats.json").unlink()  # no service writes it
        findings = examine(config, replace(place, service=lambda: "inactive"))
    panel = next(f for f in findings if f.what == "Asiento 0: pantalla")
    assert panel.verdict is Verdict.WARN and "el servicio no está andando" in panel.says


def test_a_status_file_left_by_a_dead_service_is_not_believed(tmp_path: Path) -> None:
    with mock_place(2, root=tmp_path) as (config, place):
        status = tmp_path / "run" / "seats.json"
        dead = subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"],
            capture_output=True,
            text=True,
            check=True,
        )
        status.write_text(
            status.read_text().replace(f'"pid": {os.getpid()}', f'"pid": {int(dead.stdout)}')
        )
        findings = examine(config, place)
    panel = next(f for f in findings if f.what == "Asiento 1: pantalla")
    assert panel.verdict is Verdict.WARN and "no sé si contesta" in panel.says


def test_a_node_that_reports_no_panel_and_one_with_another_panel(tmp_path: Path) -> None:
    import json

    with mock_place(4, root=tmp_path) as (config, place):
        status = tmp_path / "run" / "seats.json"
        data = json.loads(status.read_text())
        del data["seats"]["0"]["panel"]  # old firmware: no PANEL
        data["seats"]["1"]["panel"]["driver"] = "ssd1306"  # still as it left the factory
        data["seats"]["2"]["node"] = "disconnected"
        status.write_text(json.dumps(data))
        findings = {f.what: f for f in examine(config, place)}
    assert findings["Asiento 0: pantalla"].verdict is Verdict.FAIL
    assert "firmware" in findings["Asiento 0: pantalla"].says
    assert findings["Asiento 1: pantalla"].verdict is Verdict.WARN
    assert "ssd1306 0x3C" in findings["Asiento 1: pantalla"].says
    assert "no está conectado" in findings["Asiento 2: pantalla"].says
    assert findings["Asiento 3: pantalla"].verdict is Verdict.OK


def test_the_seat_test_without_a_running_table_says_so_at_once(tmp_path: Path) -> None:
    """``truco-table doctor --asientos`` with no service: one line, nothing written."""
    state = tmp_path / "state"
    state.mkdir()
    config = tmp_path / "table.toml"
    config.write_text(
        f'[table]\nplayers = 2\nstate_dir = "{state}"\n'
        + "".join(f"[[nodes.seat]]\nseat = {s}\nserial = 'e6614103e7ab120{s}'\n" for s in (0, 1))
    )
    done = subprocess.run(
        [str(Path(sys.executable).with_name("truco-table")), "doctor", "--asientos",
         "--config", str(config)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1 and done.stderr == ""
    assert done.stdout.splitlines()[-1] == (
        f"truco-table doctor --asientos: la mesa no está andando (nadie tiene {state}): "
        "arrancala con sudo systemctl start truco-table y volvé a probar."
    )
    assert list(state.iterdir()) == []  # no control folder made, no command left
