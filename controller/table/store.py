"""The game on disk: ``current.truco`` in the state directory, a log of checked lines.

The record is treated the way careful storage engines treat their log:

- **A write is whole or absent.** Every accepted statement is written with one
  ``write`` (a hand and its deal are one statement) and synced (``fsync``) before the
  displays show it. A short write or a failing write is cut back (``ftruncate``) to the
  last good length before anything else is written, so the file never holds a line
  twice or half a line followed by another (the full-disk ``0 envi0 envido``). A failed
  ``fsync`` leaves the page cache in doubt: the next write replaces the whole file
  (temporary file, ``fsync``, ``rename``, directory ``fsync``) instead of appending.
- **Every line can be checked.** Each line ends with a comment `` #c=XXXXXXXX``: the
  CRC-32 of the line's text chained with the previous line's (``zlib.crc32(text,
  prev)``, starting at 0). It is a comment, so ``replay`` and ``parse`` read the record
  unchanged, with the same line numbers. A file written before the checks (no line has
  one) is read by the parser alone.
- **Restoring never raises.** Lines are split exactly where the parser splits them
  (``str.splitlines``): a line holding any other line break (VT, FF, NEL, U+2028, CR...),
  a NUL, a byte that is not UTF-8 or a check that does not match ends the good part of
  the record. A torn last line (the power went while it was written: text without its
  final newline) is dropped quietly; a last line that lost only its newline but checks
  (its check matches) was written whole: it is kept, and the newline put back. Anything
  else that is cut off is *damage*: the
  original file is kept aside in ``damaged/`` for the referee, the table goes on from the
  last good line, and ``damage`` says what happened (the service shows it on every seat
  and logs it). A hand whose deal was recorded but that saw no action yet is dropped
  too, and its deal is read again.
- **The disk may say no.** When the state directory is full, read-only or failing
  (``ENOSPC``, ``EROFS``, ``EIO``), the game goes on in memory: nothing here raises
  ``OSError``; ``problem`` says what is wrong and ``flush`` (called from the service's
  loop) retries until the disk takes the record again, then archives what finished in
  the meantime, in order.
- **Archive.** A finished game is hard-linked into ``archive/`` under a timestamped name
  and then unlinked from ``current.truco`` (a cut between the two is finished on the next
  start: the file's link count says it is already archived). An archive is never
  overwritten, and only a record that replays goes there: before the link, the file is
  read back and must be exactly what the game wrote; on the next start after a cut
  between link and unlink, it must pass the line checks and replay, or it is moved from
  ``archive/`` to ``damaged/`` (the damage notice told as for any damaged record) and
  the table goes on from its sound prefix.
- **Archive policy** (``ArchivePolicy``). Past ``max_games`` games or ``max_bytes``
  bytes, and while the card's free space is under the reserve (checked after an
  archive, and when a write meets a full card, so the current game's record finds
  room), archived games are deleted in this order: the oldest first, by modification
  time (the game's last record write) and then by name. Never deleted: the newest
  archived game, the game this store archived last (the one just archived), and an
  archived file that is still the current record (``current.truco``'s own inode, a cut
  between link and unlink). When only those are left, the policy stops: the card stays
  full and the game goes on in memory.

Every system call goes through a ``Disk`` (``disk=``), so tests can fail any one of
them, or watch their order.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..transcript import TranscriptError, parse, replay

__all__ = [
    "ArchivePolicy",
    "Damage",
    "Disk",
    "GameStore",
    "check_lines",
    "fsync_dir",
    "plain",
    "render_lines",
    "unsound",
]

log = logging.getLogger(__name__)

CURRENT = "current.truco"
DAMAGED = "damaged"
MAX_DAMAGED = 20  # damaged originals kept for the referee (oldest deleted first)

#: The line breaks ``str.splitlines`` (so ``transcript.parse``) knows besides LF.
LINE_BREAKS = frozenset("\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_CHECK_RE = re.compile(r" #c=([0-9a-f]{8})\Z")
_CHECKS_RE = re.compile(r" #c=[0-9a-f]{8}$", re.MULTILINE)


class Disk:
    """The system calls of the record store, one method each (tests wrap them)."""

    def open_append(self, path: Path) -> int:
        return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def open_new(self, path: Path) -> int:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)

    def write(self, fd: int, data: bytes) -> int:
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def truncate(self, fd: int, length: int) -> None:
        os.ftruncate(fd, length)

    def close(self, fd: int) -> None:
        os.close(fd)

    def read(self, path: Path) -> bytes:
        return path.read_bytes()

    def stat(self, path: Path) -> os.stat_result:
        return os.stat(path)

    def listdir(self, path: Path) -> list[str]:
        return os.listdir(path)

    def mkdir(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)

    def replace(self, src: Path, dst: Path) -> None:
        os.replace(src, dst)

    def link(self, src: Path, dst: Path) -> None:
        os.link(src, dst)

    def unlink(self, path: Path) -> None:
        os.unlink(path)

    def space(self, path: Path) -> tuple[int, int]:
        """The file system's (size, free bytes for us) where ``path`` is."""
        st = os.statvfs(path)
        return st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize

    def fsync_dir(self, path: Path) -> None:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def fsync_dir(path: Path) -> None:
    """Make a rename or a new file in ``path`` durable (best effort)."""
    with contextlib.suppress(OSError):
        Disk().fsync_dir(path)


