"""Finding the seat nodes plugged in by USB serial number (controller.hal.node_finder)."""

from __future__ import annotations

from pathlib import Path

from controller.hal import node_finder

SERIAL = "e6614103e7ab1234"


def test_find_nodes(tmp_path: Path) -> None:
    (tmp_path / f"usb-MicroPython_Board_in_FS_mode_{SERIAL}-if00").touch()
    (tmp_path / "usb-MicroPython_Board_in_FS_mode_E66138935F1A2B3C-if00").touch()
    (tmp_path / "usb-MicroPython_Board_in_FS_mode_e66138935f1a2b3c-if02").touch()
    (tmp_path / "usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0").touch()
    (tmp_path / "usb-Arduino_Uno_12345-if00").touch()
    nodes = node_finder.find_nodes(tmp_path)
    prefix = "usb-MicroPython_Board_in_FS_mode_"
    assert nodes == {
        SERIAL: str(tmp_path / f"{prefix}{SERIAL}-if00"),
        "e66138935f1a2b3c": str(tmp_path / f"{prefix}E66138935F1A2B3C-if00"),
    }
    assert node_finder.find_nodes(tmp_path / "missing") == {}
    assert node_finder.port_for_serial("E6614103E7AB1234", tmp_path)() == nodes[SERIAL]
    assert node_finder.port_for_serial("0000", tmp_path)() is None
