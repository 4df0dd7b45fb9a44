"""The terminal table driven without a terminal, for the tests: a clock moved by hand and
the screen as text."""

from __future__ import annotations

from controller.cli.tui import TerminalTable


class Clock:
    """A clock that moves only when a test moves it (``clock.now += 0.6``)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def screen(table: TerminalTable, width: int = 140, height: int = 50) -> str:
    """The screen for a ``width`` x ``height`` terminal, as text."""
    return "\n".join(text for text, _ in table.lines(width, height))
