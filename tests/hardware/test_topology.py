"""One table in every document: the guide (hardware/README.md), the BOM, wiring.svg,
one-cable-seat.md and the shipped pinmap.toml all describe the one-cable table (each
seat's display on its seat node); the multiplexer and GPIO tables are variants, each
with its own pin map, and the guide's main steps never send the owner to them."""

from __future__ import annotations

import re
import shutil
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from controller.hal.factory import PiHardware
from controller.hal.node_display import NodeDisplay
from controller.hal.wiring import build_hardware
from controller.table.config import load_config

ROOT = Path(__file__).resolve().parents[2]
HW = ROOT / "hardware"
DRIVER, ADDRESS = "ssd1309", 0x3C  # the guide's display: the 2.42" module at 0x3C
MUX_WORDS = ("TCA9548A", "multiplexer", "mux_channel", "2.2 kΩ", "SD0", "i2c-1")


def pinmap(name: str = "pinmap.toml") -> dict[str, Any]:
    return tomllib.loads((HW / name).read_text(encoding="utf-8"))


def guide_steps() -> str:
    """The guide up to its "Variants" section: what the owner builds."""
    text = (HW / "README.md").read_text(encoding="utf-8")
    assert text.count("\n## Variants\n") == 1
    return text.split("\n## Variants\n")[0]


def test_the_shipped_pin_map_is_the_one_cable_table() -> None:
    shipped = pinmap()
    assert shipped["topology"]["kind"] == "nodes"
    assert "gpio" not in shipped  # the GPIO table has its own pin map
    displays = shipped["display"]["seat"]
    assert [d["seat"] for d in displays] == [n["seat"] for n in shipped["nodes"]["seat"]]
    assert len(displays) == 6  # for 2, 4 and 6 seats: players says how many are used
    for d in displays:
        assert d["connected_to"] == "node" and "mux_channel" not in d
        assert (d["driver"], d["address"]) == (DRIVER, ADDRESS)


def test_the_variants_have_their_own_pin_maps() -> None:
    mux = pinmap("pinmap-mux.toml")
    assert mux["topology"]["kind"] == "nodes"
    assert all(
        d["connected_to"] == "pi" and d["mux_channel"] == d["seat"] for d in mux["display"]["seat"]
    )
    gpio = pinmap("pinmap-gpio.toml")
    assert gpio["topology"]["kind"] == "gpio" and "nodes" not in gpio
    assert [d["mux_channel"] for d in gpio["display"]["seat"]] == [0, 1]
    variants = (HW / "README.md").read_text(encoding="utf-8").split("\n## Variants\n")[1]
    assert 'pinmap = "pinmap-mux.toml"' in variants
    assert 'pinmap = "pinmap-gpio.toml"' in variants
    install = (ROOT / "scripts" / "install-pi").read_text(encoding="utf-8")
    for name in ("pinmap.toml", "pinmap-mux.toml", "pinmap-gpio.toml"):
        assert f"hardware/{name}" in install  # all three are put in /etc/truco-table


@pytest.mark.parametrize("players", [2, 4, 6])
def test_the_service_gives_every_seat_its_node_panel(tmp_path: Path, players: int) -> None:
    shutil.copy(HW / "pinmap.toml", tmp_path / "pinmap.toml")
    table = (ROOT / "systemd" / "table.toml").read_text(encoding="utf-8")
    (tmp_path / "table.toml").write_text(table.replace("players = 4", f"players = {players}"))
    config = load_config(tmp_path / "table.toml")
    hw = build_hardware(config, PiHardware())
    try:
        assert all(isinstance(d, NodeDisplay) for d in hw.displays)
        assert len(hw.displays) == players
    finally:
        hw.close()


def test_the_guide_builds_that_table() -> None:
    steps = guide_steps()
    for word in MUX_WORDS:
        assert word not in steps, f"the guide's steps mention {word!r}"
    assert f'driver = "{DRIVER}"' in steps and 'connected_to = "node"' in steps
    assert '2.42"' in steps and "one-cable-seat.md" in steps
    # what to pick in today's Imager, and what the install refuses
    assert "Raspberry Pi OS Lite (64-bit)" in steps and "Trixie" in steps
    assert "32-bit" in steps


def test_the_bom_lists_that_table() -> None:
    bom = (HW / "bom.md").read_text(encoding="utf-8")
    main, variants = bom.split("\n## Variants\n")
    for word in ("TCA9548A", "multiplexer", "Cat5e"):
        assert word not in main.split("## The table's computer")[1], word
    assert re.search(
        r'^\| 6 \| OLED display 2\.42" 128×64, SSD1309 \|.*\| 2 \| 4 \| 6 \|', main, re.M
    )
    # the 2.42" module on SPI needs no reset parts (the node drives RES); on I2C it does
    assert not re.search(r"^\| 6b \|", main, re.M)
    assert re.search(r"^\| 6b \| Reset parts .*on I2C.*10 kΩ.*1 µF", variants, re.M)
    assert "TCA9548A" in variants and "pinmap-mux.toml" in variants


def firmware_config() -> Any:
    """firmware/seatnode/config.py, the pins the node drives."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "firmware" / "seatnode" / "config.py"
    spec = importlib.util.spec_from_file_location("seatnode_config_topology", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def svg_texts() -> str:
    root = ET.parse(HW / "wiring.svg").getroot()
    return " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))


def test_the_drawing_shows_that_table() -> None:
    texts = svg_texts()
    assert "TCA9548A" not in texts
    assert "one-cable" in texts and 'connected_to = "node"' in texts
    assert f'driver = "{DRIVER}"' in texts and "SSD1309" in texts
    # the 2.42" module on its 4-wire SPI, as it comes, on the firmware's pins
    config = firmware_config()
    physical = {10: 14, 11: 15, 12: 16, 13: 17, 14: 19}  # the Pico's GP -> physical pin
    for label, gp in (
        ("SCK", config.PIN_PANEL_SCK),
        ("MOSI", config.PIN_PANEL_MOSI),
        ("RES", config.PIN_PANEL_RES),
        ("DC", config.PIN_PANEL_DC),
        ("CS", config.PIN_PANEL_CS),
    ):
        assert f"GP{gp} {label} ({physical[gp]})" in texts, label
    assert "en SPI, como viene" in texts and "nada que tocar" in texts
    for pin in ("GND", "VCC", "SCL", "SDA", "RES", "DC", "CS"):
        assert re.search(rf"(^| ){pin}( |$)", texts), pin
    assert "GP0 SDA (1)" in texts and "GP1 SCL (2)" in texts  # a 4-pin module, on I2C


def test_one_cable_seat_md_is_the_guides_table() -> None:
    text = (HW / "one-cable-seat.md").read_text(encoding="utf-8")
    assert "This is the table [README.md](README.md) builds" in text
    assert f'`driver = "{DRIVER}"`' in text and '`connected_to = "node"`' in text
    for pin in ("RES", "DC", "CS"):
        assert re.search(rf"^\| {pin} \| ", text, re.M), pin
    assert (
        "DC to GND gives 0x3C" in text and "10 kΩ from RES to 3V3 and 1 µF from RES to GND" in text
    )
