"""Tiny fixed bitmap fonts, so that 1-bit renders are identical on every machine.

Pillow's default font depends on the Pillow version and on whether FreeType is
available, which would make pixel-exact golden images fragile.  These fonts are
drawn pixel by pixel instead:

* ``FONT_5X7``: digits, upper-case letters A-Z, the Spanish capitals ``Á É Í Ó Ú Ü Ñ``,
  space and ``+ - : . , ? ! ¿ ¡ / ( ) [ ] < > = ·`` (5 px wide, 7 px tall, 1 px between
  glyphs) - labels, readable at arm's length.
* ``FONT_TEXT``: the same glyphs set a little tighter for the seat screens' lines: a
  space advances 3 px (so words are 4 px apart) and the separator ``·`` 4 px.
* ``FONT_3X5``: digits and ``+`` (3 px wide, 5 px tall) - small annotations.

Spanish text is drawn upper-cased with its accents and Ñ (``controller.render.screen.plain``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from PIL import ImageDraw

__all__ = ["FONT_3X5", "FONT_5X7", "FONT_TEXT", "PixelFont"]


@dataclass(frozen=True)
class PixelFont:
    """A bitmap font: each glyph is ``height`` rows of ``width`` characters.

    Glyphs advance ``width + spacing`` px, except those listed in ``advances`` (a
    narrower space, say).
    """

    name: str
    width: int
    height: int
    spacing: int
    glyphs: dict[str, tuple[str, ...]]
    advances: Mapping[str, int] = field(default_factory=dict)

    _lit: dict[str, tuple[tuple[int, int], ...]] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        for char, rows in self.glyphs.items():
            if len(rows) != self.height or any(len(row) != self.width for row in rows):
                raise ValueError(f"{self.name}: glyph {char!r} is not {self.width}x{self.height}")
            # each glyph's lit cells, worked out once: drawing text only offsets them
            self._lit[char] = tuple(
                (dx, dy)
                for dy, row in enumerate(rows)
                for dx, cell in enumerate(row)
                if cell == "#"
            )

    def supports(self, text: str) -> bool:
        return all(char in self.glyphs for char in text)

    def advance(self, char: str) -> int:
        return self.advances.get(char, self.width + self.spacing)

    def text_width(self, text: str) -> int:
        if not text:
            return 0
        if not self.advances:
            return len(text) * (self.width + self.spacing) - self.spacing
        return sum(self.advance(char) for char in text) - self.spacing

    def pixels(self, text: str, origin: tuple[int, int] = (0, 0)) -> list[tuple[int, int]]:
        """The lit pixels of ``text`` with its top-left corner at ``origin``."""
        x0, y0 = origin
        lit: list[tuple[int, int]] = []
        left = x0
        glyphs = self._lit
        for char in text:
            try:
                cells = glyphs[char]
            except KeyError:
                raise ValueError(f"{self.name} has no glyph for {char!r}") from None
            lit.extend([(left + dx, y0 + dy) for dx, dy in cells])
            left += self.advance(char)
        return lit

    def draw(
        self,
        draw: ImageDraw.ImageDraw,
        origin: tuple[int, int],
        text: str,
        fill: int | str = "white",
    ) -> None:
        lit = self.pixels(text, origin)
        if lit:
            draw.point(lit, fill=fill)


_GLYPHS_5X7: dict[str, tuple[str, ...]] = {
    " ": (".....", ".....", ".....", ".....", ".....", ".....", "....."),
    "+": (".....", "..#..", "..#..", "#####", "..#..", "..#..", "....."),
    "-": (".....", ".....", ".....", "#####", ".....", ".....", "....."),
    "0": (".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."),
    "1": ("..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."),
    "2": (".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"),
    "3": ("#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."),
    "4": ("...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."),
    "5": ("#####", "#....", "####.", "....#", "....#", "#...#", ".###."),
    "6": ("..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."),
    "7": ("#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."),
    "8": (".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."),
    "9": (".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."),
    "A": (".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"),
    "B": ("####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."),
    "C": (".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."),
    "D": ("####.", "#...#", "#...#", "#...#", "#...#", "#...#", "####."),
    "E": ("#####", "#....", "#....", "####.", "#....", "#....", "#####"),
    "F": ("#####", "#....", "#....", "####.", "#....", "#....", "#...."),
    "G": (".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"),
    "H": ("#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"),
    "I": (".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."),
    "J": ("..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."),
    "K": ("#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"),
    "L": ("#....", "#....", "#....", "#....", "#....", "#....", "#####"),
    "M": ("#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"),
    "N": ("#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"),
    "O": (".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."),
    "P": ("####.", "#...#", "#...#", "####.", "#....", "#....", "#...."),
    "Q": (".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"),
    "R": ("####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"),
    "S": (".####", "#....", "#....", ".###.", "....#", "....#", "####."),
    "T": ("#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."),
    "U": ("#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."),
    "V": ("#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."),
    "W": ("#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."),
    "X": ("#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"),
    "Y": ("#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."),
    "Z": ("#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"),
    ":": (".....", "..#..", "..#..", ".....", "..#..", "..#..", "....."),
    ".": (".....", ".....", ".....", ".....", ".....", ".##..", ".##.."),
    ",": (".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."),
    "?": (".###.", "#...#", "....#", "...#.", "..#..", ".....", "..#.."),
    "!": ("..#..", "..#..", "..#..", "..#..", "..#..", ".....", "..#.."),
    "/": (".....", "....#", "...#.", "..#..", ".#...", "#....", "....."),
    "(": ("...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."),
    ")": (".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."),
    "[": (".###.", ".#...", ".#...", ".#...", ".#...", ".#...", ".###."),
    "]": (".###.", "...#.", "...#.", "...#.", "...#.", "...#.", ".###."),
    "<": ("...#.", "..#..", ".#...", "#....", ".#...", "..#..", "...#."),
    ">": (".#...", "..#..", "...#.", "....#", "...#.", "..#..", ".#..."),
    "=": (".....", ".....", "#####", ".....", "#####", ".....", "....."),
    # a separator between choices: FONT_TEXT advances it 4 px, 2 px blank each side
    "·": (".....", ".....", ".....", ".#...", ".....", ".....", "....."),
    # Spanish: the accent one dot on the top row, a blank row, the letter five rows tall
    # under it (so the accent stands apart); the tilde of the Ñ a wave over its first two
    # rows; inverted marks
    "Á": ("...#.", ".....", ".###.", "#...#", "#####", "#...#", "#...#"),
    "É": ("...#.", ".....", "#####", "#....", "####.", "#....", "#####"),
    "Í": ("...#.", ".....", ".###.", "..#..", "..#..", "..#..", ".###."),
    "Ó": ("...#.", ".....", ".###.", "#...#", "#...#", "#...#", ".###."),
    "Ú": ("...#.", ".....", "#...#", "#...#", "#...#", "#...#", ".###."),
    "Ü": (".#.#.", ".....", "#...#", "#...#", "#...#", "#...#", ".###."),
    "Ñ": (".##.#", "#..#.", "#...#", "##..#", "#.#.#", "#..##", "#...#"),
    "¡": ("..#..", ".....", "..#..", "..#..", "..#..", "..#..", "..#.."),
    "¿": ("..#..", ".....", "..#..", ".#...", "#....", "#...#", ".###."),
}

_GLYPHS_3X5: dict[str, tuple[str, ...]] = {
    "+": ("...", ".#.", "###", ".#.", "..."),
    "0": ("###", "#.#", "#.#", "#.#", "###"),
    "1": (".#.", "##.", ".#.", ".#.", "###"),
    "2": ("###", "..#", "###", "#..", "###"),
    "3": ("###", "..#", ".##", "..#", "###"),
    "4": ("#.#", "#.#", "###", "..#", "..#"),
    "5": ("###", "#..", "###", "..#", "###"),
    "6": ("###", "#..", "###", "#.#", "###"),
    "7": ("###", "..#", ".#.", ".#.", ".#."),
    "8": ("###", "#.#", "###", "#.#", "###"),
    "9": ("###", "#.#", "###", "..#", "###"),
}

FONT_5X7 = PixelFont("5x7", width=5, height=7, spacing=1, glyphs=_GLYPHS_5X7)
FONT_TEXT = PixelFont(
    "5x7 text", width=5, height=7, spacing=1, glyphs=_GLYPHS_5X7, advances={" ": 3, "·": 4}
)
FONT_3X5 = PixelFont("3x5", width=3, height=5, spacing=1, glyphs=_GLYPHS_3X5)
