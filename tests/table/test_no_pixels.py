"""No seat screen is drawn as a Pillow image during play, on any display path the table
builds: panels on the Pi's bus (``OledDisplay``), panels on the seat nodes
(``NodeDisplay``, the windows as display frames to the node) and the mock's luma
``dummy`` panels. The service joins every frame from the renderer's cached tiles
(``render_pages``); ``render_content`` (a whole screen painted as an image) is never
called. What each panel shows at the end is read back from the panel's side (the
node's RAM, the bytes on the bus, the dummy device's image) and is the seat's screen."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import controller.render.screen as screen_module
import controller.table.service as service_module
from controller.engine import HouseRules
from controller.hal.display import DisplayConfig, OledDisplay
from controller.hal.mock import CountingI2CBus, counting_i2c
from controller.hal.node_display import NodeDisplay
from controller.hal.pages import image_to_pages
from controller.render.screen import render_screen
from controller.table.mock_table import MockTable
from controller.table.run_mock import MockRun
from controller.table.screens import screen_for

RULES = HouseRules(players=4, target=15)


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts ``render_content`` calls (the service's name and the renderer's own, which
    ``render_screen`` goes through)."""
    calls = [0]
    real = screen_module.render_content

    def counting(content: Any) -> Any:
        calls[0] += 1
        return real(content)

    monkeypatch.setattr(screen_module, "render_content", counting)
    monkeypatch.setattr(service_module, "render_content", counting)
    return calls


def play_a_game(mock: MockTable, tmp_path: Path) -> None:
    run = MockRun(RULES, seed=3, human=None, mock=mock)
    run.play_out()
    assert mock.game.winner is not None


def expected_frames(mock: MockTable) -> list[bytes]:
    return [image_to_pages(render_screen(screen_for(mock.table, s))) for s in range(4)]


def eventually(
    check: Callable[[], bool], timeout: float = 10.0, mock: MockTable | None = None
) -> None:
    """Until ``check()``; with ``mock``, its service's loop runs meanwhile (as the table's
    always does: it reads the nodes' acknowledgements and sends the updates it held)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        if mock is not None:
            mock.pump(0.02)
        else:
            time.sleep(0.02)


def test_panels_on_the_nodes(drawn: list[int], tmp_path: Path) -> None:
    with MockTable(RULES, seed=3, state_dir=tmp_path, panels="node") as mock:
        displays = mock.service.displays
        assert all(isinstance(d, NodeDisplay) for d in displays)
        play_a_game(mock, tmp_path)
        assert drawn[0] == 0
        nodes = [mock.parts.nodes[s] for s in range(4)]
        assert all(node.updates > 10 for node in nodes)  # the frames went to the nodes
        wanted = expected_frames(mock)
        eventually(lambda: [bytes(node.ram) for node in nodes] == wanted, mock=mock)
        assert all(isinstance(d, NodeDisplay) and d.errors == 0 for d in displays)


def test_panels_on_the_pi_bus(drawn: list[int], tmp_path: Path) -> None:
    buses: list[CountingI2CBus] = []
    displays = []
    for seat in range(4):
        serial, bus = counting_i2c()
        buses.append(bus)
        displays.append(OledDisplay(DisplayConfig(), seat=seat, interface=serial))
    with MockTable(RULES, seed=3, state_dir=tmp_path, displays=displays) as mock:
        play_a_game(mock, tmp_path)
        assert drawn[0] == 0
        assert all(bus.bytes > 1024 for bus in buses)
        wanted = expected_frames(mock)
        assert [d._writer.last_frame for d in displays] == wanted  # type: ignore[union-attr]
        assert all(d.errors == 0 for d in displays)


def test_the_mock_panels(drawn: list[int], tmp_path: Path) -> None:
    with MockTable(RULES, seed=3, state_dir=tmp_path) as mock:
        play_a_game(mock, tmp_path)
        assert drawn[0] == 0
        shown = [image_to_pages(mock.parts.displays[s].image) for s in range(4)]
        assert shown == expected_frames(mock)
