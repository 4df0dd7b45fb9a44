"""``truco-table replay FILE [--json] [--through engine|mock]``: replay a game record.

Without ``--json`` the record is told in Spanish, action by action; with it the result
is printed as JSON (``docs/TRANSCRIPT.md``).
"""

from __future__ import annotations

import argparse
import sys

from ..engine import Game, RefusalCode
from ..engine.results import Award, Reason
from ..transcript import (
    ActionStmt,
    RecordFileError,
    TranscriptError,
    dumps_result,
    parse,
    read_record,
    replay,
    result_json,
)
from .words import say_action

__all__ = ["configure"]

_SPANISH_REASON = {
    Reason.ENVIDO: "envido",
    Reason.FLOR: "flor",
    Reason.TRUCO: "la mano",
    Reason.MAZO: "se fueron al mazo",
    Reason.MAZO_ENVIDO: "mazo sin envido",
    Reason.PENALTY: "penalidad",
}


def _say_award(award: Award) -> str:
    pts = "punto" if award.points == 1 else "puntos"
    return f"    {award.points} {pts} para el equipo {award.team} ({_SPANISH_REASON[award.reason]})"


def _narrate(path: str, text: str) -> int:
    statements = parse(text)
    out: list[str] = []
    state = {"hand": 0, "awards": 0}

    def on_action(game: Game, st: ActionStmt, code: RefusalCode | None) -> None:
        if game.hand_number != state["hand"]:
            state["hand"], state["awards"] = game.hand_number, 0
            h = game.hands[-1]
            out.append(f"Mano {h.number}: da el asiento {h.dealer}, es mano el asiento {h.mano}")
        a = st.action
        words = say_action(a)
        if code is None:
            out.append(f"  asiento {a.seat}: {words}")
        else:
            out.append(f"  asiento {a.seat}: {words} -> rechazado: {code.message} ({code.value})")
        awards = game.hands[-1].awards if game.hands else ()
        for award in awards[state["awards"] :]:
            out.append(_say_award(award))
        state["awards"] = len(awards)

    result = replay(statements, on_action=on_action)
    game = result.game
    out.append(f"Tanteador: equipo 0 {game.score[0]}, equipo 1 {game.score[1]}")
    if game.winner is not None:
        out.append(f"Ganó el equipo {game.winner}.")
    print("\n".join(out))
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    try:
        text = read_record(args.file)
    except RecordFileError as e:
        print(f"truco-table: {e}", file=sys.stderr)
        return 2
    try:
        if not args.json:
            return _narrate(args.file, text)
        statements = parse(text)
        target = None
        if args.through == "mock":
            from ..table.mock_table import mock_target

            target = mock_target
        result = replay(statements, target=target)
    except TranscriptError as e:
        print(f"{args.file}:{e.line}: {e.message}", file=sys.stderr)
        return 2
    print(dumps_result(result_json(result)))
    return 0


def configure(p: argparse.ArgumentParser) -> None:
    """The ``replay`` subcommand's arguments."""
    p.add_argument("file", help="the .truco transcript")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument(
        "--through",
        choices=("engine", "mock"),
        default="engine",
        help="feed the statements straight to the engine or through the mock hardware",
    )
    p.set_defaults(func=_cmd_replay)
