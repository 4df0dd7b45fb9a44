"""Ctrl-C noted as a flag, for the commands a person ends with it.

``truco-table enroll`` and ``truco-table doctor --asientos`` run until the person at the
keyboard presses Ctrl-C. Left to CPython, Ctrl-C is a ``KeyboardInterrupt`` raised
wherever the main thread is when the signal is handled, which can be inside a finalizer
that the collector runs on that thread and which swallows it: the command then went on as
if nothing had been pressed (a machine under load lost it so). And a process started
with SIGINT ignored (by a shell that runs it in the background, a script's ``&``) keeps
it ignored, so CPython raises nothing at all: the command then ran to its end whatever
was pressed. ``CtrlCNoted`` puts its own handler in place (whatever was there), which
only notes the press; the command's loop reads the note at its next turn.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any

__all__ = ["CtrlCNoted"]


class CtrlCNoted:
    """Ctrl-C (SIGINT) noted as a flag that a command's loop reads at its next turn;
    the handler before it put back by :meth:`restore`. Made on another thread than the
    main one (where no handler can be set), it notes nothing."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._previous: Any = None
        if threading.current_thread() is threading.main_thread():  # handlers' thread
            self._previous = signal.signal(signal.SIGINT, self._note)

    def _note(self, signum: int, frame: FrameType | None) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def restore(self) -> None:
        previous, self._previous = self._previous, None
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
