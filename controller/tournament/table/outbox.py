"""A table's persistent outbox: every message it must deliver to the broker, on disk.

Two files in the outbox directory (by default ``<state_dir>/outbox/``):

``journal.jsonl``
    Append-only, one JSON object a line: ``{"seq": N, "topic": "events", "retain":
    false, "payload": "<the exact payload>", "c": "XXXXXXXX"}``, where ``c`` is the
    CRC-32 (hex) of the line's own bytes without it (the same object closed after
    ``payload``); it is checked at open, so a flipped digit is damage, never a renumbered
    entry (lines written before the checks, none of them with ``c``, are read as they
    are, but only before the first checked line). ``seq`` runs 1, 2, 3, ... without gaps
    for the life of the directory (across games and restarts); ``topic`` is relative to
    the table's prefix. A line is written whole with one ``write`` and ``fsync``-ed before
    ``append`` returns, so a message the table produced survives a power cut; a short or
    failed write is cut back to the last good length (or, if even that fails, the
    journal is rewritten before the next line), so no half line is ever followed by
    another.
``acked``
    The highest seq such that the broker acknowledged every message up to it (PUBACK of
    QoS 1), rewritten atomically from time to time (``save_acked``). Losing progress here
    only means messages are sent again; the desk drops duplicates by ``(table, seq)``.

**Damage never reuses a seq.** On opening, a torn last line (text without its newline:
the power went while it was written, so it was never sent) is cut off quietly; a last
line that lost only its newline but checks (its ``c`` matches, its seq the next) was
written whole and may have been sent: it is kept, and the newline put back; so is
every entry whose newline before or after it was damaged (replaced by another byte, or
lost: two entries on one line): the check decides, each part from one ``{"seq":`` to
the next is the entry it is when its check matches. Any other
damage (a line that is not an entry, a zeroed page, a seq out of order, a gap, an
``acked`` beyond the journal) may have destroyed messages the desk already has, so their
numbers are never given again: every good entry is kept where it was, the numbers the
damage may have held (up to one per 49 bytes of a damaged end, and at least ``acked``)
are filled with *lost* messages (``filler``; the publisher's are signed events of kind
``lost``), the journal is rewritten with them, the damaged original is kept in
``damaged/`` and the journal says so. The desk sees every seq once and no gap waits
for ever.

Delivery is at least once, in seq order, from the journal; the desk makes it exactly
once by de-duplicating and re-ordering by seq. Nothing here touches the network.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import json
import logging
import math
import os
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ...table.store import fsync_dir
from ..wire.topics import PAYLOAD_VERSION

__all__ = ["Entry", "Outbox"]

log = logging.getLogger(__name__)

JOURNAL = "journal.jsonl"
ACKED = "acked"
DAMAGED = "damaged"
MAX_DAMAGED = 20
#: the shortest line an entry can be: ``{"seq":1,"topic":"","retain":false,"payload":""}``
MIN_LINE = 49
_CHECK_KEY = b',"c":"'  # a line's check: ``,"c":"XXXXXXXX"}`` closes it
_CHECK_LEN = len(_CHECK_KEY) + 8 + 2

#: ``filler(seq, before)``: the ``(topic, payload)`` journaled for a seq that damage lost;
#: ``before`` is the entry just before it (``None`` for seq 1)
Filler = Callable[[int, "Entry | None"], tuple[str, bytes]]


def lost_message(seq: int, before: Entry | None) -> tuple[str, bytes]:
    """The default filler: an unsigned event of kind ``lost``."""
    payload = {"v": PAYLOAD_VERSION, "seq": seq, "kind": "lost", "text": ""}
    return "events", json.dumps(payload, separators=(",", ":")).encode("utf-8")


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
    ``lost``: the seqs the last opening filled because damage may have held them.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        fsync: bool = True,
        filler: Filler = lost_message,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self.filler = filler
        self.clock = clock
        self.journal_path = self.dir / JOURNAL
        self.acked_path = self.dir / ACKED
        self._lock = threading.Lock()
        self._entries: list[Entry] = []
        self._good_len = 0  # bytes of the journal known whole and synced
        self._broken = False  # a failed write could not be cut back: rewrite first
        self.dropped: str | None = None  # the torn tail cut off when opening
        self.damage: str | None = None  # what damage the last opening found
        self.lost: list[int] = []
        acked = self._read_acked()
        self._load(acked)
        self.acked = min(acked, self.last_seq)
        self._saved_acked = self.acked
        self._acked_above: set[int] = set()
        new = not self.journal_path.exists()
        self._fd = os.open(self.journal_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if new and fsync:
            fsync_dir(self.dir)

    # ------------------------------------------------------------------ opening

    def _load(self, acked: int) -> None:
        try:
            data = self.journal_path.read_bytes()
        except FileNotFoundError:
            return
        pieces = data.split(b"\n")
        tail = pieces.pop()
        kept: list[Entry] = []
        why: str | None = None
        after_last = 0  # bytes of bad lines after the last good entry
        pos = good = 0
        checked = False  # a checked line was read: every later line must check too
        joined = 0  # newlines damaged between two whole entries (each entry kept)
        for raw in pieces:
            start = pos
            pos += len(raw) + 1
            entry, has_check = self._parse(raw, checked)
            checked = checked or has_check
            parts: list[tuple[Entry | None, int]] = [(entry, len(raw) + 1)]
            if entry is None and (checked or has_check):
                found = _split_joined(raw)
                if found is not None:
                    parts = [(e, n) for e, n in found]
                    parts[-1] = (parts[-1][0], parts[-1][1] + 1)  # with its own newline
                    joined += sum(1 for e, _ in found if e is not None)
            for entry, size in parts:
                if entry is None or entry.seq <= (kept[-1].seq if kept else 0):
                    why = why or f"a damaged line at byte {start}"
                    after_last += size
                    start += size
                    continue
                start += size
                if entry.seq != (kept[-1].seq if kept else 0) + 1:
                    why = why or f"seq {entry.seq} after {kept[-1].seq if kept else 0}"
                kept.append(entry)
                after_last = 0
                good = pos
        whole, _ = self._parse(tail, True) if tail and why is None else (None, False)
        tail_entries = [whole] if whole is not None else []
        if tail and why is None and whole is None and checked:
            found = _split_joined(tail)
            if found is not None and all(e is not None for e, _ in found):
                tail_entries = [e for e, _ in found if e is not None]
        newline_lost = bool(tail_entries) and all(
            e.seq == (kept[-1].seq if kept else 0) + 1 + i for i, e in enumerate(tail_entries)
        )
        if newline_lost:
            # only the newline was lost: the entry was written whole (it checks)
            log.warning("%s: the last entry lost its newline; kept", self.journal_path)
            kept.extend(tail_entries)
            joined += len(tail_entries) if whole is None else 0
            tail = b""
        if joined and why is None:
            log.warning(
                "%s: %d newline(s) between whole entries damaged; every entry kept "
                "(its check matches), the newlines put back",
                self.journal_path,
                joined,
            )
        if tail:
            if _clean_fragment(tail) and why is None:
                self.dropped = tail.decode("utf-8", errors="replace")
                log.warning(
                    "%s: cut off a torn end of %d bytes (never sent)", self.journal_path, len(tail)
                )
            else:
                why = why or "a damaged end"
                after_last += len(tail)
        last = kept[-1].seq if kept else 0
        if why is None and acked > last:
            why = f"acked {acked} is beyond the journal's last seq {last}"
        if why is None:
            self._entries = kept
            self._good_len = good
            if self.dropped is not None and not joined:
                self._truncate(good)
            elif newline_lost or joined:
                self._rewrite()  # the newline put back
            return
        high = max(last, acked, last + math.ceil(after_last / MIN_LINE))
        by_seq = {e.seq: e for e in kept}
        self.lost = [seq for seq in range(1, high + 1) if seq not in by_seq]
        before: Entry | None = None
        for seq in range(1, high + 1):
            entry = by_seq.get(seq)
            if entry is None:
                topic, payload = self.filler(seq, before)
                entry = by_seq[seq] = Entry(seq, topic, payload)
            elif seq not in self.lost:
                before = entry
            self._entries.append(entry)
        self.damage = why
        aside = self._keep_aside(data)
        log.error(
            "%s is damaged (%s): %d good message(s) kept, seq %s filled as lost "
            "(never given again); the original is kept as %s",
            self.journal_path,
            why,
            len(kept),
            _ranges(self.lost),
            aside,
        )
        self._rewrite()

    def _keep_aside(self, data: bytes) -> Path:
        folder = self.dir / DAMAGED
        folder.mkdir(exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self.clock()))
        target, n = folder / f"journal-{stamp}.jsonl", 1
        while target.exists():
            n += 1
            target = folder / f"journal-{stamp}-{n}.jsonl"
        atomic_write(target, data, fsync=self.fsync)
        for old in sorted(folder.glob("journal-*.jsonl"), key=lambda p: p.stat().st_mtime_ns)[
            :-MAX_DAMAGED
        ]:
            with contextlib.suppress(OSError):
                old.unlink()
        return target

    def _truncate(self, length: int) -> None:
        with open(self.journal_path, "r+b") as f:
            f.truncate(length)
            f.flush()
            if self.fsync:
                os.fsync(f.fileno())

    def _rewrite(self) -> None:
        """The whole journal from memory, atomically (temporary file, fsync, rename)."""
        data = b"".join(_line(e) for e in self._entries)
        atomic_write(self.journal_path, data, fsync=self.fsync)
        self._good_len = len(data)
        self._broken = False

    @staticmethod
    def _parse(line: bytes, checked: bool) -> tuple[Entry | None, bool]:
        """The entry of a stored line (``None``: damaged) and whether it had a check;
        ``checked``: a check is required (a checked line came before)."""
        has_check = line.endswith(b'"}') and line[-_CHECK_LEN:-10] == _CHECK_KEY
        if has_check:
            body = line[:-_CHECK_LEN] + b"}"
            try:
                crc = int(line[-10:-2].decode("ascii"), 16)
            except ValueError:
                return None, True
            if line[-10:-2] != f"{crc:08x}".encode() or zlib.crc32(body) != crc:
                return None, True
            line = body
        elif checked:
            return None, False
        try:
            obj = json.loads(line.decode("utf-8"))
            seq, topic, payload = obj["seq"], obj["topic"], obj["payload"]
            retain = bool(obj.get("retain", False))
        except (ValueError, KeyError, TypeError, UnicodeDecodeError, RecursionError):
            return None, has_check
        if (
            not isinstance(seq, int)
            or isinstance(seq, bool)
            or seq < 1
            or not isinstance(topic, str)
            or not isinstance(payload, str)
        ):
            return None, has_check
        try:
            return Entry(seq, topic, payload.encode("utf-8"), retain), has_check
        except UnicodeEncodeError:  # a lone surrogate
            return None, has_check

    def _read_acked(self) -> int:
        try:
            text = self.acked_path.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            return 0
        return int(text) if text.isdigit() and len(text) < 16 else 0

    # ------------------------------------------------------------------ writing

    @property
    def last_seq(self) -> int:
        return len(self._entries)

    def next_seq(self) -> int:
        return len(self._entries) + 1

    def append(self, topic: str, payload: bytes, *, retain: bool = False) -> Entry:
        """Journal one message (its payload already carries ``seq == next_seq()``).

        Raises ``OSError`` when the disk refuses; the seq is then not used (nothing of
        it stays in the journal) and the next message takes it.
        """
        with self._lock:
            entry = Entry(len(self._entries) + 1, topic, payload, retain)
            data = _line(entry)
            if self._broken:
                self._close_fd()
                self._rewrite()
                self._fd = os.open(self.journal_path, os.O_WRONLY | os.O_APPEND)
            try:
                written = os.write(self._fd, data)
                if written != len(data):
                    raise OSError(errno.ENOSPC, f"short write ({written} of {len(data)} bytes)")
            except OSError:
                try:
                    os.ftruncate(self._fd, self._good_len)
                except OSError:
                    self._broken = True
                raise
            if self.fsync:
                try:
                    os.fsync(self._fd)
                except OSError:
                    self._broken = True  # in doubt after a failed fsync: rewrite first
                    raise
            self._good_len += len(data)
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

    def _close_fd(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.save_acked()
        with self._lock:
            self._close_fd()


def _line(entry: Entry) -> bytes:
    line = json.dumps(
        {
            "seq": entry.seq,
            "topic": entry.topic,
            "retain": entry.retain,
            "payload": entry.payload.decode("utf-8"),
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )
    body = line.encode("utf-8")
    return body[:-1] + b'%s%08x"}\n' % (_CHECK_KEY, zlib.crc32(body))


_ENTRY_START = b'{"seq":'


def _split_joined(raw: bytes) -> list[tuple[Entry | None, int]] | None:
    """A stored line that is not one entry, read as the entries it holds when the
    newline between two of them was damaged (replaced by another byte, or lost): each
    part from one ``{"seq":`` to the next (or to the end) is an entry if its check
    matches, with or without one last byte (the damaged newline). Returns ``(entry or
    None, bytes)`` for every part (the bytes before the first start are one part), or
    ``None`` when no part is an entry. The check decides: a part whose check does not
    match is damage."""
    starts = []
    at = raw.find(_ENTRY_START)
    while at >= 0:
        starts.append(at)
        at = raw.find(_ENTRY_START, at + 1)
    if not starts:
        return None
    parts: list[tuple[Entry | None, int]] = []
    if starts[0]:
        parts.append((None, starts[0]))
    bounds = [*starts, len(raw)]
    for a, b in itertools.pairwise(bounds):
        segment = raw[a:b]
        entry, has_check = Outbox._parse(segment, True)
        if entry is None and len(segment) > 1:
            entry, has_check = Outbox._parse(segment[:-1], True)  # the damaged newline
        parts.append((entry if has_check else None, len(segment)))
    if all(e is None for e, _ in parts):
        return None
    return parts


def _clean_fragment(data: bytes) -> bool:
    """A write the power cut: text, without NULs or other control characters."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.end != len(data) or e.reason != "unexpected end of data":
            return False
        text = data[: e.start].decode("utf-8", errors="replace")  # cut inside a character
    return all(c >= " " or c == "\t" for c in text) and "\ufffd" not in text


def _ranges(seqs: list[int]) -> str:
    if not seqs:
        return "none"
    out, start, prev = [], seqs[0], seqs[0]
    for s in [*seqs[1:], None]:
        if s is not None and s == prev + 1:
            prev = s
            continue
        out.append(f"{start}" if start == prev else f"{start}..{prev}")
        if s is not None:
            start = prev = s
    return ", ".join(out)
