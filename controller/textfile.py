"""Reading a small text file a person gave on the command line: one way for every command.

Game records, key files, deck registries and configurations are all a few kilobytes of
UTF-8. :func:`read_text_file` reads at most ``limit`` bytes (``/dev/zero`` or a huge file
is refused, never read without end), drops a UTF-8 byte-order mark (editors on Windows
write one), names the line of the first byte that is not UTF-8, and says plainly when
the path is a folder or cannot be read. Every failure is a :class:`TextFileError` whose
message is one line for the person at the terminal. The text is otherwise returned
exactly as stored (no newline translation).
"""

from __future__ import annotations

import codecs
import os
from typing import Final

__all__ = ["DEFAULT_LIMIT", "TextFileError", "decode_text", "read_text_file"]

DEFAULT_LIMIT: Final = 4 * 1024 * 1024  # bytes: far more than any record or key file


class TextFileError(ValueError):
    """A file that cannot be read as the small UTF-8 text file it should be."""


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit} bytes"


def decode_text(data: bytes, where: str) -> str:
    """``data`` as UTF-8 (a leading byte-order mark dropped), or a ``TextFileError``
    naming the line of the first byte that is not UTF-8."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise TextFileError(
            f"{where}:{line}: not UTF-8 text (byte 0x{data[e.start]:02x})"
        ) from None


def read_text_file(
    path: str | os.PathLike[str], *, limit: int = DEFAULT_LIMIT, what: str = "text file"
) -> str:
    """The file's text (see the module docstring); ``what`` names it in messages."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            data = f.read(limit + 1)
    except IsADirectoryError:
        raise TextFileError(f"{name} is a folder, not a {what}") from None
    except OSError as e:
        raise TextFileError(f"cannot read {name}: {e.strerror or e}") from None
    except ValueError as e:  # an embedded NUL in the path
        raise TextFileError(f"cannot read {name!r}: {e}") from None
    if len(data) > limit:
        raise TextFileError(f"{name}: larger than {_size(limit)}: not a {what}")
    return decode_text(data, name)
