"""Issue 49: every fault the bar owner can meet, on the guide's table as it runs.

The service is the installed unit's command (``truco-table run --config``, a process) on
the shipped configuration, its seat nodes the firmware's own NodeApp on ptys, each with a
simulated 2.42" panel (tests/hardware/test_guide_table.py). For each fault: the seat's
panel, read back from its pixels, carries a line the deal does not hide; ``truco-table
doctor`` says ``MAL`` and what to check; the journal (the service's standard error) has
one warning in Spanish, once, however many heartbeats repeat the fault.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from controller.engine import Card
from controller.hal.mock import MockDeck
from controller.render.screen import plain
from tests.helpers import wait_until as wait_for
from tests.table.panel_text import panel_text

from .test_guide_table import ROOT, GuideTable, guide_table, lines, replace_once
from .unit import unit_command

TRUCO_TABLE = str(Path(sys.executable).with_name("truco-table"))


def panel(table: GuideTable, seat: int) -> str:
    """What seat ``seat``'s panel says under the score, one line."""
    return " ".join(part for part in panel_text(table.panels[seat].image()) if part)


def shows(table: GuideTable, seat: int, words: str) -> bool:
    """Waits until the seat's panel says ``words`` (as the panel writes them)."""
    return wait_for(lambda: plain(words) in panel(table, seat))


def warnings(journal: str, text: str) -> list[str]:
    return [line for line in journal.splitlines() if line.startswith("WARNING") and text in line]


def english(text: str) -> list[str]:
    """Words only English would put in an owner's line."""
    words = (" the ", " is ", " not ", " check ", " cannot ", " says ", " must ", " seat ")
    return [w for w in words if w in f" {text.lower()} "]


def test_reader_missing_button_stuck_and_nodes_swapped() -> None:
    with guide_table(
        no_reader=frozenset({1}), says_seat={2: 3, 3: 2}, stuck_ms=1500, as_plain_user=False
    ) as table:
        table.nodes[0].set_button("truco", True)  # held down: a line stuck to GND
        # the deal is being read: every seat shows its count, and the fault over it
        assert shows(table, 0, "Botón trabado: avisá"), panel(table, 0)
        assert shows(table, 1, "Sin lector: avisá"), panel(table, 1)
        assert shows(table, 2, "Nodo cambiado: avisá"), panel(table, 2)
        assert shows(table, 3, "Nodo cambiado: avisá"), panel(table, 3)
        assert plain("Tocá tus cartas") in panel(table, 1)  # the deal, under the fault
        doctor = table.doctor()
        assert doctor.returncode == 1, doctor.stdout
        bad = lines(doctor.stdout, "  MAL")
        assert any(
            line.startswith("  MAL  Asiento 0: botonera: el botón truco está apretado")
            for line in bad
        ), bad
        reader = [line for line in bad if line.startswith("  MAL  Asiento 1: lector:")]
        assert len(reader) == 1 and "GP17" in reader[0] and "MISO" in reader[0], bad
        swapped = [line for line in bad if "dice que es del asiento" in line]
        assert len(swapped) == 2 and all("pinmap.toml" in line for line in swapped), bad
        assert "  MAL  Asiento 2: nodo: el nodo e6614103e7ab1202 dice que es del asiento 3" in (
            doctor.stdout
        )
        assert not any(english(line) for line in bad), bad
        # a few more heartbeats: still one warning each
        assert wait_for(lambda: answered_heartbeats(table, 1) >= 10)
        journal = table.journal()
        assert len(warnings(journal, "asiento 1: el lector de cartas no contesta")) == 1, journal
        assert len(warnings(journal, "asiento 0: el botón truco está apretado")) == 1, journal
        assert len(warnings(journal, "asiento 2: el nodo e6614103e7ab1202 dice")) == 1, journal
        assert len(warnings(journal, "asiento 3: el nodo e6614103e7ab1203 dice")) == 1, journal
        assert "says it is seat" not in journal  # the owner's line is the Spanish one
        # fixed: the button let go, the reader answering again
        table.nodes[0].set_button("truco", False)
        table.nodes[1].reader_ok = True
        assert wait_for(lambda: "Botón" not in panel(table, 0) and "BOT" not in panel(table, 0))
        assert wait_for(lambda: "LECTOR" not in panel(table, 1))
        again = table.doctor()
        assert "botonera" not in again.stdout and "Asiento 1: lector" not in again.stdout
        assert len(lines(again.stdout, "  MAL")) == 2  # the swapped nodes only


def answered_heartbeats(table: GuideTable, seat: int) -> int:
    """The heartbeats the service answered a node so far (each answer one ``HB``)."""
    return sum(data.count(b" HB*") for data in list(table.nodes[seat].received))


