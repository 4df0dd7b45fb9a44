"""Golden images: compare pixel for pixel, or write them when asked.

Regenerate deliberately with ``TRUCO_REGEN_GOLDEN=1 pytest tests/render``: the tests then
write the PNGs and skip. A missing golden fails.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PIL import Image, ImageChops

REGEN = os.environ.get("TRUCO_REGEN_GOLDEN") == "1"


def same(a: Image.Image, b: Image.Image) -> bool:
    """Pixel-identical; compared as "L" (Pillow 13 keeps mode "1" pixels as 0/1 or 0/255
    depending on where the image came from)."""
    return ImageChops.difference(a.convert("L"), b.convert("L")).getbbox() is None


def check_golden(image: Image.Image, path: Path, what: str = "") -> None:
    """``image`` equals the golden PNG at ``path`` (or becomes it, when regenerating)."""
    if REGEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        image.save(path)
        pytest.skip(f"regenerated {path.name}")
    if not path.exists():
        pytest.fail(f"missing golden {path}; create it with TRUCO_REGEN_GOLDEN=1")
    with Image.open(path) as golden:
        assert same(image, golden), f"{path.name}: {what}" if what else path.name
