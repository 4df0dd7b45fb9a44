"""The game on disk: append with fsync, torn last line, archive, a disk that says no."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from controller.table.store import GameStore
from controller.transcript import TranscriptError

LINES = ["table players=2", "hand", "deal 0: 7C 6C 3E", "deal 1: 2O 1B 4B", "0 envido"]


def test_append_and_restore(tmp_path: Path) -> None:
    store = GameStore(tmp_path)
    assert store.restore() is None
    for line in LINES:
        assert store.append(line)
    assert store.path.read_text() == "\n".join(LINES) + "\n"
    assert GameStore(tmp_path).restore() == LINES


@pytest.mark.parametrize("torn", ["1 qui", "1 quiero", "deal 0: 7"])
def test_torn_last_line_is_dropped(tmp_path: Path, torn: str) -> None:
    (tmp_path / "current.truco").write_text("\n".join(LINES) + "\n" + torn)  # no final newline
    store = GameStore(tmp_path)
    assert store.restore() == LINES
    assert store.dropped == torn
    assert store.path.read_text() == "\n".join(LINES) + "\n"  # rewritten without it


def test_garbage_last_line_with_newline_is_dropped(tmp_path: Path) -> None:
    (tmp_path / "current.truco").write_text("\n".join(LINES) + "\n0 pl\x00y 7E\n")
    assert GameStore(tmp_path).restore() == LINES


def test_damage_before_the_last_line_is_not_hidden(tmp_path: Path) -> None:
    (tmp_path / "current.truco").write_text("table players=2\nhand\n0 dance\n0 envido\n")
    with pytest.raises(TranscriptError):
        GameStore(tmp_path).restore()


def test_archive_never_overwrites(tmp_path: Path) -> None:
    store = GameStore(tmp_path, clock=lambda: 1_700_000_000.0)
    targets = []
    for i in range(3):
        store.append(f"table players=2  # game {i}")
        targets.append(store.archive())
    assert len({t for t in targets}) == 3
    assert all(t is not None and t.exists() for t in targets)
    assert not store.path.exists()
    assert [p.read_text() for p in store.archived()] == [
        f"table players=2  # game {i}\n" for i in range(3)
    ]


def test_archive_after_a_cut_between_link_and_unlink(tmp_path: Path) -> None:
    store = GameStore(tmp_path)
    store.append("table players=2")
    first = store.archive()
    assert first is not None
    store.path.write_text(first.read_text())  # the same game, back as current
    assert store.archive() == first
    assert len(store.archived()) == 1 and not store.path.exists()


class FlakyDisk:
    """os.open for the record that fails with ENOSPC or EROFS while ``full``."""

    def __init__(self, error: int = errno.ENOSPC) -> None:
        self.full = True
        self.error = error

    def __call__(self, path: Path) -> int:
        if self.full:
            raise OSError(self.error, os.strerror(self.error), str(path))
        return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EROFS])
def test_full_disk_keeps_lines_in_memory_then_catches_up(tmp_path: Path, error: int) -> None:
    disk = FlakyDisk(error)
    store = GameStore(tmp_path, opener=disk)
    assert not store.append(LINES[0])
    assert not store.append(LINES[1])
    assert store.problem is not None and os.strerror(error) in store.problem
    assert store.backlog == LINES[:2]
    disk.full = False
    assert store.append(LINES[2])
    assert store.problem is None and store.backlog == []
    assert store.path.read_text() == "\n".join(LINES[:3]) + "\n"


def test_a_hand_without_actions_is_dealt_again(tmp_path: Path) -> None:
    """The deal of a hand is written in one go; if the power went before any action of
    that hand, the hand is dropped and its deal read again (its lines may be torn)."""
    (tmp_path / "current.truco").write_text(
        "\n".join([*LINES, "1 quiero", "0 mazo", "dealer 1", "hand", "deal 0: 1E 2E 3E"]) + "\n"
    )
    store = GameStore(tmp_path)
    assert store.restore() == [*LINES, "1 quiero", "0 mazo"]
    assert store.path.read_text().endswith("0 mazo\n")
