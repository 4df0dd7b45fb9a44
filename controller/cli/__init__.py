"""The ``truco-table`` command: the command-line faces of every layer, one module each.

==================  =========================================================
``replay``          :mod:`controller.cli.replay`: replay a game record
``replay-hand``     :mod:`controller.cli.replay_hand`: a played game, face up (GIF, video)
``run``             :mod:`controller.cli.run`: the table service (``--mock``: in the terminal)
``control``         :mod:`controller.cli.control`: undo, new game, rules of a running table
``enroll``          :mod:`controller.cli.enroll`: teach the table a deck's tags
``render``          :mod:`controller.cli.render`: seat screens as PNG previews
``verify``/``seal`` :mod:`controller.cli.verify`: sealed tournament records
``desk``            :mod:`controller.cli.desk`: the tournament desk (and ``tournament-demo``)
``organiser``       :mod:`controller.cli.organiser`: registration, rounds, results at the desk
``venue-broker``    :mod:`controller.cli.venue`: the venue's broker, accounts, TLS and keys
``venue-night``     :mod:`controller.cli.venue`: the venue's broker and the desk, one command
``venue-door``      :mod:`controller.cli.venue`: the door in front of the broker's tables
``doctor``          :mod:`controller.cli.doctor`: the table checks its hardware and files
``league``          :mod:`controller.cli.league`: a league of bars (``add-venue``, ``desk``)
``seat``            :mod:`controller.cli.seat`: a seat's Pico: ``install``, ``test`` (Spanish)
==================  =========================================================

Each subcommand's module, and what it imports, is loaded only when that subcommand is
parsed (or its help shown): ``truco-table run`` never imports the desk, the enrolment
or the PNG renderer. A module gives ``configure(parser)`` (or one ``configure_NAME``
per subcommand), which adds the arguments and sets ``func``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, NoReturn

from .. import __version__

__all__ = [
    "COMMANDS",
    "EXIT_BROKEN_PIPE",
    "EXIT_INTERRUPTED",
    "EXIT_SOFTWARE",
    "EXIT_USAGE",
    "EXIT_WRITE_FAILED",
    "SPANISH_COMMANDS",
    "Command",
    "build_parser",
    "main",
]


@dataclass(frozen=True)
class Command:
    """A subcommand: its name, one-line help, and where its arguments are defined."""

    name: str
    help: str
    module: str  # under controller.cli
    configure: str = "configure"


COMMANDS: tuple[Command, ...] = (
    Command("replay", "replay a game record (transcript)", "replay"),
    Command(
        "replay-hand",
        "la repetición de un partido jugado, paso a paso y a cartas vistas (GIF, video, página)",
        "replay_hand",
    ),
    Command("run", "la mesa en marcha (--mock: en la terminal, con la mesa simulada)", "run"),
    Command(
        "control",
        "órdenes a la mesa en marcha: undo (deshacer), new-game, rules CLAVE=VALOR...",
        "control",
    ),
    Command("enroll", "enseñarle a la mesa las etiquetas de un mazo, carta por carta", "enroll"),
    Command("render", "draw seat screens as PNG previews", "render"),
    Command("verify", "check that a sealed game record is intact", "verify", "configure_verify"),
    Command("seal", "seal a game record by hand", "verify", "configure_seal"),
    Command(
        "desk",
        "la mesa de control del torneo: el tablero en vivo, los resultados, los registros",
        "desk",
    ),
    Command("doctor", "revisar la mesa: nodos, pantallitas, mazos, estado", "doctor"),
    Command(
        "tournament-demo",
        "un torneo en esta máquina: Mosquitto, N mesas simuladas y la mesa de control",
        "desk",
        "configure_demo",
    ),
    Command(
        "desk-audit",
        "revisar el registro de auditoría de una mesa de control: intacto, o la línea alterada",
        "desk",
        "configure_audit",
    ),
    Command(
        "organiser",
        "las órdenes del organizador a la mesa de control en marcha: register, start, ...",
        "organiser",
    ),
    Command(
        "venue-broker",
        "preparar el Mosquitto del salón: cuentas, permisos (ACL), TLS, claves por mesa",
        "venue",
    ),
    Command(
        "venue-night",
        "la noche del torneo con un comando: el broker del salón y la mesa de control",
        "venue",
        "configure_night",
    ),
    Command(
        "venue-door",
        "la puerta del broker del salón: cierra en 5 s la conexión que no manda su CONNECT",
        "venue",
        "configure_door",
    ),
    Command(
        "league",
        "una liga entre bares: add-venue (claves, puente), fixture (fechas), desk",
        "league",
    ),
    Command("rekey", "a table's new key from the organiser's one-time code", "rekey"),
    Command(
        "seat",
        "las cajitas de los asientos: install (carga el programa en la Pico), test (la prueba)",
        "seat",
    ),
)


#: exit statuses shared by every subcommand (each documents its own 0, 1 and 2 too)
EXIT_USAGE: Final = 2  # bad arguments, or an input file that cannot be used
EXIT_WRITE_FAILED: Final = 74  # a write failed: the record, --state, standard output (EX_IOERR)
EXIT_SOFTWARE: Final = 70  # a bug: an internal error, said in one line (EX_SOFTWARE)
EXIT_INTERRUPTED: Final = 130  # Ctrl-C
EXIT_BROKEN_PIPE: Final = 141  # whoever read the output stopped reading (| head)


#: argparse's "invalid int value: 'x'" names a Python type (or a function of ours)
_INVALID: Final = re.compile(r"invalid (\w+) value: ")
_TYPE_WORDS: Final = {"int": "not a whole number: ", "float": "not a number: "}


def _plain_invalid(match: re.Match[str]) -> str:
    return _TYPE_WORDS.get(match.group(1), "not a valid value: ")


#: the commands a bar owner, a player or an organiser runs: their help and their errors in
#: Spanish (the rest are the developers', and the organiser's not yet translated, in English)
SPANISH_COMMANDS: Final = frozenset(
    {
        "run",
        "enroll",
        "doctor",
        "control",
        "seat",
        "venue-broker",
        "venue-night",
        "venue-door",
        "tournament-demo",
        "desk-audit",
        "league",
        "organiser",
        "desk",
        "replay-hand",
    }
)

_TYPE_WORDS_ES: Final = {"int": "no es un número entero: ", "float": "no es un número: "}

#: argparse's own sentences, in the Spanish commands' words
_ARGPARSE_ES: Final = (
    (re.compile(r"the following arguments are required: "), "falta: "),
    (re.compile(r"unrecognized arguments: "), "no conozco: "),
    (re.compile(r"^argument "), "la opción "),
    (re.compile(r"invalid choice: (.*) \(choose from (.*)\)"), r"no sirve \1 (puede ser \2)"),
    (re.compile(r"expected one argument"), "le falta su valor"),
    (re.compile(r"expected (\d+) arguments"), r"lleva \1 valores"),
    (re.compile(r"ambiguous option: (\S+) could match (.*)"), r"\1 puede ser \2"),
    (re.compile(r"not allowed with argument "), "no va junto con "),
    (re.compile(r"one of the arguments (.*) is required"), r"hace falta una de \1"),
    (re.compile(r"invalid (\w+) value: "), lambda m: _TYPE_WORDS_ES.get(m.group(1), "no sirve: ")),
    # the shared argument types' own words (controller/cli/arguments.py)
    (re.compile(r"not a port number: "), "no es un número de puerto: "),
    (re.compile(r"a port from 0 to 65535, not "), "un puerto de 0 a 65535, no "),
    (re.compile(r"not a number of seconds: "), "no es un número de segundos: "),
    (re.compile(r"seconds, 0 or more, not "), "segundos, 0 o más, no "),
    (re.compile(r"seconds from 0 to 3600, not "), "segundos de 0 a 3600, no "),
    # desk's own positive numbers (controller/cli/desk.py)
    (re.compile(r"not a number: "), "no es un número: "),
    (re.compile(r"expected a positive number, not "), "va un número positivo, no "),
)


def _spanish_error(message: str) -> str:
    for pattern, words in _ARGPARSE_ES:
        message = pattern.sub(words, message)
    return message


class _OneLineErrors(argparse.ArgumentParser):
    """Usage errors in one line, naming ``--help`` (argparse's own prints the usage too)."""

    spanish = False

    def error(self, message: str) -> NoReturn:
        # An argument may hold a newline or another control character (argparse quotes
        # it into the message): written escaped, the message stays one line.
        message = "".join(
            ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
            for ch in message
        )
        if self.spanish:
            message = _spanish_error(message)
            self.exit(EXIT_USAGE, f"{self.prog}: {message} (mirá {self.prog} --help)\n")
        message = _INVALID.sub(_plain_invalid, message)
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _has_default(action: argparse.Action) -> bool:
    """An option with a default worth showing (not a flag's False, not "none given")."""
    default = action.default
    return not (default is None or default is False or default is argparse.SUPPRESS)


class _DefaultsHelp(argparse.HelpFormatter):
    """``--help`` with each option's default, where it has one and its help does not
    already say it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default: Any = action.default
        if (
            "default" in text
            or not _has_default(action)
            or not action.option_strings
            or (isinstance(default, list | tuple) and not default)
        ):
            return action.help
        shown = " ".join(map(str, default)) if isinstance(default, list | tuple) else default
        return f"{text} (default: {shown})" if text else f"default: {shown}"

    def _format_action(self, action: argparse.Action) -> str:
        if action.help is None and action.option_strings and _has_default(action):
            action.help = ""  # so that its default is shown
        return super()._format_action(action)


class _SpanishHelp(_DefaultsHelp):
    """``--help`` in Spanish: argparse's own words and each option's default."""

    def add_usage(
        self,
        usage: str | None,
        actions: Any,
        groups: Any,
        prefix: str | None = None,
    ) -> None:
        super().add_usage(usage, actions, groups, "uso: " if prefix is None else prefix)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default: Any = action.default
        if (
            "por defecto" in text
            or not _has_default(action)
            or not action.option_strings
            or (isinstance(default, list | tuple) and not default)
        ):
            return action.help
        shown = " ".join(map(str, default)) if isinstance(default, list | tuple) else default
        return f"{text} (por defecto: {shown})" if text else f"por defecto: {shown}"


def spanish_parser(parser: argparse.ArgumentParser) -> None:
    """Puts a parser's own words (its groups' titles, ``-h``'s help) in Spanish."""
    parser._positionals.title = "argumentos"
    parser._optionals.title = "opciones"
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            action.help = "muestra esta ayuda y sale"


class _CommandParser(_OneLineErrors):
    """A subcommand's parser whose arguments are added on first use (parse or help)."""

    def __init__(self, *args: Any, command: Command | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._command = command
        if command is not None and command.name in SPANISH_COMMANDS:
            self.spanish = True
            spanish_parser(self)

    def _load(self) -> None:
        command, self._command = self._command, None
        if command is not None:
            module = importlib.import_module(f"{__name__}.{command.module}")
            configure: Callable[[argparse.ArgumentParser], None] = getattr(
                module, command.configure
            )
            configure(self)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._load()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self._load()
        return super().format_help()

    def format_usage(self) -> str:
        self._load()
        return super().format_usage()

    def error(self, message: str) -> NoReturn:
        self._load()
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    """The ``truco-table`` parser (subcommands' modules load when their turn comes)."""
    parser = _OneLineErrors(
        prog="truco-table", description="A table that referees Argentine Truco."
    )
    parser.add_argument("--version", action="version", version=f"truco-table {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_CommandParser)
    for command in COMMANDS:
        spanish = command.name in SPANISH_COMMANDS
        sub.add_parser(
            command.name,
            help=command.help,
            command=command,
            formatter_class=_SpanishHelp if spanish else _DefaultsHelp,
        )
    return parser


def _stdout_to_devnull() -> None:
    """After a broken pipe: nothing more goes out, not even Python's flush at exit."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (tests capture it)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


class OutputError(Exception):
    """Standard output could not be written (a full disk, a closed descriptor)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error.strerror or str(error))
        self.error = error


class _GuardedOutput:
    """Standard output whose write errors are told apart from every other file's: one
    line on stderr and ``EXIT_WRITE_FAILED``, never a traceback (a broken pipe stays a
    broken pipe: ``| head`` is not an error)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except BrokenPipeError:
            raise
        except OSError as e:
            raise OutputError(e) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise OutputError(e) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _plain_output() -> None:
    """Standard output and error that cannot write every character (``PYTHONIOENCODING=
    ascii``, a Latin-1 terminal) write Spanish without accents rather than fail."""
    from ..render.terminal import ASCII_ERRORS

    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None) or "ascii"
        try:
            "ñá·—⠿".encode(encoding)
        except (UnicodeEncodeError, LookupError):
            reconfigure = getattr(stream, "reconfigure", None)
            if reconfigure is not None:
                reconfigure(errors=ASCII_ERRORS)


def _say(message: str) -> None:
    """One line on stderr, whatever stderr can take."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.write(message + "\n")
        sys.stderr.flush()


def main(argv: Sequence[str] | None = None) -> int:
    """``truco-table``: the exit status of the subcommand (``EXIT_*`` above for all)."""
    if sys.stdout is None:  # started with standard output closed (>&-)
        _say("truco-table: standard output is closed: nothing can be written")
        return EXIT_WRITE_FAILED
    _plain_output()
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    if words and words[0] in SPANISH_COMMANDS and isinstance(parser, _OneLineErrors):
        parser.spanish = True  # what only the top parser sees (extra arguments)
        parser.prog = f"{parser.prog} {words[0]}"
    args = parser.parse_args(argv)
    out = sys.stdout
    sys.stdout = _GuardedOutput(out)
    try:
        code: int = args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        _stdout_to_devnull()
        return EXIT_BROKEN_PIPE
    except OutputError as e:
        _say(f"truco-table {args.command}: cannot write standard output: {e}")
        _stdout_to_devnull()
        return EXIT_WRITE_FAILED
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as e:  # a file the subcommand did not expect to fail
        where = f"{e.filename}: " if e.filename else ""
        _say(f"truco-table {args.command}: {where}{e.strerror or e}")
        return EXIT_WRITE_FAILED
    except Exception as e:  # a bug: said in one line (TRUCO_TRACEBACK=1 shows it whole)
        if os.environ.get("TRUCO_TRACEBACK"):
            raise
        _say(f"truco-table {args.command}: internal error, a bug to report: {e}")
        return EXIT_SOFTWARE
    finally:
        sys.stdout = out
    return code


if __name__ == "__main__":
    sys.exit(main())
