"""The panel registry: every OLED controller a seat's panel may have, named once.

Everything that names a panel reads this list: the Pi's code (the update planner's
addressing and column offset, the luma driver ``OledDisplay`` opens), the configuration
checks (``driver`` in a pin map's ``[[display.seat]]``) and the node's report (``PANEL
<kind> <address> OK|MISSING``, decoded by ``controller.hal.frames``). The seat node's
firmware cannot import the Pi's Python: its own list (``firmware/seatnode/panel.py``,
``KINDS``) is kept equal to this one by ``tests/hal/test_panels.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Final

__all__ = ["PANELS", "PANEL_KINDS", "Controller", "PanelKind", "kinds_said"]


class Controller(Enum):
    SSD1306 = "ssd1306"  # 0.96" modules
    SH1106 = "sh1106"  # 1.3" modules
    SSD1309 = "ssd1309"  # 2.42" modules


@dataclass(frozen=True)
class PanelKind:
    """What the Pi's code needs to know of one controller."""

    controller: Controller
    #: columns of the controller's display RAM (the visible 128 are a window of them)
    ram_columns: int
    #: the RAM column the visible picture starts at, on the usual modules
    column_offset: int
    #: "horizontal": windows of several pages at once (0x21/0x22); "page": page by page
    addressing: str
    #: its driver class in ``luma.oled.device``
    luma_driver: str


PANELS: Final[dict[Controller, PanelKind]] = {
    Controller.SSD1306: PanelKind(Controller.SSD1306, 128, 0, "horizontal", "ssd1306"),
    Controller.SH1106: PanelKind(Controller.SH1106, 132, 2, "page", "sh1106"),
    Controller.SSD1309: PanelKind(Controller.SSD1309, 128, 0, "horizontal", "ssd1309"),
}
#: the names a pin map and a node's ``PANEL`` report use, in the registry's order
PANEL_KINDS: Final[tuple[str, ...]] = tuple(controller.value for controller in Controller)


def kinds_said(last: str = "or") -> str:
    """The names as a sentence says them: ``ssd1306, sh1106 or ssd1309``."""
    return f"{', '.join(PANEL_KINDS[:-1])} {last} {PANEL_KINDS[-1]}"
