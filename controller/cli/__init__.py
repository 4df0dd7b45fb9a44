"""The ``truco-table`` command.

``truco-table replay FILE [--json]`` replays a game record through the engine.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .engine import Game, HouseRules, Kind, RefusalCode
from .engine.results import Award, Reason
from .transcript import (
    ActionStmt,
    RecordFileError,
    TranscriptError,
    dumps_result,
    parse,
    read_record,
    replay,
    result_json,
)

_SPANISH_ACTION = {
    Kind.PLAY: "juega",
    Kind.TRUCO: "¡truco!",
    Kind.RETRUCO: "¡quiero retruco!",
    Kind.VALE_CUATRO: "¡quiero vale cuatro!",
    Kind.ENVIDO: "envido",
    Kind.REAL_ENVIDO: "real envido",
    Kind.FALTA_ENVIDO: "falta envido",
    Kind.FLOR: "¡flor!",
    Kind.CONTRAFLOR: "contraflor",
    Kind.CONTRAFLOR_AL_RESTO: "contraflor al resto",
    Kind.CON_FLOR_ME_ACHICO: "con flor me achico",
    Kind.QUIERO: "quiero",
    Kind.NO_QUIERO: "no quiero",
    Kind.MAZO: "me voy al mazo",
    Kind.DECLARE: "tengo",
    Kind.SON_BUENAS: "son buenas",
    Kind.SHOW: "muestra",
}

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
        words = _SPANISH_ACTION[a.kind]
        if a.kind is Kind.PLAY:
            words += f" {a.card}"
        elif a.kind is Kind.DECLARE:
            words += f" {a.number}"
        elif a.kind is Kind.SHOW:
            words += " " + " ".join(str(c) for c in a.cards)
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
            from .table.mock_table import mock_target

            target = mock_target
        result = replay(statements, target=target)
    except TranscriptError as e:
        print(f"{args.file}:{e.line}: {e.message}", file=sys.stderr)
        return 2
    print(dumps_result(result_json(result)))
    return 0


def _rules_from_args(args: argparse.Namespace) -> HouseRules:
    options = {
        "players": str(args.players),
        "target": str(args.target),
        "flor": args.flor,
        "falta": args.falta,
        "mazo_envido_point": args.mazo_envido_point,
        "claims": args.claims,
        "implicit_quiero": args.implicit_quiero,
    }
    return HouseRules.from_options(options)


def _cmd_run(args: argparse.Namespace) -> int:
    if not args.mock:
        from .table.daemon import run_service

        return run_service(Path(args.config))
    from .table.run_mock import main_mock
    from .table.table import DealReading

    try:
        rules = _rules_from_args(args)
    except ValueError as e:
        print(f"truco-table run: {e}", file=sys.stderr)
        return 2
    if args.seat is not None and not 0 <= args.seat < rules.players:
        print(
            f"truco-table run: no seat {args.seat} at a table of {rules.players}", file=sys.stderr
        )
        return 2
    human = None if args.bots_only else args.seat
    return main_mock(
        rules,
        seed=args.seed,
        human=human,
        script=args.script,
        bots=args.bots,
        deal_reading=DealReading(args.deal_reading),
        pace=args.pace,
        record=args.record,
        state_dir=Path(args.state) if args.state else None,
        serve=args.serve,
    )


def _cmd_control(args: argparse.Namespace) -> int:
    from .engine import HouseRules as Rules
    from .table.service import drop_command

    words = [args.command, *args.args]
    if args.command == "rules":
        try:
            Rules.from_options(dict(w.split("=", 1) for w in args.args))
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


def _add_house_rules(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("house rules (docs/RULES.md section 10)")
    g.add_argument("--players", type=int, choices=(2, 4, 6), default=2)
    g.add_argument("--target", type=int, choices=(15, 30), default=30)
    g.add_argument("--flor", choices=("on", "off"), default="off")
    g.add_argument(
        "--falta",
        choices=("to_win", "malas_buenas", "loser_based", "game_in_malas"),
        default="to_win",
    )
    g.add_argument("--mazo-envido-point", choices=("on", "off"), default="on")
    g.add_argument("--claims", choices=("auto", "declared"), default="auto")
    g.add_argument("--implicit-quiero", choices=("on", "off"), default="off")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="truco-table", description="A table that referees Argentine Truco."
    )
    parser.add_argument("--version", action="version", version=f"truco-table {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("replay", help="replay a game record (transcript)")
    p.add_argument("file", help="the .truco transcript")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument(
        "--through",
        choices=("engine", "mock"),
        default="engine",
        help="feed the statements straight to the engine or through the mock hardware",
    )
    p.set_defaults(func=_cmd_replay)

    r = sub.add_parser("run", help="run the table service (--mock: on mock hardware)")
    r.add_argument(
        "--config",
        default="/etc/truco-table/table.toml",
        help="the table's configuration (real hardware; default %(default)s)",
    )
    r.add_argument("--mock", action="store_true", help="simulated seat nodes and displays")
    r.add_argument(
        "--state",
        metavar="DIR",
        help="keep the game in DIR (current.truco, archive/): restarts resume",
    )
    r.add_argument(
        "--serve", action="store_true", help="with --mock: the service loop alone (no keyboard)"
    )
    _add_house_rules(r)
    r.add_argument("--seed", type=int, default=0, help="seed of the mock dealer and the bots")
    r.add_argument("--seat", type=int, default=0, help="the seat you play (default 0)")
    r.add_argument("--bots-only", action="store_true", help="bots play every seat (a demo)")
    r.add_argument(
        "--script", metavar="FILE", help="play transcript lines from FILE ('-': standard input)"
    )
    r.add_argument("--bots", action="store_true", help="with --script: bots finish the game")
    r.add_argument(
        "--deal-reading",
        choices=("seats", "dealer", "none"),
        default="seats",
        help="how the table reads the deal (default: each seat taps its cards)",
    )
    r.add_argument("--pace", type=float, default=0.6, help="seconds between bot actions")
    r.add_argument("--record", metavar="FILE", help="write the game record to FILE")
    r.set_defaults(func=_cmd_run)

    c = sub.add_parser(
        "control", help="table controls for a running table: undo, new-game, rules KEY=VALUE..."
    )
    c.add_argument("command", choices=("undo", "new-game", "rules"))
    c.add_argument("args", nargs="*", help="for rules: house rules for the next game")
    c.add_argument("--state", default="/var/lib/truco-table", help="the table's state directory")
    c.set_defaults(func=_cmd_control)

    from .enroll_cli import register as register_enroll
    from .render_cli import register as register_render
    from .tournament.desk_cli import register as register_desk
    from .tournament.verify_cli import register as register_verify

    register_enroll(sub)
    register_render(sub)
    register_verify(sub)
    register_desk(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
