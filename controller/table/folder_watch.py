"""The kernel's word that a command file landed in the control folder (Linux's inotify).

The service looks at its control folder (``controller.table.commands``) when a
``truco-table control`` command lands there, told by the kernel, instead of looking
``CONTROL_READ_S`` after every player's event: at a bar's pace (events seconds apart)
that look was one more wake of the loop after each event. :class:`FolderWatch` is a
descriptor the loop's bus waits on with the seat nodes' ports
(``TableService.bus``); readable, it says whether a look is due (``heard``).

What it hears: a file renamed into ``control/`` or written and closed there whose name
ends in ``.cmd`` (``drop_command`` renames its file in whole; a file made by hand is
heard once closed), a queue of the kernel's that overflowed (a look, to be sure), and the
folder itself being made in the state folder (the first ``truco-table control`` makes it,
as the user who runs it): it is watched from then on, and looked at. The service's own
renames (``<id>.taken``) and deletions are not heard as commands.

Where inotify is missing (not Linux, a C library without it, the kernel's watches used
up) ``FolderWatch.open`` returns None and the service looks on its timer as before.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final

__all__ = ["FolderWatch"]

log = logging.getLogger(__name__)

# <sys/inotify.h>
_IN_CLOSE_WRITE: Final = 0x00000008
_IN_MOVED_TO: Final = 0x00000080
_IN_CREATE: Final = 0x00000100
_IN_DELETE_SELF: Final = 0x00000400
_IN_MOVE_SELF: Final = 0x00000800
_IN_Q_OVERFLOW: Final = 0x00004000
_IN_IGNORED: Final = 0x00008000
_IN_ONLYDIR: Final = 0x01000000
_IN_ISDIR: Final = 0x40000000
_EVENT: Final = struct.Struct("iIII")  # wd, mask, cookie, len; then the name, NUL-padded

#: what the control folder is watched for: a command file renamed in or closed written
#: there, and the folder going (its watch then ends)
_FOLDER_MASK: Final = _IN_MOVED_TO | _IN_CLOSE_WRITE | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR
#: what the state folder is watched for: a folder made or renamed in (``control``)
_PARENT_MASK: Final = _IN_CREATE | _IN_MOVED_TO | _IN_ONLYDIR
_COMMAND_SUFFIX: Final = b".cmd"

#: ``inotify_add_watch(fd, path, mask)``: the watch's number; OSError when refused
_AddWatch = Callable[[int, bytes, int], int]


class FolderWatch:
    """An inotify descriptor on the control folder and the state folder above it."""

    def __init__(self, fd: int, folder: Path, add: _AddWatch) -> None:
        """Watches on ``folder``'s parent and (if there) ``folder``, on the inotify
        descriptor ``fd``; ``add`` is ``inotify_add_watch`` (raising OSError)."""
        self.fd = fd
        self.folder = folder
        self._add = add
        self._parent_wd = add(fd, os.fsencode(folder.parent), _PARENT_MASK)
        self._folder_wd: int | None = None
        self._watch_folder()

    @classmethod
    def open(cls, folder: Path) -> FolderWatch | None:
        """A watch on ``folder`` (``<state>/control``, which need not exist yet); None
        where inotify is missing or refuses (the caller looks on its timer then)."""
        calls = _inotify()
        if calls is None:
            return None
        init, add = calls
        fd = init(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            log.info("control: sin inotify (%s): miro la carpeta cada tanto", _errno())
            return None
        try:
            return cls(fd, folder, add)
        except OSError as error:
            os.close(fd)
            log.info("control: sin inotify (%s): miro la carpeta cada tanto", error)
            return None

    def _watch_folder(self) -> bool:
        """Watch the control folder if it is there now; True if it is watched."""
        if self._folder_wd is None:
            with contextlib.suppress(OSError):  # not there yet: the state folder tells
                self._folder_wd = self._add(self.fd, os.fsencode(self.folder), _FOLDER_MASK)
        return self._folder_wd is not None

    def heard(self) -> bool:
        """Read what the kernel said; True if the folder should be looked at now (a
        command file landed, the folder was made, the kernel's queue overflowed)."""
        look = False
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return look
            except OSError as error:  # never stops the table: the timer-less look stays
                log.warning("control: inotify: %s", error)
                return True
            if not data:
                return look
            at = 0
            while at + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, at)
                name = data[at + _EVENT.size : at + _EVENT.size + length].rstrip(b"\0")
                at += _EVENT.size + length
                if mask & _IN_Q_OVERFLOW:  # events lost: look, and watch what is there
                    self._watch_folder()
                    look = True
                elif wd == self._folder_wd:
                    if mask & _IN_IGNORED:  # the folder went: the state folder tells again
                        self._folder_wd = None
                    elif name.endswith(_COMMAND_SUFFIX) and not mask & _IN_ISDIR:
                        look = True
                elif wd == self._parent_wd and name == os.fsencode(self.folder.name):
                    look |= self._watch_folder()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


def _errno() -> str:
    return os.strerror(ctypes.get_errno())


def _inotify() -> tuple[Callable[[int], int], _AddWatch] | None:
    """``inotify_init1`` and an ``inotify_add_watch`` that raises OSError; None where the
    C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        init, add_watch = libc.inotify_init1, libc.inotify_add_watch
    except (OSError, AttributeError):
        return None
    init.argtypes, init.restype = [ctypes.c_int], ctypes.c_int
    add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    add_watch.restype = ctypes.c_int

    def add(fd: int, path: bytes, mask: int) -> int:
        wd = int(add_watch(fd, path, mask))
        if wd < 0:
            number = ctypes.get_errno()
            raise OSError(number, os.strerror(number), os.fsdecode(path))
        return wd

    def start(flags: int) -> int:
        return int(init(flags))

    return start, add
