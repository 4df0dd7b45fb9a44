"""One service per table: an advisory lock (``fcntl.flock``) on the state folder.

``truco-table run`` takes ``<state>/.lock`` before it reads the record, opens a port or
writes its status file, and holds it while it runs (the kernel lets it go when the
process ends, however it ends). A second ``run`` on the same folder (the owner starting
one by hand beside the systemd service) finds it taken and stops at once with one line in
Spanish and exit status 2, having touched nothing of the first's: not its record, not its
status file, not its ports. The file holds the running service's process id, for that
line and for ``truco-table doctor``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

__all__ = ["LOCK_NAME", "TableLock", "TableLocked", "holder"]

LOCK_NAME = ".lock"


class TableLocked(RuntimeError):
    """Another service holds the table's state folder; ``pid`` is its process (or None)."""

    def __init__(self, state_dir: Path, pid: int | None) -> None:
        self.state_dir = state_dir
        self.pid = pid
        who = f" (proceso {pid})" if pid is not None else ""
        super().__init__(
            f"la mesa ya está andando{who} con la carpeta {state_dir}: no arranco otra. "
            "Si es el servicio, miralo con systemctl status truco-table y journalctl -u "
            "truco-table -f; para probar a mano, pará antes el servicio con sudo systemctl "
            "stop truco-table."
        )


def _read_pid(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() and int(text) > 0 else None


def holder(state_dir: Path) -> int | None:
    """The process holding ``state_dir``'s lock, or None when no service holds it (or
    this user may not tell). Takes nothing: a lock it could take it lets go at once."""
    path = state_dir / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_pid(path) or -1
        except OSError:
            return None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


class TableLock:
    """The state folder's lock, held from :meth:`acquire` to :meth:`release`."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.path = state_dir / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise ``TableLocked``; ``OSError`` when the folder cannot
        hold one (the caller says so as for any folder it cannot write)."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        writable = True
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except PermissionError:
            # the service's file, and this is another user: a read-only one locks as well
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            writable = False
        except OSError:
            # a card that refuses writes (read-only, full): the lock file as it is, or the
            # folder itself; the table still runs, and the record's own write says why
            writable = False
            try:
                fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:
                fd = os.open(self.state_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise TableLocked(self.state_dir, _read_pid(self.path)) from None
        except BaseException:
            os.close(fd)
            raise
        # ours: the file says whose it is (written only once held, so a second service
        # that fails to take it never changes it)
        if writable:
            with contextlib.suppress(OSError):  # a full card: locked all the same
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def __enter__(self) -> TableLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
