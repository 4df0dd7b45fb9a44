"""Fixed bitmap fonts, so that 1-bit renders are identical on every machine.

Pillow's default font depends on the Pillow version and on whether FreeType is
available, which would make pixel-exact golden images fragile.  The panel's letters are
X11's public-domain misc-fixed 6x10 bitmap font (Debian's ``xfonts-base``), read from its
PCF file with Pillow's PCF reader and drawn pixel by pixel:

* ``FONT_TEXT``: the seat screens' lines, 8 rows: the marks' row, then capitals 7 px tall;
  the accented capitals ``Á É Í Ó Ú Ü Ñ`` (and the rest of Latin-1's) are capitals 6 px
  tall under their mark, ``¿ ¡`` hang from the top. Every glyph 5 px wide and 1 px
  apart, except a space (3 px: words 4 px apart) and the separator ``·`` (4 px).
* ``FONT_STRIP``: the same capitals without the marks' row (7 rows) for the status strip,
  whose underline is the page's last row; ``FONT_5X7``: those, every glyph 6 px apart,
  for the score's labels.
* ``FONT_3X5``: digits and ``+`` (3 px wide, 5 px tall) - small annotations, our own.

Spanish text is drawn upper-cased with its accents and Ñ (``controller.render.screen.plain``);
``tests/render/test_panel_font.py`` renders every string a panel can show and fails on a
letter the font does not have.
"""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path

from PIL import ImageDraw, PcfFontFile

__all__ = [
    "FONT_3X5",
    "FONT_5X7",
    "FONT_STRIP",
    "FONT_TEXT",
    "PANEL_FONT_PACKAGE",
    "PanelFontMissing",
    "PixelFont",
    "find_panel_font",
    "load_pcf_glyphs",
]


@dataclass(frozen=True, eq=False)  # one font is one object: hashed by identity (caches)
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
        return all(map(self.glyphs.__contains__, text))  # each character looked up in C

    def advance(self, char: str) -> int:
        return self.advances.get(char, self.width + self.spacing)

    def text_width(self, text: str) -> int:
        if not text:
            return 0
        if not self.advances:
            return len(text) * (self.width + self.spacing) - self.spacing
        # each character's advance read in C (``map`` over ``get`` with the default)
        default = repeat(self.width + self.spacing)
        return sum(map(self.advances.get, text, default)) - self.spacing

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


# ------------------------------------------------------------------ the panel's letters

#: X11's "misc-fixed" 6x10 (``-misc-fixed-medium-r-normal--10-100-75-75-c-60-iso8859-1``),
#: public domain, in Debian's ``xfonts-base`` (a dependency of the table's install:
#: scripts/install-pi; CI installs it too). Its capitals are 7 px tall with the baseline on
#: its row 7, and its accented capitals (Á É Í Ó Ú Ü Ñ and the rest of Latin-1) draw the
#: mark on rows 0-1 over a capital 6 px tall: capitals, not small letters, in one 8-row page
#: (Spleen 6x12 and Terminus 12 need 9 and 10 rows for an accented capital: more than a
#: page; Spleen 5x8 has ASCII only).
PANEL_FONT_FILES = ("6x10-ISO8859-1.pcf.gz", "6x10.pcf.gz")
PANEL_FONT_DIRS = (
    "/usr/share/fonts/X11/misc",  # Debian, Raspberry Pi OS, Ubuntu
    "/usr/share/X11/fonts/misc",  # Fedora, Arch
    "/usr/local/share/fonts/X11/misc",
    "/opt/X11/share/fonts/misc",  # XQuartz
)
#: where a machine keeps the font elsewhere (a folder holding one of PANEL_FONT_FILES)
PANEL_FONT_ENV = "TRUCO_TABLE_FONT_DIR"
PANEL_FONT_PACKAGE = "xfonts-base"
_PANEL_ROWS = 8  # the cap height plus the accents' row: one page of the panel
_PANEL_WIDTH = 5  # the glyph's own columns; the sixth is the space between letters


class PanelFontMissing(RuntimeError):
    """The panel font is not installed (Debian's xfonts-base)."""

    def __init__(self, looked_in: Sequence[str]) -> None:
        super().__init__(
            "Falta la letra de las pantallitas (la 6x10 de X11, paquete "
            f"{PANEL_FONT_PACKAGE}): instalala con `sudo apt-get install {PANEL_FONT_PACKAGE}` "
            f"(la busqué en {', '.join(looked_in)}; {PANEL_FONT_ENV}=CARPETA indica otra)"
        )


