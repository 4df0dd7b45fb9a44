"""``contents_differ`` (what the service asks before it repaints a seat) is exactly
``!=`` of two contents, whichever field differs: the lines' texts and the score it
looks at first, and every other field (a line alike in text but inverted or centred,
the strip, the banner, the match card, the strip's alert) through the full comparison;
with nothing shown yet, everything differs."""

from __future__ import annotations

import itertools

from controller.render.screen import BazaMark, Line, ScreenContent, Strip, contents_differ

BASE = ScreenContent(3, 5, 30, Strip(1, 0, 2), (Line.of("TURNO: 3"), Line.of("ENVIDO")))

VARIANTS = [
    BASE,
    ScreenContent(3, 5, 30, Strip(1, 0, 2), (Line.of("TURNO: 3"), Line.of("ENVIDO"))),
    ScreenContent(3, 5, 30, Strip(1, 0, 2), (Line.of("TURNO: 4"), Line.of("ENVIDO"))),
    ScreenContent(3, 5, 30, Strip(1, 0, 2), (Line.of("TURNO: 3"), Line.of("TRUCO"))),
    ScreenContent(4, 5, 30, Strip(1, 0, 2), (Line.of("TURNO: 3"), Line.of("ENVIDO"))),
    ScreenContent(3, 6, 30, Strip(1, 0, 2), (Line.of("TURNO: 3"), Line.of("ENVIDO"))),
    ScreenContent(3, 5, 15, Strip(1, 0, 2), (Line.of("TURNO: 3"), Line.of("ENVIDO"))),
    ScreenContent(
        3,
        5,
        30,
        Strip(1, 0, 2, (BazaMark.WON, BazaMark.OPEN, BazaMark.OPEN)),
        (Line.of("TURNO: 3"), Line.of("ENVIDO")),
    ),
    ScreenContent(3, 5, 30, Strip(1, 0, 2), (Line("TURNO: 3", inverted=True), Line.of("ENVIDO"))),
    ScreenContent(3, 5, 30, Strip(1, 0, 2), (Line.of("TURNO: 3"), Line("ENVIDO", centre=True))),
    ScreenContent(3, 5, 30, Strip(1, 0, 2), BASE.lines, banner=("NO ES TU TURNO",)),
    ScreenContent(3, 5, 30, Strip(1, 0, 2), BASE.lines, card=(Line.of("RONDA 2"),)),
    ScreenContent(3, 5, 30, Strip(1, 0, 2), BASE.lines, strip_alert=Line.of("SIN DISCO")),
]


def test_it_says_what_the_comparison_says() -> None:
    for new, old in itertools.product(VARIANTS, repeat=2):
        assert contents_differ(new, old) == (new != old), (new, old)


def test_equal_contents_made_apart_do_not_differ() -> None:
    assert VARIANTS[0] is not VARIANTS[1]
    assert not contents_differ(VARIANTS[1], VARIANTS[0])
    assert not contents_differ(BASE, BASE)


def test_a_seat_shown_nothing_yet_differs() -> None:
    assert contents_differ(BASE, None)
