"""The table's persistent outbox: numbering, torn ends, damage that never reuses a seq,
short and failed writes cut back, acknowledgements."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from controller.tournament.table.outbox import MIN_LINE, Entry, Outbox
from controller.tournament.wire.seal import TournamentKey


def fill(box: Outbox, n: int) -> None:
    for i in range(n):
        box.append("events", f'{{"n":{i},"text":"Ganó"}}'.encode())


def journal(path: Path) -> bytes:
    return (path / "journal.jsonl").read_bytes()


def test_outbox_numbers_in_order_and_survives_reopening(tmp_path: Path) -> None:
    box = Outbox(tmp_path)
    for i in range(5):
        entry = box.append("events", f'{{"n":{i}}}'.encode(), retain=i == 4)
        assert entry.seq == i + 1
    box.close()
    again = Outbox(tmp_path)
    assert [e.seq for e in again] == [1, 2, 3, 4, 5]
    assert [json.loads(e.payload)["n"] for e in again] == [0, 1, 2, 3, 4]
    assert [e.retain for e in again] == [False] * 4 + [True]
    assert again.append("events", b"{}").seq == 6  # numbering goes on, never reused
    assert again.acked == 0 and [e.seq for e in again.unacked()] == [1, 2, 3, 4, 5, 6]
    assert again.damage is None and again.lost == []


@pytest.mark.parametrize(
    "torn", [b'{"seq":3,"topic":"events","pay', '{"seq":3,"p":"ó'.encode()[:-1]]
)
def test_outbox_cuts_a_torn_last_line_quietly(tmp_path: Path, torn: bytes) -> None:
    box = Outbox(tmp_path)
    box.append("events", b'{"a":1}')
    box.append("events", b'{"a":2}')
    box.close()
    with open(tmp_path / "journal.jsonl", "ab") as f:
        f.write(torn)  # the power went while writing: never sent
    again = Outbox(tmp_path)
    assert again.dropped is not None and len(again) == 2 and again.damage is None
    assert journal(tmp_path).endswith(b"}\n")
    assert again.append("events", b"{}").seq == 3
    assert not (tmp_path / "damaged").exists()


def test_a_gap_in_the_seqs_is_filled_as_lost(tmp_path: Path) -> None:
    lines = [
        {"seq": 1, "topic": "events", "payload": "{}"},
        {"seq": 3, "topic": "events", "payload": "{}"},
    ]
    (tmp_path / "journal.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    box = Outbox(tmp_path)
    assert [e.seq for e in box] == [1, 2, 3] and box.lost == [2]
    assert json.loads(box.entries(2, 2)[0].payload)["kind"] == "lost"
    assert box.append("events", b"{}").seq == 4


def test_damage_in_the_middle_never_reuses_a_seq(tmp_path: Path) -> None:
    """Issue 13: damage in the outbox's middle must not give its seqs again."""
    box = Outbox(tmp_path)
    fill(box, 10)
    box.close()
    data = bytearray(journal(tmp_path))
    at = data.index(b'"seq":4,') - 1
    end = data.index(b'"seq":7,') - 1
    data[at : end - 1] = bytes(end - 1 - at)  # lines 4..6 zeroed (a page of an SD card)
    (tmp_path / "journal.jsonl").write_bytes(bytes(data))
    again = Outbox(tmp_path, clock=lambda: 1_700_000_000.0)
    assert [e.seq for e in again] == list(range(1, 11))
    assert again.lost == [4, 5, 6] and again.damage is not None
    assert [json.loads(e.payload)["n"] for e in again.entries(7, 10)] == [6, 7, 8, 9]
    assert again.append("events", b"{}").seq == 11
    [aside] = (tmp_path / "damaged").iterdir()
    assert aside.read_bytes() == bytes(data)
    third = Outbox(tmp_path)  # the journal was rewritten whole: nothing damaged now
    assert third.damage is None and third.last_seq == 11


