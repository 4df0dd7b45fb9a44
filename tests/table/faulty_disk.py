"""A ``Disk`` for tests: every system call of the record store logged, and any of them
made to fail (ENOSPC, EROFS, EIO), to write short, or to stop the process (a power cut)."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

from controller.table.store import Disk

#: the calls that change the disk (a power cut is simulated just before one of them)
MUTATING = (
    "open_append",
    "open_new",
    "write",
    "fsync",
    "truncate",
    "replace",
    "link",
    "unlink",
    "mkdir",
    "fsync_dir",
)


class PowerCut(BaseException):
    """Raised instead of a disk operation: the process "dies" here (not an OSError)."""


class FaultyDisk(Disk):
    """``fail_at``: the 1-based operation number that fails (once); ``failing``: every
    operation fails while set; ``short``: writes take half their bytes while set;
    ``cut_at``: the mutating operation number before which the power goes."""

    def __init__(self, error: int = errno.ENOSPC) -> None:
        self.error = error
        self.log: list[tuple[str, str]] = []
        self.ops = 0
        self.mutations = 0
        self.fail_at: int | None = None
        self.failing = False
        self.fail_reads = False
        self.short = False
        self.cut_at: int | None = None
        self.on_op: Callable[[str, str], None] | None = None
        self.names: dict[int, str] = {}  # fd -> file name, for the log

    def _op(self, name: str, detail: str, *, read: bool = False) -> None:
        self.ops += 1
        if name in MUTATING:
            self.mutations += 1
            if self.cut_at is not None and self.mutations >= self.cut_at:
                raise PowerCut(f"{name} {detail}")
        self.log.append((name, detail))
        if self.on_op is not None:
            self.on_op(name, detail)
        if (self.failing and not read) or (read and self.fail_reads) or self.ops == self.fail_at:
            raise OSError(self.error, os.strerror(self.error), detail)

    # -- the calls ----------------------------------------------------------------------
    def open_append(self, path: Path) -> int:
        self._op("open_append", path.name)
        fd = super().open_append(path)
        self.names[fd] = path.name
        return fd

    def open_new(self, path: Path) -> int:
        self._op("open_new", path.name)
        fd = super().open_new(path)
        self.names[fd] = path.name
        return fd

    def write(self, fd: int, data: bytes) -> int:
        self._op("write", f"{self.names.get(fd, fd)} {data.decode('utf-8', 'replace')!r}")
        if self.short and len(data) > 1:
            return super().write(fd, data[: len(data) // 2])
        return super().write(fd, data)

    def fsync(self, fd: int) -> None:
        self._op("fsync", str(self.names.get(fd, fd)))
        super().fsync(fd)

    def truncate(self, fd: int, length: int) -> None:
        self._op("truncate", f"{self.names.get(fd, fd)} {length}")
        super().truncate(fd, length)

    def close(self, fd: int) -> None:
        self.names.pop(fd, None)
        super().close(fd)  # closing never fails here (the kernel frees the descriptor)

    def read(self, path: Path) -> bytes:
        self._op("read", path.name, read=True)
        return super().read(path)

    def stat(self, path: Path) -> os.stat_result:
        self._op("stat", path.name, read=True)
        return super().stat(path)

    def listdir(self, path: Path) -> list[str]:
        self._op("listdir", path.name, read=True)
        return super().listdir(path)

    def mkdir(self, path: Path) -> None:
        self._op("mkdir", path.name)
        super().mkdir(path)

    def replace(self, src: Path, dst: Path) -> None:
        self._op("replace", f"{src.name} {dst.name}")
        super().replace(src, dst)

    def link(self, src: Path, dst: Path) -> None:
        self._op("link", f"{src.name} {dst.name}")
        super().link(src, dst)

    def unlink(self, path: Path) -> None:
        self._op("unlink", path.name)
        super().unlink(path)

    def fsync_dir(self, path: Path) -> None:
        self._op("fsync_dir", path.name)
        super().fsync_dir(path)


def errors() -> list[int]:
    return [errno.ENOSPC, errno.EROFS, errno.EIO]
