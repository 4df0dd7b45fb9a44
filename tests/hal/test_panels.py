"""The panel registry is the one list of panels: the firmware's own list is kept equal to
it, and the Pi's code, the configuration checks and the node's report all take what it
names and refuse what it does not."""

from __future__ import annotations

import luma.oled.device
import pytest
from seatnode import panel as firmware_panel

from controller.hal.display import DisplayConfig
from controller.hal.display_planner import Panel
from controller.hal.events import PanelReport
from controller.hal.frames import MALFORMED, FrameError, decode_message
from controller.hal.panels import PANEL_KINDS, PANELS, Controller, kinds_said


def test_the_firmware_names_the_same_panels_in_the_same_order() -> None:
    assert firmware_panel.KINDS == PANEL_KINDS
    # and it knows how to start each of them
    assert set(firmware_panel.INIT) == set(PANEL_KINDS)


def test_the_registry_has_one_entry_per_controller() -> None:
    assert list(PANELS) == list(Controller)
    assert all(kind.controller is controller for controller, kind in PANELS.items())
    assert {kind.addressing for kind in PANELS.values()} <= {"horizontal", "page"}


@pytest.mark.parametrize("name", PANEL_KINDS)
def test_every_panel_is_taken_by_the_config_the_node_report_and_the_planner(name: str) -> None:
    kind = PANELS[Controller(name)]
    assert DisplayConfig(driver=name).driver == name
    assert decode_message("PANEL", (name, "3C", "OK")) == PanelReport(name, 0x3C, True)
    panel = Panel(Controller(name))
    assert panel.offset == kind.column_offset
    assert panel.offset + panel.width <= kind.ram_columns
    assert isinstance(getattr(luma.oled.device, kind.luma_driver), type)


def test_a_panel_the_registry_does_not_name_is_refused_everywhere() -> None:
    with pytest.raises(ValueError, match=f"driver must be {kinds_said()}, not 'ssd1327'"):
        DisplayConfig(driver="ssd1327")
    with pytest.raises(FrameError) as error:
        decode_message("PANEL", ("ssd1327", "3C", "OK"))
    assert error.value.reason == MALFORMED
    assert kinds_said() == "ssd1306, sh1106 or ssd1309"
