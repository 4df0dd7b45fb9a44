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
from typing import TYPE_CHECKING

from .arguments import seconds

if TYPE_CHECKING:
    from ..table.config import TableConfig
    from ..table.doctor import Finding

__all__ = ["configure", "tournament_check"]


def tournament_check(config_path: Path, config: TableConfig) -> list[Finding]:
    """The ``[tournament]`` section, read as the service reads it (its link,
    ``controller.tournament.table.link``): a ``MAL`` naming the file, the line and the
    fix when the service would refuse it; nothing without the section."""
    from ..table.config import ConfigError
    from ..table.doctor import Finding, Verdict
    from ..tournament.table.link import load_tournament_settings
    from ..tournament.wire.seal import KeyConfigError

    if not config.tournament:
        return []
    what = "Torneo"
    try:
        settings = load_tournament_settings(config_path)
    except PermissionError:
        raise  # the doctor says: sudo
    except ConfigError as e:
        return [Finding(Verdict.FAIL, what, f"{e.where}: {e.key}: {e.expected}. {e.fix}.")]
    except (KeyConfigError, ValueError, OSError) as e:  # a key others can read: chmod 600
        return [
            Finding(
                Verdict.FAIL,
                what,
                f"{e} (lo nombra [tournament] en {config_path}). Corregilo y volvé a "
                "arrancar la mesa.",
            )
        ]
    if settings is None:
        return []
    key = "sin clave: sus resultados no van sellados" if settings.key is None else (
        f"clave {settings.key.key_id}"
    )
    return [
        Finding(
            Verdict.OK if settings.key is not None else Verdict.WARN,
            what,
            f"la mesa {settings.table_id} del torneo {settings.name}, broker "
            f"{settings.broker_host}:{settings.broker_port}, {key}",
        )
    ]


def _cmd_doctor(args: argparse.Namespace) -> int:
    from ..table.doctor import examine, mock_place, pi_place, report

    if args.asientos:
        import sys

        from ..table.seat_test import run_seat_test
        from .ctrl_c import CtrlCNoted

        print(f"truco-table doctor --asientos: {args.config}")
        # Ctrl-C ends the test as its first line says, however the command was started
        # (``ctrl_c``): noted, read by the test's loop, the test then turned off
        interrupted = CtrlCNoted()
        try:
            return run_seat_test(
                Path(args.config), args.segundos, sys.stdout, stopped=interrupted.is_set
            )
        finally:
            interrupted.restore()
    try:
        if args.mock:
            with mock_place(args.players, panels=args.panels) as (config, place):
                text, code = report(examine(config, place, (tournament_check,)))
            print("truco-table doctor: una mesa simulada (--mock)")
        else:
            text, code = report(examine(Path(args.config), pi_place(), (tournament_check,)))
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