@dataclass(frozen=True, slots=True)
class ArchivePolicy:
    """How much of the archive is kept: the newest games within both bounds, and never
    so many that the card's free space falls under the reserve: the smaller of
    ``reserve_fraction`` of the card and ``reserve_bytes`` (10 % or 64 MiB by default;
    a small card keeps its tenth, a large one 64 MiB), so that the current game's
    record always finds room."""

    max_games: int = 1000
    max_bytes: int = 64 * 1024 * 1024
    reserve_fraction: float = 0.10
    reserve_bytes: int = 64 * 1024 * 1024

    def reserve(self, card_bytes: int) -> int:
        """The free space to keep on a card of ``card_bytes``."""
        return min(int(card_bytes * self.reserve_fraction), self.reserve_bytes)


@dataclass(frozen=True, slots=True)
class Damage:
    """What restoring cut off a damaged record.

    ``first_bad_line``: the 1-based line of the file where the good part ended;
    ``kept``: the good lines the game goes on from; ``dropped_bytes``: what was cut;
    ``aside``: where the damaged original was kept (``None`` while the disk refuses).
    """

    first_bad_line: int
    kept: int
    dropped_bytes: int
    why: str
    aside: Path | None


def _crc(text: str, prev: int) -> int:
    return zlib.crc32(text.encode("utf-8"), prev)


def render_lines(lines: Iterable[str], crc: int = 0) -> tuple[bytes, int]:
    """``lines`` as stored (each with its chained check and a newline); the last check."""
    out = []
    for text in lines:
        crc = _crc(text, crc)
        out.append(f"{text} #c={crc:08x}\n")
    return "".join(out).encode("utf-8"), crc


def plain(text: str) -> str:
    """A stored record without its line checks (what was recorded, line for line)."""
    return _CHECKS_RE.sub("", text)


def _clean(text: str) -> str:
    """A statement's line as the parser will split it: no stray line breaks."""
    if text.isprintable():  # no line break, no NUL (neither is printable): as it is
        return text
    return "".join(" " if c in LINE_BREAKS or c == "\x00" else c for c in text)


#: what a stored line may not hold: a line break (``LINE_BREAKS``), a control character
#: but the tab, DEL, or U+FFFD (what a bad byte was decoded as); one search, in C (a record
#: is checked whole before it is archived, at the game's end)
_BAD_CHAR_RE = re.compile("[\x00-\x08\x0a-\x1f\x7f\ufffd" + "".join(sorted(LINE_BREAKS)) + "]")


def _bad_char(text: str) -> str | None:
    """Why ``text`` cannot be a stored line (its first bad character), or None."""
    found = _BAD_CHAR_RE.search(text)
    if found is None:
        return None
    c = found.group()
    if c in LINE_BREAKS:
        return f"a line break U+{ord(c):04X} inside a line"
    return f"a control character U+{ord(c):04X}"


