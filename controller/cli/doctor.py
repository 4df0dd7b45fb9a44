"""``truco-table doctor [--config FILE] [--mock] [--asientos]``: the table checks itself.

Lists every seat's node (or GPIO pad and reader), every display's bus and panel
address, the deck registry and the state directory, and says what is wrong in plain
words (``controller.table.doctor``). ``--mock`` examines a simulated four-seat table
instead of this machine (what the install's checks run where there is no Pi).
Run as a plain user it reads what it may and says in one line to use ``sudo`` for the
rest; it never ends in a traceback.
``--asientos`` runs the seat test on the running table (``controller.table.seat_test``).
Exit status: 0 nothing wrong, 1 something to fix (or a check it could not finish),
2 bad arguments.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .arguments import seconds

__all__ = ["configure"]


def _cmd_doctor(args: argparse.Namespace) -> int:
    from ..table.doctor import examine, mock_place, pi_place, report

    if args.asientos:
        import sys

        from ..table.seat_test import run_seat_test

        print(f"truco-table doctor --asientos: {args.config}")
        return run_seat_test(Path(args.config), args.segundos, sys.stdout)
    try:
        if args.mock:
            with mock_place(args.players, panels=args.panels) as (config, place):
                text, code = report(examine(config, place))
            print("truco-table doctor: una mesa simulada (--mock)")
        else:
            text, code = report(examine(Path(args.config), pi_place()))
            print(f"truco-table doctor: {args.config}")
    except PermissionError as e:  # whatever a check did not foresee: one line, no traceback
        print(
            f"truco-table doctor: no puedo leer {e.filename or 'un archivo'} con este "
            "usuario: corré sudo truco-table doctor."
        )
        return 1
    except Exception as e:
        print(
            f"truco-table doctor: no pude terminar la revisión ({type(e).__name__}: {e}). "
            "Corré sudo truco-table doctor; si se repite, mandá esta línea a quien te "
            "instaló la mesa."
        )
        return 1
    print(text)
    return code


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        default="/etc/truco-table/table.toml",
        metavar="ARCHIVO",
        help="la configuración de la mesa",
    )
    p.add_argument("--mock", action="store_true", help="revisa una mesa simulada")
    p.add_argument(
        "--players", type=int, choices=(2, 4, 6), default=4, help="con --mock: los asientos"
    )
    p.add_argument(
        "--panels",
        choices=("node", "pi"),
        default="node",
        help="con --mock: node, las pantallitas en los nodos de los asientos (la mesa de la "
        "guía); pi, en el multiplexor de la Pi (la variante)",
    )
    p.add_argument(
        "--asientos",
        action="store_true",
        help="prueba de asientos (la guía, paso 6.3): cada botón y cada carta muestran su "
        "nombre en su asiento y no juegan; lista cada botonera, lector y pantalla y lo "
        "que escuchó cada asiento (con el servicio andando; hace falta sudo)",
    )
    p.add_argument(
        "--segundos",
        type=seconds,
        default=300.0,
        metavar="SEGUNDOS",
        help="con --asientos: cuánto dura la prueba si no la terminás con Ctrl-C (%(default)g)",
    )
    p.set_defaults(func=_cmd_doctor)
