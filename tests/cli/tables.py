"""The terminal table driven without a terminal, for the tests: the screen as text (the
clock moved by hand is ``tests.helpers.Clock``)."""

from __future__ import annotations

from controller.cli.tui import TerminalTable


def screen(table: TerminalTable, width: int = 140, height: int = 50) -> str:
    """The screen for a ``width`` x ``height`` terminal, as text."""
    return "\n".join(text for text, _ in table.lines(width, height))
