"""``truco-table control undo|new-game|rules KEY=VALUE...``: the table controls of a
running table, dropped into its state directory for the service to pick up.

What it prints is what the table did (issue 45): the table answers every command
(``controller.table.answers``) in its runtime folder, in memory (``--run``,
``/run/truco-table``), and notes it in the record (``# control <id>: ...``), so the
answer comes back even when the card refuses every write. Exit status:

- 0: done (``undo: deshecho: 0 envido``); on a card that refuses writes the line adds
  that it is in memory until the card takes the record again;
- 1: nothing done: no table took the command within ``--wait`` (it is withdrawn), the
  table had nothing to undo, or refused the command;
- 2: bad arguments, or the command could not be written (nothing done);
- 3: not known yet: the table has not answered and the command could not be withdrawn
  (a card that refuses every write); it stays pending and the table applies it once.
  A command without ``--id`` is refused (status 3) while an earlier one is unresolved
  like that; the same ``--id`` asks again and never applies it twice.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from ..engine import HouseRules
from ..table.answers import ANSWERS_FILE, Answer, answer_in_record, read_answers
from .arguments import seconds

__all__ = ["EXIT_NOTHING_DONE", "EXIT_NOT_TAKEN", "EXIT_UNRESOLVED", "configure"]

#: nothing done: no running table took the command within --wait (it is withdrawn), or
#: the table answered that it did nothing (nothing to undo, a command it refused)
EXIT_NOTHING_DONE: Final = 1
EXIT_NOT_TAKEN: Final = EXIT_NOTHING_DONE
#: the table has not said what it did, and the command could not be withdrawn
EXIT_UNRESOLVED: Final = 3
#: after --wait, how long a command the table claimed has to be answered
ANSWER_GRACE_S: Final = 5.0
POLL_S: Final = 0.05

PROG = "truco-table control"


def _say(text: str) -> None:
    print(f"{PROG}: {text}", file=sys.stderr)


def _record_answer(state: Path, command_id: str) -> Answer | None:
    try:
        text = (state / "current.truco").read_bytes().decode("utf-8", "replace")
    except OSError:
        return None
    return answer_in_record(text.splitlines(), command_id)


def _answers(state: Path, run: Path) -> Callable[[str], Answer | None]:
    """What the table said of a command id: its answers in memory, else its record."""

    def answer_for(command_id: str) -> Answer | None:
        said = read_answers(run / ANSWERS_FILE).get(command_id)
        if said is not None and said.final and said.durable:
            return said
        recorded = _record_answer(state, command_id)
        if said is not None and said.final:  # in memory then; on the card by now?
            return said if recorded is None else Answer(said.state, said.text, True)
        return recorded if recorded is not None else said

    return answer_for


def _unresolved(control: Path, answer_for: Callable[[str], Answer | None]) -> list[tuple[str, str]]:
    """The commands in ``control/`` the table has not answered: (id, words)."""
    out = []
    try:
        names = sorted(p.name for p in control.iterdir())
    except OSError:
        return []
    for name in names:
        stem, _, suffix = name.rpartition(".")
        if suffix not in ("cmd", "taken") or not stem:
            continue
        said = answer_for(stem)
        if said is not None and said.final:
            continue
        try:
            words = (control / name).read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            words = "?"
        out.append((stem, words or "?"))
    return out


def _report(said: str, answer: Answer, *, again: bool = False) -> int:
    state, text, durable = answer.state, answer.text, answer.durable
    before = "ya estaba hecho: " if again else ""
    if state == "done":
        memory = (
            ""
            if durable
            else " (en memoria: la tarjeta de la mesa no acepta escrituras; queda guardado "
            "cuando las vuelva a aceptar)"
        )
        print(f"{said}: {before}{text}{memory}")
        return 0
    if state == "withdrawn":
        print(f"{said}: retirado antes de que la mesa lo aplicara: no se hizo nada")
    else:
        print(f"{said}: {before}{text}: no se hizo nada")
    return EXIT_NOTHING_DONE


def _wait_answer(
    answer_for: Callable[[str], Answer | None], command_id: str, until: float
) -> Answer | None:
    while True:
        said = answer_for(command_id)
        if said is not None and said.final:
            return said
        if time.monotonic() >= until:
            return None
        time.sleep(POLL_S)


def _cmd_control(args: argparse.Namespace) -> int:
    from ..table.commands import COMMAND_ID_RE, drop_command, new_command_id

    words = [args.command, *args.args]
    if args.command == "rules":
        bare = [w for w in args.args if "=" not in w]
        if bare:
            _say(f"rules: {bare[0]!r} no es CLAVE=VALOR (por ejemplo rules flor=on target=15)")
            return 2
        try:
            HouseRules.from_options(dict(w.split("=", 1) for w in args.args))
        except ValueError as e:
            _say(f"{e} (dalas como CLAVE=VALOR)")
            return 2
    elif args.args:
        _say(f"{args.command} no lleva nada más")
        return 2
    if args.id is not None and not COMMAND_ID_RE.fullmatch(args.id):
        _say(f"--id {args.id!r}: letras, números, '-', '_' o '.' (64 como mucho)")
        return 2
    state = Path(args.state)
    if not state.is_dir():
        _say(f"no existe la carpeta de estado {state}")
        return 2
    said = " ".join(words)
    control = state / "control"
    answer_for = _answers(state, Path(args.run))
    if args.id is None:
        pending = _unresolved(control, answer_for)
        if pending:
            first, what = pending[0]
            _say(
                f"la mesa todavía no respondió al comando anterior ({what}, id {first}): "
                f"no mando otro. Para saber qué pasó con ese: {PROG} {what} --id {first} "
                f"--state {state} (con el mismo id la mesa lo aplica una sola vez)"
            )
            return EXIT_UNRESOLVED
        command_id = new_command_id()
    else:
        command_id = args.id
        earlier = answer_for(command_id)
        if earlier is not None and earlier.final:
            return _report(said, earlier, again=True)
    path = control / f"{command_id}.cmd"
    kept = True  # the command file is on the card (a power cut keeps it)
    if not (path.exists() or path.with_suffix(".taken").exists()):
        try:
            path = drop_command(state, *words, command_id=command_id)
        except OSError as e:
            if not path.exists():
                _say(f"no puedo escribir en {control}: {e.strerror}: no se hizo nada")
                return 2
            kept = False  # the table can read it, but the card did not keep it
    deadline = time.monotonic() + max(0.0, args.wait)
    answer = _wait_answer(answer_for, command_id, deadline)
    if answer is not None:
        return _report(said, answer)
    retry = f"{PROG} {said} --id {command_id} --state {state}"
    withdrawn = False
    try:
        path.unlink()  # not answered: withdrawn, so that no table does it later by surprise
        withdrawn = True
    except FileNotFoundError:
        pass  # the table claimed it: its answer follows
    except OSError as e:
        how = (
            "la mesa lo aplica una sola vez cuando lo lea"
            if kept
            else "la mesa que está andando lo aplica una sola vez cuando lo lea; la "
            "tarjeta no lo guardó, así que un corte de luz antes lo borra"
        )
        _say(
            f"la mesa no respondió en {args.wait:g} s y no puedo retirar el comando "
            f"({e.strerror}): queda pendiente: {how}. Para saber qué hizo: {retry}"
        )
        return EXIT_UNRESOLVED
    answer = answer_for(command_id)
    if withdrawn and answer is None:
        print(
            f"{PROG}: ninguna mesa tomó {said!r} en {args.wait:g} s: no se hizo nada "
            f"(¿está andando `truco-table run --state {state}`, y no esperando una línea?); "
            f"para probar de nuevo: {retry} (el mismo id: la mesa lo aplica una sola vez)",
            file=sys.stderr,
        )
        return EXIT_NOT_TAKEN
    # claimed (renamed, or said in its answers): the table applies it now; its answer
    answer = _wait_answer(answer_for, command_id, time.monotonic() + ANSWER_GRACE_S)
    if answer is not None:
        return _report(said, answer)
    _say(
        f"la mesa tomó el comando (lo aplica una sola vez) pero todavía no dijo qué hizo. "
        f"Para saberlo: {retry}"
    )
    return EXIT_UNRESOLVED


def configure(c: argparse.ArgumentParser) -> None:
    """The ``control`` subcommand's arguments."""
    c.description = (
        "Deshacer la última jugada, empezar un partido nuevo o cambiar las reglas del "
        "próximo, en la mesa que está andando. Dice lo que hizo la mesa (0: hecho; 1: no "
        "se hizo nada; 3: todavía no se sabe)."
    )
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
        "--run",
        default="/run/truco-table",
        metavar="CARPETA",
        help="la carpeta donde la mesa responde, en memoria (por defecto %(default)s)",
    )
    c.add_argument(
        "--wait",
        type=seconds,
        default=3.0,
        metavar="SEGUNDOS",
        help="cuánto esperar la respuesta de la mesa",
    )
    c.add_argument(
        "--id",
        metavar="ID",
        help="el identificador de la orden (si no se da, uno nuevo); repetida con el mismo, "
        "la mesa la aplica una sola vez",
    )
    c.set_defaults(func=_cmd_control)
