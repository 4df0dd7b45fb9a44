"""The game on disk: ``current.truco`` in the state directory, written line by line.

Every accepted action is appended and flushed to the disk (``fsync``) before the displays
show it, so a power cut loses at most the action being written. On start the service
reads the file back (``restore``) and replays it: restarting is replaying.

- A torn last line (the power went while it was written: no final newline, or a line
  that does not parse) is dropped, and the file is rewritten without it. A hand and its
  deal are written in one go; a last hand that saw no action yet is dropped too, and its
  deal is read again.
- A finished game is moved to ``archive/`` under a timestamped name; an existing archive
  is never overwritten.
- When the disk is full or read-only, lines are kept in memory (``backlog``) and written,
  in order, as soon as the disk takes them again; ``problem`` says what is wrong.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from ..transcript import TranscriptError, parse

__all__ = ["GameStore", "fsync_dir"]

log = logging.getLogger(__name__)

CURRENT = "current.truco"


def fsync_dir(path: Path) -> None:
    """Make a rename or a new file in ``path`` durable (best effort)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class GameStore:
    """``current.truco`` and ``archive/`` in ``state_dir``."""

    def __init__(
        self,
        state_dir: str | os.PathLike[str],
        *,
        clock: Callable[[], float] = time.time,
        opener: Callable[[Path], int] | None = None,
    ) -> None:
        self.dir = Path(state_dir)
        self.path = self.dir / CURRENT
        self.archive_dir = self.dir / "archive"
        self.clock = clock
        self._opener = opener or (
            lambda p: os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        )
        self._fd: int | None = None
        self.backlog: list[str] = []
        self.problem: str | None = None
        self.dropped: str | None = None  # the torn line dropped at the last restore

    # ------------------------------------------------------------------ reading

    def restore(self) -> list[str] | None:
        """The current game's lines (``None`` if there is none), torn tail dropped."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        text = data.decode("utf-8", errors="replace")
        lines = text.split("\n")
        torn = lines.pop()  # "" when the file ends with a newline
        self.dropped = torn or None
        while lines:
            try:
                parse("\n".join(lines) + "\n")
                break
            except TranscriptError as e:
                if e.line != len(lines):
                    raise  # damage before the last line is not a torn write
                self.dropped = lines.pop()
        # A hand whose deal was recorded but that saw no action yet is read again: if the
        # power went while its deal was being written, some deal lines may be missing.
        tail = len(lines)
        while tail and (
            not lines[tail - 1].split("#", 1)[0].strip()
            or lines[tail - 1].split()[0].lower() == "deal"
        ):
            tail -= 1
        if tail and lines[tail - 1].split()[0].lower() == "hand":
            tail -= 1
            if tail and lines[tail - 1].split()[0].lower() == "dealer":
                tail -= 1
            log.info("the last hand had no action yet: its deal will be read again")
            self.dropped = "\n".join(lines[tail:])
            del lines[tail:]
        if self.dropped is not None:
            log.warning("dropped a torn end from %s: %r", self.path, self.dropped)
            self.rewrite(lines)
        return lines

    # ------------------------------------------------------------------ writing

    def _open(self) -> int:
        if self._fd is None:
            self.dir.mkdir(parents=True, exist_ok=True)
            existed = self.path.exists()
            self._fd = self._opener(self.path)
            if not existed:
                fsync_dir(self.dir)
        return self._fd

    def append(self, line: str) -> bool:
        """Write one line and fsync; False (kept in the backlog) when the disk refuses."""
        self.backlog.append(line)
        return self.flush()

    def flush(self) -> bool:
        if not self.backlog:
            return True
        try:
            fd = self._open()
            data = "".join(f"{line}\n" for line in self.backlog).encode("utf-8")
            written = 0
            while written < len(data):
                written += os.write(fd, data[written:])
            os.fsync(fd)
        except OSError as error:
            self._close()
            if self.problem is None:
                log.error("cannot write %s: %s; the game goes on in memory", self.path, error)
            self.problem = f"disco: {error.strerror or error}"
            return False
        self.backlog.clear()
        if self.problem is not None:
            log.info("%s is writable again; the record is complete", self.path)
        self.problem = None
        return True

    def rewrite(self, lines: list[str]) -> None:
        """Replace the file atomically (temporary file, fsync, rename)."""
        self._close()
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("".join(f"{line}\n" for line in lines))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        fsync_dir(self.dir)

    def archived(self) -> list[Path]:
        """Finished games, oldest first."""
        if not self.archive_dir.is_dir():
            return []
        return sorted(
            self.archive_dir.glob("*.truco"), key=lambda p: (p.stat().st_mtime_ns, p.name)
        )

    def archive(self) -> Path | None:
        """Move the finished game to ``archive/`` (timestamped, never overwriting)."""
        self.flush()
        self._close()
        if not self.path.exists():
            return None
        self.archive_dir.mkdir(parents=True, exist_ok=True)
        content = self.path.read_bytes()
        for old in self.archive_dir.glob("*.truco"):
            # a restart after a power cut between the link and the unlink below
            if old.stat().st_size == len(content) and old.read_bytes() == content:
                self.path.unlink()
                fsync_dir(self.dir)
                return old
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self.clock()))
        target = self.archive_dir / f"{stamp}.truco"
        n = 1
        while target.exists():
            n += 1
            target = self.archive_dir / f"{stamp}-{n}.truco"
        os.link(self.path, target)  # fails rather than overwrite
        os.unlink(self.path)
        fsync_dir(self.archive_dir)
        fsync_dir(self.dir)
        return target

    def _close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def close(self) -> None:
        self.flush()
        self._close()
