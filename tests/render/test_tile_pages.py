"""The strip and the text lines are joined in page layout from the font's columns, with
no image drawn; each is exactly the tile Pillow draws (``image_to_pages`` of it): every
truco level, underline and baza mark, seats on and off the strip, random strips and
lines (centred, inverted, too long for the panel). (Checked once against all 86,016
strips of six seats.)"""

from __future__ import annotations

import itertools
import random

import pytest

from controller.hal.pages import image_to_pages
from controller.render import screen
from controller.render.pixelfont import FONT_TEXT
from controller.render.screen import BazaMark, Line, Strip


def drawn_strip(strip: Strip) -> bytes:
    return image_to_pages(screen._strip_tile.__wrapped__(strip))


def drawn_line(line: Line) -> bytes:
    if not line.text and not line.inverted:
        return bytes(128)
    return image_to_pages(screen._line_tile.__wrapped__(line))


def test_every_mark_level_and_underline() -> None:
    for first, second, third in itertools.product(list(BazaMark), repeat=3):
        for truco, quiero, seat in itertools.product(range(4), (False, True), (0, 5)):
            strip = Strip(5, 0, seat, (first, second, third), truco, quiero)
            assert screen._strip_pages.__wrapped__(strip) == drawn_strip(strip), strip


def test_random_strips() -> None:
    rng = random.Random(23)
    seats = [None, 0, 1, 2, 3, 4, 5]
    for _ in range(1500):
        strip = Strip(
            rng.choice(seats),
            rng.choice(seats),
            rng.randrange(6),
            (rng.choice(list(BazaMark)), rng.choice(list(BazaMark)), rng.choice(list(BazaMark))),
            rng.randrange(4),
            rng.random() < 0.5,
        )
        assert screen._strip_pages.__wrapped__(strip) == drawn_strip(strip), strip


@pytest.mark.parametrize("inverted", [False, True])
def test_random_lines(inverted: bool) -> None:
    rng = random.Random(29)
    chars = sorted(FONT_TEXT._lit)
    for length in [0, 1, 2, *range(3, 40, 3)]:
        for _ in range(40):
            text = "".join(rng.choice(chars) for _ in range(length))
            line = Line(text, rng.random() < 0.5, inverted)
            assert screen._line_pages.__wrapped__(line) == drawn_line(line), line


def test_a_character_the_font_lacks_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no glyph"):
        screen._line_pages.__wrapped__(Line("LECTOR ☃"))
