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
import errno
import os
from typing import Final

__all__ = ["DEFAULT_LIMIT", "TextFileError", "decode_text", "os_reason", "read_text_file"]

DEFAULT_LIMIT: Final = 4 * 1024 * 1024  # bytes: far more than any record or key file


class TextFileError(ValueError):
    """A file that cannot be read as the small UTF-8 text file it should be."""


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit} bytes"


#: Why a file cannot be opened, in the words of the person who has to fix it (the
#: system's own ``strerror`` is English).
_REASONS: Final = {
    errno.ENOENT: "no existe: revisá el nombre y la carpeta",
    errno.EACCES: "no tengo permiso para leerlo: revisá su dueño y permisos (ls -l)",
    errno.EPERM: "no tengo permiso para leerlo: revisá su dueño y permisos (ls -l)",
    errno.ENOTDIR: "una parte de la ruta no es una carpeta: revisá la ruta",
    errno.EISDIR: "es una carpeta, no un archivo: nombrá el archivo",
    errno.ELOOP: "la ruta da vueltas entre enlaces: revisá los enlaces simbólicos",
    errno.ENAMETOOLONG: "el nombre es demasiado largo: revisá la ruta",
    errno.EIO: "el disco no responde (error de entrada/salida): revisá la tarjeta o el disco",
}


#: Why a file cannot be written (an export), the same way.
_WRITE_REASONS: Final = {
    errno.ENOENT: "no existe esa carpeta: revisá la ruta",
    errno.ENOTDIR: "una parte de la ruta no es una carpeta: revisá la ruta",
    errno.EACCES: "no tengo permiso para escribir ahí: elegí otra carpeta",
    errno.EPERM: "no tengo permiso para escribir ahí: elegí otra carpeta",
    errno.EISDIR: "es una carpeta: nombrá el archivo (por ejemplo mano3.gif)",
    errno.ENOSPC: "no queda lugar en el disco",
    errno.EROFS: "el disco es de solo lectura: elegí otra carpeta",
}


def os_reason(e: OSError, *, writing: bool = False) -> str:
    """Why ``e`` stopped a read (or a write), in Spanish with what to check."""
    reasons = _WRITE_REASONS if writing else _REASONS
    if e.errno in reasons:
        return reasons[e.errno]
    code = errno.errorcode.get(e.errno, str(e.errno)) if e.errno is not None else "?"
    return f"el sistema no lo deja {'escribir' if writing else 'leer'} (error {code})"


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
            f"{where}:{line}: no es texto UTF-8 (byte 0x{data[e.start]:02x}): "
            "guardalo como UTF-8 desde el editor"
        ) from None


def read_text_file(
    path: str | os.PathLike[str], *, limit: int = DEFAULT_LIMIT, what: str = "un archivo de texto"
) -> str:
    """The file's text (see the module docstring); ``what`` names it in messages, in
    Spanish with its article (``"un archivo de clave"``)."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            data = f.read(limit + 1)
    except IsADirectoryError:
        raise TextFileError(f"{name} es una carpeta, no {what}: nombrá el archivo") from None
    except OSError as e:
        raise TextFileError(f"no puedo leer {name}: {os_reason(e)}") from None
    except ValueError:  # an embedded NUL in the path
        raise TextFileError(
            f"no puedo leer {name!r}: el nombre tiene un carácter nulo; revisá la ruta"
        ) from None
    if len(data) > limit:
        raise TextFileError(f"{name}: pesa más de {_size(limit)}: no es {what}")
    return decode_text(data, name)