def test_a_panel_that_does_not_answer_is_said_on_the_other_seats() -> None:
    with guide_table(unplugged=frozenset({2}), as_plain_user=False) as table:
        assert wait_for(lambda: table.panel_ok(2) is False)
        for seat in (0, 1, 3):
            assert shows(table, seat, "Asiento 2 sin pantalla"), panel(table, seat)
        doctor = table.doctor()
        bad = lines(doctor.stdout, "  MAL")
        assert len(bad) == 1 and bad[0].startswith("  MAL  Asiento 2: pantalla:"), bad
        journal = table.journal()
        assert len(warnings(journal, "asiento 2: la pantalla no contesta")) == 1, journal
        table.panels[2].unplugged = False
        assert wait_for(lambda: table.panel_ok(2) is True)
        assert wait_for(lambda: "PANTALLA" not in panel(table, 0))


def test_a_card_of_another_deck() -> None:
    house, other = MockDeck(0), MockDeck(1)
    with guide_table(other_deck=True, as_plain_user=False) as table:
        table.nodes[0].tag = house.uid(Card.from_str("7E"))  # the hand's deck: the house's
        assert shows(table, 0, "Tocá tus cartas 1/3"), panel(table, 0)
        table.nodes[1].tag = other.uid(Card.from_str("4O"))  # a card of the other deck
        assert shows(table, 1, "Otro mazo: avisá"), panel(table, 1)  # lasting, over the deal
        doctor = table.doctor()
        bad = lines(doctor.stdout, "  MAL")
        assert len(bad) == 1 and bad[0].startswith("  MAL  Asiento 1: cartas: leyó una carta"), bad
        assert "«otro»" in bad[0] and "sacala de esta mesa" in bad[0], bad
        journal = table.journal()
        assert len(warnings(journal, "asiento 1: leyó una carta del mazo «otro»")) == 1, journal


def test_a_second_run_says_the_table_is_running_and_touches_nothing() -> None:
    with guide_table(as_plain_user=False) as table:
        status = table.status.read_text()
        state = table.base / "state"
        record = (state / "current.truco").read_bytes()
        argv, unit_env = unit_command(table.config)
        env = {k: v for k, v in os.environ.items() if k != "NOTIFY_SOCKET"}
        second = subprocess.run(
            argv, capture_output=True, text=True, timeout=120, env={**env, **unit_env}
        )
        assert second.returncode == 2, second.stderr
        assert second.stderr.startswith("truco-table: la mesa ya está andando (proceso "), (
            second.stderr
        )
        assert f"proceso {table.proc.pid if table.proc else ''})" in second.stderr
        assert "Traceback" not in second.stderr and not english(second.stderr)
        # the first's status and record as they were, the first still running
        assert table.status.exists()
        assert json.loads(table.status.read_text())["pid"] == json.loads(status)["pid"]
        assert (state / "current.truco").read_bytes() == record
        assert table.proc is not None and table.proc.poll() is None
        # the running table says so: every seat, its journal, the doctor
        for seat in range(4):
            assert shows(table, seat, "Otra mesa quiso arrancar"), panel(table, seat)
        journal = table.journal()
        said = warnings(journal, "otro truco-table run (proceso ")
        assert len(said) == 1, journal
        doctor = table.doctor()
        bad = lines(doctor.stdout, "  MAL")
        assert len(bad) == 1 and "alguien arrancó otro truco-table run" in bad[0], bad


def shipped_etc(base: Path) -> Path:
    """The shipped table.toml and pin maps in ``base/etc``, the folders moved into base."""
    etc, state = base / "etc", base / "state"
    etc.mkdir()
    state.mkdir()
    table = (ROOT / "systemd" / "table.toml").read_text(encoding="utf-8")
    table = replace_once(table, '"/var/lib/truco-table"', f'"{state}"')
    table = replace_once(table, '"/var/lib/truco-table/decks.toml"', f'"{state}/decks.toml"')
    table = replace_once(table, "[table]\n", f'[table]\nstatus_file = "{base}/seats.json"\n')
    (etc / "table.toml").write_text(table, encoding="utf-8")
    for name in ("pinmap.toml", "pinmap-mux.toml"):
        shutil.copy(ROOT / "hardware" / name, etc / name)
    return etc / "table.toml"


