"""``truco-table run``: the table service (``--mock``: a playable table in the terminal).

Without ``--mock`` the service runs on the real hardware described by ``--config``
(:mod:`controller.table.daemon`, with the tournament's link: :mod:`controller.cli.service`).
With ``--mock`` you play one seat with the keyboard (its eight buttons and its card
reader) while bots play the other seats
(:class:`controller.table.run_mock.MockRun`); ``--bots-only`` lets bots play every seat.

``--script FILE`` (or ``-`` for standard input) plays transcript lines instead of the
keyboard: actions (``0 truco``, ``1 play 7E``), and optionally ``hand``, ``deal`` and
``dealer`` lines to fix a deal; a hand is dealt by the mock dealer whenever an action
comes and no hand is in progress. ``--bots`` then lets the bots finish the game. The
result is printed as ``replay --json`` prints it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final, TextIO

from ..engine import Action, Card, HouseRules, RefusalCode
from ..table.notify import Notifier
from ..table.table import DealReading
from ..textfile import DEFAULT_LIMIT, TextFileError, decode_text
from ..transcript import (
    ActionStmt,
    DealerStmt,
    DealStmt,
    HandStmt,
    RecordFileError,
    Rejected,
    ReplayResult,
    ScoreStmt,
    TableStmt,
    TranscriptError,
    dumps_result,
    parse,
    read_record,
    replay,
    result_json,
)
from . import EXIT_USAGE
from .arguments import seconds
from .words import LANGS

if TYPE_CHECKING:  # the mock table loads only for --mock: `run --config` never imports it
    from ..table.run_mock import MockRun
    from ..table.store import GameStore

__all__ = ["EXIT_NOT_RECORDED", "add_house_rules", "configure", "main_mock", "rules_from_args"]

#: ``run --mock``: the game was played, but its record could not be written (``--record``
#: or ``--state`` refused a write; the message says which)
EXIT_NOT_RECORDED = 3


def _interactive(run: MockRun, inp: TextIO, out: TextIO, pace: float, lang: str = "es") -> int:
    """The line mode: a line of keys at a time, the table's text (in ``lang``) after each."""
    from .tui import TerminalTable, line_mode

    table = TerminalTable(run, pace=0.0, lang=lang)
    return line_mode(table, inp, out, pace=pace)


def _scripted(run: MockRun, text: str, bots: bool, out: TextIO) -> int:
    """Play a script through the mock hardware; with a restored game (``--state``), the
    script's statements already in the record are skipped, so a restarted table goes on
    where it stopped."""
    statements = parse(text)
    store = run.mock.service.store
    if store is not None and run.game.hand_number == 0:
        # the scripted game ended before the restart but was archived only now (a cut
        # between its last line and its archive): report it, do not play it again
        archived = store.archived()
        if (
            archived
            and _actions(statements)
            and _actions(statements) == _actions(parse(archived[-1].read_text(encoding="utf-8")))
        ):
            result = replay(parse(archived[-1].read_text(encoding="utf-8")))
            out.write(dumps_result(result_json(result)) + "\n")
            return 0
    rejected: list[Rejected] = []
    done_actions = [a for _, _, actions in run.game.history() for a in actions]
    done_hands = run.game.hand_number
    script_hands = 0
    skipped = 0
    deal: dict[int, tuple[Card, ...]] | None = None  # a `hand` whose deal is being read
    dealer: int | None = None

    def flush() -> None:
        nonlocal deal, dealer
        if deal is not None:
            if script_hands > done_hands and run.needs_deal():
                run.deal(deal or None, dealer)
            deal, dealer = None, None

    for st in statements:
        if isinstance(st, TableStmt) and st.rules.players != run.rules.players:
            raise TranscriptError(
                st.line,
                f"the script is for {st.rules.players} players and the mock table has "
                f"{run.rules.players}: run it with --players {st.rules.players}",
            )
        if isinstance(st, TableStmt | ScoreStmt):
            continue
        if isinstance(st, DealerStmt):
            flush()
            dealer = st.seat
        elif isinstance(st, HandStmt):
            flush()
            script_hands += 1
            deal = {}
        elif isinstance(st, DealStmt):
            if deal is not None:
                deal[st.seat] = st.cards
        elif isinstance(st, ActionStmt):
            if skipped < len(done_actions):
                if done_actions[skipped] == st.action:
                    skipped += 1
                continue  # played before the restart (or refused then)
            flush()
            if run.needs_deal():
                run.deal(None, dealer)
                dealer = None
            code: RefusalCode | None = run.mock.act(st.action)
            if code is not None:
                rejected.append(Rejected(st.line, st.action.seat, st.action.text, code))
    flush()
    if bots:
        run.play_out()
    result = ReplayResult(run.game, rejected)
    out.write(dumps_result(result_json(result)) + "\n")
    return 0


