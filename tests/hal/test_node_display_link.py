"""A seat whose panel hangs on its node, through the real SeatLink over a pseudo-terminal
to the node's firmware (SimNode) and a panel model on the node's I2C: the screen
arrives, follows every change, and comes back after the node is unplugged and plugged
in again (powered anew: a dark panel with its registers at reset)."""

from __future__ import annotations

import binascii
import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_oled import SH1106Model
from seatnode import display as firmware_display

from controller.hal import mock
from controller.hal.display import DisplayConfig
from controller.hal.events import PROTOCOL_VERSION, LinkEvent, PanelReport
from controller.hal.frames import encode_update
from controller.hal.mock import MockNode
from controller.hal.node_display import NodeDisplay
from controller.hal.pages import image_to_pages
from controller.hal.seatlink import SeatLink
from controller.render.matchsticks import render_scoreboard_image
from tests.helpers import wait_until

from .simnode import SimNode

SERIAL = "e6614103e7ab1234"
FAST = {"heartbeat_timeout": 0.6, "hello_interval": 0.2, "backoff_initial": 0.05,
        "backoff_max": 0.2, "read_timeout": 0.02}  # fmt: skip


@contextlib.contextmanager
def a_mock_node_and_its_panel(
    protocol: int = PROTOCOL_VERSION, heartbeat_timeout: float = 0.6
) -> Iterator[tuple[MockNode, NodeDisplay, SeatLink]]:
    """A mock node of ``protocol`` with its panel, the seat's real link and panel port,
    the node's panel reported ready; all closed at the end."""
    node = MockNode(0, heartbeat_s=0.05, panel=True, protocol=protocol)
    node.start()
    display = NodeDisplay(DisplayConfig(connected_to="node"), seat=0)
    link = SeatLink(
        0, node.path, lambda s, e: None, heartbeat_timeout=heartbeat_timeout,
        hello_interval=0.2, backoff_initial=0.05, backoff_max=0.2, read_timeout=0.02,
    )  # fmt: skip
    display.attach(link)
    link.start()
    try:
        assert wait_until(lambda: display.port.ready)
        yield node, display, link
    finally:
        link.close()
        node.close()


@pytest.fixture
def seat(tmp_path: Path) -> Iterator[tuple[SimNode, NodeDisplay, list[LinkEvent]]]:
    model = SH1106Model()
    model.power_cycle()
    node = SimNode(tmp_path, serial=SERIAL, seat=1, panel=model)
    node.plug()
    display = NodeDisplay(DisplayConfig(driver="sh1106", connected_to="node"), seat=1)
    table_events: list[LinkEvent] = []
    link = SeatLink.for_serial(
        1, SERIAL, lambda s, e: table_events.append(e), by_id_dir=tmp_path, **FAST
    )
    display.attach(link)
    link.start()
    yield node, display, table_events
    link.close()
    node.unplug()


def test_the_screen_follows_and_survives_a_replug(
    seat: tuple[SimNode, NodeDisplay, list[LinkEvent]],
) -> None:
    node, display, table_events = seat
    model = node.panel
    assert isinstance(model, SH1106Model)
    display.show(render_scoreboard_image(3, 4, 30))  # before the node has said a word
    assert wait_until(lambda: model.glass() == image_to_pages(render_scoreboard_image(3, 4, 30)))
    for ours in range(4, 12):
        image = render_scoreboard_image(ours, 4, 30)
        display.show(image)
        assert wait_until(lambda image=image: model.glass() == image_to_pages(image))  # type: ignore[misc]
    node.unplug()
    model.power_cycle()
    display.show(render_scoreboard_image(12, 4, 30))  # while it is away
    node.plug()
    assert wait_until(lambda: model.glass() == image_to_pages(render_scoreboard_image(12, 4, 30)))
    assert model.display_on
    assert display.errors == 0
    assert not any(isinstance(e, PanelReport) for e in table_events)  # the port's business


