"""The node's panel driver against the controller models, on CPython.

Every window the Pi could send, in any chunking, must land in the RAM where the
Pi's frame has it; the init must leave the glass upright and lit; a panel that
stops answering is noticed and comes back with a fresh init.
"""

from __future__ import annotations

import random

import pytest
from fake_oled import OledModel, SH1106Model, SSD1306Model, SSD1309Model, model_for
from seatnode import panel as panel_module
from seatnode.panel import KINDS, Panel

CHUNK = 24  # what one display frame carries


def fresh(kind: str) -> tuple[Panel, OledModel]:
    model = model_for(kind)
    model.power_cycle()  # noise in the RAM, registers at reset
    driver = Panel(model, kind)
    assert driver.init()
    return driver, model


@pytest.mark.parametrize("kind", KINDS)
def test_init_lights_a_blank_upright_panel(kind: str) -> None:
    driver, model = fresh(kind)
    assert driver.ok and driver.resets == 1
    assert model.display_on and model.segment_remap and model.com_reversed
    assert model.glass() == bytes(1024)
    assert model.ram_pages() == bytes(1024)
    assert model.ignored == []
    if isinstance(model, SSD1306Model) and not isinstance(model, SSD1309Model):
        assert model.charge_pump


@pytest.mark.parametrize("kind", KINDS)
def test_windows_in_any_chunking_reach_the_glass(kind: str) -> None:
    rnd = random.Random(kind)
    driver, model = fresh(kind)
    frame = bytearray(1024)
    for _ in range(300):
        p0 = rnd.randrange(8)
        p1 = rnd.randrange(p0, 8) if rnd.random() < 0.5 else p0
        c0 = rnd.randrange(128)
        c1 = rnd.randrange(c0, min(128, c0 + rnd.choice([1, 3, 20, 128])))
        cols = c1 - c0 + 1
        size = (p1 - p0 + 1) * cols
        data = bytes(rnd.randrange(256) for _ in range(size))
        offset = 0
        while offset < size:  # in display-frame sized pieces, in order
            piece = data[offset : offset + CHUNK]
            driver.window(p0, p1, c0, c1, offset, piece)
            offset += len(piece)
        for i, byte in enumerate(data):
            page, col = p0 + i // cols, c0 + i % cols
            frame[page * 128 + col] = byte
        assert model.glass() == bytes(frame)
    assert model.ignored == []


@pytest.mark.parametrize("kind", KINDS)
def test_a_piece_out_of_order_still_lands_right(kind: str) -> None:
    driver, model = fresh(kind)
    data = bytes(range(1, 61))  # 3 pages x 20 columns
    driver.window(2, 4, 30, 49, 25, data[25:50])  # from the middle of page 3
    driver.window(2, 4, 30, 49, 0, data[:25])
    driver.window(2, 4, 30, 49, 50, data[50:])
    glass = model.glass()
    for i, byte in enumerate(data):
        assert glass[(2 + i // 20) * 128 + 30 + i % 20] == byte


def test_ssd1306_streams_a_window_with_one_addressing() -> None:
    driver, model = fresh("ssd1306")
    before = len(model.commands_seen)
    data = bytes(range(72))  # 3 pages x 24 columns, in 3 pieces
    for offset in (0, 24, 48):
        driver.window(1, 3, 10, 33, offset, data[offset : offset + 24])
    assert model.commands_seen[before:] == [(0x21, [10, 33]), (0x22, [1, 3])]


def test_sh1106_addresses_from_column_two() -> None:
    driver, model = fresh("sh1106")
    assert isinstance(model, SH1106Model)
    hidden = bytes(model.ram[5][0:2])  # the two RAM columns left of the glass
    driver.window(5, 5, 0, 3, 0, b"\x01\x02\x03\x04")
    assert bytes(model.ram[5][2:6]) == b"\x01\x02\x03\x04"
    assert bytes(model.ram[5][0:2]) == hidden


@pytest.mark.parametrize("kind", KINDS)
def test_a_panel_that_stops_answering_is_noticed_and_comes_back(kind: str) -> None:
    driver, model = fresh(kind)
    driver.window(0, 0, 0, 3, 0, b"\xff\xff\xff\xff")
    model.unplugged = True
    with pytest.raises(OSError):
        driver.window(0, 0, 0, 3, 0, b"\x0f\x0f\x0f\x0f")
    assert not driver.ok and driver.errors == 1
    assert not driver.init()  # still away
    model.unplugged = False
    model.power_cycle()  # it browned out meanwhile: dark, registers reset
    assert model.glass() == bytes(1024)
    assert driver.init() and driver.ok and driver.resets == 2
    driver.window(0, 0, 0, 3, 0, b"\x0f\x0f\x0f\x0f")
    assert model.glass()[:4] == b"\x0f\x0f\x0f\x0f" and model.display_on


def test_the_i2c_bytes_are_counted() -> None:
    driver, model = fresh("ssd1306")
    sent = driver.bytes_sent
    driver.window(0, 1, 0, 9, 0, bytes(20))
    # 0x21 c0 c1 0x22 p0 p1: address + control + 6; data: address + control + 20
    assert driver.bytes_sent - sent == (2 + 6) + (2 + 20)
    assert model.transfers == driver.transfers


def test_bad_kind_and_bad_window() -> None:
    with pytest.raises(ValueError, match="panel type"):
        Panel(SSD1306Model(), "st7735")
    driver, _ = fresh("ssd1306")
    with pytest.raises(ValueError, match="outside"):
        driver.window(0, 8, 0, 0, 0, b"\x00")
    with pytest.raises(ValueError, match="outside"):
        driver.window(0, 0, 0, 1, 1, b"\x00\x00")
    assert panel_module.COLUMN_OFFSET["sh1106"] == 2
