"""Seat displays in a terminal: a 1-bit image as Unicode braille (2x4 pixels a character).

A 128x64 OLED frame becomes 64 columns by 16 rows, pixel for pixel.
"""

from __future__ import annotations

import codecs
import unicodedata
from collections.abc import Sequence

from PIL import Image

__all__ = ["ASCII_ERRORS", "braille", "side_by_side", "to_ascii"]

#: the codec error handler that writes what an ASCII terminal cannot as :func:`to_ascii`
ASCII_ERRORS = "truco-ascii"

_ASCII = {
    "─": "-", "│": "|", "┌": "+", "┐": "+", "└": "+", "┘": "+", "·": "-", "—": "-",
    "–": "-", "→": "->", "ª": "a", "º": "o", "¡": "", "¿": "", "…": "...", "×": "x",
    "⊓": "n", "□": "o", "⧄": "X", "«": '"', "»": '"', "“": '"', "”": '"', "’": "'",
}  # fmt: skip

# braille dot bits by (dx, dy) inside a 2x4 cell
_DOTS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))


def braille(image: Image.Image) -> list[str]:
    img = image.convert("1")
    width, height = img.size
    px = img.load()
    assert px is not None
    rows = []
    for top in range(0, height, 4):
        line = []
        for left in range(0, width, 2):
            bits = 0
            for dy in range(4):
                for dx in range(2):
                    x, y = left + dx, top + dy
                    if x < width and y < height and px[x, y]:
                        bits |= _DOTS[dy][dx]
            line.append(chr(0x2800 + bits))
        rows.append("".join(line))
    return rows


def side_by_side(blocks: Sequence[list[str]], titles: Sequence[str], gap: str = "  ") -> list[str]:
    """Frames next to each other, each under its title, in a box."""
    width = max((len(b[0]) for b in blocks if b), default=0)
    out = [gap.join(f"┌{t[:width].center(width, '─')}┐" for t in titles)]
    for i in range(max(len(b) for b in blocks)):
        out.append(gap.join(f"│{b[i] if i < len(b) else ' ' * width}│" for b in blocks))
    out.append(gap.join(f"└{'─' * width}┘" for _ in blocks))
    return out


def _braille_ascii(ch: str) -> str:
    """A braille cell (2x4 pixels) as one ASCII character, darker as more dots are lit."""
    dots = bin(ord(ch) - 0x2800).count("1")
    return " .:+#"[(dots + 1) // 2]


def to_ascii(text: str) -> str:
    """``text`` for a terminal that writes ASCII only: accents dropped (``jugás`` →
    ``jugas``), the box and the signs in ASCII, the braille panels in shades."""
    out = []
    for ch in text:
        if ch.isascii():
            out.append(ch)
        elif "\u2800" <= ch <= "\u28ff":
            out.append(_braille_ascii(ch))
        elif ch in _ASCII:
            out.append(_ASCII[ch])
        else:
            base = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
            out.append(base or "?")
    return "".join(out)


def _ascii_errors(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return to_ascii(error.object[error.start : error.end]), error.end


codecs.register_error(ASCII_ERRORS, _ascii_errors)