@pytest.mark.parametrize("kind", ["zeroed tail", "nul tail", "garbage", "zeroed 4 KiB page"])
def test_a_damaged_end_skips_every_seq_it_may_have_held(tmp_path: Path, kind: str) -> None:
    box = Outbox(tmp_path)
    fill(box, 100)
    box.close()
    data = journal(tmp_path)
    size = len(data)
    if kind == "zeroed tail":
        data = data[: size - 300] + bytes(300)
    elif kind == "nul tail":
        data = data + bytes(700)
    elif kind == "garbage":
        data = data[: size - 300] + os.urandom(300).replace(b"\n", b"x") + b"\n"
    else:
        page = (size // 4096) * 4096 - 4096
        data = data[:page] + bytes(4096) + data[page + 4096 :]
    (tmp_path / "journal.jsonl").write_bytes(data)
    again = Outbox(tmp_path)
    assert again.damage is not None
    good = [e for e in again if e.seq not in again.lost]
    assert all(json.loads(e.payload)["n"] == e.seq - 1 for e in good)  # kept where they were
    assert again.next_seq() > 100  # no seq the damage may have held is given again
    assert again.next_seq() <= 101 + len(data) // MIN_LINE


def test_a_truncated_journal_below_acked_is_filled_up_to_acked(tmp_path: Path) -> None:
    box = Outbox(tmp_path)
    fill(box, 10)
    for seq in range(1, 9):
        box.ack(seq)
    box.close()  # acked = 8 saved
    data = journal(tmp_path)
    cut = data.index(b'{"seq":6,')
    (tmp_path / "journal.jsonl").write_bytes(data[:cut])  # the card lost the end
    again = Outbox(tmp_path)
    assert again.acked == 8 and again.lost == [6, 7, 8]
    assert again.append("events", b"{}").seq == 9  # 9 and 10 were never acknowledged


def test_outbox_acks_advance_over_contiguous_seqs_only(tmp_path: Path) -> None:
    box = Outbox(tmp_path)
    for _ in range(6):
        box.append("events", b"{}")
    for seq in (2, 3, 5):
        box.ack(seq)
    assert box.acked == 0
    assert [e.seq for e in box.unacked()] == [1, 4, 6]
    box.ack(1)
    assert box.acked == 3
    box.ack(4)
    assert box.acked == 5
    box.ack(99)  # not journaled: ignored
    assert box.acked == 5
    assert box.save_acked() and not box.save_acked()
    box.close()
    again = Outbox(tmp_path)
    assert again.acked == 5 and [e.seq for e in again.unacked()] == [6]
    assert [e.seq for e in again.entries(2, 4)] == [2, 3, 4]


def test_an_acked_beyond_the_journal_is_never_given_again(tmp_path: Path) -> None:
    Outbox(tmp_path).append("events", b"{}")
    (tmp_path / "acked").write_text("40\n")
    box = Outbox(tmp_path)
    assert box.acked == 40 and box.lost == list(range(2, 41))
    assert box.append("events", b"{}").seq == 41


def test_a_short_write_is_cut_back_and_the_seq_taken_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = Outbox(tmp_path)
    fill(box, 3)
    real = os.write
    calls = {"n": 0}

    def short(fd: int, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return real(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", short)
    for _ in range(2):
        with pytest.raises(OSError):
            box.append("events", b'{"x":1}')
    monkeypatch.setattr(os, "write", real)
    assert box.append("events", b'{"x":2}').seq == 4
    box.close()
    again = Outbox(tmp_path)
    assert again.damage is None and [e.seq for e in again] == [1, 2, 3, 4]
    assert json.loads(again.entries(4, 4)[0].payload) == {"x": 2}


def test_a_failed_fsync_rewrites_the_journal_before_the_next_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = Outbox(tmp_path)
    fill(box, 2)
    real = os.fsync

    def failing(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing)
    with pytest.raises(OSError):
        box.append("events", b'{"x":1}')
    monkeypatch.setattr(os, "fsync", real)
    assert box.append("events", b'{"x":2}').seq == 3
    box.close()
    assert [e.seq for e in Outbox(tmp_path)] == [1, 2, 3]


def test_a_filler_makes_the_lost_messages(tmp_path: Path) -> None:
    lines = [{"seq": s, "topic": "events", "payload": "{}"} for s in (1, 4)]
    (tmp_path / "journal.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    seen: list[tuple[int, int | None]] = []

    def filler(seq: int, before: Entry | None) -> tuple[str, bytes]:
        seen.append((seq, before.seq if before is not None else None))
        return "events", b'{"lost":%d}' % seq

    box = Outbox(tmp_path, filler=filler)
    assert seen == [(2, 1), (3, 1)]
    assert [e.payload for e in box.entries(2, 3)] == [b'{"lost":2}', b'{"lost":3}']


def test_the_publishers_lost_messages_are_signed_events_the_desk_accepts(
    tmp_path: Path, key: TournamentKey
) -> None:
    from controller.tournament.sim.mosquitto import free_port
    from controller.tournament.table.publisher import TablePublisher
    from controller.tournament.wire.messages import Event, EventKind, parse_message
    from controller.tournament.wire.topics import table_prefix

    def publisher() -> TablePublisher:
        return TablePublisher(
            "mesa01", "127.0.0.1", free_port(), outbox_dir=tmp_path, tournament="t", key=key
        )

    first = publisher()
    for text in ("a", "b", "c"):
        first._event(EventKind.ACTION, text)
    first.close(timeout=0.1)
    data = journal(tmp_path)
    at = data.index(b'"seq":2,') - 1
    end = data.index(b'"seq":3,') - 2
    (tmp_path / "journal.jsonl").write_bytes(data[:at] + bytes(end - at) + data[end:])
    again = publisher()
    assert again.outbox.lost == [2]
    [lost] = again.outbox.entries(2, 2)
    prefix = table_prefix("t", "mesa01")
    message = parse_message(
        prefix.rsplit("/", 1)[0] + "/",
        f"{prefix}/{lost.topic}",
        lost.payload,
        lambda table: key.key,
    )
    assert isinstance(message, Event) and message.kind is EventKind.LOST and message.seq == 2
    assert message.game == "mesa01-g001"
    again.close(timeout=0.1)


# ------------------------------------------- issue 45: a damaged newline between entries


def _newlines(data: bytes) -> list[int]:
    return [i for i, b in enumerate(data) if b == 0x0A]


@pytest.mark.parametrize("damage", ["replaced", "zeroed", "deleted"])
@pytest.mark.parametrize("which", ["first", "middle", "before the last", "the last"])
def test_an_entry_whose_preceding_newline_is_damaged_is_read_as_the_entry_it_is(
    tmp_path: Path, damage: str, which: str
) -> None:
    """Issue 45: the newline before an intact entry damaged made that entry (and the one
    before it) a "lost" filler, though both still check; the desk may not have had it."""
    box = Outbox(tmp_path)
    fill(box, 6)
    box.ack(1)
    box.close()  # acked = 1: the desk has not had 2..6
    data = bytearray(journal(tmp_path))
    at = _newlines(bytes(data))[
        {"first": 0, "middle": 2, "before the last": 4, "the last": 5}[which]
    ]
    if damage == "replaced":
        data[at] = ord("x")
    elif damage == "zeroed":
        data[at] = 0
    else:
        del data[at]
    (tmp_path / "journal.jsonl").write_bytes(bytes(data))
    again = Outbox(tmp_path)
    assert again.lost == [] and again.damage is None
    assert [json.loads(e.payload)["n"] for e in again] == [0, 1, 2, 3, 4, 5]
    assert [e.seq for e in again.unacked()] == [2, 3, 4, 5, 6]  # still to be sent
    assert (
        journal(tmp_path)
        == b"".join(  # the newline put back
            line + b"\n" for line in bytes(journal(tmp_path)).split(b"\n")[:-1]
        )
    )
    assert len(_newlines(journal(tmp_path))) == 6
    third = Outbox(tmp_path)
    assert third.damage is None and third.last_seq == 6
    assert third.append("events", b"{}").seq == 7


def test_every_single_damaged_newline_keeps_every_entry(tmp_path: Path) -> None:
    box = Outbox(tmp_path)
    fill(box, 12)
    box.close()
    good = journal(tmp_path)
    for n, at in enumerate(_newlines(good)):
        for byte in (0x00, 0x0B, 0x20, 0x7B, 0x7D, 0xFF):
            folder = tmp_path / f"j{n}-{byte}"
            folder.mkdir()
            data = bytearray(good)
            data[at] = byte
            (folder / "journal.jsonl").write_bytes(bytes(data))
            again = Outbox(folder)
            assert again.lost == [] and again.last_seq == 12, (at, byte)
            assert [json.loads(e.payload)["n"] for e in again] == list(range(12))


def test_a_damaged_newline_next_to_a_damaged_entry_keeps_the_whole_one(tmp_path: Path) -> None:
    """The check decides: the entry after the damaged newline checks and is kept where it
    was; the one whose bytes changed is damage, filled as lost."""
    box = Outbox(tmp_path)
    fill(box, 5)
    box.close()
    data = bytearray(journal(tmp_path))
    first, second = _newlines(bytes(data))[1:3]
    data[second] = ord("#")  # the newline after entry 3...
    data[first + 12] ^= 0x01  # ...and a byte inside entry 3
    (tmp_path / "journal.jsonl").write_bytes(bytes(data))
    again = Outbox(tmp_path)
    assert again.damage is not None and again.lost == [3]
    assert [json.loads(e.payload)["n"] for e in again if e.seq != 3] == [0, 1, 3, 4]
    assert again.next_seq() == 6
