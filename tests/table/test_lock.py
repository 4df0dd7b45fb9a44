"""One service per table: the state folder's lock (issue 49)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from controller.table.lock import LOCK_NAME, TableLock, TableLocked, holder


def test_a_second_lock_on_the_same_folder_is_refused_and_names_the_first(tmp_path: Path) -> None:
    first = TableLock(tmp_path / "state")
    first.acquire()
    try:
        assert (tmp_path / "state" / LOCK_NAME).read_text() == f"{os.getpid()}\n"
        assert holder(tmp_path / "state") == os.getpid()
        with pytest.raises(TableLocked) as info:
            TableLock(tmp_path / "state").acquire()
        assert info.value.pid == os.getpid()
        said = str(info.value)
        assert said.startswith(f"la mesa ya está andando (proceso {os.getpid()})")
        assert "sudo systemctl stop truco-table" in said
        # the refused one changed nothing: the file still names the first
        assert (tmp_path / "state" / LOCK_NAME).read_text() == f"{os.getpid()}\n"
    finally:
        first.release()
    assert holder(tmp_path / "state") is None
    with TableLock(tmp_path / "state"):  # free again
        assert holder(tmp_path / "state") == os.getpid()


def test_no_folder_no_holder(tmp_path: Path) -> None:
    assert holder(tmp_path / "nowhere") is None
