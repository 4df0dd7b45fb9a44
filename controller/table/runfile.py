"""A JSON file in the table's runtime folder (``/run/truco-table``), replaced whole: a
reader sees the old file or the new one, never half of one. Not synced: the folder is in
memory and lost at a power cut anyway."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["replace_json"]


def replace_json(path: Path, data: Any, *, prefix: str, **dump: Any) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it (mode 0644);
    ``OSError`` when the folder refuses, with no temporary file left behind."""
    fd, tmp = tempfile.mkstemp(prefix=prefix, dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, **dump)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
