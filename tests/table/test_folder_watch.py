"""The control folder heard from the kernel (``controller.table.folder_watch``): what
makes a look due, and what does not."""

from __future__ import annotations

import contextlib
import select
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.table.commands import drop_command
from controller.table.folder_watch import FolderWatch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


@contextlib.contextmanager
def _watching(state: Path) -> Iterator[FolderWatch]:
    """A watch on ``state``'s control folder, closed after."""
    watch = FolderWatch.open(state / "control")
    assert watch is not None
    try:
        yield watch
    finally:
        watch.close()


def _heard(watch: FolderWatch) -> bool:
    """What the watch says once the kernel's word is there (the loop waits for it)."""
    select.select([watch.fd], [], [], 10.0)
    return watch.heard()


def test_a_command_dropped_is_heard_and_the_folder_made_by_it_too(tmp_path: Path) -> None:
    with _watching(tmp_path) as watch:
        assert not watch.heard()  # nothing yet
        drop_command(tmp_path, "undo")  # makes the folder, then the file lands in it
        assert _heard(watch)
        drop_command(tmp_path, "new-game")  # the folder is watched now
        assert _heard(watch)


def test_the_services_own_renames_and_deletions_are_not_commands(tmp_path: Path) -> None:
    drop_command(tmp_path, "undo")
    with _watching(tmp_path) as watch:
        (command,) = (tmp_path / "control").glob("*.cmd")
        taken = command.rename(command.with_suffix(".taken"))  # as the service claims it
        taken.unlink()
        (tmp_path / "other").mkdir()  # another folder in the state folder
        assert not watch.heard()
        drop_command(tmp_path, "undo")  # and the next command is still heard
        assert _heard(watch)


def test_a_folder_removed_and_made_again_is_watched_again(tmp_path: Path) -> None:
    drop_command(tmp_path, "undo")
    with _watching(tmp_path) as watch:
        shutil.rmtree(tmp_path / "control")
        select.select([watch.fd], [], [], 10.0)
        assert not watch.heard()  # gone: nothing to look at
        drop_command(tmp_path, "undo")
        assert _heard(watch)
        drop_command(tmp_path, "undo")
        assert _heard(watch)


def test_where_inotify_is_missing_there_is_no_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not Linux (a developer's Mac): no watch, the service looks on its timer."""
    monkeypatch.setattr(sys, "platform", "darwin")
    assert FolderWatch.open(tmp_path / "control") is None
