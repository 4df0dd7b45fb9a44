"""A node's panel takes the screen in page layout (``NodeDisplay.show_pages``, what the
table's service sends): the same display frames go to the node as for the image, the
right way up and turned half round (a panel mounted upside down); a frame of the wrong
size is counted as a display error, never raised at the table. The mock's panel takes
pages too and shows them as the image."""

from __future__ import annotations

import pytest

from controller.hal.display import DisplayConfig
from controller.hal.events import PanelReport
from controller.hal.mock import MockDisplay
from controller.hal.node_display import NodeDisplay
from controller.hal.pages import image_to_pages
from controller.render.matchsticks import render_scoreboard_image


class Link:
    """What a NodeDisplay asks of its SeatLink: the frames written, in order."""

    def __init__(self) -> None:
        self.written: list[tuple[str, tuple[str, ...]]] = []
        self.display_listener: object = None

    def send_many(self, messages: list[tuple[str, tuple[str, ...]]]) -> bool:
        self.written += messages
        return True


def node_display(rotate: int) -> tuple[NodeDisplay, Link]:
    display = NodeDisplay(DisplayConfig(connected_to="node", rotate=rotate), seat=2)
    link = Link()
    display.attach(link)  # type: ignore[arg-type]
    display.port.on_event(PanelReport("ssd1306", 0x3C, True))
    return display, link


@pytest.mark.parametrize("rotate", [0, 2])
def test_pages_send_what_the_image_sends(rotate: int) -> None:
    by_image, image_link = node_display(rotate)
    by_pages, pages_link = node_display(rotate)
    for score in [(0, 0), (3, 4), (3, 5), (12, 14)]:
        image = render_scoreboard_image(*score, 30)
        by_image.show(image)
        by_pages.show_pages(image_to_pages(image))
        assert pages_link.written == image_link.written
    assert len(pages_link.written) > 4  # a full frame, then changes
    assert by_pages.errors == 0


def test_a_frame_of_the_wrong_size_is_a_counted_error() -> None:
    display, link = node_display(0)
    display.show_pages(bytes(100))
    assert display.errors == 1
    assert link.written == []
    display.show_pages(bytes(1024))
    assert display.errors == 1 and link.written[0][0] == "DU"


def test_the_mock_panel_shows_pages_as_its_image() -> None:
    panel = MockDisplay()
    image = render_scoreboard_image(7, 2, 30)
    panel.show_pages(image_to_pages(image))
    assert panel.frames == 1
    assert panel.image.tobytes() == image.convert("1").tobytes()
