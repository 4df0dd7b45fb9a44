"""hardware/: the pin map, udev rules, config.txt lines and wiring tables agree
with each other, with the firmware's pin numbers, and with the boards' pinouts."""

from __future__ import annotations

import re
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HW = ROOT / "hardware"
sys.path.insert(0, str(ROOT / "firmware"))
from seatnode import config as fw_config  # noqa: E402

BUTTONS = ("truco", "envido", "real_envido", "falta_envido", "flor", "quiero", "no_quiero", "mazo")
# Raspberry Pi 40-pin header: BCM GPIO -> physical pin.
PI_PHYSICAL = {
    2: 3, 3: 5, 4: 7, 17: 11, 27: 13, 22: 15, 10: 19, 9: 21, 11: 23, 0: 27, 5: 29, 6: 31,
    13: 33, 19: 35, 26: 37, 14: 8, 15: 10, 18: 12, 23: 16, 24: 18, 25: 22, 8: 24, 7: 26,
    1: 28, 12: 32, 16: 36, 20: 38, 21: 40,
}  # fmt: skip
# Raspberry Pi Pico: GPn -> physical pin.
PICO_PHYSICAL = {
    0: 1, 1: 2, 2: 4, 3: 5, 4: 6, 5: 7, 6: 9, 7: 10, 8: 11, 9: 12, 10: 14, 11: 15, 12: 16,
    13: 17, 14: 19, 15: 20, 16: 21, 17: 22, 18: 24, 19: 25, 20: 26, 21: 27, 22: 29, 26: 31,
    27: 32, 28: 34,
}  # fmt: skip


PINMAPS = ("pinmap.toml", "pinmap-mux.toml", "pinmap-gpio.toml")


def load(name: str) -> dict[str, Any]:
    with open(HW / name, "rb") as f:
        return tomllib.load(f)


@pytest.fixture(scope="module")
def pinmap() -> dict[str, Any]:
    return load("pinmap.toml")


@pytest.fixture(scope="module")
def gpio_pinmap() -> dict[str, Any]:
    return load("pinmap-gpio.toml")


def test_topology(pinmap: dict[str, Any]) -> None:
    assert pinmap["topology"]["kind"] == "nodes"
    assert load("pinmap-mux.toml")["topology"]["kind"] == "nodes"
    assert load("pinmap-gpio.toml")["topology"]["kind"] == "gpio"


def test_nodes_section(pinmap: dict[str, Any]) -> None:
    seats = pinmap["nodes"]["seat"]
    assert sorted(s["seat"] for s in seats) == list(range(len(seats)))
    assert len(seats) in (2, 4, 6)
    serials = [s["serial"] for s in seats]
    assert len(set(serials)) == len(serials)
    assert all(re.fullmatch(r"[0-9a-f]{16}", s) for s in serials)
    assert pinmap["nodes"]["heartbeat_timeout_s"] > 1


def test_gpio_section(gpio_pinmap: dict[str, Any]) -> None:
    gpio = gpio_pinmap["gpio"]
    seats = gpio["seat"]
    assert sorted(s["seat"] for s in seats) == [0, 1]
    assert sorted(s["reader_cs"] for s in seats) == [0, 1]
    used = [2, 3, 7, 8, 9, 10, 11, gpio["reader_reset_pin"]]  # I2C1, SPI0, reader reset
    for seat in seats:
        assert tuple(seat["buttons"]) == BUTTONS
        used += list(seat["buttons"].values())
        if "led" in seat:
            used.append(seat["led"])
    assert len(used) == len(set(used)), "a BCM pin is used twice"
    assert all(2 <= pin <= 27 for pin in used), "GPIO0/1 are reserved for the HAT EEPROM"


@pytest.mark.parametrize("name", PINMAPS)
def test_display_section(name: str) -> None:
    pinmap = load(name)
    display = pinmap["display"]
    seats = display["seat"]
    channels = [s["mux_channel"] for s in seats if "mux_channel" in s]
    assert len(set(channels)) == len(channels) and all(0 <= c <= 7 for c in channels)
    for seat in seats:
        assert seat.get("connected_to", "node") in ("node", "pi")
        assert (seat.get("connected_to") == "pi") == ("mux_channel" in seat)
        assert seat["driver"] in ("ssd1306", "sh1106", "ssd1309")
        assert seat["address"] in (0x3C, 0x3D)
        assert (seat["width"], seat["height"]) == (128, 64)
        assert seat["rotate"] in (0, 2)
    kind = pinmap["topology"]["kind"]
    used = {s["seat"] for s in pinmap[kind]["seat"]}
    assert used == {s["seat"] for s in seats}
    import luma.oled.device as devices

    assert all(hasattr(devices, s["driver"]) for s in seats)