def _script_already_played(store: GameStore, last: Path, script: str) -> bool:
    """The scripted game ended before a restart: nothing after the archive, or only a
    new game not yet dealt (the table starts one as soon as a game is archived) while the
    last archived record is the script's game."""
    if not store.path.exists():
        return True
    current = store.restore() or []
    if any(line.startswith("hand") for line in current) or script == "-":
        return False
    try:
        wanted = _actions(parse(_read_script(script)))
        played = _actions(parse(last.read_text(encoding="utf-8")))
    except (TranscriptError, OSError, ValueError):
        return False
    return bool(wanted) and wanted == played


def _actions(statements: Iterable[object]) -> list[Action]:
    return [st.action for st in statements if isinstance(st, ActionStmt)]


def _read_script(script: str) -> str:
    """The script's text: a file read as a game record is (bounded, BOM, line of a bad
    byte), or standard input the same way."""
    if script != "-":
        return read_record(script)
    data = sys.stdin.buffer.read(DEFAULT_LIMIT + 1)
    if len(data) > DEFAULT_LIMIT:
        raise RecordFileError("standard input: larger than 4 MiB: not a script")
    try:
        return decode_text(data, "standard input")
    except TextFileError as e:
        raise RecordFileError(str(e)) from None


LINE_MODE_SAID: Final = {
    "es": "truco-table run: {why}: modo de líneas (una línea de teclas y Enter)",
    "en": "truco-table run: {why}: line mode (a line of keys, then Enter)",
}
NO_CURSOR: Final = {
    "es": "la terminal no puede mover el cursor (TERM={term})",
    "en": "the terminal cannot move the cursor (TERM={term})",
}


def _full_screen(
    run: MockRun, pace: float, lang: str, failure: Callable[[], str | None] | None = None
) -> int:
    """The terminal table (curses); the line mode where the terminal cannot address the
    cursor (``TERM=dumb``) or curses cannot run."""
    import curses

    from .tui import TerminalTable, cursor_addressable, play

    table = TerminalTable(run, pace=pace, lang=lang)
    table.failure = failure
    why = None
    if not cursor_addressable():
        why = NO_CURSOR[lang].format(term=os.environ.get("TERM", ""))
    else:
        try:
            status = 0
            with contextlib.suppress(KeyboardInterrupt):
                status = play(table)
            if table.farewell is not None:  # how to resume the game left
                print(table.farewell)
            return status
        except curses.error as e:
            why = f"no full-screen terminal ({e})"
    print(LINE_MODE_SAID[lang].format(why=why), file=sys.stderr)
    if run.human is None:
        run.play_out()
        print(json.dumps({"score": list(run.game.score), "winner": run.game.winner}))
        return 0
    with contextlib.suppress(KeyboardInterrupt):
        return _interactive(run, sys.stdin, sys.stdout, pace, lang)
    return 0


class _HeldLogs(logging.Handler):
    """Warnings and errors the table logs while it plays in the terminal: held, not
    written over the screen, and said after it (a write failure already said in one
    line is not said again)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        said = record.getMessage()
        self.lines.append(said.splitlines()[0] if said else record.levelname.lower())


@contextlib.contextmanager
def _holding(held: _HeldLogs) -> Iterator[None]:
    """The root logger's records go to ``held`` (and nowhere else) meanwhile."""
    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers[:] = [held]
    try:
        yield
    finally:
        root.handlers[:] = saved


