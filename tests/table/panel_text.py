"""A seat panel's frame read back as text, from its pixels alone: the rows under the
score (the strip's page, lines 1 and 2, or the inverted banner over them), each glyph
matched against the panel's text font. What a player reads, not what the service meant.
The strip's marks (mano, dealer, bazas) are no text: their page reads as ``?``s."""

from __future__ import annotations

from functools import cache

from PIL import Image

from controller.render.pixelfont import FONT_TEXT
from controller.render.screen import LINE_TEXT_ROW, LINE_TOPS, PAGE, STRIP_TOP

__all__ = ["PanelDisplay", "card_text", "panel_text", "read_band"]

_H = FONT_TEXT.height


@cache
def _glyphs() -> list[tuple[str, int, tuple[int, ...]]]:
    """(char, lead, columns): each glyph's column bit patterns and its first lit column."""
    out = []
    for char, rows in FONT_TEXT.glyphs.items():
        cols = tuple(
            sum(1 << y for y in range(_H) if rows[y][x] == "#") for x in range(FONT_TEXT.width)
        )
        lit = [i for i, c in enumerate(cols) if c]
        if lit:  # up to its last lit column: a narrow glyph's cell overlaps the next one
            out.append((char, lit[0], cols[: lit[-1] + 1]))
    # wider, busier glyphs first: a glyph is never taken for a part of another
    out.sort(key=lambda g: -sum(bin(c).count("1") for c in g[2]))
    return out


def read_band(image: Image.Image, top: int, *, inverted: bool = False) -> str:
    """The text drawn with its glyphs' top row at ``top`` (``?`` for what is no glyph)."""
    width = image.width
    px = image.load()
    assert px is not None
    lit = 0 if inverted else 1

    def column(x: int) -> int:
        if not 0 <= x < width:
            return 0
        rows = [y for y in range(_H) if 0 <= top + y < image.height]
        return sum(1 << y for y in rows if (px[x, top + y] != 0) == bool(lit))

    cols = [column(x) for x in range(width)]
    text: list[str] = []
    x = 0
    expected: int | None = None  # where the next glyph would start after the last one
    while x < width:
        if not cols[x]:
            x += 1
            continue
        found = _glyph_at(cols, x)
        if found is None:
            text.append("?")
            x += 1
            expected = None
            continue
        char, origin, pattern = found
        if expected is not None and origin > expected:
            text.append(" " * max(1, round((origin - expected) / FONT_TEXT.advance(" "))))
        text.append(char)
        expected = origin + FONT_TEXT.advance(char)
        x = origin + len(pattern)
    return "".join(text).strip()


def _glyph_at(cols: list[int], x: int) -> tuple[str, int, tuple[int, ...]] | None:
    """The glyph whose first lit column is column ``x``: (char, its origin, columns)."""
    for char, lead, pattern in _glyphs():
        origin = x - lead
        if all(
            (cols[origin + i] if 0 <= origin + i < len(cols) else 0) == pattern[i]
            for i in range(len(pattern))
        ):
            return char, origin, pattern
    return None


def _inverted(image: Image.Image, top: int, bottom: int) -> bool:
    px = image.load()
    assert px is not None
    cells = [px[x, y] != 0 for y in range(top, bottom) for x in range(image.width)]
    return sum(cells) > len(cells) // 2


def _lit_outside(image: Image.Image, top: int, bottom: int, bands: set[int]) -> bool:
    """Every row from ``top`` to ``bottom`` outside ``bands`` fully lit: an inverted banner
    holds its lines and nothing else (a strip alert over two inverted lines does not)."""
    px = image.load()
    assert px is not None
    rows = [y for y in range(top, bottom) if y not in bands]
    return all(px[x, y] != 0 for y in rows for x in range(image.width))


def panel_text(image: Image.Image) -> tuple[str, ...]:
    """What the panel says under the score: the banner's lines, or (strip, line 1, line
    2); an empty line reads ``""``."""
    image = image.convert("1")
    if _inverted(image, STRIP_TOP, image.height):  # the banner over rows 40-63
        height = image.height - STRIP_TOP
        step = _H + 3
        for n in (1, 2, 3):
            top = STRIP_TOP + (height - (_H + step * (n - 1))) // 2
            lines = tuple(read_band(image, top + i * step, inverted=True) for i in range(n))
            bands = {top + i * step + y for i in range(n) for y in range(_H)}
            if (
                all(lines)
                and "?" not in "".join(lines)
                and _lit_outside(image, STRIP_TOP, image.height, bands)
            ):
                return lines
        # not a banner: three inverted lines (a lasting alert over a banner's two)
    strip_inverted = _inverted(image, STRIP_TOP, STRIP_TOP + PAGE)
    # the strip's words are the capitals alone (FONT_STRIP: no marks' row), one row higher
    strip = read_band(image, STRIP_TOP + (LINE_TEXT_ROW if strip_inverted else -1),
                      inverted=strip_inverted)  # fmt: skip
    lines = tuple(
        read_band(image, t + LINE_TEXT_ROW, inverted=_inverted(image, t, t + PAGE))
        for t in LINE_TOPS
    )
    return (strip, *lines)


def card_text(image: Image.Image) -> tuple[str, ...]:
    """A whole-panel card (the match card, what comes next), one text a page."""
    image = image.convert("1")
    return tuple(
        read_band(image, top + LINE_TEXT_ROW, inverted=_inverted(image, top, top + PAGE))
        for top in range(0, image.height, PAGE)
    )


class PanelDisplay:
    """A seat's panel as a seat node gets it (frames in the controller's page layout,
    ``show_pages``) or as the Pi's own bus gets it (``show``); ``text()`` reads the
    last frame back from its pixels."""

    def __init__(self, *, pages: bool = True) -> None:
        self.frame: Image.Image | None = None
        self.frames = 0
        if not pages:
            self.show_pages = None  # type: ignore[assignment]

    def show(self, image: Image.Image) -> None:
        self.frame, self.frames = image.convert("1"), self.frames + 1

    def show_pages(self, frame: bytes) -> None:
        width, pages = 128, len(frame) // 128
        image = Image.new("1", (width, pages * PAGE))
        px = image.load()
        assert px is not None
        for page in range(pages):
            for x in range(width):
                byte = frame[page * width + x]
                for bit in range(PAGE):
                    if byte >> bit & 1:
                        px[x, page * PAGE + bit] = 1
        self.frame, self.frames = image, self.frames + 1

    def text(self) -> str:
        assert self.frame is not None, "nothing shown yet"
        return " | ".join(panel_text(self.frame))

    def card(self) -> tuple[str, ...]:
        assert self.frame is not None, "nothing shown yet"
        return card_text(self.frame)
