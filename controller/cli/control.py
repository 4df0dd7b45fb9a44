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
            print(f"truco-table control: rules: {bare[0]!r} is not KEY=VALUE (e.g. rules "
                  "flor=on target=15)",
                  file=sys.stderr)  # fmt: skip
            return 2
        try:
            HouseRules.from_options(dict(w.split("=", 1) for w in args.args))
        except ValueError as e:
            print(f"truco-table control: {e} (give KEY=VALUE words)", file=sys.stderr)
            return 2
    elif args.args:
        print(f"truco-table control: {args.command} takes no arguments", file=sys.stderr)
        return 2
    command_id = args.id if args.id is not None else new_command_id()
    if not COMMAND_ID_RE.fullmatch(command_id):
        print(
            f"truco-table control: --id {command_id!r}: letters, digits, '-', '_' or '.' "
            "(at most 64)",
            file=sys.stderr,
        )
        return 2
    state = Path(args.state)
    if not state.is_dir():
        print(f"truco-table control: no state directory {state}", file=sys.stderr)
        return 2
    try:
        path = drop_command(state, *words, command_id=command_id)
    except OSError as e:
        print(f"truco-table control: cannot write to {state}: {e.strerror}", file=sys.stderr)
        return 2
    said = " ".join(words)
    deadline = time.monotonic() + max(0.0, args.wait)
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        path.unlink()  # not taken: withdrawn, so that no table does it later by surprise
    except FileNotFoundError:
        print(f"{said}: the table took it")
        return 0
    except OSError as e:
        print(f"truco-table control: cannot withdraw {path}: {e.strerror}", file=sys.stderr)
        return 2
    print(
        f"truco-table control: no table took {said!r} within {args.wait:g} s: nothing done "
        f"(is `truco-table run --state {state}` running, and not waiting for a line of input?); "
        f"to try again: truco-table control {said} --id {command_id} --state {state} "
        "(the same id: the table applies it once)",
        file=sys.stderr,
    )
    return EXIT_NOT_TAKEN


def configure(c: argparse.ArgumentParser) -> None:
    """The ``control`` subcommand's arguments."""
    c.add_argument("command", choices=("undo", "new-game", "rules"))
    c.add_argument("args", nargs="*", help="for rules: house rules for the next game")
    c.add_argument("--state", default="/var/lib/truco-table", help="the table's state directory")
    c.add_argument(
        "--wait",
        type=seconds,
        default=3.0,
        metavar="SECONDS",
        help="how long the table has to take the command (default %(default)s)",
    )
    c.add_argument(
        "--id",
        metavar="ID",
        help="the command's id (default: a new one); a retry with the same id is applied once",
    )
    c.set_defaults(func=_cmd_control)
