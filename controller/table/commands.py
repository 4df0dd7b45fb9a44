"""The control folder: ``truco-table control``'s commands to the running table.

``truco-table control`` drops a command file, ``<id>.cmd`` (``drop_command``: written
whole and fsynced, then renamed into ``control/`` in the state directory); the service
looks at the folder (``CommandFolder.look``) when its loop is quiet, and on any other
turn of its loop (an event, a node's heartbeat, a timer) at most every
``CONTROL_READ_S``: the look never wakes the loop by itself. Each file is claimed
(renamed ``<id>.taken``: the command line cannot withdraw it any more), applied
unless its id was applied before (remembered in memory, or noted in the record:
``controller.table.answers``), answered, then deleted. No socket is opened.

The folder is listed only when its mtime moved (a command file was renamed into it), or
while that mtime is recent: the file system's clock is coarse (a few ms), so a file
landing in the same tick as the last listing is not missed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from .answers import NOTHING_TO_UNDO, Answer, ControlAnswers, answer_in_record
from .store import Disk, GameStore, fsync_dir

__all__ = [
    "COMMAND_ID_RE",
    "CONTROLS_REMEMBERED",
    "CONTROL_READ_S",
    "CommandFolder",
    "drop_command",
    "new_command_id",
]

log = logging.getLogger(__name__)

#: While the table is busy (players act), the control folder is looked at (an
#: ``os.stat``) at most this often: a ``truco-table control`` command waits this long at
#: most, and an event does not pay a system call for it. A quiet turn of the loop (its
#: wait ran out) looks at once.
CONTROL_READ_S = 0.05
CONTROLS_REMEMBERED = 1024  # command ids kept in memory (beyond the record's own marks)
#: what a command's id may be (``truco-table control --id``): a file name in control/
COMMAND_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_SETTLED_NS = 2_000_000_000  # an mtime this old is past the file system's clock tick

#: applies one command's words (the command, its arguments) with its id; True if it was
#: applied (what it did is then said to the folder: ``CommandFolder.said``)
Apply = Callable[[str, tuple[str, ...], str], bool]


class CommandFolder:
    """The service's side of ``control/`` (see the module docstring)."""

    def __init__(
        self, folder: Path | None, answers: ControlAnswers, store: GameStore | None
    ) -> None:
        self.folder = folder
        self.answers = answers
        self.store = store
        #: what the command being applied did (``said`` by the service while applying)
        self.said: str | None = None
        self._seen: int | None = None  # the folder's mtime when last listed
        #: the command files applied lately, by id, and what was done (a retry is
        #: answered, not applied again)
        self._applied: OrderedDict[str, Answer] = OrderedDict()
        self._stuck: set[str] = set()  # command files the card will not rename or delete

    def look(self, apply: Apply) -> None:
        """Take every command file waiting in the folder (if it may have one)."""
        folder = self.folder
        if folder is None:
            return
        try:
            mtime = os.stat(folder).st_mtime_ns
        except OSError:
            return
        if mtime == self._seen and time.time_ns() - mtime > _SETTLED_NS:
            return
        self._seen = mtime
        # ``<id>.taken``: claimed before a restart (applied unless the record says so)
        for path in sorted([*folder.glob("*.taken"), *folder.glob("*.cmd")]):
            self._seen = None  # until this file is gone: listed again next time
            self.take(path, apply)

    def take(self, path: Path, apply: Apply) -> None:
        """One command file: claimed, applied unless its id was applied before,
        answered, then deleted. Whether the disk takes the record or not, the command
        is applied in memory, as every action is, and its id is remembered (and noted
        in the record), so a retry carrying the same id is answered, not applied
        again. A file the card will not let it rename is claimed in the answers first,
        and applied only if it is still there after that (the command line withdraws a
        command it sees no answer to, and then reads the answers again)."""
        claimed = self._claim(path)
        if claimed is None:
            return  # withdrawn by ``truco-table control`` (its --wait ran out)
        path, renamed = claimed
        command_id = path.stem
        try:
            words = path.read_text(encoding="utf-8", errors="replace").split()
        except OSError as e:
            self._said_once(command_id, f"control: no puedo leer {path}: {e}")
            return
        answer = self.applied_before(command_id)
        if words and answer is None:
            if not renamed and self.answers.path is not None:
                self.answers.put(command_id, Answer("claimed", "la mesa lo está aplicando"))
                if not path.exists():  # withdrawn before the claim was said: not applied
                    self.answers.put(command_id, Answer("withdrawn", "retirado: no se hizo"))
                    return
            answer = self._apply(command_id, words, apply)
        if answer is not None:
            self._answer(command_id, answer)
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as e:
            self._said_once(command_id, f"control: no puedo borrar {path}: {e}")

    def _claim(self, path: Path) -> tuple[Path, bool] | None:
        """``<id>.cmd`` renamed ``<id>.taken``: the path to apply, and whether it was
        renamed (a refusing card: applied from where it is); None: withdrawn."""
        if path.suffix != ".cmd":
            return path, True
        taken = path.with_suffix(".taken")
        try:
            os.replace(path, taken)
        except FileNotFoundError:
            return None
        except OSError as e:
            if path.stem not in self._stuck:
                log.error("control: no puedo tomar %s: %s", path, e)
            return path, False
        return taken, True

    def _apply(self, command_id: str, words: list[str], apply: Apply) -> Answer:
        log.info("control %s: %s", command_id, " ".join(words))
        self.said = None
        applied = apply(words[0], tuple(words[1:]), command_id)
        said, self.said = self.said, None
        durable = self.store is None or not self.store.pending
        if said is None and applied:  # a control that writes nothing in the record
            answer = Answer("done", "hecho", durable)
        elif said is None:
            answer = Answer("refused", f"no se pudo: {' '.join(words)}", durable)
        else:
            state = "done" if applied or said != NOTHING_TO_UNDO else "nothing"
            answer = Answer(state, said, durable)
        self._applied[command_id] = answer
        while len(self._applied) > CONTROLS_REMEMBERED:
            self._applied.popitem(last=False)
        return answer

    def _answer(self, command_id: str, answer: Answer) -> None:
        if answer.state != "refused" and self.store is not None and not answer.durable:
            answer = Answer(answer.state, answer.text, not self.store.pending)
        if self.answers.get(command_id) != answer:
            self.answers.put(command_id, answer)

    def _said_once(self, command_id: str, message: str) -> None:
        """A file the card will not read or delete: said once, not at every look."""
        if command_id not in self._stuck:
            self._stuck.add(command_id)
            log.error("%s", message)

    def applied_before(self, command_id: str) -> Answer | None:
        """What was done with ``command_id`` if it was applied before (in memory, or
        noted in the record); None if it was not."""
        answer = self._applied.get(command_id)
        if answer is not None or self.store is None:
            return answer
        return answer_in_record(self.store.lines, command_id)


def new_command_id() -> str:
    return f"{time.time_ns()}-{os.getpid()}"


def drop_command(state_dir: Path, *words: str, command_id: str | None = None) -> Path:
    """What ``truco-table control`` does: an atomic command file ``<id>.cmd`` for the
    service (a retry gives the same ``command_id``: the table applies it once)."""
    name = command_id if command_id is not None else new_command_id()
    if not COMMAND_ID_RE.fullmatch(name):
        raise ValueError(f"a command id is letters, digits, '-', '_' or '.' (not {name!r})")
    control = state_dir / "control"
    if not control.is_dir():
        control.mkdir(parents=True, exist_ok=True)
        fsync_dir(state_dir)
    tmp = control / f"{name}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, (" ".join(words) + "\n").encode("utf-8"))
        os.fsync(fd)  # a command said to be pending survives a power cut
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    target = control / f"{name}.cmd"
    os.replace(tmp, target)
    Disk().fsync_dir(control)  # raises: the caller says the command is not on the card
    return target
