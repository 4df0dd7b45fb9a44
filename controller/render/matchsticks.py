"""The score in matchsticks ("palitos"), as Argentine tables keep it.

Four sticks make a square (its four sides) and the fifth crosses it diagonally,
so each square is 5 points.  In a 30-point game the first 15 points are the
*malas* and the next 15 the *buenas*; a 15-point game has only one half.

Pure drawing: everything here paints on a caller's ``ImageDraw``; nothing knows
about devices.  Boxes are ``(left, top, right, bottom)`` with ``right`` and
``bottom`` exclusive (like ``Image.crop``), so a box's size is
``(right - left, bottom - top)``.

Geometry (a 0.96" 128x64 panel has ~0.17 mm pixels; sizes are in pixels)
------------------------------------------------------------------------

One team's score box (what :func:`draw_score` paints) is 63x38 on the
scoreboard screen.  Inside it:

* Each half is one **row of 3 squares**: malas on top, buenas underneath,
  separated by a 7 px band with a 1 px divider line across the middle (the line
  under the malas on a paper score sheet).  Rows rather than columns because the
  box is wider than tall: two rows allow 15 px squares, two columns only 11 px.
* A square is ``S`` = 15 px outside, sticks ``t`` = 2 px thick.  The four sides
  are 11x2 px bars that stop short of the corners, so no two sticks share an
  edge (they meet only diagonally, like real matchsticks).  The diagonal runs
  from top-left to bottom-right over ``|x - y| <= 1`` (about 2 px thick), inset
  1 px from the sides, so it touches none of them either.  Every stick is
  therefore its own 4-connected blob, which the tests use to count them.
* Sticks are laid in this order: left side, top, right side, bottom, diagonal.
* Squares are 3 px apart; a 3 px gap between squares and the divider band
  between halves keep squares and halves visibly apart.
* To the right of the squares an 11 px strip holds the overflow mark: points
  beyond the target are not capped, the squares stop at the target and a small
  ``+N`` (3x5 digits) appears at the right of the last row.
* 30-point game: 3*15 + 2*3 + 11 = 62 px wide, 2*15 + 7 = 37 px tall.
  15-point game: the single row is centred vertically in the same box.

Other box sizes scale ``S`` down (strokes become 1 px below ``S`` = 9) or up
(3 px strokes from ``S`` = 24); see :func:`score_layout`.

The scoreboard screen (:func:`render_scoreboard_image`, 128x64)
-------------------------------------------------------------------

* ``SCOREBOARD_BOX`` = rows 0-46: labels ``NOSOTROS`` / ``ELLOS`` (5x7 font,
  rows 0-6, centred over each team's squares), a dotted vertical separator at
  x = 63, and each team's score box (rows 9-46): ours at x 0-62, theirs at
  x 65-127.
* ``TEXT_BOX`` = rows 47-63 stays free for the caller's two lines of text about
  the hand (two 7 px lines fit with 1 px spacing).

The seat screens (``controller/render/screen.py``) draw the same scoreboard in rows
0-38 with ``label_gap=1`` and ``divider_band=5``: 13 px squares, the rows under it left
for the status of the hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from PIL import Image, ImageDraw

from controller.render.pixelfont import FONT_3X5, FONT_5X7

__all__ = [
    "HALF_POINTS",
    "POINTS_PER_SQUARE",
    "SCOREBOARD_BOX",
    "SCREEN_SIZE",
    "SQUARES_PER_HALF",
    "STICK_ORDER",
    "TEXT_BOX",
    "Box",
    "ScoreLayout",
    "ScoreboardLayout",
    "Stick",
    "StickKind",
    "draw_score",
    "draw_scoreboard",
    "overflow_text",
    "render_scoreboard_image",
    "score_layout",
    "scoreboard_layout",
    "stick_pixels",
    "sticks_for_score",
]

Box = tuple[int, int, int, int]
Pixel = tuple[int, int]

SCREEN_SIZE = (128, 64)
SCOREBOARD_BOX: Box = (0, 0, 128, 47)
TEXT_BOX: Box = (0, 47, 128, 64)

POINTS_PER_SQUARE = 5
SQUARES_PER_HALF = 3
HALF_POINTS = POINTS_PER_SQUARE * SQUARES_PER_HALF  # 15: the malas, then the buenas
SUPPORTED_TARGETS = (HALF_POINTS, 2 * HALF_POINTS)

SQUARE_GAP = 3  # px between neighbouring squares of a row
DIVIDER_BAND = 7  # px between the malas row and the buenas row; the divider is its middle row
OVERFLOW_STRIP = 11  # px right of the squares: 1 px gap + "+NN" in 3x5 digits (10 px)
MIN_SQUARE = 7
LABEL_GAP = 2  # px between the labels and the score boxes

LABEL_OURS = ("NOSOTROS", "NOS")
LABEL_THEIRS = ("ELLOS",)


class StickKind(Enum):
    LEFT = "left"
    TOP = "top"
    RIGHT = "right"
    BOTTOM = "bottom"
    DIAGONAL = "diagonal"


#: The order in which a square's sticks are laid; the fifth crosses the square.
STICK_ORDER: tuple[StickKind, ...] = (
    StickKind.LEFT,
    StickKind.TOP,
    StickKind.RIGHT,
    StickKind.BOTTOM,
    StickKind.DIAGONAL,
)


@dataclass(frozen=True)
class Stick:
    """One matchstick: ``half`` 0 = malas, 1 = buenas; ``square`` 0-2 within the half."""

    half: int
    square: int
    kind: StickKind


def _check_target(target: int) -> int:
    if target not in SUPPORTED_TARGETS:
        raise ValueError(f"target must be one of {SUPPORTED_TARGETS}, not {target}")
    return target // HALF_POINTS


def sticks_for_score(points: int, target: int) -> list[Stick]:
    """The sticks on the table for ``points`` (only up to ``target``), in laying order."""
    halves = _check_target(target)
    if points < 0:
        raise ValueError(f"points cannot be negative: {points}")
    shown = min(points, target)
    sticks: list[Stick] = []
    for half in range(halves):
        in_half = max(0, min(shown - half * HALF_POINTS, HALF_POINTS))
        for square in range(SQUARES_PER_HALF):
            in_square = max(0, min(in_half - square * POINTS_PER_SQUARE, POINTS_PER_SQUARE))
            sticks.extend(Stick(half, square, kind) for kind in STICK_ORDER[:in_square])
    return sticks


def overflow_text(points: int, target: int) -> str | None:
    """``"+N"`` for points beyond the target (``N`` shown up to 99), else ``None``."""
    _check_target(target)
    if points <= target:
        return None
    return f"+{min(points - target, 99)}"


@dataclass(frozen=True)
class ScoreLayout:
    """Where everything of one team's score goes inside its box."""

    box: Box
    target: int
    square: int  # S: outer size of a square
    stroke: int  # t: thickness of a side stick
    gap: int  # between squares of a row
    row_tops: tuple[int, ...]  # y of each half's row (malas first)
    left: int  # x of the first square of each row
    divider: tuple[int, int, int] | None  # (y, x_first, x_last) of the malas/buenas line
    overflow_origin: Pixel  # top-left of the "+N" text

    @property
    def halves(self) -> int:
        return len(self.row_tops)

    @property
    def squares_width(self) -> int:
        return SQUARES_PER_HALF * self.square + (SQUARES_PER_HALF - 1) * self.gap

    def square_origin(self, half: int, square: int) -> Pixel:
        return (self.left + square * (self.square + self.gap), self.row_tops[half])