def test_config_txt() -> None:
    lines = [
        line.strip()
        for line in (HW / "config.txt").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    # 100 kHz by default: the display cables' rise time (hardware/bus.md)
    assert "dtparam=i2c_arm=on,i2c_arm_baudrate=100000" in lines
    assert "dtoverlay=i2c-mux,pca9548,addr=0x70" in lines
    assert "dtparam=spi=on" in lines
    for name in PINMAPS:
        assert load(name)["display"]["mux_address"] == 0x70
    assert not any(line.startswith("enable_uart=1") for line in lines)


def test_udev_rules(pinmap: dict[str, Any]) -> None:
    text = (HW / "99-truco-table.rules").read_text()
    rules = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    assert any('ENV{ID_MM_DEVICE_IGNORE}="1"' in r and 'GROUP="dialout"' in r for r in rules)
    assert all('"2e8a"' in r and '"0005"' in r for r in rules)
    for seat in pinmap["nodes"]["seat"]:
        assert any(
            f'ATTRS{{serial}}=="{seat["serial"]}"' in r
            and f'SYMLINK+="truco-seat{seat["seat"]}"' in r
            for r in rules
        ), seat


def test_wiring_svg_is_an_svg() -> None:
    root = ET.parse(HW / "wiring.svg").getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    for name in BUTTONS:
        assert name in texts
    assert "MFRC522" in texts


def test_wiring_md_seat_node_tables_match_the_firmware() -> None:
    text = (HW / "wiring.md").read_text()
    for name, gp in fw_config.BUTTON_PINS:
        assert re.search(rf"\| `{name}` \| GP{gp} \| {PICO_PHYSICAL[gp]} \|", text), name
    reader = {
        "MISO": fw_config.PIN_MISO,
        "MOSI": fw_config.PIN_MOSI,
        "SCK": fw_config.PIN_SCK,
        "RST": fw_config.PIN_RST,
    }
    for label, gp in reader.items():
        assert re.search(rf"\| {label} \| GP{gp}\b[^|]*\| {PICO_PHYSICAL[gp]} \|", text), label
    assert re.search(
        rf"GP{fw_config.PIN_CS} \(SPI0 CSn\) \| {PICO_PHYSICAL[fw_config.PIN_CS]} \|", text
    )
    assert f"GP{fw_config.PIN_LED_PANEL} (physical pin {PICO_PHYSICAL[15]})" in text


def test_every_gpio_reference_in_wiring_md_uses_the_right_physical_pin() -> None:
    text = (HW / "wiring.md").read_text()
    pairs = re.findall(r"GPIO(\d+)(?: / \w+)? \((\d+)\)", text)
    assert len(pairs) > 20
    for bcm, physical in pairs:
        assert PI_PHYSICAL[int(bcm)] == int(physical), f"GPIO{bcm} is pin {PI_PHYSICAL[int(bcm)]}"
    pico_rows = re.findall(r"\| (\d+) \| GP(\d+) \|", text)  # "| 4 | GP2 | `truco` |"
    assert len(pico_rows) >= 14
    for physical, gp in pico_rows:
        assert PICO_PHYSICAL[int(gp)] == int(physical), f"GP{gp} is pin {PICO_PHYSICAL[int(gp)]}"


def test_wiring_md_gpio_tables_match_the_pinmap(gpio_pinmap: dict[str, Any]) -> None:
    pinmap = gpio_pinmap
    text = (HW / "wiring.md").read_text()
    seat0, seat1 = sorted(pinmap["gpio"]["seat"], key=lambda s: s["seat"])
    for name in BUTTONS:
        a, b = seat0["buttons"][name], seat1["buttons"][name]
        row = rf"\| `{name}` \| GPIO{a} \({PI_PHYSICAL[a]}\) \| GPIO{b} \({PI_PHYSICAL[b]}\) \|"
        assert re.search(row, text), name
    reset = pinmap["gpio"]["reader_reset_pin"]
    assert f"| RST | GPIO{reset} ({PI_PHYSICAL[reset]})" in text


def test_one_cable_seat_wiring_matches_the_firmware() -> None:
    text = (HW / "one-cable-seat.md").read_text()
    for label, gp in (("SCL", fw_config.PIN_SCL), ("SDA", fw_config.PIN_SDA)):
        assert re.search(rf"\| {label} \| {PICO_PHYSICAL[gp]} \| GP{gp} \|", text), label
    assert fw_config.I2C_FREQ == 400_000 and "400 kHz" in text
    # the 2.42" module on its 4-wire SPI (SPI1), as the node drives it
    assert fw_config.PANEL_BUSES == {"ssd1306": "i2c", "sh1106": "i2c", "ssd1309": "spi"}
    for label, gp in (
        ("SCL", fw_config.PIN_PANEL_SCK),
        ("SDA", fw_config.PIN_PANEL_MOSI),
        ("DC", fw_config.PIN_PANEL_DC),
        ("CS", fw_config.PIN_PANEL_CS),
        ("RES", fw_config.PIN_PANEL_RES),
    ):
        assert re.search(rf"\| {label} \| {PICO_PHYSICAL[gp]} \| GP{gp} \|", text), label
    assert fw_config.PANEL_SPI_BAUDRATE == 8_000_000 and "SPI1 at 8 MHz" in text
    used = [gp for _name, gp in fw_config.BUTTON_PINS]
    used += [fw_config.PIN_MISO, fw_config.PIN_CS, fw_config.PIN_SCK, fw_config.PIN_MOSI]
    used += [fw_config.PIN_RST, fw_config.PIN_LED_PANEL, fw_config.PIN_SDA, fw_config.PIN_SCL]
    used += [fw_config.PIN_PANEL_SCK, fw_config.PIN_PANEL_MOSI, fw_config.PIN_PANEL_DC]
    used += [fw_config.PIN_PANEL_CS, fw_config.PIN_PANEL_RES]
    assert len(used) == len(set(used)), "a Pico pin is used twice"
