"""Matchstick scores: pixel-exact goldens, and sticks counted back from the pixels.

Regenerate the goldens deliberately with ``TRUCO_REGEN_GOLDEN=1 pytest tests/render``
(the test then writes the PNGs and skips); they are never rewritten otherwise.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from controller.render.matchsticks import (
    SCREEN_SIZE,
    Stick,
    StickKind,
    draw_score,
    overflow_text,
    render_scoreboard_image,
    score_layout,
    stick_pixels,
    sticks_for_score,
)

from .golden import check_golden

GOLDEN_DIR = Path(__file__).parent / "golden"

# (ours, theirs, target): every score 0..target appears once for each team.
BOARDS = [(s, 30 - s, 30) for s in range(31)] + [(s, 15 - s, 15) for s in range(16)]
OVERFLOW_BOARDS = [(33, 27, 30), (30, 45, 30), (17, 12, 15), (3, 25, 15)]

# The two team regions of the scoreboard screen, split at the documented separator column
# x = 63; rows 0-46 (labels included: they are small glyphs and are ignored as such).
LEFT_REGION = (0, 0, 63, 47)
RIGHT_REGION = (64, 0, 128, 47)


def golden_name(ours: int, theirs: int, target: int) -> str:
    return f"t{target}_{ours:02d}_{theirs:02d}.png"


# --------------------------------------------------------------------------- goldens


@pytest.mark.parametrize(("ours", "theirs", "target"), BOARDS + OVERFLOW_BOARDS)
def test_golden(ours: int, theirs: int, target: int) -> None:
    image = render_scoreboard_image(ours, theirs, target)
    assert image.mode == "1"
    assert image.size == SCREEN_SIZE
    check_golden(image, GOLDEN_DIR / golden_name(ours, theirs, target))


def test_no_stray_goldens() -> None:
    wanted = {golden_name(*board) for board in BOARDS + OVERFLOW_BOARDS}
    present = {path.name for path in GOLDEN_DIR.glob("*.png")}
    assert present <= wanted, sorted(present - wanted)


# ----------------------------------------------------------- reading sticks from pixels


class AnalysisError(AssertionError):
    pass


@dataclass
class Blob:
    pixels: list[tuple[int, int]]
    x0: int = field(init=False)
    y0: int = field(init=False)
    x1: int = field(init=False)  # inclusive
    y1: int = field(init=False)

    def __post_init__(self) -> None:
        xs = [x for x, _ in self.pixels]
        ys = [y for _, y in self.pixels]
        self.x0, self.x1, self.y0, self.y1 = min(xs), max(xs), min(ys), max(ys)

    @property
    def width(self) -> int:
        return self.x1 - self.x0 + 1

    @property
    def height(self) -> int:
        return self.y1 - self.y0 + 1

    def near(self, other: Blob, margin: int) -> bool:
        return not (
            self.x1 + margin < other.x0
            or other.x1 + margin < self.x0
            or self.y1 + margin < other.y0
            or other.y1 + margin < self.y0
        )

    def strictly_inside(self, x0: int, y0: int, x1: int, y1: int) -> bool:
        return x0 < self.x0 and self.x1 < x1 and y0 < self.y0 and self.y1 < y1


def blobs(image: Image.Image, region: tuple[int, int, int, int]) -> list[Blob]:
    """4-connected components of lit pixels inside ``region`` (right/bottom exclusive)."""
    px = image.load()
    assert px is not None
    rx0, ry0, rx1, ry1 = region
    lit = {(x, y) for y in range(ry0, ry1) for x in range(rx0, rx1) if px[x, y]}
    found: list[Blob] = []
    while lit:
        start = lit.pop()
        stack, members = [start], [start]
        while stack:
            x, y = stack.pop()
            for n in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                if n in lit:
                    lit.remove(n)
                    stack.append(n)
                    members.append(n)
        found.append(Blob(members))
    return found


def classify(blob: Blob) -> str:
    w, h, n = blob.width, blob.height, len(blob.pixels)
    if h == 1 and w >= 20:
        return "divider"
    # a diagonal is about square and hugs its main diagonal (7x7 in a 13 px square)
    band = all(abs((x - blob.x0) - (y - blob.y0)) <= 2 for x, y in blob.pixels)
    if abs(w - h) <= 1 and min(w, h) >= 5 and n >= max(w, h) and band:
        return "diagonal"
    if max(w, h) <= 7:
        return "glyph"  # label letters, "+N" digits
    short, long_ = min(w, h), max(w, h)
    if short <= 3 and long_ >= 3 * short + 2 and n == w * h:
        return "vertical" if h > w else "horizontal"
    raise AnalysisError(f"unrecognised shape {w}x{h} ({n} px) at ({blob.x0},{blob.y0})")


@dataclass
class Square:
    sticks: list[Blob]
    diagonals: list[Blob] = field(default_factory=list)

    @property
    def box(self) -> tuple[int, int, int, int]:
        members = self.sticks + self.diagonals
        return (
            min(b.x0 for b in members),
            min(b.y0 for b in members),
            max(b.x1 for b in members),
            max(b.y1 for b in members),
        )

    @property
    def complete(self) -> bool:
        x0, y0, x1, y1 = self.box
        shapes = sorted(classify(b) for b in self.sticks)
        return (
            shapes == ["horizontal", "horizontal", "vertical", "vertical"]
            and len(self.diagonals) == 1
            and abs((x1 - x0) - (y1 - y0)) <= 1
        )


@dataclass(frozen=True)
class HalfReading:
    complete: int  # complete squares (4 sides + diagonal)
    partial: tuple[int, ...]  # stick count of each incomplete square, left to right
    diagonals: int


@dataclass(frozen=True)
class TeamReading:
    halves: tuple[HalfReading, ...]  # malas, then buenas if there is a divider
    stroke: int | None  # thinnest stick, px
    overflow_marks: int  # glyph blobs right of the squares


def read_team(image: Image.Image, region: tuple[int, int, int, int]) -> TeamReading:
    """What a person would count in ``region``: squares, sticks, diagonals, halves."""
    found = blobs(image, region)
    kinds = [(classify(b), b) for b in found]
    dividers = [b for k, b in kinds if k == "divider"]
    sticks = [b for k, b in kinds if k in ("vertical", "horizontal")]
    diagonals = [b for k, b in kinds if k == "diagonal"]
    glyphs = [b for k, b in kinds if k == "glyph"]
    if len(dividers) > 1:
        raise AnalysisError(f"{len(dividers)} divider lines")

    # Sticks of one square meet corner to corner: their boxes are at most 1 px apart.
    parent = list(range(len(sticks)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(sticks):
        for j in range(i + 1, len(sticks)):
            if a.near(sticks[j], 1):
                parent[root(i)] = root(j)
    groups: dict[int, Square] = {}
    for i, stick in enumerate(sticks):
        groups.setdefault(root(i), Square([])).sticks.append(stick)
    squares = list(groups.values())
    for diagonal in diagonals:
        homes = [sq for sq in squares if diagonal.strictly_inside(*sq.box)]
        if len(homes) != 1:
            raise AnalysisError(f"diagonal at ({diagonal.x0},{diagonal.y0}) crosses no square")
        homes[0].diagonals.append(diagonal)

    halves: list[list[Square]] = [[], []] if dividers else [[]]
    if dividers:
        line_y = dividers[0].y0
        for sq in squares:
            _, top, _, bottom = sq.box
            if bottom < line_y - 1:
                halves[0].append(sq)
            elif top > line_y + 1:
                halves[1].append(sq)
            else:
                raise AnalysisError("a square touches the malas/buenas divider")
        if halves[0] and halves[1]:
            gap = min(sq.box[1] for sq in halves[1]) - max(sq.box[3] for sq in halves[0]) - 1
            if gap < 5:
                raise AnalysisError(f"malas and buenas only {gap} px apart")
    else:
        halves[0] = squares

    readings = []
    for half in halves:
        half.sort(key=lambda sq: sq.box[0])
        if len({sq.box[1] for sq in half if sq.complete}) > 1:
            raise AnalysisError("complete squares of one half are not in one row")
        for left, right in itertools.pairwise(half):
            if right.box[0] - left.box[2] - 1 < 2:
                raise AnalysisError("two squares less than 2 px apart")
        complete = [sq for sq in half if sq.complete]
        partial = [sq for sq in half if not sq.complete]
        if partial and complete and partial[0].box[0] < complete[-1].box[0]:
            raise AnalysisError("an incomplete square before a complete one")
        readings.append(
            HalfReading(
                complete=len(complete),
                partial=tuple(len(sq.sticks) + len(sq.diagonals) for sq in partial),
                diagonals=sum(len(sq.diagonals) for sq in half),
            )
        )
    right_edge = max((sq.box[2] for sq in squares), default=region[0])
    top_edge = min((sq.box[1] for sq in squares), default=region[3])
    marks = [g for g in glyphs if g.x0 > right_edge and g.y0 >= top_edge]
    stroke = min((min(b.width, b.height) for b in sticks), default=None)
    return TeamReading(tuple(readings), stroke, len(marks))


def expected_reading(points: int, target: int) -> tuple[HalfReading, ...]:
    halves = []
    for half in range(target // 15):
        in_half = max(0, min(points - 15 * half, 15))
        rest = in_half % 5
        halves.append(HalfReading(in_half // 5, (rest,) if rest else (), in_half // 5))
    return tuple(halves)


@pytest.mark.parametrize(("ours", "theirs", "target"), BOARDS)
def test_sticks_counted_from_pixels(ours: int, theirs: int, target: int) -> None:
    image = render_scoreboard_image(ours, theirs, target)
    for region, points in ((LEFT_REGION, ours), (RIGHT_REGION, theirs)):
        reading = read_team(image, region)
        assert reading.halves == expected_reading(points, target), (points, reading)
        assert reading.overflow_marks == 0
        if reading.stroke is not None:
            assert reading.stroke >= 2


@pytest.mark.parametrize(("ours", "theirs", "target"), OVERFLOW_BOARDS)
def test_overflow_marked(ours: int, theirs: int, target: int) -> None:
    image = render_scoreboard_image(ours, theirs, target)
    for region, points in ((LEFT_REGION, ours), (RIGHT_REGION, theirs)):
        reading = read_team(image, region)
        assert reading.halves == expected_reading(points, target)
        assert (reading.overflow_marks > 0) == (points > target), (points, reading)


def test_every_score_reads_differently() -> None:
    for target in (15, 30):
        readings = [
            read_team(render_scoreboard_image(points, 0, target), LEFT_REGION).halves
            for points in range(target + 1)
        ]
        assert len(set(readings)) == target + 1


# ------------------------------------------- the reader must notice a wrong drawing


def erase(image: Image.Image, blob: Blob) -> Image.Image:
    damaged = image.copy()
    for xy in blob.pixels:
        damaged.putpixel(xy, 0)
    return damaged


@pytest.mark.parametrize("points", [1, 4, 5, 9, 10, 15, 16, 23, 30])
def test_reader_notices_a_missing_stick(points: int) -> None:
    image = render_scoreboard_image(points, 0, 30)
    expected = expected_reading(points, 30)
    for blob in blobs(image, LEFT_REGION):
        if classify(blob) in ("glyph",):
            continue
        damaged = erase(image, blob)
        try:
            reading = read_team(damaged, LEFT_REGION)
        except AnalysisError:
            continue
        assert reading.halves != expected, f"erasing a {classify(blob)} went unnoticed"


def test_reader_notices_an_extra_stick() -> None:
    image = render_scoreboard_image(7, 0, 30)
    draw = ImageDraw.Draw(image)
    layout = score_layout((0, 9, 63, 47), 30)
    # the right side of the second square, which 7 points do not have yet
    draw.point(stick_pixels(layout, Stick(0, 1, StickKind.RIGHT)), fill=1)
    assert read_team(image, LEFT_REGION).halves != expected_reading(7, 30)


def test_reader_notices_halves_run_together() -> None:
    image = render_scoreboard_image(20, 0, 30)
    divider = next(b for b in blobs(image, LEFT_REGION) if classify(b) == "divider")
    try:
        reading = read_team(erase(image, divider), LEFT_REGION)
    except AnalysisError:
        return
    assert reading.halves != expected_reading(20, 30)


def test_reader_notices_a_diagonal_outside_its_square() -> None:
    image = render_scoreboard_image(5, 0, 30)
    diagonal = next(b for b in blobs(image, LEFT_REGION) if classify(b) == "diagonal")
    moved = erase(image, diagonal)
    for x, y in diagonal.pixels:
        moved.putpixel((x + 18, y), 1)  # into the empty second square
    with pytest.raises(AnalysisError):
        read_team(moved, LEFT_REGION)


# ------------------------------------------------------------ the pure helpers


def test_sticks_for_score_counts() -> None:
    for target in (15, 30):
        for points in range(target + 5):
            assert len(sticks_for_score(points, target)) == min(points, target)


def test_overflow_text() -> None:
    assert overflow_text(30, 30) is None
    assert overflow_text(33, 30) == "+3"
    assert overflow_text(16, 15) == "+1"
    assert overflow_text(200, 30) == "+99"


@pytest.mark.parametrize("target", [0, 10, 20, 31])
def test_unsupported_target(target: int) -> None:
    with pytest.raises(ValueError):
        sticks_for_score(3, target)


def test_negative_points_rejected() -> None:
    with pytest.raises(ValueError):
        render_scoreboard_image(-1, 0, 30)


def test_box_too_small() -> None:
    image = Image.new("1", (30, 20))
    with pytest.raises(ValueError):
        draw_score(ImageDraw.Draw(image), (0, 0, 30, 20), 3, 30)


def test_geometry_of_the_team_box() -> None:
    layout = score_layout((0, 9, 63, 47), 30)
    assert (layout.square, layout.stroke, layout.gap) == (15, 2, 3)
    assert layout.row_tops == (9, 31)
    assert layout.divider == (27, 0, 50)


def test_draw_score_paints_only_its_box() -> None:
    image = Image.new("1", SCREEN_SIZE, 1)
    draw_score(ImageDraw.Draw(image), (10, 5, 73, 43), 23, 30)
    outside = image.copy()
    ImageDraw.Draw(outside).rectangle((10, 5, 72, 42), fill=1)
    assert outside.convert("L").getextrema() == (255, 255)
    inside = image.crop((10, 5, 73, 43)).convert("L")
    assert inside.getextrema() == (0, 255)


def test_draw_score_scales_to_a_bigger_box() -> None:
    image = Image.new("1", SCREEN_SIZE)
    draw_score(ImageDraw.Draw(image), (0, 0, 128, 64), 22, 30)
    reading = read_team(image, (0, 0, 128, 64))
    assert reading.halves == expected_reading(22, 30)
    assert reading.stroke is not None and reading.stroke >= 2
