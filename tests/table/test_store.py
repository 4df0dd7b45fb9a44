"""The game on disk: whole checked lines, restores that never raise, a disk that says
no, the archive and its policy, and the order write -> fsync that durability needs."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.table.store import (
    LINE_BREAKS,
    ArchivePolicy,
    GameStore,
    check_lines,
    plain,
    render_lines,
)
from controller.transcript import parse, replay

from .faulty_disk import FaultyDisk, errors

LINES = ["table players=2", "hand", "deal 0: 7C 6C 3E", "deal 1: 2O 1B 4B", "0 envido"]


def stored(lines: list[str]) -> bytes:
    return render_lines(lines)[0]


def write_current(path: Path, data: bytes) -> None:
    (path / "current.truco").write_bytes(data)


def test_append_and_restore(tmp_path: Path) -> None:
    store = GameStore(tmp_path)
    assert store.restore() is None
    for line in LINES:
        assert store.append(line)
    assert plain(store.path.read_text()) == "\n".join(LINES) + "\n"
    assert store.path.read_bytes() == stored(LINES)
    again = GameStore(tmp_path)
    assert again.restore() == LINES
    assert again.damage is None and again.dropped is None


def test_every_line_carries_a_chained_check_that_replay_reads_as_a_comment(
    tmp_path: Path,
) -> None:
    store = GameStore(tmp_path)
    store.restore()
    for line in [*LINES, "1 quiero"]:
        store.append(line)
    text = store.path.read_text()
    assert all(" #c=" in line for line in text.splitlines())
    assert replay(parse(text)).game.score == (2, 0)  # the checks are comments
    swapped = text.splitlines()
    swapped[4], swapped[5] = swapped[5], swapped[4]  # each line alone is intact: the chain
    lines, _, why, _ = check_lines(("\n".join(swapped) + "\n").encode())
    assert lines == LINES[:4] and why is not None and "line 5" in why


def _first_bad_char(text: str) -> str | None:
    """What a stored line may not hold, said of its first such character, one character
    at a time (the rule ``check_lines`` keeps, written plainly)."""
    for c in text:
        if c in LINE_BREAKS:
            return f"a line break U+{ord(c):04X} inside a line"
        if c == "\ufffd" or (ord(c) < 0x20 and c != "\t") or c == "\x7f":
            return f"a control character U+{ord(c):04X}"
    return None


_LINE_TEXT = st.text(
    st.one_of(
        st.characters(codec="utf-8", exclude_characters="\n"),
        st.sampled_from([*sorted(LINE_BREAKS), "\t", "\x7f", "\ufffd", "\x00", "\x1f", " "]),
    ),
    max_size=30,
)


@pytest.mark.parametrize(
    "bad", sorted(LINE_BREAKS | {"\x00", "\x08", "\x1f", "\x7f", "\ufffd"})
)
def test_each_character_a_stored_line_may_not_hold_is_named(bad: str) -> None:
    body = f"1 quiero{bad}\tnada"  # a tab is allowed
    crc = render_lines([body])[1]
    lines, _, why, _ = check_lines(f"{body} #c={crc:08x}\n".encode())
    assert lines == [] and why == f"line 1: {_first_bad_char(body)}"


@given(body=_LINE_TEXT)
def test_a_stored_line_is_refused_for_its_first_bad_character(body: str) -> None:
    """The check of a stored record names the first character a line may not hold, as
    the plain rule does, for any text (a line break, a control character, DEL, U+FFFD)."""
    crc = render_lines([body])[1]
    data = f"{body} #c={crc:08x}\n".encode()
    lines, _, why, _ = check_lines(data)
    expected = _first_bad_char(body)
    if expected is None:
        assert why is None and lines == [body]
    else:
        assert lines == [] and why == f"line 1: {expected}"


@pytest.mark.parametrize("torn", ["1 qui", "1 quiero", "deal 0: 7"])
def test_torn_last_line_is_dropped_quietly(tmp_path: Path, torn: str) -> None:
    write_current(tmp_path, stored(LINES) + torn.encode())  # no final newline
    store = GameStore(tmp_path)
    assert store.restore() == LINES
    assert store.dropped == torn and store.damage is None
    assert store.path.read_bytes() == stored(LINES)  # rewritten without it
    assert not (tmp_path / "damaged").exists()


def test_a_record_without_checks_is_read_and_given_them(tmp_path: Path) -> None:
    write_current(tmp_path, ("\n".join(LINES) + "\n").encode())
    store = GameStore(tmp_path)
    assert store.restore() == LINES and store.damage is None
    assert store.path.read_bytes() == stored(LINES)


# ---------------------------------------------------------------- defect 1: a full disk


@pytest.mark.parametrize("error", errors())
def test_a_short_write_is_cut_back_and_written_whole_once(tmp_path: Path, error: int) -> None:
    """Issue 13, 1: a short write retried by writing the whole line again left
    `0 envi0 envido` and every later start died."""
    disk = FaultyDisk(error)
    store = GameStore(tmp_path, disk=disk)
    store.restore()
    for line in LINES[:4]:
        assert store.append(line)
    disk.short = True  # the disk takes half the line...
    assert not store.append("0 envido")
    assert store.problem is not None
    disk.short = False
    disk.failing = True  # ...then refuses altogether for a while
    assert not store.append("1 quiero")
    assert not store.flush()
    disk.failing = False
    assert store.flush()
    assert store.path.read_bytes() == stored([*LINES, "1 quiero"])
    again = GameStore(tmp_path)
    assert again.restore() == [*LINES, "1 quiero"] and again.damage is None


def test_a_write_error_cuts_the_file_back_before_the_retry(tmp_path: Path) -> None:
    disk = FaultyDisk(errno.EIO)
    store = GameStore(tmp_path, disk=disk)
    store.restore()
    for line in LINES:
        store.append(line)
    good = store.path.stat().st_size
    disk.short = True
    store.append("1 quiero")
    truncates = [d for op, d in disk.log if op == "truncate"]
    assert truncates == [f"current.truco {good}"]
    assert store.path.stat().st_size == good  # a restart now finds the good lines only
    assert GameStore(tmp_path).restore() == LINES


def test_a_failed_fsync_rewrites_the_whole_file(tmp_path: Path) -> None:
    disk = FaultyDisk(errno.EIO)
    store = GameStore(tmp_path, disk=disk)
    store.restore()
    store.append(LINES[0])
    disk.fail_at = disk.ops + 2  # the write goes, its fsync fails
    assert not store.append(LINES[1])
    assert disk.log[-1][0] == "fsync"
    assert store.flush()
    assert ("replace", "current.truco.tmp current.truco") in disk.log
    assert store.path.read_bytes() == stored(LINES[:2])


@pytest.mark.parametrize("error", errors())
def test_the_disk_refusing_everything_never_raises(tmp_path: Path, error: int) -> None:
    """Issue 13, 3: a read-only, full or failing state directory: archive, rewrite,
    restore and append all keep going in memory."""
    GameStore(tmp_path).append  # noqa: B018 - nothing
    first = GameStore(tmp_path)
    first.restore()
    for line in LINES:
        first.append(line)
    disk = FaultyDisk(error)
    disk.failing = True
    disk.fail_reads = True
    store = GameStore(tmp_path, disk=disk)
    assert store.restore() is None  # cannot even read it: a new game in memory
    assert store.problem is not None
    assert not store.rewrite(["table players=2 target=15"])
    assert not store.append("hand")
    assert store.archive() is None
    assert not store.append("table players=4")
    store.close()
    assert store.pending
    disk.failing = disk.fail_reads = False
    assert store.flush()
    assert [plain(p.read_text()) for p in store.archived()] == ["table players=2 target=15\nhand\n"]
    assert plain(store.path.read_text()) == "table players=4\n"
    [aside] = (tmp_path / "damaged").iterdir()  # the unreadable original, kept
    assert aside.read_bytes() == stored(LINES)


# ------------------------------------------------- defects 2 and 4: damaged records


def zero(data: bytes, at: int, length: int) -> bytes:
    return data[:at] + b"\0" * length + data[at + length :]


def test_zeroed_bytes_in_the_middle_are_cut_and_kept_aside(tmp_path: Path) -> None:
    """Issue 13, 2: 16 zeroed bytes before the last line stopped every start."""
    lines = [*LINES, "1 quiero", "0 play 3E", "1 play 2O"]
    original = stored(lines)
    at = len(stored(lines[:5])) + 3  # inside "1 quiero"
    write_current(tmp_path, zero(original, at, 16))
    store = GameStore(tmp_path, clock=lambda: 1_700_000_000.0)
    assert store.restore() == LINES
    assert store.damage is not None
    assert store.damage.first_bad_line == 6 and store.damage.kept == 5
    assert store.damage.aside is not None
    assert store.damage.aside.read_bytes() == zero(original, at, 16)
    assert store.damage.aside.parent == tmp_path / "damaged"
    assert store.path.read_bytes() == stored(LINES)


@pytest.mark.parametrize("brk", ["\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029", "\r"])
def test_restore_splits_lines_where_the_parser_does(tmp_path: Path, brk: str) -> None:
    """Issue 13, 4: a last line like `\\x0bxx` made restore raise."""
    write_current(tmp_path, stored(LINES) + f"{brk}xx\n".encode())
    store = GameStore(tmp_path)
    assert store.restore() == LINES
    inside = stored(LINES[:4]) + f"0 env{brk}ido\n".encode() + stored(["1 quiero"])
    write_current(tmp_path, inside)
    store = GameStore(tmp_path)
    assert store.restore() == LINES[:1]  # and the hand that saw no action is read again
    assert store.damage is not None and store.damage.kept == 4


@pytest.mark.parametrize(
    "tail",
    [b"\0" * 40, b"\xff\xfe garbage \x00\n", b"0 pl\x00y 7E\n", b"\x0bxx", "0 ñ".encode()[:-1]],
)
def test_damaged_tails_never_raise(tmp_path: Path, tail: bytes) -> None:
    write_current(tmp_path, stored(LINES) + tail)
    store = GameStore(tmp_path)
    assert store.restore() == LINES
    assert store.damage is not None
    assert store.damage.aside is not None and store.damage.aside.read_bytes().endswith(tail)


def test_a_line_that_does_not_parse_is_cut(tmp_path: Path) -> None:
    write_current(tmp_path, stored(["table players=2", "hand", "0 dance", "0 envido"]))
    store = GameStore(tmp_path)
    assert store.restore() == ["table players=2", "hand"][:1]  # the unplayed hand goes too
    assert store.damage is not None and "dance" in store.damage.why


def test_a_damaged_record_on_a_full_disk_is_kept_until_it_can_be_set_aside(
    tmp_path: Path,
) -> None:
    damaged = zero(stored([*LINES, "1 quiero"]), len(stored(LINES)) + 1, 4)
    write_current(tmp_path, damaged)
    disk = FaultyDisk(errno.ENOSPC)
    disk.failing = True
    store = GameStore(tmp_path, disk=disk)
    assert store.restore() == LINES  # the game goes on from the good part, in memory
    assert store.path.read_bytes() == damaged  # not replaced before it is kept aside
    store.append("1 quiero")
    disk.failing = False
    assert store.flush()
    [aside] = (tmp_path / "damaged").iterdir()
    assert aside.read_bytes() == damaged
    assert store.path.read_bytes() == stored([*LINES, "1 quiero"])


def test_damaged_originals_are_bounded(tmp_path: Path) -> None:
    clock = iter(range(1_700_000_000, 1_700_000_100))
    for _ in range(25):
        write_current(tmp_path, stored(LINES) + b"\0\0\n")
        store = GameStore(tmp_path, clock=lambda: float(next(clock)))
        store.restore()
    assert len(list((tmp_path / "damaged").iterdir())) == 20


# ------------------------------------------------------------------ the archive


def test_archive_never_overwrites(tmp_path: Path) -> None:
    store = GameStore(tmp_path, clock=lambda: 1_700_000_000.0)
    store.restore()
    targets = []
    for i in range(3):
        store.append(f"table players=2  # game {i}")
        targets.append(store.archive())
    assert len(set(targets)) == 3
    assert all(t is not None and t.exists() for t in targets)
    assert not store.path.exists()
    assert [plain(p.read_text()) for p in store.archived()] == [
        f"table players=2  # game {i}\n" for i in range(3)
    ]


def test_a_cut_between_link_and_unlink_with_a_damaged_tail_archives_once(
    tmp_path: Path,
) -> None:
    """Issue 13, 8: the restart rewrote the file without its tail, so it no longer equalled
    the archive and the game was archived twice."""
    store, _target = cut_after_the_archive_link(tmp_path)
    with open(store.path, "ab") as f:  # the tail torn (both paths: one file, two links)
        f.write(b"\0\0\0 torn")
    again = GameStore(tmp_path)
    # issue 45: a damaged record is never archived; it goes to damaged/, told as damage,
    # and the table goes on from its sound prefix (which replays)
    assert again.restore() == LINES
    assert again.archived() == []
    assert again.damage is not None and again.damage.aside is not None
    assert again.damage.aside.parent == tmp_path / "damaged"
    assert again.damage.aside.read_bytes().endswith(b"\0\0\0 torn")
    assert list((tmp_path / "damaged").iterdir()) == [again.damage.aside]  # kept once
    replay(parse(plain(again.path.read_text(encoding="utf-8"))))
    assert again.path.read_bytes() == stored(LINES)
    path = again.archive()  # archived once, and whole
    assert path is not None and again.archived() == [path]
    assert path.read_bytes() == stored(LINES)


def cut_after_the_archive_link(folder: Path) -> tuple[GameStore, Path]:
    """A store holding LINES, its archiving cut by the power between the link into
    archive/ and the unlink: the record at both paths."""
    store = GameStore(folder)
    store.restore()
    for line in LINES:
        store.append(line)
    target = folder / "archive" / "20260101-000000.truco"
    target.parent.mkdir()
    os.link(store.path, target)  # the power went before the unlink
    return store, target


def test_a_torn_record_caught_between_link_and_unlink_is_told_as_damage(tmp_path: Path) -> None:
    store, _target = cut_after_the_archive_link(tmp_path)
    with open(store.path, "r+b") as f:  # and the card lost the end of the last line
        f.truncate(len(stored(LINES)) - 5)
    again = GameStore(tmp_path)
    assert again.restore() == LINES[:1]  # its hand had no action left: dealt again
    assert again.archived() == []
    assert again.damage is not None and again.damage.aside is not None
    assert "archived but damaged" in again.damage.why
    assert again.damage.aside.read_bytes() == stored(LINES)[:-5]


def test_a_cut_between_link_and_unlink_of_a_sound_record_is_finished(tmp_path: Path) -> None:
    _store, target = cut_after_the_archive_link(tmp_path)
    again = GameStore(tmp_path)
    assert again.restore() is None
    assert again.archived() == [target] and not again.path.exists()
    assert again.last_archived == target and again.damage is None


def test_a_record_that_does_not_read_back_as_written_is_rewritten_before_the_archive(
    tmp_path: Path,
) -> None:
    store = GameStore(tmp_path)
    store.restore()
    for line in LINES:
        store.append(line)
    with open(store.path, "ab") as f:  # something the store did not write
        f.write(b"0 play 7C\n")
    path = store.archive()
    assert path is not None and path.read_bytes() == stored(LINES)


def test_the_archive_policy_never_deletes_the_game_just_archived_on_a_full_card(
    tmp_path: Path,
) -> None:
    """Issue 45: a write meeting a full card ran the free-space cleanup with nothing
    protected, so the game archived seconds before was deleted (as "the oldest")."""

    class Full(FaultyDisk):
        def space(self, path: Path) -> tuple[int, int]:
            return 1_000_000, 0  # never enough free space

    disk = Full(errno.ENOSPC)
    clock = iter(range(1_700_000_000, 1_700_001_000))
    store = GameStore(tmp_path, disk=disk, clock=lambda: float(next(clock)))
    store.restore()
    paths = []
    for i in range(3):
        store.append(f"table players=2  # game {i}")
        paths.append(store.archive())
        assert paths[-1] is not None
        os.utime(paths[-1], ns=(i * 10**9, i * 10**9))  # oldest first
    # the archive itself kept the reserve: the older games went, the new one stayed
    assert store.archived() == [paths[-1]]
    disk.failing = True  # the card is full: the next write fails with ENOSPC
    store.append("table players=2  # the next game")
    assert store.problem is not None
    assert store.archived() == [paths[-1]]  # the game just archived is kept
    restarted = GameStore(tmp_path, disk=disk)  # after a restart: the newest is kept
    restarted.restore()
    assert restarted.archived() == [paths[-1]]


def test_the_archive_policy_never_deletes_an_archive_that_is_the_current_record(
    tmp_path: Path,
) -> None:
    store = GameStore(tmp_path, policy=ArchivePolicy(max_games=1))
    store.restore()
    store.append("table players=2  # game 0")
    first = store.archive()
    assert first is not None
    os.utime(first, ns=(10**9, 10**9))
    for line in LINES:
        store.append(line)
    linked = tmp_path / "archive" / "20000101-000000.truco"
    os.link(store.path, linked)  # a cut between link and unlink: linked is current
    os.utime(linked, ns=(0, 0))  # and, by its time, the oldest
    store._rotate(store.archive_dir, 1, None, keep=store._kept())
    assert linked.exists()


def test_archive_policy_keeps_the_newest_games(tmp_path: Path) -> None:
    clock = iter(range(1_700_000_000, 1_700_001_000))
    store = GameStore(tmp_path, clock=lambda: float(next(clock)), policy=ArchivePolicy(max_games=3))
    store.restore()
    for i in range(5):
        store.append(f"table players=2  # game {i}")
        path = store.archive()
        assert path is not None
        os.utime(path, ns=(i * 10**9, i * 10**9))
    assert [plain(p.read_text()) for p in store.archived()] == [
        f"table players=2  # game {i}\n" for i in (2, 3, 4)
    ]
    by_size = GameStore(tmp_path, policy=ArchivePolicy(max_bytes=100))
    by_size.restore()
    by_size.append("table players=2  # game 5")
    by_size.archive()
    assert len(by_size.archived()) == 2  # 2 x 41 bytes fit in 100


def test_a_hand_without_actions_is_dealt_again(tmp_path: Path) -> None:
    """The deal of a hand is written in one go; if the power went before any action of
    that hand, the hand is dropped and its deal read again (its lines may be torn)."""
    lines = [*LINES, "1 quiero", "0 mazo", "dealer 1", "hand", "deal 0: 1E 2E 3E"]
    write_current(tmp_path, stored(lines))
    store = GameStore(tmp_path)
    assert store.restore() == lines[:7]
    assert store.damage is None
    assert store.path.read_bytes() == stored(lines[:7])


# ------------------------------------------------------- durability a test can see


def test_each_statement_is_one_write_then_one_fsync(tmp_path: Path) -> None:
    """Removing any fsync from the store fails this test (or the next ones)."""
    disk = FaultyDisk()
    store = GameStore(tmp_path, disk=disk)
    store.restore()
    store.append(LINES[0])
    block = "\n".join(LINES[1:4])
    disk.log.clear()
    store.append(block)
    assert [op for op, _ in disk.log] == ["write", "fsync"]
    block_bytes = stored(LINES[:4])[len(stored(LINES[:1])) :].decode()
    assert disk.log[0][1] == f"current.truco {block_bytes!r}"


def test_a_new_record_file_and_its_name_are_synced(tmp_path: Path) -> None:
    disk = FaultyDisk()
    store = GameStore(tmp_path, disk=disk)
    store.restore()
    store.append(LINES[0])
    ops = [op for op, _ in disk.log]
    assert ops.index("open_append") < ops.index("fsync_dir") < ops.index("write")
    assert ops[ops.index("write") + 1] == "fsync"


def test_a_rewrite_syncs_the_file_before_the_rename_and_the_directory_after(
    tmp_path: Path,
) -> None:
    disk = FaultyDisk()
    store = GameStore(tmp_path, disk=disk)
    store.restore()
    store.append(LINES[0])
    disk.log.clear()
    store.rewrite(LINES[:2])
    assert [op for op, _ in disk.log] == [
        "mkdir",
        "open_new",
        "write",
        "fsync",
        "replace",
        "fsync_dir",
    ]


def test_archiving_syncs_both_directories_after_the_link_and_unlink(tmp_path: Path) -> None:
    disk = FaultyDisk()
    store = GameStore(tmp_path, disk=disk)
    store.restore()
    store.append(LINES[0])
    disk.log.clear()
    store.archive()
    ops = [(op, d) for op, d in disk.log if op not in ("listdir", "stat")]
    assert ops[-4:] == [
        ("link", f"current.truco {store.archived()[0].name}"),
        ("unlink", "current.truco"),
        ("fsync_dir", "archive"),
        ("fsync_dir", tmp_path.name),
    ]


def test_a_damaged_original_is_synced_before_the_record_is_replaced(tmp_path: Path) -> None:
    write_current(tmp_path, stored(LINES) + b"\0\0\0\n")
    disk = FaultyDisk()
    GameStore(tmp_path, disk=disk).restore()
    ops = [op for op, _ in disk.log if op not in ("listdir", "stat", "read", "mkdir")]
    assert ops == [
        "open_new",
        "write",
        "fsync",
        "fsync_dir",  # damaged/...
        "open_new",
        "write",
        "fsync",
        "replace",
        "fsync_dir",
    ]  # current.truco


def test_finishing_an_interrupted_archive_syncs_the_unlink(tmp_path: Path) -> None:
    store = GameStore(tmp_path)
    store.restore()
    store.append(LINES[0])
    (tmp_path / "archive").mkdir()
    os.link(store.path, tmp_path / "archive" / "x.truco")
    disk = FaultyDisk()
    assert GameStore(tmp_path, disk=disk).restore() is None
    ops = [(op, d) for op, d in disk.log if op not in ("listdir", "stat", "read")]
    assert ops == [("unlink", "current.truco"), ("fsync_dir", tmp_path.name)]


def test_an_unreadable_record_is_moved_aside_durably_before_a_new_one(tmp_path: Path) -> None:
    write_current(tmp_path, stored(LINES))
    disk = FaultyDisk(errno.EIO)
    disk.fail_reads = True
    store = GameStore(tmp_path, disk=disk)
    assert store.restore() is None
    disk.fail_reads = False
    disk.log.clear()
    assert store.rewrite(["table players=2"])
    ops = [op for op, _ in disk.log if op not in ("listdir", "stat", "mkdir")]
    assert ops[:3] == ["replace", "fsync_dir", "fsync_dir"]
    assert ops[3:] == ["open_new", "write", "fsync", "replace", "fsync_dir"]


def test_a_sync_that_fails_after_the_archives_unlink_is_finished_later(tmp_path: Path) -> None:
    """Found by the fault-injection suite: the retry unlinked a file already gone."""
    disk = FaultyDisk(errno.EIO)
    store = GameStore(tmp_path, disk=disk)
    store.restore()
    store.append(LINES[0])
    real = disk.fsync_dir

    def failing(path: Path) -> None:
        if path.name == "archive" and not disk.failing:
            disk.failing = True
        real(path)

    disk.fsync_dir = failing  # type: ignore[method-assign]
    assert store.archive() is None and store.pending
    disk.fsync_dir = real  # type: ignore[method-assign]
    disk.failing = False
    assert store.flush() and not store.pending
    assert len(store.archived()) == 1 and not store.path.exists()
