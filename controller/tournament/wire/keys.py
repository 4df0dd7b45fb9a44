"""Per-table keys: derived from the tournament's secret, provisioned to each table.

The organiser holds one secret per tournament (``secret.key``, 32 random bytes in hex).
Each table gets only its own key, derived with HKDF-SHA256 (RFC 5869, written here
with the standard library's ``hmac``)::

    table_key = HKDF-SHA256(ikm=secret, salt="truco-table v1", info="table" 0 tournament 0 table)

so a table's key seals and authenticates that table's messages and records only: a
record sealed by another table, or in another tournament, never verifies as this
table's. The desk holds the secret and derives every table's key; a table never holds
the secret.

Key files are created owner-only (``0600``, the folder ``0700``); a table refuses to
start with a key file (or a configuration holding a key) that its group or others can
read (:func:`check_private`).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path
from typing import Final

from ...table.store import fsync_dir
from .seal import KeyConfigError, TournamentKey, load_key
from .topics import check_name

__all__ = [
    "SECRET_BYTES",
    "InsecureKeyFileError",
    "check_private",
    "derive_table_key",
    "hkdf_sha256",
    "load_private_key",
    "new_rekey_code",
    "new_secret",
    "rekey_code",
    "rekeyed",
    "table_key",
    "write_private",
]

SECRET_BYTES: Final = 32
_SALT: Final = b"truco-table v1"


class InsecureKeyFileError(KeyConfigError):
    """A key file (or a configuration holding a key) that others can read."""


def hkdf_sha256(ikm: bytes, *, salt: bytes, info: bytes, length: int = 32) -> bytes:
    """HKDF (RFC 5869) with HMAC-SHA256: extract, then expand to ``length`` bytes."""
    if not 0 < length <= 255 * 32:
        raise ValueError("HKDF-SHA256 gives 1 to 8160 bytes")
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    out, block = b"", b""
    for counter in range(1, -(-length // 32) + 1):
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        out += block
    return out[:length]


def derive_table_key(secret: bytes, tournament: str, table: str) -> bytes:
    """The key of ``table`` in ``tournament`` (32 bytes)."""
    if len(secret) < 16:
        raise KeyConfigError("the tournament secret is too short (at least 16 bytes)")
    info = b"table\0" + check_name("tournament", tournament).encode() + b"\0"
    info += check_name("table id", table).encode()
    return hkdf_sha256(secret, salt=_SALT, info=info)


def table_key(secret: TournamentKey, tournament: str, table: str) -> TournamentKey:
    """The table's key with its public id ``<secret's id>:<table>``."""
    return TournamentKey(
        derive_table_key(secret.key, tournament, table), f"{secret.key_id}:{table}"
    )


#: The letters of a re-key code: Crockford's base32 (no I, L, O, U: nothing to misread).
REKEY_ALPHABET: Final = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
#: A re-key code's letters: 16 of 32, 80 bits (a copy of the old key that sees a message
#: under the new one cannot search them all).
REKEY_LETTERS: Final = 16


def new_rekey_code() -> str:
    """A one-time code for :func:`rekeyed`: ``XXXX-XXXX-XXXX-XXXX``."""
    letters = "".join(secrets.choice(REKEY_ALPHABET) for _ in range(REKEY_LETTERS))
    return "-".join(letters[i : i + 4] for i in range(0, REKEY_LETTERS, 4))


def rekey_code(text: str) -> str:
    """A re-key code as typed (any case, dashes and spaces anywhere) in its canonical
    form; ``ValueError`` (Spanish) when it is not one."""
    letters = "".join(text.upper().replace("-", "").split())
    letters = letters.translate(str.maketrans("OIL", "011"))  # what reads like a digit is one
    if len(letters) != REKEY_LETTERS or any(c not in REKEY_ALPHABET for c in letters):
        raise ValueError(
            f"El código {text.strip()[:40]!r} no es un código de clave: son {REKEY_LETTERS} "
            "letras y números, como ABCD-EFGH-JKMN-PQRS (el que muestra la página del organizador)"
        )
    return "-".join(letters[i : i + 4] for i in range(0, REKEY_LETTERS, 4))


def rekeyed(key: bytes, code: str) -> bytes:
    """A table's new key after a key conflict: ``HMAC-SHA256(its key, "truco-table
    rekey v1" 0 code)``. The desk gives the organiser ``code``; someone at the real table
    types it there; a copy of the old key without the code cannot follow."""
    info = b"truco-table rekey v1\0" + rekey_code(code).encode("ascii")
    return hmac.new(key, info, hashlib.sha256).digest()


def new_secret() -> bytes:
    return secrets.token_bytes(SECRET_BYTES)


def write_private(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` readable by its owner only (``0600``), replacing it
    atomically and durably (the file synced, renamed, the folder synced); the folder is
    created ``0700`` if missing."""
    p = Path(path)
    if not p.parent.exists():
        p.parent.mkdir(parents=True, mode=0o700)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, p)
    fsync_dir(p.parent)  # the rename itself survives a power cut
    return p


def check_private(path: str | os.PathLike[str]) -> None:
    """Raise :class:`InsecureKeyFileError` when the group or others may read or write
    ``path`` (a key must be the owner's alone: ``chmod 600``)."""
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except OSError as e:
        raise KeyConfigError(f"no puedo leer {p}: {e.strerror or e}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise InsecureKeyFileError(
            f"{p}: otros pueden leer este archivo de clave (modo {stat.S_IMODE(mode):03o}); "
            f"corré chmod 600 {p}"
        )


def load_private_key(path: str | os.PathLike[str], *, kind: str = "auto") -> TournamentKey:
    """:func:`~controller.tournament.wire.seal.load_key`, refusing a key file others can read:
    a key file itself, the key file a configuration names (``key_file``), or a
    configuration that holds the key (``key = "..."``)."""
    import tomllib

    p = Path(path)
    if kind == "config" or p.suffix.lower() == ".toml":
        try:
            section = tomllib.loads(p.read_text(encoding="utf-8")).get("tournament", {})
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            section = {}
        if not isinstance(section, dict):
            section = {}
        name = section.get("key_file")
        if isinstance(name, str) and name:
            check_private(p.parent / Path(name).expanduser())
        if "key" in section:
            check_private(p)
        return load_key(p, kind="config")
    check_private(p)
    return load_key(p, kind="key-file" if kind == "key-file" else "auto")