def check_lines(data: bytes) -> tuple[list[str], int, str | None, bool]:
    """Split a stored record into its good lines (checks removed).

    Returns ``(lines, good_bytes, why, torn)``: ``why`` says why the good part ended
    early (``None`` when every complete line is good); ``torn`` is True when all that
    follows the good part is one unterminated, clean fragment (a write the power cut).
    """
    pieces = data.split(b"\n")
    tail = pieces.pop()
    texts: list[str | None] = []
    for raw in pieces:
        try:
            texts.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            texts.append(None)
    checked = any(t is not None and _CHECK_RE.search(t) for t in texts)
    if not checked and tail:  # a record of one line, its newline lost
        with contextlib.suppress(UnicodeDecodeError):
            checked = _CHECK_RE.search(tail.decode("utf-8")) is not None
    lines: list[str] = []
    good = 0
    crc = 0
    why: str | None = None
    for number, text in enumerate(texts, start=1):
        if text is None:
            why = f"line {number}: not UTF-8"
            break
        bad = _bad_char(text)
        if bad is not None:
            why = f"line {number}: {bad}"
            break
        if checked:
            m = _CHECK_RE.search(text)
            body = text[: m.start()] if m else text
            if m is None or int(m.group(1), 16) != _crc(body, crc):
                why = f"line {number}: check does not match"
                break
            crc = _crc(body, crc)
            text = body
        lines.append(text)
        good += len(pieces[number - 1]) + 1
    torn = False
    if why is None and tail:
        try:
            fragment = tail.decode("utf-8")
        except UnicodeDecodeError:
            fragment = None
        m = _CHECK_RE.search(fragment) if checked and fragment is not None else None
        if fragment is not None and m is not None and _bad_char(fragment) is None:
            body = fragment[: m.start()]
            if int(m.group(1), 16) == _crc(body, crc):  # whole: only its newline was lost
                lines.append(body)
                good += len(tail)
            else:
                torn = True
        elif fragment is not None and _bad_char(fragment) is None:
            torn = True
        else:
            why = f"line {len(texts) + 1}: a damaged unterminated end"
    return lines, good, why, torn


def unsound(data: bytes) -> str | None:
    """Why a stored record cannot go to the archive (``None``: it can): a line check
    that fails, a torn or damaged end, nothing recorded, or a statement ``replay``
    refuses."""
    lines, good, why, torn = check_lines(data)
    if why is not None:
        return why
    if torn or good != len(data):
        return "a torn end"
    if not any(line.split("#", 1)[0].strip() for line in lines):
        return "no statement"
    try:
        replay(parse("\n".join(lines) + "\n"))
    except TranscriptError as e:
        return f"line {e.line}: {e.message}"
    return None


