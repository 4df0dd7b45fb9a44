"""The table's answers to ``truco-table control``: what it did with each command, said
where a failing card cannot refuse it.

A command file (``control/<id>.cmd`` in the state directory) tells the table what to do;
the table's answer says what it did, so the command line and the table agree whether an
action was undone, even when the card refuses every write (issue 45):

- **The service's status, served from memory**: a small JSON file in the service's
  runtime folder (``controls.json`` beside ``[table] status_file``:
  ``/run/truco-table/controls.json`` under systemd's ``RuntimeDirectory``, a tmpfs), the
  last ``KEEP`` answers, rewritten whole (temporary file, ``os.replace``) at every
  answer, with the service's process id: an answer of a process that is gone is not
  read. ``{"pid": 812, "answers": {"u1": {"state": "done", "text": "deshecho: 0
  envido", "durable": false}}}``.
- **The command's id in the record**: the record notes every command it applied as a
  comment, ``# control <id>: <what was done>`` (``mark``), written with what it did (an
  undo's comment and its mark in the same atomic rewrite); a record written before the
  answers has ``# control <id>`` alone.

States: ``claimed`` (the table read the command but could not claim its file by
renaming it, and is about to apply it unless the command line withdrew it: the command
line then waits for the answer), ``done``, ``nothing`` (nothing to undo: nothing was
done), ``refused`` (bad house rules), ``withdrawn`` (the command line took its file back
before the table applied it: nothing done). ``durable``: the record holding it was on
the card when the answer was given (else it is in memory, written when the card takes
writes again; a power cut before then loses it with the game's last actions).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from .runfile import replace_json

__all__ = [
    "ANSWERS_FILE",
    "Answer",
    "ControlAnswers",
    "answer_in_record",
    "mark",
    "read_answers",
]

log = logging.getLogger(__name__)

#: the answers' file name, in the service's runtime folder
ANSWERS_FILE: Final = "controls.json"
KEEP: Final = 64  # answers kept in the file (the newest)
CONTROL_MARK: Final = "# control "
NOTHING_TO_UNDO: Final = "no había nada para deshacer"
FINAL: Final = ("done", "nothing", "refused", "withdrawn")


@dataclass(frozen=True, slots=True)
class Answer:
    """What the table did with one command (see the module docstring)."""

    state: str  # claimed, done, nothing, refused, withdrawn
    text: str  # in Spanish, as the command line prints it
    durable: bool = True

    @property
    def final(self) -> bool:
        return self.state in FINAL

    def to_json(self) -> dict[str, object]:
        return {"state": self.state, "text": self.text, "durable": self.durable}


def mark(command_id: str, text: str) -> str:
    """The record's comment for an applied command."""
    return f"{CONTROL_MARK}{command_id}: {text}"


def answer_in_record(lines: list[str], command_id: str) -> Answer | None:
    """The answer a record's mark gives for ``command_id`` (``None``: not applied)."""
    bare = f"{CONTROL_MARK}{command_id}"
    for line in reversed(lines):
        text = line.split(" #c=", 1)[0] if " #c=" in line else line
        if text == bare:
            return Answer("done", "aplicado", True)
        if text.startswith(bare + ": "):
            said = text[len(bare) + 2 :]
            return Answer("nothing" if said == NOTHING_TO_UNDO else "done", said, True)
    return None


class ControlAnswers:
    """The answers file the service keeps (``path``: ``None`` keeps them in memory
    only). Writes never raise: a folder that is not there, or a failing write, is
    logged once and the table goes on."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._answers: OrderedDict[str, Answer] = OrderedDict()
        self._failed = False

    def get(self, command_id: str) -> Answer | None:
        return self._answers.get(command_id)

    def put(self, command_id: str, answer: Answer) -> bool:
        """Keep and publish an answer; True when the file says it now."""
        self._answers[command_id] = answer
        self._answers.move_to_end(command_id)
        while len(self._answers) > KEEP:
            self._answers.popitem(last=False)
        return self._write()

    def _write(self) -> bool:
        if self.path is None:
            return False
        data = {"pid": os.getpid(), "answers": {k: a.to_json() for k, a in self._answers.items()}}
        try:
            replace_json(self.path, data, prefix=".controls-", ensure_ascii=False)
        except OSError as error:
            if not self._failed:
                self._failed = True
                log.warning("cannot write the commands' answers to %s: %s", self.path, error)
            return False
        self._failed = False
        return True

    def close(self) -> None:
        if self.path is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive
    return True


def read_answers(path: Path) -> dict[str, Answer]:
    """The answers a running service wrote to ``path`` (empty: no file, not readable,
    not an answers file, or its process is gone)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or not _alive(data.get("pid")):
        return {}
    answers = data.get("answers")
    if not isinstance(answers, dict):
        return {}
    out: dict[str, Answer] = {}
    for key, value in answers.items():
        if not isinstance(value, dict):
            continue
        state, text, durable = value.get("state"), value.get("text"), value.get("durable")
        if isinstance(state, str) and isinstance(text, str) and isinstance(durable, bool):
            out[str(key)] = Answer(state, text, durable)
    return out
