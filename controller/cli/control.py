"""``truco-table control undo|new-game|rules KEY=VALUE...``: the table controls of a
running table, dropped into its state directory for the service to pick up.

The command is acknowledged (exit 0, ``undo: the table took it``) exactly when the table
claims its file to apply it, whether its card takes the record or not; a command that
no table claimed within ``--wait`` is withdrawn (exit 1) and the message gives its id:
run again with ``--id`` and the table applies it at most once, even if the first try
was claimed just as it was withdrawn.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Final

from ..engine import HouseRules
from .arguments import seconds

__all__ = ["EXIT_NOT_TAKEN", "configure"]

#: no running table took the command within --wait seconds (it is withdrawn)
EXIT_NOT_TAKEN: Final = 1


def _cmd_control(args: argparse.Namespace) -> int:
    from ..table.service import COMMAND_ID_RE, drop_command, new_command_id

    words = [args.command, *args.args]
    if args.command == "rules":
        bare = [w for w in args.args if "=" not in w]
        if bare:
            print(f"truco-table control: rules: {bare[0]!r} no es CLAVE=VALOR (por ejemplo "
                  "rules flor=on target=15)",
                  file=sys.stderr)  # fmt: skip
            return 2
        try:
            HouseRules.from_options(dict(w.split("=", 1) for w in args.args))
        except ValueError as e:
            print(f"truco-table control: {e} (dalas como CLAVE=VALOR)", file=sys.stderr)
            return 2
    elif args.args:
        print(f"truco-table control: {args.command} no lleva nada más", file=sys.stderr)
        return 2
    command_id = args.id if args.id is not None else new_command_id()
    if not COMMAND_ID_RE.fullmatch(command_id):
        print(
            f"truco-table control: --id {command_id!r}: letras, números, '-', '_' o '.' "
            "(64 como mucho)",
            file=sys.stderr,
        )
        return 2
    state = Path(args.state)
    if not state.is_dir():
        print(f"truco-table control: no existe la carpeta de estado {state}", file=sys.stderr)
        return 2
    try:
        path = drop_command(state, *words, command_id=command_id)
    except OSError as e:
        print(f"truco-table control: no puedo escribir en {state}: {e.strerror}", file=sys.stderr)
        return 2
    said = " ".join(words)
    deadline = time.monotonic() + max(0.0, args.wait)
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        path.unlink()  # not taken: withdrawn, so that no table does it later by surprise
    except FileNotFoundError:
        print(f"{said}: la mesa la tomó")
        return 0
    except OSError as e:
        print(f"truco-table control: no puedo retirar {path}: {e.strerror}", file=sys.stderr)
        return 2
    print(
        f"truco-table control: ninguna mesa tomó {said!r} en {args.wait:g} s: no se hizo nada "
        f"(¿está andando `truco-table run --state {state}`, sin esperar una línea?); "
        f"para probar de nuevo: truco-table control {said} --id {command_id} --state {state} "
        "(con el mismo id, la mesa la aplica una sola vez)",
        file=sys.stderr,
    )
    return EXIT_NOT_TAKEN


def configure(c: argparse.ArgumentParser) -> None:
    """The ``control`` subcommand's arguments."""
    c.add_argument(
        "command",
        choices=("undo", "new-game", "rules"),
        metavar="ORDEN",
        help="undo: deshacer la última jugada; new-game: partido nuevo; rules: las reglas "
        "del partido que viene",
    )
    c.add_argument(
        "args",
        nargs="*",
        metavar="CLAVE=VALOR",
        help="para rules: las reglas de la casa del próximo partido (CLAVE=VALOR)",
    )
    c.add_argument(
        "--state",
        default="/var/lib/truco-table",
        metavar="CARPETA",
        help="la carpeta de estado de la mesa",
    )
    c.add_argument(
        "--wait",
        type=seconds,
        default=3.0,
        metavar="SEGUNDOS",
        help="cuánto tiempo tiene la mesa para tomar la orden",
    )
    c.add_argument(
        "--id",
        metavar="ID",
        help="el identificador de la orden (si no se da, uno nuevo); repetida con el mismo, "
        "la mesa la aplica una sola vez",
    )
    c.set_defaults(func=_cmd_control)
