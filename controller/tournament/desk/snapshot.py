"""The desk's folded state beside its journals, so that a desk that restarts (killed,
its power cut) is back in a second or two however long the night has been.

``snapshot.bin`` in the desk's folder holds what replaying the folder gives at one
moment: the tables and the results :class:`~.state.DeskState` folded from
``events.jsonl`` (up to a byte offset of it) and the tournament the
:class:`~.organiser.Organiser` folded from ``journal.jsonl`` (up to a line of it, named
by that line's SHA-256). A desk starting on the folder takes it only when it still
fits the files: ``events.jsonl`` at least that long and its bytes up to that offset
hashing to the same SHA-256; the journal checked whole as always (every line's MAC, the chain) and
its line N hashing to the same digest. Then it replays only what came after. Anything
else (no snapshot, another tournament's, a key that does not sign it, a journal that
no longer fits) and the desk replays everything, as it always did: **the journals stay
the truth**; the snapshot only saves the time of folding them again.

The file is a pickle signed with HMAC-SHA256 under a key derived from the
tournament's secret (checked before anything is unpickled: a file nobody with the
secret wrote is never read), written whole (a new file renamed over the old, synced).
A desk without the secret keeps no snapshot. The desk writes one every
:data:`SNAPSHOT_S` seconds, once it started, and when it stops.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..wire.keys import hkdf_sha256

__all__ = [
    "SNAPSHOT_S",
    "Snapshot",
    "dump",
    "events_digest",
    "load_snapshot",
    "snapshot_key",
    "write_snapshot",
]

log = logging.getLogger(__name__)

NAME: Final = "snapshot.bin"
SNAPSHOT_S: Final = 30.0
_MAGIC: Final = b"truco-desk-snapshot v1\n"
_SALT: Final = b"truco-table v1"


def snapshot_key(secret: bytes, tournament: str) -> bytes:
    """The key that signs a desk's snapshot (another ``info`` than any other key)."""
    return hkdf_sha256(secret, salt=_SALT, info=b"desk-snapshot\0" + tournament.encode())


@dataclass
class Snapshot:
    """What the desk folded, and where in its files it had got to."""

    tournament: str
    events_offset: int  # bytes of events.jsonl folded into ``state``
    events_digest: str  # the SHA-256 of those bytes (:func:`events_digest`)
    state: dict[str, Any]  # DeskState's folded fields
    journal_lines: int = 0  # lines of journal.jsonl folded into ``competition``
    journal_digest: str = ""  # the SHA-256 of that last line ("" for none)
    competition: dict[str, Any] | None = None  # the Organiser's folded fields


def dump(snap: Snapshot) -> bytes:
    """``snap`` as the file keeps it (done with the desk's lock held: the state is not
    changing under it; the write can wait until the lock is let go)."""
    return pickle.dumps(snap, protocol=pickle.HIGHEST_PROTOCOL)


def write_snapshot(
    folder: Path, key: bytes, body: bytes, digest: str, *, fsync: bool = True
) -> int:
    """Write a dumped snapshot whole and signed, with the digest of ``events.jsonl`` up
    to its offset (:func:`events_digest`, made once the lock was let go); its size."""
    signed = digest.encode("ascii") + body
    mac = hmac.new(key, _MAGIC + signed, hashlib.sha256).digest()
    path = folder / NAME
    tmp = path.with_name(NAME + ".tmp")
    with open(tmp, "wb") as f:
        f.write(_MAGIC + mac + signed)
        f.flush()
        if fsync:
            os.fsync(f.fileno())
    os.replace(tmp, path)
    return len(body)


def load_snapshot(folder: Path, key: bytes, tournament: str) -> Snapshot | None:
    """The snapshot in ``folder`` if there is one, signed with ``key``, of
    ``tournament``, and fitting ``events.jsonl``; None otherwise (the desk replays
    everything; why is logged)."""
    path = folder / NAME
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        log.warning("desk: %s cannot be read (%s): replaying the journals", path, e)
        return None
    head = len(_MAGIC)
    if not data.startswith(_MAGIC) or len(data) < head + 32:
        log.warning("desk: %s is not a desk snapshot: replaying the journals", path)
        return None
    mac, signed = data[head : head + 32], data[head + 32 :]
    digest, body = signed[:64].decode("ascii", "replace"), signed[64:]
    if not hmac.compare_digest(mac, hmac.new(key, _MAGIC + signed, hashlib.sha256).digest()):
        log.warning("desk: %s is not signed with this tournament's key: replaying the "
                    "journals", path)  # fmt: skip
        return None
    try:
        snap = pickle.loads(body)  # signed with the tournament's key: checked above
    except Exception as e:  # a snapshot of an older program: the journals again
        log.warning("desk: %s cannot be read back (%s): replaying the journals", path, e)
        return None
    if not isinstance(snap, Snapshot) or snap.tournament != tournament:
        log.warning("desk: %s is another tournament's: replaying the journals", path)
        return None
    snap.events_digest = digest
    if events_digest(folder, snap.events_offset) != snap.events_digest:
        log.warning("desk: %s does not fit events.jsonl any more: replaying the journals", path)
        return None
    return snap


def events_digest(folder: Path, offset: int) -> str | None:
    """The SHA-256 of the first ``offset`` bytes of ``events.jsonl`` (None: it is
    shorter). The file only grows, so this can be done without the desk's lock."""
    digest = hashlib.sha256()
    left = offset
    try:
        with open(folder / "events.jsonl", "rb") as f:
            while left > 0:
                chunk = f.read(min(left, 1 << 20))
                if not chunk:
                    return None
                digest.update(chunk)
                left -= len(chunk)
    except FileNotFoundError:
        return None if offset else digest.hexdigest()
    return digest.hexdigest()