class GameStore:
    """``current.truco``, ``archive/`` and ``damaged/`` in ``state_dir``."""

    def __init__(
        self,
        state_dir: str | os.PathLike[str],
        *,
        clock: Callable[[], float] = time.time,
        disk: Disk | None = None,
        policy: ArchivePolicy = ArchivePolicy(),
    ) -> None:
        self.dir = Path(state_dir)
        self.path = self.dir / CURRENT
        self.archive_dir = self.dir / "archive"
        self.damaged_dir = self.dir / DAMAGED
        self.clock = clock
        self.disk = disk or Disk()
        self.policy = policy
        #: the games not archived yet, oldest first; the last one is the current game
        self._games: list[list[str]] = [[]]
        # what current.truco holds of _games[0]: that many lines (None: unknown, rewrite)
        self._on_disk: int | None = 0
        self._good_len = 0  # bytes of those lines
        self._crc = 0  # the check of the last of them
        self._fd: int | None = None
        self._linked: Path | None = None  # _games[0] linked into the archive, not unlinked
        self._aside: tuple[bytes, str] | None = None  # a damaged original still to keep
        self._moved_aside: Path | None = None  # the damaged original already in damaged/
        self._moved_why = ""  # why it was taken out of the archive
        self._unreadable = False  # current.truco could not be read: move it aside first
        self.problem: str | None = None
        self.faults = 0  # disk errors met so far
        self.dropped: str | None = None  # what the last restore cut off (text)
        self.damage: Damage | None = None  # the last restore found damage
        self.last_archived: Path | None = None
        self._last_read: bytes | None = None

    # ------------------------------------------------------------------ the record

    @property
    def lines(self) -> list[str]:
        """The current game's lines (a copy)."""
        return list(self._games[-1])

    @property
    def pending(self) -> bool:
        """Something the disk has not taken yet (lines, a rewrite or an archive)."""
        return (
            len(self._games) > 1
            or self._on_disk != len(self._games[0])
            or self._aside is not None
            or self._unreadable
        )

    def text(self) -> str:
        """The current game's record as it is (or will be) stored."""
        return render_lines(self._games[-1])[0].decode("utf-8")

    # ------------------------------------------------------------------ reading

    def restore(self) -> list[str] | None:
        """The current game's good lines (``None`` if there is none). Never raises."""
        self._games, self._on_disk, self._good_len, self._crc = [[]], 0, 0, 0
        self.dropped = None
        self.damage = None
        self._moved_aside = None
        try:
            if self._finish_interrupted_archive():
                return None
            data = self.disk.read(self.path)
        except FileNotFoundError:
            return None
        except OSError as error:
            log.error("no puedo leer %s: %s; empieza un partido nuevo en memoria", self.path, error)
            self._fault(error)
            self._unreadable = True
            self._on_disk = None
            return None
        self._last_read = data
        lines, good, why, torn = check_lines(data)
        if why is None:
            lines, why = self._parse_check(lines)
        if why is None and self._moved_aside is not None:  # taken out of the archive:
            why = self._moved_why  # a torn end there is damage, said as damage
        self._games = [lines]
        self._on_disk = len(lines)
        if why is not None:
            self._damaged(data, len(lines), why)
        elif torn:
            self.dropped = data[good:].decode("utf-8")
        self._drop_unplayed_hand()
        stored, crc = render_lines(lines)
        if self.dropped is not None or data[:good] != stored:
            if self.dropped is not None and self.damage is None:
                log.warning("se descartó un final cortado de %s: %r", self.path, self.dropped)
            self._on_disk = None  # rewritten: without the torn end, or with its checks
        else:
            self._crc, self._good_len = crc, good
        if self._on_disk is None or self._aside is not None:
            self.flush()
        return self.lines if self._games[-1] else None

    def cut(self, line: int, why: str) -> list[str]:
        """Damage found past the store's own checks (``replay`` refused ``line``): the
        game goes on from the lines before it; the original is kept aside."""
        lines = self._games[-1]
        if not 1 <= line <= len(lines):
            return self.lines
        data = self._last_read or render_lines(lines)[0]
        self._games[-1] = lines[: line - 1]
        self._on_disk = None
        self._damaged(data, line - 1, f"line {line}: {why}")
        self._drop_unplayed_hand()
        self.flush()
        return self.lines

    def _parse_check(self, lines: list[str]) -> tuple[list[str], str | None]:
        try:
            parse("\n".join(lines) + "\n")
        except TranscriptError as e:
            return lines[: e.line - 1], f"line {e.line}: {e.message}"
        return lines, None

    def _damaged(self, original: bytes, kept: int, why: str) -> None:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self.clock()))
        if self._moved_aside is None:
            self._aside = (original, stamp)
        self.dropped = b"\n".join(original.split(b"\n")[kept:]).decode("utf-8", "replace")
        self._on_disk = None
        self.damage = Damage(kept + 1, kept, len(original), why, self._moved_aside)
        log.error(
            "%s está dañado (%s): el partido sigue desde sus %d líneas buenas; "
            "el original dañado queda guardado en %s/",
            self.path,
            why,
            kept,
            self.damaged_dir,
        )

    def _drop_unplayed_hand(self) -> None:
        # A hand whose deal was recorded but that saw no action yet is read again: if the
        # power went while its deal was being written, some deal lines may be missing.
        lines = self._games[-1]
        tail = len(lines)

        def head(i: int) -> str:
            words = lines[i].split("#", 1)[0].split()
            return words[0].lower() if words else ""

        while tail and head(tail - 1) in ("", "deal"):
            tail -= 1
        if tail and head(tail - 1) == "hand":
            tail -= 1
            if tail and head(tail - 1) == "dealer":
                tail -= 1
            log.info("la última mano no tenía ninguna jugada: se vuelve a leer su reparto")
            dropped = "\n".join(lines[tail:])
            self.dropped = dropped if self.dropped is None else f"{dropped}\n{self.dropped}"
            del lines[tail:]
            self._on_disk = None

    def _finish_interrupted_archive(self) -> bool:
        """current.truco is also in the archive (a cut between link and unlink): True
        when that archive is sound and the cut is finished. A damaged one is taken out of
        the archive into ``damaged/`` (False: current.truco is then read as damaged)."""
        st = self.disk.stat(self.path)
        if st.st_nlink < 2:
            return False
        for name in self._list(self.archive_dir):
            other = self.archive_dir / name
            with contextlib.suppress(OSError):
                o = self.disk.stat(other)
                if (o.st_dev, o.st_ino) == (st.st_dev, st.st_ino):
                    why = unsound(self.disk.read(self.path))
                    if why is not None:
                        self._take_out_of_archive(other, why)
                        return False
                    log.info("%s se archivó como %s antes de reiniciar", self.path, other)
                    self.disk.unlink(self.path)
                    self.disk.fsync_dir(self.dir)
                    self.last_archived = other
                    return True
        return False

    def _take_out_of_archive(self, archived: Path, why: str) -> None:
        """A damaged record linked into the archive (a cut between link and unlink, then
        damage): its archive name moves to ``damaged/``, where it is the damaged
        original kept for the referee; current.truco is then restored as damaged."""
        self.disk.mkdir(self.damaged_dir)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self.clock()))
        target = self._free(self.damaged_dir, stamp, ".truco")
        self.disk.replace(archived, target)  # an atomic move: never in both, never in none
        self.disk.fsync_dir(self.damaged_dir)
        self.disk.fsync_dir(self.archive_dir)
        self._moved_aside, self._moved_why = target, f"archived but damaged: {why}"
        log.error(
            "%s se estaba archivando como %s pero está dañado (%s): sale del archivo, "
            "queda guardado como %s",
            self.path,
            archived,
            why,
            target,
        )
        self._rotate(self.damaged_dir, MAX_DAMAGED, None, keep={target})

    # ------------------------------------------------------------------ writing

    def append(self, line: str) -> bool:
        """Add one statement (a hand block may hold several lines) and write it whole;
        False when the disk refused (it is kept in memory and written later)."""
        self._games[-1].extend(_clean(part) for part in line.split("\n"))
        return self.flush()

    def rewrite(self, lines: Sequence[str]) -> bool:
        """Replace the current game's record (atomically on disk)."""
        self._games[-1] = [_clean(line) for line in lines]
        if len(self._games) == 1:
            self._on_disk = None
        return self.flush()

    def archive(self) -> Path | None:
        """The current game is finished: archive it (now, or once the disk takes it)
        and start an empty record. Returns the archive's path if it was written now."""
        if not self._games[-1]:
            return None
        self._games.append([])
        self.last_archived = None
        self.flush()
        return self.last_archived if len(self._games) == 1 else None

    def flush(self) -> bool:
        """Write whatever the disk has not taken yet; True when all of it is durable."""
        try:
            self._settle()
            while len(self._games) > 1:
                if self._games[0]:
                    self._sync_head()
                    self._archive_head()
                self._games.pop(0)
                self._on_disk, self._good_len, self._crc, self._linked = 0, 0, 0, None
            if self._games[0] or self._on_disk is None:
                self._sync_head()
        except OSError as error:
            self._fault(error)
            return False
        if self.problem is not None:
            log.info("%s se puede escribir de nuevo; el registro está completo", self.path)
        self.problem = None
        return True

    def _fault(self, error: OSError) -> None:
        self.faults += 1
        self._close()
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            self._keep_reserve()  # the oldest games make room for this one
        if self.problem is None:
            log.error("no puedo escribir %s: %s; el partido sigue en memoria", self.path, error)
        self.problem = f"disco: {error.strerror or error}"

    def _settle(self) -> None:
        """Before current.truco is replaced: keep the damaged or unreadable one aside."""
        if self._unreadable:
            self.disk.mkdir(self.damaged_dir)
            stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self.clock()))
            target = self._free(self.damaged_dir, f"{stamp}-unreadable", ".truco")
            with contextlib.suppress(FileNotFoundError):
                self.disk.replace(self.path, target)
                self.disk.fsync_dir(self.damaged_dir)
                self.disk.fsync_dir(self.dir)
            self._unreadable = False
        if self._aside is not None:
            data, stamp = self._aside
            self.disk.mkdir(self.damaged_dir)
            target = self._free(self.damaged_dir, stamp, ".truco")
            self._write_file(target, data)
            self.disk.fsync_dir(self.damaged_dir)
            self._aside = None
            if self.damage is not None:
                d = self.damage
                self.damage = Damage(d.first_bad_line, d.kept, d.dropped_bytes, d.why, target)
            log.error("el registro dañado quedó guardado como %s", target)
            self._rotate(self.damaged_dir, MAX_DAMAGED, None, keep={target})

    def _sync_head(self) -> None:
        lines = self._games[0]
        if self._on_disk is None:
            self._close()
            self.disk.mkdir(self.dir)
            data, crc = render_lines(lines)
            tmp = self.path.with_name(CURRENT + ".tmp")
            self._write_file(tmp, data)
            self.disk.replace(tmp, self.path)
            self.disk.fsync_dir(self.dir)
            self._on_disk, self._good_len, self._crc = len(lines), len(data), crc
            return
        if self._on_disk >= len(lines):
            return
        data, crc = render_lines(lines[self._on_disk :], self._crc)
        fd = self._open()
        try:
            written = self.disk.write(fd, data)
            if written != len(data):
                raise OSError(errno.ENOSPC, f"short write ({written} of {len(data)} bytes)")
        except OSError:
            self._cut_back(fd)
            raise
        try:
            self.disk.fsync(fd)
        except OSError:
            self._on_disk = None  # in doubt after a failed fsync: rewrite the whole file
            raise
        self._on_disk, self._good_len, self._crc = len(lines), self._good_len + len(data), crc

    def _cut_back(self, fd: int) -> None:
        """After a short or failed write: back to the last good length, or rewrite."""
        try:
            self.disk.truncate(fd, self._good_len)
        except OSError:
            self._on_disk = None

    def _open(self) -> int:
        if self._fd is None:
            self.disk.mkdir(self.dir)
            fd = self.disk.open_append(self.path)
            try:
                size = self.disk.stat(self.path).st_size
                if size != self._good_len:  # a tail no one wrote (or a write torn earlier)
                    self.disk.truncate(fd, self._good_len)
                if self._good_len == 0:
                    self.disk.fsync_dir(self.dir)  # the new file's name
            except OSError:
                self.disk.close(fd)
                self._on_disk = None
                raise
            self._fd = fd
        return self._fd

    def _write_file(self, path: Path, data: bytes) -> None:
        """A new file with ``data``, synced (then renamed or linked by the caller)."""
        fd = self.disk.open_new(path)
        try:
            written = self.disk.write(fd, data)
            if written != len(data):
                raise OSError(errno.ENOSPC, f"short write ({written} of {len(data)} bytes)")
            self.disk.fsync(fd)
        except OSError:
            self.disk.close(fd)
            with contextlib.suppress(OSError):
                self.disk.unlink(path)
            raise
        self.disk.close(fd)

    # ------------------------------------------------------------------ the archive

    def _archive_head(self) -> None:
        self._close()
        if self._linked is None:
            if not self._check_before_archive():
                return
            self.disk.mkdir(self.archive_dir)
            stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self.clock()))
            while True:
                target = self._free(self.archive_dir, stamp, ".truco")
                try:
                    self.disk.link(self.path, target)  # fails rather than overwrite
                except FileExistsError:
                    continue
                break
            self._linked = target
        with contextlib.suppress(FileNotFoundError):  # unlinked before a failed sync
            self.disk.unlink(self.path)
        self.disk.fsync_dir(self.archive_dir)
        self.disk.fsync_dir(self.dir)
        self.last_archived = self._linked
        log.info("registro archivado como %s", self._linked)
        self._rotate(
            self.archive_dir, self.policy.max_games, self.policy.max_bytes, keep=self._kept()
        )
        self._keep_reserve()

    def _check_before_archive(self) -> bool:
        """The file about to be linked into the archive is exactly the game's record and
        replays; rewritten once if it is not, a fault (retried later) if still not.
        False: it does not replay (never: the engine took every line); it was moved to
        ``damaged/`` instead."""
        lines = self._games[0]
        expected = render_lines(lines)[0]
        for attempt in range(2):
            data = self.disk.read(self.path)
            if data == expected:
                break
            log.error("%s no se lee como se escribió; se reescribe antes de archivarlo", self.path)
            if attempt:
                raise OSError(errno.EIO, "the record does not read back as written", str(self.path))
            self._on_disk = None
            self._sync_head()
        why = unsound(expected)
        if why is not None:
            self.disk.mkdir(self.damaged_dir)
            stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self.clock()))
            target = self._free(self.damaged_dir, stamp, ".truco")
            self.disk.replace(self.path, target)
            self.disk.fsync_dir(self.damaged_dir)
            self.disk.fsync_dir(self.dir)
            log.error(
                "el registro terminado no se puede reproducir (%s): queda como %s", why, target
            )
            return False
        return True

    def _kept(self) -> set[Path]:
        """What the archive policy never deletes: the newest archived game, the one just
        archived, and an archived file that is the current record too."""
        kept = {p for p in (self._linked, self.last_archived) if p is not None}
        files = self._by_age(self.archive_dir)
        if files:
            kept.add(files[-1][0])
        try:
            current = self.disk.stat(self.path)
        except OSError:
            return kept
        if current.st_nlink > 1:
            same = (current.st_dev, current.st_ino)
            kept.update(p for p, st in files if (st.st_dev, st.st_ino) == same)
        return kept

    def _keep_reserve(self) -> None:
        """Delete the oldest archived games (never those of ``_kept``) while the card's
        free space is under the policy's reserve; errors only logged."""
        try:
            size, free = self.disk.space(self.dir)
        except OSError:
            return
        reserve = self.policy.reserve(size)
        if free >= reserve:
            return
        keep = self._kept()
        for path, _ in self._by_age(self.archive_dir):
            if free >= reserve:
                return
            if path in keep:
                continue
            try:
                self.disk.unlink(path)
            except OSError as error:
                if self.problem is None:  # once, not at every retry
                    log.warning("no puedo borrar %s del archivo: %s", path, error)
                return
            log.warning(
                "archivo: se borró %s (el más viejo) para dejar %d bytes libres en la tarjeta",
                path.name,
                reserve,
            )
            try:
                free = self.disk.space(self.dir)[1]
            except OSError:
                return

    def _free(self, directory: Path, stamp: str, suffix: str) -> Path:
        names = set(self._list(directory))
        name, n = f"{stamp}{suffix}", 1
        while name in names:
            n += 1
            name = f"{stamp}-{n}{suffix}"
        return directory / name

    def _list(self, directory: Path) -> list[str]:
        try:
            return [n for n in self.disk.listdir(directory) if n.endswith(".truco")]
        except OSError:
            return []

    def _by_age(self, directory: Path) -> list[tuple[Path, os.stat_result]]:
        found = []
        for name in self._list(directory):
            with contextlib.suppress(OSError):
                found.append((directory / name, self.disk.stat(directory / name)))
        found.sort(key=lambda f: (f[1].st_mtime_ns, f[0].name))
        return found

    def _rotate(
        self, directory: Path, max_files: int, max_bytes: int | None, *, keep: set[Path]
    ) -> None:
        """Delete the oldest files past the bounds (never those in ``keep``); errors only
        logged."""
        files = self._by_age(directory)
        total = sum(st.st_size for _, st in files)
        for path, st in files:
            over_bytes = max_bytes is not None and total > max_bytes
            if len(files) <= max_files and not over_bytes:
                break
            if path in keep:
                continue
            try:
                self.disk.unlink(path)
            except OSError as error:
                log.warning("no puedo borrar %s del archivo: %s", path, error)
                return
            log.info("archivo: se borró %s (el más viejo)", path.name)
            files = [f for f in files if f[0] != path]
            total -= st.st_size

    def archived(self) -> list[Path]:
        """Finished games, oldest first."""
        return [path for path, _ in self._by_age(self.archive_dir)]

    # ------------------------------------------------------------------ closing

    def _close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                self.disk.close(self._fd)
            self._fd = None

    def close(self) -> None:
        self.flush()
        self._close()