def test_a_syntax_error_in_the_pin_map_blames_the_pin_map() -> None:
    base = Path(tempfile.mkdtemp(prefix="truco-faults-"))
    try:
        config = shipped_etc(base)
        pinmap = config.with_name("pinmap.toml")
        text = pinmap.read_text(encoding="utf-8").splitlines()
        at = next(i for i, line in enumerate(text) if line.startswith("[[nodes.seat]]"))
        text[at] = "[[nodes.seat]"  # a bracket lost while editing
        pinmap.write_text("\n".join(text) + "\n", encoding="utf-8")
        argv, unit_env = unit_command(config)
        env = {k: v for k, v in os.environ.items() if k != "NOTIFY_SOCKET"}
        run = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env | unit_env)
        assert run.returncode == 2
        said = f"{pinmap}, línea {at + 1}: (archivo): no es TOML válido: falta el ]]"
        assert said in run.stderr, run.stderr
        assert "table.toml" not in run.stderr and not english(run.stderr), run.stderr
        doctor = subprocess.run(
            [TRUCO_TABLE, "doctor", "--config", str(config)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert doctor.returncode == 1
        assert lines(doctor.stdout, "  MAL") == [
            f"  MAL  Configuración: {pinmap}, línea {at + 1}: (archivo): no es TOML válido: "
            f"falta el ]] al final del encabezado (columna 13). Corregí esa línea y volvé a "
            "arrancar la mesa."
        ], doctor.stdout
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_the_multiplexers_pin_map_on_the_guides_table_points_at_the_pinmap_line() -> None:
    with guide_table(pinmap="pinmap-mux.toml", as_plain_user=False) as table:
        text = table.config.read_text(encoding="utf-8").splitlines()
        at = next(i for i, line in enumerate(text) if line.startswith("pinmap =")) + 1
        where = f"{table.config}, línea {at}"
        assert wait_for(lambda: all("pinmap" in e for e in table.seats().values()))
        doctor = table.doctor()
        bad = lines(doctor.stdout, "  MAL")
        mapa = [line for line in bad if line.startswith("  MAL  Mapa de pines: ")]
        assert len(mapa) == 1, bad
        assert "los nodos de los asientos 0, 1, 2 y 3 tienen su propia pantalla" in mapa[0]
        assert f'poné pinmap = "pinmap.toml" en {where}' in mapa[0], mapa
        assert f'pinmap = "pinmap.toml" en {where}' in bad[0]  # the first, where the bus is
        journal = table.journal()
        said = warnings(journal, 'poné pinmap = "pinmap.toml" en')
        assert len(said) == 1 and where in said[0], journal


def test_the_seat_test_names_each_button_and_card_and_plays_nothing() -> None:
    """The guide's step 6.3: ``truco-table doctor --asientos`` while the table runs."""
    import signal
    import threading

    house = MockDeck(0)
    with guide_table(as_plain_user=False) as table:
        assert shows(table, 2, "Tocá tus cartas 0/3"), panel(table, 2)
        doctor = subprocess.Popen(
            [TRUCO_TABLE, "doctor", "--asientos", "--config", str(table.config)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        said: list[str] = []
        assert doctor.stdout is not None
        reader = threading.Thread(target=lambda: said.extend(doctor.stdout or ()), daemon=True)
        reader.start()
        try:
            assert wait_for(lambda: any("todavía no escuchó nada" in line for line in said))
            node = table.nodes[0]
            node.set_button("truco", True)
            assert wait_for(lambda: node.app is not None and node.app.pad.buttons[0].pressed)
            node.set_button("truco", False)  # a press: down, then up
            assert shows(table, 0, "Botón: truco"), panel(table, 0)
            table.nodes[2].tag = house.uid(Card.from_str("7E"))
            assert shows(table, 2, "7 de espada"), panel(table, 2)
            assert wait_for(lambda: "  Asiento 2: carta 7 de espada (" in "".join(said))
            assert "  Asiento 0: botón truco\n" in said
        finally:
            doctor.send_signal(signal.SIGINT)  # Ctrl-C ends the test
            doctor.wait(timeout=120)
            reader.join(5)
        out = "".join(said)
        assert doctor.returncode == 0, out + (doctor.stderr.read() if doctor.stderr else "")
        assert "Prueba terminada: la mesa juega otra vez." in out
        assert "  Asiento 0: botonera bien, lector bien, pantalla bien; escuchó: botón truco" in out
        assert "Traceback" not in out and not english(out)
        # nothing was played: the card laid at seat 2 is no card of its hand
        table.nodes[2].tag = None
        assert shows(table, 2, "Tocá tus cartas 0/3"), panel(table, 2)
        journal = table.journal()
        assert "INFO truco-table: prueba: asiento 0: botón truco" in journal, journal
        assert "INFO truco-table: prueba: asiento 2: carta 7 de espada (" in journal, journal
