"""A table's persistent outbox: every message it must deliver to the broker, on disk.

Two files in the outbox directory (by default ``<state_dir>/outbox/``):

``journal.jsonl``
    Append-only, one JSON object a line: ``{"seq": N, "topic": "events", "retain":
    false, "payload": "<the exact payload>"}``. ``seq`` runs 1, 2, 3, ... without gaps
    for the life of the directory (across games and restarts); ``topic`` is relative to
    the table's prefix. A line is written and ``fsync``-ed before ``append`` returns, so
    a message the table produced survives a power cut. On opening, a torn last line (no
    newline, not JSON, a seq out of order) is cut off; that message was never handed to
    the network.
``acked``
    The highest seq such that the broker acknowledged every message up to it (PUBACK of
    QoS 1), rewritten atomically from time to time (``save_acked``). Losing progress here
    only means messages are sent again; the desk drops duplicates by ``(table, seq)``.

Delivery is at least once, in seq order, from the journal; the desk makes it exactly
once by de-duplicating and re-ordering by seq. Nothing here touches the network.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..table.store import fsync_dir

__all__ = ["Entry", "Outbox"]

log = logging.getLogger(__name__)

JOURNAL = "journal.jsonl"
ACKED = "acked"


@dataclass(frozen=True, slots=True)
class Entry:
    seq: int
    topic: str  # relative to the table's prefix: "events", "records/<game>"
    payload: bytes
    retain: bool = False


def atomic_write(path: Path, data: bytes, *, fsync: bool = True) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        if fsync:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)
    if fsync:
        fsync_dir(path.parent)


class Outbox:
    """``journal.jsonl`` and ``acked`` in ``directory`` (see the module docstring).

    Thread-safe: the table's loop appends, the network threads read and acknowledge.
    """

    def __init__(self, directory: str | os.PathLike[str], *, fsync: bool = True) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self.journal_path = self.dir / JOURNAL
        self.acked_path = self.dir / ACKED
        self._lock = threading.Lock()
        self._entries: list[Entry] = []
        self.dropped: str | None = None  # the torn tail cut off when opening
        self._load()
        self.acked = min(self._read_acked(), self.last_seq)
        self._saved_acked = self.acked
        self._acked_above: set[int] = set()
        new = not self.journal_path.exists()
        self._fd = os.open(self.journal_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if new and fsync:
            fsync_dir(self.dir)

    # ------------------------------------------------------------------ opening

    def _load(self) -> None:
        try:
            data = self.journal_path.read_bytes()
        except FileNotFoundError:
            return
        good = 0  # bytes of whole, valid lines
        pos = 0
        while pos < len(data):
            end = data.find(b"\n", pos)
            if end < 0:
                break
            entry = self._parse(data[pos:end])
            if entry is None or entry.seq != len(self._entries) + 1:
                break
            self._entries.append(entry)
            pos = end + 1
            good = pos
        if good < len(data):
            self.dropped = data[good:].decode("utf-8", errors="replace")
            log.warning(
                "%s: cut off a torn end of %d bytes (never sent)",
                self.journal_path,
                len(data) - good,
            )
            with open(self.journal_path, "r+b") as f:
                f.truncate(good)
                f.flush()
                os.fsync(f.fileno())

    @staticmethod
    def _parse(line: bytes) -> Entry | None:
        try:
            obj = json.loads(line.decode("utf-8"))
            seq, topic, payload = obj["seq"], obj["topic"], obj["payload"]
            retain = bool(obj.get("retain", False))
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            return None
        if not isinstance(seq, int) or not isinstance(topic, str) or not isinstance(payload, str):
            return None
        return Entry(seq, topic, payload.encode("utf-8"), retain)

    def _read_acked(self) -> int:
        try:
            text = self.acked_path.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            return 0
        return int(text) if text.isdigit() else 0

    # ------------------------------------------------------------------ writing

    @property
    def last_seq(self) -> int:
        return len(self._entries)

    def next_seq(self) -> int:
        return len(self._entries) + 1

    def append(self, topic: str, payload: bytes, *, retain: bool = False) -> Entry:
        """Journal one message (its payload already carries ``seq == next_seq()``)."""
        with self._lock:
            entry = Entry(len(self._entries) + 1, topic, payload, retain)
            line = json.dumps(
                {
                    "seq": entry.seq,
                    "topic": topic,
                    "retain": retain,
                    "payload": payload.decode("utf-8"),
                },
                ensure_ascii=False,
                separators=(",", ":"),
            )
            data = (line + "\n").encode("utf-8")
            written = 0
            while written < len(data):
                written += os.write(self._fd, data[written:])
            if self.fsync:
                os.fsync(self._fd)
            self._entries.append(entry)
            return entry

    # ------------------------------------------------------------------ reading

    def get(self, seq: int) -> Entry | None:
        with self._lock:
            return self._entries[seq - 1] if 1 <= seq <= len(self._entries) else None

    def entries(self, first: int = 1, last: int | None = None) -> list[Entry]:
        """Entries ``first..last`` (inclusive, clipped to what exists), in seq order."""
        with self._lock:
            end = len(self._entries) if last is None else min(last, len(self._entries))
            return self._entries[max(first, 1) - 1 : max(end, 0)]

    def unacked(self) -> list[Entry]:
        """What the broker has not acknowledged yet, in seq order."""
        with self._lock:
            return [e for e in self._entries[self.acked :] if e.seq not in self._acked_above]

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries())

    def __len__(self) -> int:
        return len(self._entries)

    # ------------------------------------------------------------------ acknowledgements

    def ack(self, seq: int) -> None:
        """The broker acknowledged ``seq``; ``acked`` moves over every contiguous one."""
        with self._lock:
            if seq <= self.acked or seq > len(self._entries):
                return
            self._acked_above.add(seq)
            while self.acked + 1 in self._acked_above:
                self.acked += 1
                self._acked_above.discard(self.acked)

    def save_acked(self) -> bool:
        """Write ``acked`` if it moved since the last save; True when written."""
        with self._lock:
            acked = self.acked
        if acked == self._saved_acked:
            return False
        atomic_write(self.acked_path, f"{acked}\n".encode("ascii"), fsync=self.fsync)
        self._saved_acked = acked
        return True

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.save_acked()
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
