"""The Pi's window planner as it was before it was made faster (issue 23), kept as the
oracle the planner in ``controller.hal.display_planner`` must agree with, window for
window: the bytes on the panels' wires are the plan's."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from controller.hal.display_planner import BusModel
from controller.hal.panel_addressing import Addressing, Window


def plan_changes(
    addressing: Addressing,
    bus: BusModel,
    width: int,
    pages: int,
    full_cost: int,
    last: bytes,
    frame: bytes,
) -> tuple[bool, list[Window]]:
    """``DisplayWriter._plan_changes`` as it was (``full_cost``: the whole frame's)."""
    spans: list[Window] = []
    for page in range(pages):
        old = last[page * width : (page + 1) * width]
        new = frame[page * width : (page + 1) * width]
        if old != new:
            spans += _page_spans(addressing, bus, page, width, _changed_runs(old, new))
    best, cost = spans, _emission_cost(addressing, bus, spans)
    if addressing.multi_page and len(spans) > 1:
        merged = _merge_vertically(addressing, bus, spans)
        merged_cost = _emission_cost(addressing, bus, merged)
        if merged_cost < cost:  # on a tie the spans as they are
            best, cost = merged, merged_cost
    if cost >= full_cost:
        return True, []
    return False, best


_CHANGED = re.compile(rb"[^\x00]+")


def _changed_runs(old: bytes, new: bytes) -> list[tuple[int, int]]:
    """The [start, end) column runs where two pages differ (their XOR is not zero)."""
    if len(old) != len(new):
        raise ValueError("pages of different widths")
    size = len(new)
    diff = (int.from_bytes(old, "big") ^ int.from_bytes(new, "big")).to_bytes(size, "big")
    return [m.span() for m in _CHANGED.finditer(diff)]


def _emission_cost(addressing: Addressing, bus: BusModel, windows: Sequence[Window]) -> int:
    state: Any = None
    cost = 0
    for window in windows:
        cmds, state = addressing.commands(state, window)
        cost += bus.command_cost(len(cmds)) + bus.data_cost(window.size)
    return cost


def _page_spans(
    addressing: Addressing, bus: BusModel, page: int, width: int, runs: list[tuple[int, int]]
) -> list[Window]:
    """Group one page's changed runs into spans of least cost (exact, O(runs^2)).

    Two bounds find the same spans sooner. Splitting at a gap narrower than a new
    span's least overhead (its fewest commands, and a data transfer, less a block's
    slack) always costs more than bridging it, so such runs are joined first. And a
    span across a gap wider than a new span's most overhead (its most commands, a
    transfer each for them and the data, a block's slack) always costs more than
    splitting there, so no span is tried across such a gap."""
    overhead = bus.transfer_overhead
    slack = overhead if bus.data_block >= width else -overhead
    narrow = addressing.min_commands + overhead + slack
    joined = [runs[0]]
    for start, end in runs[1:]:
        if start - joined[-1][1] < narrow:
            joined[-1] = (joined[-1][0], end)
        else:
            joined.append((start, end))
    runs = joined
    count = len(runs)
    if count == 1:
        start, end = runs[0]
        return [Window(page, start, 1, end - start)]
    wide = addressing.max_commands + 3 * overhead
    commands_at, command_cost, data_cost = addressing.commands_at, bus.command_cost, bus.data_cost
    # best[j] = (least cost of covering runs[:j], pointer state after it, where its
    # last span starts); the state only depends on that last span.
    best: list[tuple[int, Any, int]] = [(0, None, -1)]
    low = 0  # spans start at or after the last wide gap
    for j in range(1, count + 1):
        end = runs[j - 1][1]
        if j > 1 and runs[j - 1][0] - runs[j - 2][1] > wide:
            low = j - 1
        choice: tuple[int, Any, int] | None = None
        for i in range(low, j):
            cost_before, state, _ = best[i]
            start = runs[i][0]
            cmds, after = commands_at(state, page, 1, start, end - start)
            cost = cost_before + command_cost(len(cmds)) + data_cost(end - start)
            if choice is None or cost < choice[0]:
                choice = (cost, after, i)
        assert choice is not None
        best.append(choice)
    spans: list[Window] = []
    j = count
    while j > 0:
        i = best[j][2]
        spans.append(Window(page, runs[i][0], 1, runs[j - 1][1] - runs[i][0]))
        j = i
    return spans[::-1]


def _merge_vertically(addressing: Addressing, bus: BusModel, spans: list[Window]) -> list[Window]:
    """Greedily stack spans of consecutive pages into taller windows when that is cheaper."""

    costs: dict[Window, int] = {}

    def alone(window: Window) -> int:
        cost = costs.get(window)
        if cost is None:
            cost = costs[window] = _emission_cost(addressing, bus, (window,))
        return cost

    done: list[Window] = []
    open_: list[Window] = []  # windows ending at the previous page
    for page in sorted({s.page for s in spans}):
        row = [s for s in spans if s.page == page]
        extended: list[Window] = []
        for span in row:
            best: tuple[int, Window] | None = None
            for rect in open_:
                if rect.page_end != page or rect in extended:
                    continue
                union = rect.union(span)
                delta = alone(union) - alone(rect) - alone(span)
                if delta < 0 and (best is None or delta < best[0]):
                    best = (delta, rect)
            if best is None:
                extended.append(span)
            else:
                open_.remove(best[1])
                extended.append(best[1].union(span))
        done += open_
        open_ = extended
    return sorted(done + open_)
