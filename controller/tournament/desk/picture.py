"""The desk's pictures: a team's score drawn in matchsticks, as a PNG for the web page."""

from __future__ import annotations

import functools
import io

__all__ = ["sticks_png"]


@functools.lru_cache(maxsize=256)
def sticks_png(points: int, target: int) -> bytes:
    """One team's score drawn by :mod:`controller.render.matchsticks`, twice the size."""
    from PIL import Image, ImageDraw

    from ...render.matchsticks import draw_score

    image = Image.new("1", (63, 38), 0)
    draw_score(ImageDraw.Draw(image), (0, 0, 63, 38), points, target, fill=1)
    buf = io.BytesIO()
    image.resize((126, 76), Image.Resampling.NEAREST).save(buf, format="PNG")
    return buf.getvalue()
