"""What each panel controller's addressing commands are, and what they cost: the
windows (:class:`Window`) a planner chooses are aimed at with these.

Controllers
-----------
* SSD1306 and SSD1309 (128 columns; the SSD1309 of 2.42" modules has the
  SSD1306's addressing commands): luma initialises it in horizontal addressing mode
  (``0x20 0x00``), and the writer keeps that mode so that luma's own
  ``display()`` stays valid.  A change is a window ``0x21 c0 c1`` (columns) +
  ``0x22 p0 p1`` (pages) followed by exactly ``(c1-c0+1)*(p1-p0+1)`` data bytes,
  page by page.  After such a write the pointers have wrapped back to the
  window's start, so a next window on the same pages needs only ``0x21`` (3
  bytes) and one on the same columns only ``0x22``.  Windows may span several
  pages (a vertical stick touching three pages is one window).  A full frame is
  ``0x20 0x00 0x21 0 127 0x22 0 7`` + 1024 bytes.
* SH1106 (132-column RAM, the visible 128 start at column 2; page addressing
  only): a span is ``0xB0|page``, ``0x10|(col>>4)``, ``0x00|(col&15)`` with
  ``col`` = 2 + x, then the data; the column auto-increments, the page does not.
  Commands whose value the pointer already has are left out.  A full frame is 8
  times (3 commands + 128 bytes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Protocol

from .panels import PANELS, Controller

__all__ = [
    "SH1106_RAM_COLUMNS",
    "SSD1306_RAM_COLUMNS",
    "Addressing",
    "SH1106Addressing",
    "SSD1306Addressing",
    "Window",
    "full_frame_commands",
]

SSD1306_RAM_COLUMNS: Final = PANELS[Controller.SSD1306].ram_columns
SH1106_RAM_COLUMNS: Final = PANELS[Controller.SH1106].ram_columns

# SSD1306 / SH1106 command bytes used here
SSD1306_MEMORY_MODE = 0x20
SSD1306_HORIZONTAL = 0x00
SSD1306_COLUMN_ADDR = 0x21
SSD1306_PAGE_ADDR = 0x22
SET_PAGE = 0xB0  # | page  (SH1106 always; SSD1306 in page addressing mode)
SET_LOW_COLUMN = 0x00  # | low nibble
SET_HIGH_COLUMN = 0x10  # | high nibble


@dataclass(frozen=True, order=True)
class Window:
    """Pages ``[page, page + pages)`` x columns ``[col, col + cols)`` of the visible frame."""

    page: int
    col: int
    pages: int = 1
    cols: int = 1

    @property
    def page_end(self) -> int:
        return self.page + self.pages

    @property
    def col_end(self) -> int:
        return self.col + self.cols

    @property
    def size(self) -> int:
        return self.pages * self.cols

    def union(self, other: Window) -> Window:
        page, col = min(self.page, other.page), min(self.col, other.col)
        page_end = max(self.page_end, other.page_end)
        col_end = max(self.col_end, other.col_end)
        return Window(page, col, page_end - page, col_end - col)


class Addressing(Protocol):
    @property
    def multi_page(self) -> bool:
        """Whether one window may span several pages."""
        ...

    def commands(self, state: Any, window: Window) -> tuple[list[int], Any]:
        """Commands that aim at ``window`` given the pointer ``state`` (None: unknown),
        and the state once its data has been written."""
        ...

    def commands_at(
        self, state: Any, page: int, pages: int, col: int, cols: int
    ) -> tuple[list[int], Any]:
        """``commands`` for the window of those pages and columns."""
        ...

    def command_count(
        self, state: Any, page: int, pages: int, col: int, cols: int
    ) -> tuple[int, Any]:
        """How many commands ``commands_at`` gives, and the state after (the planner's
        pricing, without the commands)."""
        ...

    @property
    def max_commands(self) -> int:
        """The most command bytes that aim at one window."""
        ...

    @property
    def min_commands(self) -> int:
        """The fewest command bytes that aim at a span after a gap on the same page."""
        ...

    def full_frame_prefix(self) -> list[int]: ...


@dataclass(frozen=True)
class SSD1306Addressing:
    """Horizontal addressing mode; state = (columns, pages) of the last window."""

    column_offset: int
    multi_page: bool = True

    def commands(self, state: Any, window: Window) -> tuple[list[int], Any]:
        return self.commands_at(state, window.page, window.pages, window.col, window.cols)

    def commands_at(
        self, state: Any, page: int, pages: int, col: int, cols: int
    ) -> tuple[list[int], Any]:
        columns = (col, col + cols)
        rows = (page, page + pages)
        cmds: list[int] = []
        if state is None or state[0] != columns:
            first = self.column_offset + col
            cmds += [SSD1306_COLUMN_ADDR, first, first + cols - 1]
        if state is None or state[1] != rows:
            cmds += [SSD1306_PAGE_ADDR, page, page + pages - 1]
        if not cmds:  # same window again: re-aim the column pointer anyway
            first = self.column_offset + col
            cmds = [SSD1306_COLUMN_ADDR, first, first + cols - 1]
        # Writing exactly the window's bytes wraps both pointers back to its start.
        return cmds, (columns, rows)

    def command_count(
        self, state: Any, page: int, pages: int, col: int, cols: int
    ) -> tuple[int, Any]:
        columns = (col, col + cols)
        rows = (page, page + pages)
        if state is None:
            return 6, (columns, rows)
        count = (3 if state[0] != columns else 0) + (3 if state[1] != rows else 0)
        return count or 3, (columns, rows)

    @property
    def max_commands(self) -> int:
        return 6

    @property
    def min_commands(self) -> int:
        return 3  # a span after another on its page: new columns

    def full_frame_prefix(self) -> list[int]:
        return [SSD1306_MEMORY_MODE, SSD1306_HORIZONTAL]


@dataclass(frozen=True)
class SH1106Addressing:
    """Page addressing; state = (page, RAM column) of the write pointer."""

    column_offset: int
    multi_page: bool = False

    def commands(self, state: Any, window: Window) -> tuple[list[int], Any]:
        return self.commands_at(state, window.page, window.pages, window.col, window.cols)

    def commands_at(
        self, state: Any, page: int, pages: int, col: int, cols: int
    ) -> tuple[list[int], Any]:
        if pages != 1:
            raise ValueError("SH1106 windows are one page tall")
        column = self.column_offset + col
        cmds: list[int] = []
        if state is None or state[0] != page:
            cmds.append(SET_PAGE | page)
        if state is None or state[1] >> 4 != column >> 4:
            cmds.append(SET_HIGH_COLUMN | column >> 4)
        if state is None or state[1] & 0x0F != column & 0x0F:
            cmds.append(SET_LOW_COLUMN | column & 0x0F)
        end = min(column + cols, SH1106_RAM_COLUMNS - 1)
        return cmds, (page, end)

    def command_count(
        self, state: Any, page: int, pages: int, col: int, cols: int
    ) -> tuple[int, Any]:
        if pages != 1:
            raise ValueError("SH1106 windows are one page tall")
        column = self.column_offset + col
        end = min(column + cols, SH1106_RAM_COLUMNS - 1)
        if state is None:
            return 3, (page, end)
        count = (
            (state[0] != page) + (state[1] >> 4 != column >> 4) + (state[1] & 0x0F != column & 0x0F)
        )
        return count, (page, end)

    @property
    def max_commands(self) -> int:
        return 3

    @property
    def min_commands(self) -> int:
        return 1  # a span after a gap on its page: one nibble of the column at least

    def full_frame_prefix(self) -> list[int]:
        return []



def full_frame_commands(addressing: Addressing, index: int, window: Window) -> list[int]:
    # Every window addressed from scratch; the first also restores the mode.
    cmds, _ = addressing.commands(None, window)
    return addressing.full_frame_prefix() + cmds if index == 0 else cmds
