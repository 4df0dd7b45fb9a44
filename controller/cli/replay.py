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
    HandStmt,
    RecordFileError,
    Statement,
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


class _HandRefusals:
    """The refused actions of the hand being replayed (to explain a hand left unfinished)."""

    def __init__(self) -> None:
        self.hand = 0
        self.refused: list[tuple[ActionStmt, RefusalCode]] = []

    def __call__(self, game: Game, st: ActionStmt, code: RefusalCode | None) -> None:
        if game.hand_number != self.hand:
            self.hand, self.refused = game.hand_number, []
        if code is not None:
            self.refused.append((st, code))

    def explain(self) -> str:
        said = "; ".join(
            f"line {st.line} '{st.action}' was refused ({code.value}: {code.message})"
            for st, code in self.refused
        )
        return f" (hand {self.hand} did not end: {said})" if said else ""


def _narrate(statements: list[Statement], refusals: _HandRefusals) -> int:
    out: list[str] = []
    state = {"hand": 0, "awards": 0}

    def on_action(game: Game, st: ActionStmt, code: RefusalCode | None) -> None:
        refusals(game, st, code)
        if game.hand_number != state["hand"]:
            state["hand"], state["awards"] = game.hand_number, 0
            h = game.hands[-1]
            out.append(f"Mano {h.number}: da el asiento {h.dealer}, es mano el asiento {h.mano}")
        a = st.action
        words = say_action(a, refused=code is not None)
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
    """0 replayed; 2 unreadable, malformed or empty (one line on standard error)."""
    try:
        text = read_record(args.file)
    except RecordFileError as e:
        print(f"truco-table replay: {e}", file=sys.stderr)
        return 2
    refusals = _HandRefusals()
    statements: list[Statement] = []
    try:
        statements = parse(text)
        if not statements:
            print(
                f"truco-table replay: {args.file}: an empty game record (no statements)",
                file=sys.stderr,
            )
            return 2
        if not args.json:
            return _narrate(statements, refusals)
        target = None
        if args.through == "mock":
            from ..table.mock_table import mock_target

            target = mock_target
        result = replay(statements, target=target, on_action=refusals)
    except TranscriptError as e:
        at = next((st for st in statements if st.line == e.line), None)
        why = refusals.explain() if isinstance(at, HandStmt) else ""
        print(f"{args.file}:{e.line}: {e.message}{why}", file=sys.stderr)
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
