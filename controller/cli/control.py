"""``truco-table control undo|new-game|rules KEY=VALUE...``: the table controls of a
running table, dropped into its state directory for the service to pick up.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..engine import HouseRules

__all__ = ["configure"]


def _cmd_control(args: argparse.Namespace) -> int:
    from ..table.service import drop_command

    words = [args.command, *args.args]
    if args.command == "rules":
        try:
            HouseRules.from_options(dict(w.split("=", 1) for w in args.args))
        except ValueError as e:
            print(f"truco-table control: {e} (give KEY=VALUE words)", file=sys.stderr)
            return 2
    elif args.args:
        print(f"truco-table control: {args.command} takes no arguments", file=sys.stderr)
        return 2
    state = Path(args.state)
    if not state.is_dir():
        print(f"truco-table control: no state directory {state}", file=sys.stderr)
        return 2
    try:
        path = drop_command(state, *words)
    except OSError as e:
        print(f"truco-table control: cannot write to {state}: {e.strerror}", file=sys.stderr)
        return 2
    print(f"sent to the table: {' '.join(words)} ({path.name})")
    return 0


def configure(c: argparse.ArgumentParser) -> None:
    """The ``control`` subcommand's arguments."""
    c.add_argument("command", choices=("undo", "new-game", "rules"))
    c.add_argument("args", nargs="*", help="for rules: house rules for the next game")
    c.add_argument("--state", default="/var/lib/truco-table", help="the table's state directory")
    c.set_defaults(func=_cmd_control)
