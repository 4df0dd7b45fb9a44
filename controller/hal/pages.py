"""A 1-bit screen in an OLED controller's own layout: page after page of 8 rows, one byte
per column, bit 0 the page's top row (SSD1306, SSD1309, SH1106).

``image_to_pages`` turns a mode "1" image into that layout; ``rotate_pages_180`` turns
such a frame half round (a panel mounted upside down) without going back to pixels.
The seat screens are built of page-aligned tiles, so ``controller.render.screen`` keeps
each tile's pages too and composes a frame from them (``render_pages``).
"""

from __future__ import annotations

from PIL import Image

__all__ = ["PAGE_HEIGHT", "image_to_pages", "pages_to_image", "rotate_pages_180"]

PAGE_HEIGHT = 8

_BIT_REVERSED = bytes(int(f"{value:08b}"[::-1], 2) for value in range(256))


def image_to_pages(image: Image.Image) -> bytes:
    """A mode "1" image in controller layout: page after page, one byte per column,
    bit 0 = the page's top row."""
    if image.mode != "1":
        raise ValueError(f"expected a mode '1' image, got {image.mode!r}")
    height = image.size[1]
    if height % PAGE_HEIGHT:
        raise ValueError(f"height {height} is not a whole number of pages")
    # Transposed, each column becomes one row of packed bytes, the top pixel as the MSB
    # of its first byte: that row holds the column's byte of every page in turn.
    pages = height // PAGE_HEIGHT
    columns = image.transpose(Image.Transpose.TRANSPOSE).tobytes().translate(_BIT_REVERSED)
    return b"".join([columns[page::pages] for page in range(pages)])


def pages_to_image(frame: bytes, width: int = 128) -> Image.Image:
    """The mode "1" image of a frame in controller layout (``image_to_pages`` undone)."""
    if not width or len(frame) % width:
        raise ValueError(f"a frame of {len(frame)} bytes is not whole pages of {width} columns")
    pages = len(frame) // width
    columns = bytearray(len(frame))
    for page in range(pages):
        columns[page::pages] = frame[page * width : (page + 1) * width]
    image = Image.frombytes(
        "1", (pages * PAGE_HEIGHT, width), bytes(columns.translate(_BIT_REVERSED))
    )
    return image.transpose(Image.Transpose.TRANSPOSE)


def rotate_pages_180(frame: bytes) -> bytes:
    """The frame of the image turned 180 degrees: the last column of the last page
    first, each byte's rows upside down."""
    return frame[::-1].translate(_BIT_REVERSED)
