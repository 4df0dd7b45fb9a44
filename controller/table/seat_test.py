"""``truco-table doctor --asientos``: the seat test of the guide's step 6.3.

It asks the running service (a ``seat-test on`` command in its control folder, as
``truco-table control`` drops one) to take every button and card as a test: nothing is
played, each seat's panel says what it heard (``BOTÓN: TRUCO``, ``7 DE ESPADA``) and the
journal logs it at INFO. Meanwhile it prints each seat's pad, reader and panel, and a
line for everything a seat hears, from the service's status file. At the end (Ctrl-C,
or ``--segundos``) it turns the test off (``seat-test off``; the service also ends it by
itself after ``faults.SEAT_TEST_S``) and prints the seats once more.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from .commands import drop_command
from .config import ConfigError, TableConfig, load_config
from .hardware import read_status
from .lock import holder

__all__ = ["TAKE_S", "run_seat_test", "seat_lines"]

#: how long the service has to take the test's command
TAKE_S = 30.0


def seat_lines(config: TableConfig, status: dict[str, Any] | None) -> list[str]:
    """One line a seat: its pad, its reader, its panel, and what it last heard."""
    seats: dict[int, dict[str, Any]] = status["seats"] if status is not None else {}
    out = []
    for seat in range(config.rules.players):
        entry = seats.get(seat, {})
        faults = entry.get("faults") if isinstance(entry.get("faults"), dict) else {}
        if entry.get("node") != "connected":
            out.append(f"  Asiento {seat}: el nodo no está conectado (revisá su cable USB)")
            continue
        stuck = faults.get("pad_stuck") if isinstance(faults, dict) else None
        pad = f"trabada ({str(stuck).replace('_', ' ')})" if stuck else "bien"
        reader = (
            "no contesta" if isinstance(faults, dict) and "reader_missing" in faults else "bien"
        )
        panel_entry = entry.get("panel")
        display = config.displays.get(seat)
        if display is not None and display.connected_to != "node":
            panel = "en la Pi"
        elif not isinstance(panel_entry, dict):
            panel = "sin informe del nodo"
        else:
            panel = "bien" if panel_entry.get("ok") is True else "no contesta"
        heard = entry.get("heard")
        last = f"escuchó: {heard}" if isinstance(heard, str) else "todavía no escuchó nada"
        wrong = (
            " (nodo de otro asiento)" if isinstance(faults, dict) and "wrong_seat" in faults else ""
        )
        out.append(
            f"  Asiento {seat}{wrong}: botonera {pad}, lector {reader}, pantalla {panel}; {last}"
        )
    return out


def _read(config: TableConfig) -> dict[str, Any] | None:
    if config.status_file is None:
        return None
    with contextlib.suppress(OSError):
        return read_status(config.status_file)
    return None


def _command(state_dir: Path, word: str) -> str | None:
    """Drops ``seat-test WORD`` and waits for the service to take it; None when taken,
    else why not (in the owner's words)."""
    try:
        path = drop_command(state_dir, "seat-test", word)
    except PermissionError:
        return (
            f"no puedo escribir en {state_dir / 'control'} con este usuario: corré "
            "sudo truco-table doctor --asientos."
        )
    except OSError as e:
        return f"no puedo escribir en {state_dir / 'control'}: {e.strerror or e}."
    deadline = time.monotonic() + TAKE_S
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        path.unlink()  # not taken: withdrawn
    except FileNotFoundError:
        return None
    except OSError:
        pass
    return (
        f"la mesa no tomó la prueba en {TAKE_S:g} s: ¿está andando el servicio? "
        "(sudo systemctl start truco-table, y mirá truco-table doctor)."
    )


def run_seat_test(
    config_path: Path,
    seconds: float,
    out: TextIO,
    *,
    stopped: Callable[[], bool] = lambda: False,
) -> int:
    """The seat test, printed to ``out``; the exit status (0: every seat answers)."""
    try:
        config = load_config(config_path)
    except ConfigError as e:
        print(f"  MAL  Configuración: {e}.", file=out)
        return 1
    if not config.state_dir.is_dir() or holder(config.state_dir) is None:
        print(
            "truco-table doctor --asientos: la mesa no está andando (nadie tiene "
            f"{config.state_dir}): arrancala con sudo systemctl start truco-table y "
            "volvé a probar.",
            file=out,
        )
        return 1
    why = _command(config.state_dir, "on")
    if why is not None:
        print(f"truco-table doctor --asientos: {why}", file=out)
        return 1
    print(
        "Prueba de asientos: en cada asiento apretá cada botón y apoyá una carta; su "
        "pantallita dice qué escuchó y acá aparece. Mientras dura, nada se juega. "
        f"Termina con Ctrl-C o a los {seconds:g} segundos.",
        file=out,
    )
    status = _read(config)
    for line in seat_lines(config, status):
        print(line, file=out)
    out.flush()
    seen = {
        seat: entry.get("heard_at") for seat, entry in (status or {"seats": {}})["seats"].items()
    }
    shown = seat_lines(config, status)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline and not stopped():
            time.sleep(0.1)
            status = _read(config)
            if status is None:
                continue
            for seat, entry in sorted(status["seats"].items()):
                if seat >= config.rules.players:
                    continue
                at = entry.get("heard_at")
                if at is not None and at != seen.get(seat):
                    seen[seat] = at
                    print(f"  Asiento {seat}: {entry.get('heard')}", file=out)
            lines = seat_lines(config, status)
            for old, new in zip(shown, lines, strict=False):
                if old.split(";")[0] != new.split(";")[0]:  # a part came or went
                    print(new, file=out)
            shown = lines
            out.flush()
    except KeyboardInterrupt:
        pass
    why = _command(config.state_dir, "off")
    print("Prueba terminada: la mesa juega otra vez." if why is None else why, file=out)
    final = seat_lines(config, _read(config))
    for line in final:
        print(line, file=out)
    healthy = all(
        "no contesta" not in line
        and "trabada" not in line
        and "no está" not in line
        and "otro asiento" not in line
        for line in final
    )
    return 0 if healthy and why is None else 1