class _RecordFile:
    """``--record FILE``: the game record as it is played, each line flushed; a write that
    fails stops the writing and is kept, for the run to end with it (``error``)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.error: str | None = None
        self.reason = ""  # the system's word for the failure (No space left on device)
        self.file: TextIO | None = open(path, "w", encoding="utf-8")  # noqa: SIM115

    def write(self, line: str) -> None:
        if self.file is None:
            return
        try:
            self.file.write(line + "\n")
            self.file.flush()
        except OSError as e:
            self.reason = str(e.strerror or e)
            self.error = (
                f"cannot write {self.path}: {e.strerror or e}; the game's record there is "
                "incomplete"
            )
            self.close()

    def close(self) -> None:
        file, self.file = self.file, None
        if file is not None:
            with contextlib.suppress(OSError):  # already told, or nothing left to write
                file.close()


def _check_state_dir(state_dir: Path) -> str | None:
    """Why ``state_dir`` is no place for a game (``None``: it is): not a directory, or one
    that cannot be made. A disk that refuses writes (full, read-only) is the table's to
    live with: the game goes on in memory and its end says so (``EXIT_NOT_RECORDED``)."""
    if state_dir.exists() and not state_dir.is_dir():
        return f"--state {state_dir}: not a directory"
    if state_dir.is_dir():
        return None
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return f"--state {state_dir}: cannot make the folder: {e.strerror or e}"
    return None


def main_mock(
    rules: HouseRules,
    *,
    seed: int,
    human: int | None,
    script: str | None,
    bots: bool,
    deal_reading: DealReading,
    pace: float,
    score: tuple[int, int] = (0, 0),
    record: str | None = None,
    state_dir: Path | None = None,
    serve: bool = False,
    lang: str = "es",
    screen: bool | None = None,
    bot_level: str = "normal",
) -> int:
    """Run the mock table; returns the exit status."""
    from ..table.daemon import configure_logging, stop_on_signals, watchdog_interval
    from ..table.run_mock import MockRun
    from ..table.store import GameStore

    if state_dir is not None and script is not None:
        store = GameStore(state_dir)
        archived = store.archived()
        if archived and _script_already_played(store, archived[-1], script):
            # the scripted game already ended before a restart: report it
            result = replay(parse(archived[-1].read_text(encoding="utf-8")))
            sys.stdout.write(dumps_result(result_json(result)) + "\n")
            return 0
    if state_dir is not None:
        why = _check_state_dir(state_dir)
        if why is not None:
            print(f"truco-table run: {why}", file=sys.stderr)
            return EXIT_USAGE
    record_file: _RecordFile | None = None
    if record is not None:
        try:
            record_file = _RecordFile(record)
        except OSError as e:
            print(f"truco-table run: cannot write {record}: {e.strerror or e}", file=sys.stderr)
            return EXIT_USAGE
        record_file.write(rules.to_line())
        if score != (0, 0):
            record_file.write(f"score {score[0]} {score[1]}")
        if record_file.error is not None:  # a full disk: said before the game starts
            print(f"truco-table run: cannot write {record}: {record_file.reason}",
                  file=sys.stderr)  # fmt: skip
            return EXIT_USAGE

    def on_record(line: str) -> None:
        if record_file is not None:
            record_file.write(line)

    def failure() -> str | None:
        return None if record_file is None else record_file.error

    kept: list[GameStore] = []  # the --state store, once the table is made
    held = _HeldLogs()

    def ended(status: int) -> int:
        """The run's status, or the record's failure said in one line; a game that
        --state could not keep went on in memory (as a real table does, with the panels'
        SIN DISCO alert) and is said at its end."""
        why = failure()
        if why is None and kept and (kept[0].pending or kept[0].problem is not None):
            why = (
                f"cannot write the game's record in {state_dir}: "
                f"{kept[0].problem or 'refused'}; it was played in memory only and is lost"
            )
        if why is not None:
            print(f"truco-table run: {why}", file=sys.stderr)
            return EXIT_NOT_RECORDED
        for line in held.lines[-5:]:
            print(f"truco-table run: {line}", file=sys.stderr)
        return status

    def make(who: int | None) -> MockRun:
        made = MockRun(
            rules,
            seed=seed,
            human=who,
            deal_reading=deal_reading,
            score=score,
            on_record=on_record,
            state_dir=state_dir,
            notifier=Notifier.from_environment(),
            watchdog_s=watchdog_interval(),
            bot_level=bot_level,
        )
        if made.mock.service.store is not None:
            kept.append(made.mock.service.store)
        return made

    try:
        if serve:
            configure_logging()
            stop = stop_on_signals()
            run = make(None)
            try:
                run.mock.service.ready()
                run.mock.service.run(stop.is_set)
            finally:
                run.close()
            return 0
        with _holding(held):  # not over the screen: said at the end, or not at all
            if script is not None:
                try:
                    text = _read_script(script)
                except RecordFileError as e:
                    print(f"truco-table run: {e}", file=sys.stderr)
                    return 2
                run = make(None)
                try:
                    status = _scripted(run, text, bots, sys.stdout)
                except TranscriptError as e:
                    print(f"{script}:{e.line}: {e.message}", file=sys.stderr)
                    return 2
                finally:
                    run.close()  # the record's last retry
                return ended(status)
            run = make(human)
            status = 0
            try:
                if screen is None:
                    screen = sys.stdin.isatty() and sys.stdout.isatty()
                if screen:
                    status = _full_screen(run, pace, lang, failure)
                elif human is None:
                    run.play_out()
                    print(json.dumps({"score": list(run.game.score), "winner": run.game.winner}))
                else:
                    with contextlib.suppress(KeyboardInterrupt):
                        status = _interactive(run, sys.stdin, sys.stdout, pace, lang)
            finally:
                run.close()  # the record's last retry
            return ended(status)
    except BrokenPipeError:
        raise  # whoever read the output stopped: the command's own status (EXIT_BROKEN_PIPE)
    except OSError as e:
        where = f" {e.filename}" if e.filename else ""
        print(f"truco-table run:{where} {e.strerror or e}", file=sys.stderr)
        return 2
    finally:
        if record_file is not None:
            with contextlib.suppress(OSError):  # every line was flushed (or reported)
                record_file.close()


def rules_from_args(args: argparse.Namespace) -> HouseRules:
    options = {
        "players": str(args.players),
        "target": str(args.target),
        "flor": args.flor,
        "falta": args.falta,
        "mazo_envido_point": args.mazo_envido_point,
        "claims": args.claims,
        "implicit_quiero": args.implicit_quiero,
        "pica_pica": args.pica_pica,
    }
    return HouseRules.from_options(options)


def _cmd_run(args: argparse.Namespace) -> int:
    """0 the game or the service ended; 2 bad arguments, configuration or input files."""
    if not args.mock:
        config = Path(args.config)
        if not config.exists():
            print(
                f"truco-table run: no configuration {config}: this machine is not set up as "
                "a table (play on mock hardware with `truco-table run --mock`; "
                "systemd/table.toml is an example configuration)",
                file=sys.stderr,
            )
            return 2
        from .service import run_table

        return run_table(config)
    try:
        rules = rules_from_args(args)
    except ValueError as e:
        print(f"truco-table run: {e}", file=sys.stderr)
        return 2
    if args.seat is not None and not 0 <= args.seat < rules.players:
        print(
            f"truco-table run: no seat {args.seat} at a table of {rules.players}", file=sys.stderr
        )
        return 2
    score = (args.score[0], args.score[1])
    if not all(0 <= points < rules.target for points in score):
        print(
            f"truco-table run: --score takes points from 0 to {rules.target - 1} "
            f"(a game to {rules.target}), not {score[0]} {score[1]}",
            file=sys.stderr,
        )
        return 2
    if args.state and score != (0, 0):
        print(
            "truco-table run: --score starts a new game; a game kept with --state has its own",
            file=sys.stderr,
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
        score=score,
        record=args.record,
        state_dir=Path(args.state) if args.state else None,
        serve=args.serve,
        lang=args.lang,
        screen={"auto": None, "screen": True, "lines": False}[args.ui],
        bot_level=args.bot,
    )


def add_house_rules(p: argparse.ArgumentParser) -> None:
    """The house rules (docs/RULES.md section 10), each explained in a line."""
    g = p.add_argument_group(
        "reglas de la casa (docs/RULES.md sección 10; fijas durante el partido)"
    )
    g.add_argument(
        "--players",
        type=int,
        choices=(2, 4, 6),
        default=2,
        help="asientos en la mesa (dos equipos: los asientos pares y los impares)",
    )
    g.add_argument(
        "--target",
        type=int,
        choices=(15, 30),
        default=30,
        help="puntos para ganar (30: 15 malas y después 15 buenas)",
    )
    g.add_argument(
        "--flor",
        choices=("on", "off"),
        default="off",
        help="con flor: tres cartas del mismo palo la cantan (sección 6)",
    )
    g.add_argument(
        "--falta",
        choices=("to_win", "malas_buenas", "loser_based", "game_in_malas"),
        default="to_win",
        help="cuánto vale la falta envido: to_win, lo que le falta al que va ganando para "
        "ganar; malas_buenas, lo que le falta para 15 mientras los dos están en las malas; "
        "loser_based, según los puntos del que pierde el envido; game_in_malas, el partido "
        "si los dos están en las malas",
    )
    g.add_argument("--mazo-envido-point", choices=("on", "off"), default="on",
                   help="irse al mazo en la primera baza antes de cualquier envido o flor "
                   "le da un punto más al otro equipo")  # fmt: skip
    g.add_argument("--claims", choices=("auto", "declared"), default="auto",
                   help="cómo se dicen los puntos del envido y la flor: auto, la mesa "
                   "lee las cartas; declared, los jugadores los cantan por turno "
                   "(torneos)")  # fmt: skip
    g.add_argument("--implicit-quiero", choices=("on", "off"), default="off",
                   help="on: una carta jugada por el equipo al que le cantaron truco lo "
                   "acepta; off: la carta se rechaza hasta que respondan")  # fmt: skip
    g.add_argument("--pica-pica", choices=("on", "off"), default="off",
                   help="solo con seis: mientras un equipo tenga 5 o más y ninguno pase "
                   "de 25, una mano sí y otra no son tres picas de uno contra uno "
                   "(sección 8b)")  # fmt: skip


def configure(r: argparse.ArgumentParser) -> None:
    """The ``run`` subcommand's arguments."""
    r.add_argument(
        "--config",
        default="/etc/truco-table/table.toml",
        metavar="ARCHIVO",
        help="la configuración de la mesa (con el hardware de verdad)",
    )
    r.add_argument(
        "--mock", action="store_true", help="nodos y pantallitas simulados: la mesa en la terminal"
    )
    r.add_argument(
        "--state",
        metavar="CARPETA",
        help="guarda el partido en CARPETA (current.truco, archive/): al volver a arrancar, "
        "sigue donde estaba",
    )
    r.add_argument("--serve", action="store_true", help="con --mock: solo el servicio, sin teclado")
    add_house_rules(r)
    r.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="SEMILLA",
        help="semilla del repartidor simulado y de los bots",
    )
    r.add_argument(
        "--seat", type=int, default=0, metavar="ASIENTO", help="el asiento donde jugás vos"
    )
    r.add_argument(
        "--bots-only",
        action="store_true",
        help="los bots juegan en todos los asientos (una demostración)",
    )
    r.add_argument(
        "--script",
        metavar="ARCHIVO",
        help="juega las líneas de un registro de ARCHIVO ('-': la entrada estándar)",
    )
    r.add_argument("--bots", action="store_true", help="con --script: los bots terminan el partido")
    r.add_argument(
        "--bot",
        choices=("facil", "normal", "dificil"),
        default="normal",
        help="cómo juegan los bots: facil (el bot de antes), normal (un jugador de club que "
        "a veces le erra a la cuenta), dificil (un jugador de club)",
    )
    r.add_argument(
        "--deal-reading",
        choices=("seats", "dealer", "none"),
        default="seats",
        help="cómo lee la mesa el reparto: seats, cada asiento toca sus cartas; dealer, el "
        "que da las toca todas; none, nadie (manos sin ver: los puntos se cantan y se "
        "prueban mostrando)",
    )
    r.add_argument(
        "--score",
        nargs=2,
        type=int,
        metavar=("NOS", "ELLOS"),
        default=(0, 0),
        help="con --mock: empieza con este tanteador, el del equipo 0 y el del 1 (con seis "
        "y --pica-pica on, 5 0 hace de la primera mano una de pica-pica)",
    )
    r.add_argument("--pace", type=seconds, default=0.6, metavar="SEGUNDOS",
                   help="segundos entre jugada y jugada de los bots")  # fmt: skip
    r.add_argument("--record", metavar="ARCHIVO", help="escribe el registro del partido en ARCHIVO")
    r.add_argument(
        "--ui",
        choices=("auto", "screen", "lines"),
        default="auto",
        help="con --mock: screen, la mesa en toda la pantalla de la terminal; lines, líneas "
        "de texto (auto: toda la pantalla si la terminal puede mover el cursor)",
    )
    r.add_argument(
        "--lang",
        choices=LANGS,
        default="es",
        help="el idioma de la terminal alrededor de las pantallitas (las pantallitas "
        "hablan castellano)",
    )
    r.set_defaults(func=_cmd_run)