def score_layout(box: Box, target: int, *, divider_band: int = DIVIDER_BAND) -> ScoreLayout:
    """Fit the squares of a ``target``-point game into ``box`` (see the module docstring).

    ``divider_band`` is the gap between the malas and the buenas rows (its middle row is
    the divider line); the seat screens use 5 px to keep the squares 13 px.
    """
    halves = _check_target(target)
    if divider_band < 5 or divider_band % 2 == 0:
        raise ValueError(f"the divider band must be odd and at least 5 px, not {divider_band}")
    x0, y0, x1, y1 = box
    width, height = x1 - x0, y1 - y0
    band = divider_band * (halves - 1)
    square = min(
        (width - OVERFLOW_STRIP - (SQUARES_PER_HALF - 1) * SQUARE_GAP) // SQUARES_PER_HALF,
        (height - band) // halves,
    )
    if square < MIN_SQUARE:
        raise ValueError(f"box {box} is too small for a {target}-point score")
    stroke = 1 if square < 9 else 2 if square < 24 else 3
    squares_width = SQUARES_PER_HALF * square + (SQUARES_PER_HALF - 1) * SQUARE_GAP
    content_width = squares_width + OVERFLOW_STRIP
    content_height = halves * square + band
    left = x0 + (width - content_width) // 2
    top = y0 + (height - content_height) // 2
    row_tops = tuple(top + half * (square + divider_band) for half in range(halves))
    divider = None
    if halves == 2:
        divider = (top + square + divider_band // 2, left, left + squares_width - 1)
    overflow_origin = (
        left + squares_width + 1,
        row_tops[-1] + (square - FONT_3X5.height) // 2,
    )
    return ScoreLayout(
        box=box,
        target=target,
        square=square,
        stroke=stroke,
        gap=SQUARE_GAP,
        row_tops=row_tops,
        left=left,
        divider=divider,
        overflow_origin=overflow_origin,
    )


def _rect(x_first: int, y_first: int, x_last: int, y_last: int) -> list[Pixel]:
    return [(x, y) for y in range(y_first, y_last + 1) for x in range(x_first, x_last + 1)]


def stick_pixels(layout: ScoreLayout, stick: Stick) -> list[Pixel]:
    """The pixels of one stick under ``layout``."""
    sx, sy = layout.square_origin(stick.half, stick.square)
    size, t = layout.square, layout.stroke
    near, far = t, size - t - 1  # first and last pixel of a side along its length
    match stick.kind:
        case StickKind.LEFT:
            return _rect(sx, sy + near, sx + t - 1, sy + far)
        case StickKind.TOP:
            return _rect(sx + near, sy, sx + far, sy + t - 1)
        case StickKind.RIGHT:
            return _rect(sx + size - t, sy + near, sx + size - 1, sy + far)
        case StickKind.BOTTOM:
            return _rect(sx + near, sy + size - t, sx + far, sy + size - 1)
        case StickKind.DIAGONAL:
            first, last = t + 1, size - t - 2  # 1 px clear of the sides
            spread = t - 1
            return [
                (sx + x, sy + y)
                for y in range(first, last + 1)
                for x in range(first, last + 1)
                if abs(x - y) <= spread
            ]
    raise AssertionError(stick.kind)  # pragma: no cover


def _overflow_pixels(layout: ScoreLayout, text: str) -> list[Pixel]:
    x, y = layout.overflow_origin
    if len(text) <= 2:
        return FONT_3X5.pixels(text, (x, y))
    # "+NN" is set tight (no space after the plus) to fit the strip.
    plus = FONT_3X5.pixels("+", (x, y))
    return plus + FONT_3X5.pixels(text[1:], (x + FONT_3X5.width, y))


def _clear(draw: ImageDraw.ImageDraw, box: Box) -> None:
    x0, y0, x1, y1 = box
    if x1 > x0 and y1 > y0:
        draw.rectangle((x0, y0, x1 - 1, y1 - 1), fill="black")


def _paint(draw: ImageDraw.ImageDraw, pixels: Iterable[Pixel], fill: int | str) -> None:
    points = list(pixels)
    if points:
        draw.point(points, fill=fill)


def draw_score(
    draw: ImageDraw.ImageDraw,
    box: Box,
    points: int,
    target: int,
    fill: int | str = "white",
    *,
    divider_band: int = DIVIDER_BAND,
) -> None:
    """Paint one team's score in matchsticks over the whole of ``box`` (cleared first)."""
    layout = score_layout(box, target, divider_band=divider_band)
    sticks = sticks_for_score(points, target)
    _clear(draw, box)
    if layout.divider is not None:
        y, x_first, x_last = layout.divider
        draw.line((x_first, y, x_last, y), fill=fill)
    for stick in sticks:
        _paint(draw, stick_pixels(layout, stick), fill)
    text = overflow_text(points, target)
    if text is not None:
        _paint(draw, _overflow_pixels(layout, text), fill)


@dataclass(frozen=True)
class ScoreboardLayout:
    """Where the two teams go inside a scoreboard box."""

    ours: Box  # score box of "nosotros"
    theirs: Box  # score box of "ellos"
    separator_x: int
    label_top: int
    labels: tuple[str, str]


def _pick_label(choices: tuple[str, ...], width: int) -> str:
    for label in choices:
        if FONT_5X7.text_width(label) <= width:
            return label
    raise ValueError(f"no label among {choices} fits in {width} px")


def scoreboard_layout(box: Box, *, label_gap: int = LABEL_GAP) -> ScoreboardLayout:
    """Split ``box`` into the two teams' score boxes, separator and labels."""
    x0, y0, x1, y1 = box
    separator_x = x0 + (x1 - x0) // 2 - 1
    panel_top = y0 + FONT_5X7.height + label_gap
    ours = (x0, panel_top, separator_x, y1)
    theirs = (separator_x + 2, panel_top, x1, y1)
    width = min(ours[2] - ours[0], theirs[2] - theirs[0])
    labels = (_pick_label(LABEL_OURS, width), _pick_label(LABEL_THEIRS, width))
    return ScoreboardLayout(ours, theirs, separator_x, y0, labels)


def draw_scoreboard(
    draw: ImageDraw.ImageDraw,
    box: Box,
    ours: int,
    theirs: int,
    target: int,
    fill: int | str = "white",
    *,
    label_gap: int = LABEL_GAP,
    divider_band: int = DIVIDER_BAND,
    sides: tuple[int, ...] = (0, 1),
    separator: bool = True,
) -> None:
    """Both teams side by side, labelled, over the whole of ``box`` (cleared first).

    ``sides``/``separator``: only those teams' halves (0: ours, 1: theirs) and the
    dotted line between them; the halves touch no common pixel, so the whole board is
    the union of its parts (the screens cache each half on its own)."""
    board = scoreboard_layout(box, label_gap=label_gap)
    _clear(draw, box)
    for side, (score_box, label, points) in enumerate(
        zip((board.ours, board.theirs), board.labels, (ours, theirs), strict=True)
    ):
        if side not in sides:
            continue
        layout = score_layout(score_box, target, divider_band=divider_band)
        centre = layout.left + layout.squares_width // 2
        label_x = centre - FONT_5X7.text_width(label) // 2
        FONT_5X7.draw(draw, (label_x, board.label_top), label, fill=fill)
        draw_score(draw, score_box, points, target, fill=fill, divider_band=divider_band)
    if separator:
        dots = [(board.separator_x, y) for y in range(box[1], box[3], 2)]
        _paint(draw, dots, fill)


def render_scoreboard_image(ours: int, theirs: int, target: int) -> Image.Image:
    """A 128x64 mode "1" preview: the scoreboard on top, ``TEXT_BOX`` left blank."""
    image = Image.new("1", SCREEN_SIZE, 0)
    draw_scoreboard(ImageDraw.Draw(image), SCOREBOARD_BOX, ours, theirs, target)
    return image
