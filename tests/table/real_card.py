"""Real failing storage for the table's tests (issue 45): a loop-mounted ext4 image that
goes read-only the way a failing SD card's file system does, and a small tmpfs that
fills up. Both need root (CI runs as root); ``skip_reason()`` says why they cannot run
elsewhere, and the tests that use them are skipped with it.

- ``Ext4Card``: ``fail()`` aborts the file system (``mount -o remount,abort``: what the
  kernel does to a card's ext4 on an I/O error with ``errors=remount-ro``; a plain
  ``remount,ro`` is refused while the table holds its record open): every write, rename,
  unlink and fsync then fails with EROFS. ``replug()`` unmounts and mounts the image
  again (the card taken out and put back, or the Pi restarted): writable again, with
  what reached the image.
- ``TmpfsCard``: ``fill()`` takes every free byte with a filler file (ENOSPC from then
  on); ``free()`` deletes it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


@functools.cache
def skip_reason() -> str | None:
    """Why real failing storage cannot be made here (``None``: it can): not root, a
    tool missing, or mounting refused (a container without the privilege); tried once."""
    if os.geteuid() != 0:
        return "mounting a loop ext4 image and a tmpfs needs root (CI runs as root)"
    for tool in ("mount", "umount", "mkfs.ext4", "losetup"):
        if shutil.which(tool) is None:
            return f"no {tool} on this machine (e2fsprogs, mount)"
    with tempfile.TemporaryDirectory(prefix="truco-card-") as tmp:
        try:
            with tmpfs_card(Path(tmp) / "tmpfs", kib=64), ext4_card(Path(tmp) / "ext4", mib=4):
                pass
        except RuntimeError as e:
            return f"cannot mount here: {e}"
    return None


class Ext4Card:
    def __init__(self, image: Path, mount: Path) -> None:
        self.image, self.mount = image, mount
        self.device: str | None = None

    def _mount(self) -> None:
        # a loop device of its own each time: one whose aborted file system is still
        # held (a lazy unmount) would give that read-only superblock back
        done = _run("losetup", "--find", "--show", str(self.image))
        if done.returncode:
            raise RuntimeError(f"losetup {self.image}: {done.stderr.strip()}")
        self.device = done.stdout.strip()
        done = _run("mount", "-o", "errors=remount-ro", self.device, str(self.mount))
        if done.returncode:
            _run("losetup", "-d", self.device)
            raise RuntimeError(f"mount {self.image}: {done.stderr.strip()}")
        probe = self.mount / ".probe"
        try:
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as e:
            raise RuntimeError(f"{self.mount} is not writable after mounting: {e}") from None

    def fail(self) -> None:
        """The file system goes read-only under the table's feet (EROFS)."""
        done = _run("mount", "-o", "remount,abort", str(self.mount))
        if done.returncode:
            raise RuntimeError(f"remount,abort {self.mount}: {done.stderr.strip()}")

    def replug(self) -> None:
        """Unmounted and mounted again: writable, with what reached the image."""
        self.unmount()
        self._mount()

    def unmount(self) -> None:
        import gc
        import time

        for attempt in range(20):
            if not _run("umount", str(self.mount)).returncode:
                break
            gc.collect()  # a descriptor a dropped object still holds
            time.sleep(0.05 * (attempt + 1))
        else:  # still held: detached, and its loop device freed once it is let go
            _run("umount", "-l", str(self.mount))
        if self.device is not None:
            _run("losetup", "-d", self.device)
            self.device = None


@contextlib.contextmanager
def ext4_card(folder: Path, mib: int = 16) -> Iterator[Ext4Card]:
    """An ext4 file system on a loop device, mounted at ``folder`` (made)."""
    folder.mkdir(parents=True, exist_ok=True)
    image = folder.with_name(folder.name + ".img")
    with open(image, "wb") as f:
        f.truncate(mib * 1024 * 1024)
    done = _run("mkfs.ext4", "-q", "-F", str(image))
    if done.returncode:
        raise RuntimeError(f"mkfs.ext4: {done.stderr.strip()}")
    card = Ext4Card(image, folder)
    card._mount()
    try:
        yield card
    finally:
        card.unmount()
        image.unlink()


class TmpfsCard:
    def __init__(self, mount: Path) -> None:
        self.mount = mount
        self.filler = mount / "filler"

    def fill(self) -> None:
        """Every free byte taken: the next write that needs a page fails with ENOSPC."""
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            for size in (65536, 1):
                with contextlib.suppress(OSError):
                    while os.write(fd, b"\0" * size):
                        pass
        finally:
            os.close(fd)

    def free(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.filler.unlink()


@contextlib.contextmanager
def tmpfs_card(folder: Path, kib: int = 2048) -> Iterator[TmpfsCard]:
    folder.mkdir(parents=True, exist_ok=True)
    done = _run("mount", "-t", "tmpfs", "-o", f"size={kib}k,mode=0755", "tmpfs", str(folder))
    if done.returncode:
        raise RuntimeError(f"mount tmpfs {folder}: {done.stderr.strip()}")
    try:
        yield TmpfsCard(folder)
    finally:
        if _run("umount", str(folder)).returncode:
            _run("umount", "-l", str(folder))