def find_panel_font() -> Path:
    """The installed 6x10 PCF file (``TRUCO_TABLE_FONT_DIR`` first, then the usual
    folders); ``PanelFontMissing`` when there is none."""
    folders = [os.environ[PANEL_FONT_ENV]] if os.environ.get(PANEL_FONT_ENV) else []
    folders += PANEL_FONT_DIRS
    for folder in folders:
        for name in PANEL_FONT_FILES:
            path = Path(folder, name)
            if path.is_file():
                return path
    raise PanelFontMissing(folders)


def _panel_chars() -> str:
    """What the panel may draw: printable ASCII and Latin-1, less the small letters
    (every text is upper-cased first; ``controller.render.screen.plain``)."""
    codes = [*range(0x20, 0x7F), *range(0xA0, 0x100)]
    return "".join(chr(code) for code in codes if not chr(code).islower())


def load_pcf_glyphs(path: Path) -> dict[str, tuple[str, ...]]:
    """The panel's glyphs from a 6x10 PCF file, each ``_PANEL_ROWS`` rows of
    ``_PANEL_WIDTH`` cells (``#`` lit), read with Pillow's PCF reader.

    The cell is the font's top 8 rows: the marks' row, then the capitals. What reaches
    the two descender rows is fitted: a glyph whose top row is blank and that goes one
    row down is raised a row (the font's round ``. , : ;``, which sit one row low), and
    the capital Q loses the tail under its baseline (the stroke inside it stays). A glyph
    that still does not fit (``Ç``'s cedilla, ``_``, the wide guillemets) is left out:
    ``plain`` then draws its letter without the mark, or a space.
    """
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    font = PcfFontFile.PcfFontFile(io.BytesIO(data))
    glyphs: dict[str, tuple[str, ...]] = {}
    for char in _panel_chars():
        glyph = font.glyph[ord(char)] if ord(char) < len(font.glyph) else None
        if glyph is None:
            continue
        (_advance, _), (x0, y0, _x1, _y1), _source, bitmap = glyph
        ascent = -y0  # PCF cells: y0 is minus the font's ascent (8 for 6x10)
        lit = {
            (x + x0, y + 8 - ascent)
            for y in range(bitmap.size[1])
            for x in range(bitmap.size[0])
            if bitmap.getpixel((x, y))
        }
        if char == "Q":
            lit = {(x, y) for x, y in lit if y < _PANEL_ROWS}
        elif lit and min(y for _, y in lit) > 0 and max(y for _, y in lit) == _PANEL_ROWS:
            lit = {(x, y - 1) for x, y in lit}
        if char == "\u00b7":  # the separator: its dot one column left, for its 4 px advance
            lit = {(x - 1, y) for x, y in lit}
        if any(not (0 <= x < _PANEL_WIDTH and 0 <= y < _PANEL_ROWS) for x, y in lit):
            continue
        glyphs[char] = tuple(
            "".join("#" if (x, y) in lit else "." for x in range(_PANEL_WIDTH))
            for y in range(_PANEL_ROWS)
        )
    return glyphs


def _capitals_only(glyphs: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """The glyphs with nothing on the marks' row, that row taken off: 7 rows, for the
    labels and the strip, where no accent is ever written."""
    return {char: rows[1:] for char, rows in glyphs.items() if "#" not in rows[0]}


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

_PANEL_GLYPHS = load_pcf_glyphs(find_panel_font())
_NARROW = {" ": 3, "\u00b7": 4}

#: the seat screens' lines: 8 rows (the marks' row on top), a narrow space and separator
FONT_TEXT = PixelFont(
    "6x10 text", width=5, height=8, spacing=1, glyphs=_PANEL_GLYPHS, advances=_NARROW
)
#: the status strip's words (M3, D2, TRUCO): the same capitals, 7 rows (no accent there)
FONT_STRIP = PixelFont(
    "6x10 strip",
    width=5,
    height=7,
    spacing=1,
    glyphs=_capitals_only(_PANEL_GLYPHS),
    advances=_NARROW,
)
#: the score's labels (NOSOTROS, ELLOS): the capitals, 7 rows, every glyph 6 px apart
FONT_5X7 = PixelFont("6x10 capitals", width=5, height=7, spacing=1, glyphs=FONT_STRIP.glyphs)
FONT_3X5 = PixelFont("3x5", width=3, height=5, spacing=1, glyphs=_GLYPHS_3X5)
