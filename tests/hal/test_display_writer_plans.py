"""The writer's planner, made faster, plans the windows the planner before it did (the
oracle in ``plan_oracle``): the same windows, so the same bytes on every bus."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.hal.display_bus import bus_writer
from controller.hal.display_planner import BusModel, DisplayWriter
from controller.hal.node_display import NODE_BUS
from controller.hal.pages import image_to_pages
from controller.hal.panels import Controller
from controller.render.matchsticks import render_scoreboard_image

from . import plan_oracle

BUSES = [BusModel.i2c(4096), BusModel.i2c(32), BusModel.spi(), NODE_BUS]


class _Null:
    def command(self, *cmd: int) -> None:
        pass

    def data(self, data: list[int]) -> None:
        pass


def _writer(controller: Controller, bus: BusModel) -> DisplayWriter:
    return bus_writer(_Null(), controller, bus=bus)


def _same(writer: DisplayWriter, last: bytes, frame: bytes) -> None:
    full, windows = writer._plan_changes(last, frame)
    cost = writer._full_frame_cost()
    old_full, old_windows = plan_oracle.plan_changes(
        writer._addressing, writer.bus, writer.width, writer.pages, cost, last, frame
    )
    assert full == old_full
    if not full:
        assert windows == old_windows


def _edited(rnd: random.Random, frame: bytes) -> bytes:
    """A frame as a table's change: a few boxes of new bytes, a stick, scattered bits."""
    out = bytearray(frame)
    for _ in range(rnd.randrange(1, 6)):
        kind = rnd.randrange(4)
        page, col = rnd.randrange(8), rnd.randrange(128)
        if kind == 0:  # a box over some pages
            pages, cols = rnd.randrange(1, 4), rnd.randrange(1, 40)
            for p in range(page, min(8, page + pages)):
                for c in range(col, min(128, col + cols)):
                    out[p * 128 + c] = rnd.randrange(256)
        elif kind == 1:  # a vertical stick
            for p in range(page, min(8, page + rnd.randrange(1, 8))):
                out[p * 128 + col] ^= 0xFF
        elif kind == 2:  # runs with gaps on one page
            for c in range(col, min(128, col + rnd.randrange(1, 60)), rnd.randrange(1, 9)):
                out[page * 128 + c] ^= 1 << rnd.randrange(8)
        else:
            out[rnd.randrange(1024)] ^= 1 << rnd.randrange(8)
    return bytes(out)


@pytest.mark.parametrize("controller", [Controller.SSD1306, Controller.SH1106])
@pytest.mark.parametrize("bus", BUSES, ids=lambda bus: bus.name)
def test_the_windows_are_the_oracles(controller: Controller, bus: BusModel) -> None:
    writer = _writer(controller, bus)
    rnd = random.Random(f"{controller.value}-{bus.name}")
    frame = bytes(1024)
    for step in range(400):
        if step % 50 == 0:
            image = render_scoreboard_image(rnd.randrange(31), rnd.randrange(31), 30)
            new = image_to_pages(image)
        else:
            new = _edited(rnd, frame)
        _same(writer, frame, new)
        frame = new


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from([Controller.SSD1306, Controller.SH1106]),
    st.sampled_from(BUSES),
    st.binary(min_size=1024, max_size=1024),
    st.lists(st.tuples(st.integers(0, 1023), st.integers(1, 255)), max_size=40),
)
def test_any_change_is_planned_as_the_oracle_plans_it(
    controller: Controller, bus: BusModel, last: bytes, flips: list[tuple[int, int]]
) -> None:
    frame = bytearray(last)
    for at, bits in flips:
        frame[at] ^= bits
    _same(_writer(controller, bus), last, bytes(frame))


@pytest.mark.parametrize("controller", [Controller.SSD1306, Controller.SH1106])
@pytest.mark.parametrize("bus", BUSES, ids=lambda bus: bus.name)
def test_changes_either_side_of_a_pages_end(controller: Controller, bus: BusModel) -> None:
    """Runs a few columns apart across the end of one page and the start of the next
    (one run in the XOR of the frames, two on the panel), and down a whole column."""
    writer = _writer(controller, bus)
    last = bytes(1024)
    for left, right, gap in [(1, 1, 0), (2, 3, 0), (1, 1, 2), (3, 1, 3), (1, 2, 5), (4, 4, 1)]:
        frame = bytearray(last)
        for page in (2, 3, 7):
            for col in range(128 - left - gap, 128 - gap):
                frame[page * 128 + col] = 0x81
            if page < 7:
                for col in range(gap, gap + right):
                    frame[(page + 1) * 128 + col] = 0x18
        _same(writer, last, bytes(frame))
        _same(writer, bytes(frame), last)
    column = bytearray(1024)
    for page in range(8):
        column[page * 128 + 127] = column[page * 128] = 1
    _same(writer, last, bytes(column))


@pytest.mark.parametrize("controller", [Controller.SSD1306, Controller.SH1106])
def test_the_planners_command_count_is_the_commands(controller: Controller) -> None:
    addressing = _writer(controller, BusModel.i2c(4096))._addressing
    rnd = random.Random(controller.value)
    state = counted = None
    for step in range(2000):
        if step % 97 == 0:
            state = counted = None  # the pointer unknown again
        page = rnd.randrange(8)
        pages = 1 if not addressing.multi_page else rnd.randrange(1, 9 - page)
        col = rnd.choice([0, 5, rnd.randrange(128)])
        cols = rnd.randrange(1, 129 - col)
        cmds, state = addressing.commands_at(state, page, pages, col, cols)
        count, counted = addressing.command_count(counted, page, pages, col, cols)
        assert (count, counted) == (len(cmds), state)