@pytest.mark.parametrize(("protocol", "frame"), [(2, "DW"), (3, "DR"), (4, "DR"), (5, "DR")])
def test_a_node_gets_the_display_frames_of_the_protocol_it_answers(
    protocol: int, frame: str
) -> None:
    """Through the real SeatLink and NodeDisplay: a mock node of protocol 2 (which ignores
    HELLO 3, as firmware 0.2.0 does) is offered HELLO 2 and gets DW pieces; one of
    protocol 3, 4 or 5 gets DR frames; either way its RAM ends as the Pi's screen, and no
    node whose firmware talks is soft-reset."""
    with a_mock_node_and_its_panel(protocol) as (node, display, link):
        screen = render_scoreboard_image(9, 5, 30)
        display.show(screen)
        assert wait_until(lambda: bytes(node.ram) == image_to_pages(screen))
        assert link.protocol == protocol and link.hello is not None
        assert frame in node.received and ({"DR", "DW"} - {frame}).isdisjoint(node.received)
        assert link.stats["repl_resets"] == 0


def test_a_paused_mock_node_reads_nothing_until_it_is_resumed() -> None:
    """``MockNode.pause`` (the table bench holds the simulated nodes while it measures
    the Pi's work): the node's thread parks; what the Pi writes waits in the pty and no
    heartbeat goes out; once resumed the node reads it all and its panel catches up."""
    with a_mock_node_and_its_panel(heartbeat_timeout=5.0) as (node, display, link):
        node.pause()
        node.pause()  # twice: still paused, at once
        beats = node.received.count("HB"), link.stats["frames"]
        screen = render_scoreboard_image(9, 5, 30)
        display.show(screen)
        time.sleep(0.3)  # six heartbeats' time
        assert bytes(node.ram) != image_to_pages(screen)
        assert (node.received.count("HB"), link.stats["frames"]) == beats
        node.resume()
        assert wait_until(lambda: bytes(node.ram) == image_to_pages(screen))
        assert wait_until(lambda: link.stats["frames"] > beats[1])  # heartbeats again


def test_the_mock_nodes_display_queue_is_the_firmwares() -> None:
    assert (mock.MAX_QUEUE, mock.MAX_QUEUED_BYTES) == (
        firmware_display.MAX_QUEUE,
        firmware_display.MAX_QUEUED_BYTES,
    )
    assert (mock.MAX_QUEUE_5, mock.MAX_QUEUED_BYTES_5) == (
        firmware_display.MAX_QUEUE_5,
        firmware_display.MAX_QUEUED_BYTES_5,
    )
    assert mock.queue_bounds(4) == (64, 2048) and mock.queue_bounds(5) == (128, 8192)


def _updates(count: int, whole: bool = False) -> bytes:
    """``count`` DIFF updates after a FULL one, as the Pi's link writes them: one byte of
    the panel each (a block of 25 to 27 bytes), or the whole screen."""
    stream, seq = b"", 0
    for update in range(count + 1):
        data_b64 = binascii.b2a_base64(bytes(1024), newline=False)
        body = b"DR 0 7 0 127 " + data_b64 if whole else b"DR 0 0 0 0 AQ=="
        written, seq, _size, _ask = encode_update(seq, update, b"1", update == 0, [body], 0)
        stream += written
    return stream


@pytest.mark.parametrize(("protocol", "entries", "screens"), [(4, 64, 1), (5, 128, 5)])
def test_a_mock_node_holds_and_overflows_its_queue_as_the_firmware(
    protocol: int, entries: int, screens: int
) -> None:
    """What one read brings waits in the mock node's queue, bounded as the firmware's in
    the session's version: as many updates or bytes as it holds are written, one more
    overflows it (DLOST, nothing written until a FULL update)."""
    for count, whole, overflows in (
        (entries - 1, False, 0),  # and the FULL one before them: ``entries`` in all
        (entries, False, 1),
        (screens - 1, True, 0),
        (screens, True, 1),
    ):
        node = MockNode(0, panel=True)  # not started: its input is fed by hand
        try:
            node._version = protocol
            node._buffer = _updates(count, whole)
            node._take_input()
            assert node.overflows == overflows, (count, whole)
            assert (node.written is None) is bool(overflows), (count, whole)
            if not overflows:
                assert node.written == count and node.updates == count + 1
        finally:
            node.close()
