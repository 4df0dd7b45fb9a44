"""The desk's audit journal: what it wrote reads back; any edit, removal, move or
insertion is found at its line; a torn last line (a power cut mid-write) is cut off;
without the secret a forger who recomputes the chain is not stopped, with it he is."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from controller.tournament.desk.journal import (
    AuditJournal,
    JournalTampered,
    _canonical,
    _genesis,
    audit,
    journal_key,
)

KEY = journal_key(b"s" * 32, "copa")


def written(folder: Path, n: int = 5, key: bytes | None = KEY) -> Path:
    j = AuditJournal(folder, "copa", key)
    assert j.open() == []
    for i in range(n):
        j.append(1000.0 + i, "organizador", {"action": {"type": "x", "i": i, "txt": "Ñandú\n"}})
    j.close()
    return folder / "journal.jsonl"


def test_reads_back_what_it_wrote(tmp_path: Path) -> None:
    path = written(tmp_path)
    j = AuditJournal(tmp_path, "copa", KEY)
    entries = j.open()
    assert [e.n for e in entries] == [1, 2, 3, 4, 5]
    assert entries[2].body == {"action": {"type": "x", "i": 2, "txt": "Ñandú\n"}}
    assert entries[2].who == "organizador" and entries[2].t == 1002.0
    j.append(2000.0, "mesa", {"k": 1})  # goes on from where it was
    j.close()
    assert audit(path, "copa", KEY).ok and audit(path, "copa", KEY).lines == 6


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def put(path: Path, ls: list[bytes]) -> None:
    path.write_bytes(b"".join(line + b"\n" for line in ls))


@pytest.mark.parametrize(
    "edit, bad",
    [
        ("change", 3),
        ("remove", 3),
        ("swap", 2),
        ("insert", 3),
        ("renumber", 3),
    ],
)
def test_an_edit_is_found_at_its_line(tmp_path: Path, edit: str, bad: int) -> None:
    path = written(tmp_path)
    ls = lines(path)
    if edit == "change":
        ls[2] = ls[2].replace(b'"i":2', b'"i":9')
    elif edit == "remove":
        del ls[2]
    elif edit == "swap":
        ls[1], ls[2] = ls[2], ls[1]
    elif edit == "insert":
        ls.insert(2, ls[1])
    elif edit == "renumber":
        obj = json.loads(ls[2])
        obj["n"] = 30
        ls[2] = _canonical(obj)
    put(path, ls)
    verdict = audit(path, "copa", KEY)
    assert not verdict.ok and verdict.first_bad_line == bad and verdict.lines == bad - 1
    with pytest.raises(JournalTampered) as e:
        AuditJournal(tmp_path, "copa", KEY).open()
    assert e.value.line == bad
    assert str(e.value) == f"línea {bad} del diario: {verdict.reason}"  # the organiser reads it


def forge(path: Path, key: bytes | None) -> None:
    """Change line 2 and recompute every later line's chain and mac with ``key``."""
    import hmac

    ls = lines(path)
    prev = hashlib.sha256(ls[0]).hexdigest()
    out = [ls[0]]
    for raw in ls[1:]:
        obj = json.loads(raw)
        if obj["n"] == 2:
            obj["body"]["action"]["i"] = 99
        obj["prev"] = prev
        fields = {k: v for k, v in obj.items() if k != "mac"}
        data = _canonical(fields)
        obj["mac"] = (
            hashlib.sha256(data).hexdigest()
            if key is None
            else hmac.new(key, data, hashlib.sha256).hexdigest()
        )
        line = _canonical(obj)
        out.append(line)
        prev = hashlib.sha256(line).hexdigest()
    put(path, out)


def test_a_forger_without_the_secret_is_found(tmp_path: Path) -> None:
    path = written(tmp_path)
    forge(path, journal_key(b"x" * 32, "copa"))  # a guessed key
    assert audit(path, "copa", KEY).first_bad_line == 2
    forge(path, None)  # or a plain hash
    assert audit(path, "copa", KEY).first_bad_line == 2


def test_without_the_secret_a_recomputed_chain_passes_and_says_so(tmp_path: Path) -> None:
    path = written(tmp_path, key=None)
    forge(path, None)
    verdict = audit(path, "copa", None)
    assert verdict.ok and not verdict.keyed  # what the module docstring admits


def test_another_tournaments_journal_does_not_check(tmp_path: Path) -> None:
    path = written(tmp_path)
    assert audit(path, "liga", journal_key(b"s" * 32, "liga")).first_bad_line == 1
    assert _genesis("copa") != _genesis("liga")


@pytest.mark.parametrize("cut", [1, 10, -1])
def test_a_torn_last_line_is_cut_off(tmp_path: Path, cut: int) -> None:
    path = written(tmp_path)
    raw = path.read_bytes()
    last = raw[:-1].rfind(b"\n") + 1
    path.write_bytes(raw[: last + cut] if cut > 0 else raw[:-1])  # torn, or only its newline
    verdict = audit(path, "copa", KEY)
    assert verdict.ok and verdict.torn_tail and verdict.lines == 4
    j = AuditJournal(tmp_path, "copa", KEY)
    assert [e.n for e in j.open()] == [1, 2, 3, 4]
    j.append(3000.0, "organizador", {"again": True})
    j.close()
    verdict = audit(path, "copa", KEY)
    assert verdict.ok and not verdict.torn_tail and verdict.lines == 5


def test_garbage_in_the_middle_is_tampering_not_a_torn_tail(tmp_path: Path) -> None:
    path = written(tmp_path)
    ls = lines(path)
    ls[1] = b"\x00" * 20
    put(path, ls)
    assert audit(path, "copa", KEY).first_bad_line == 2


def test_no_journal_yet(tmp_path: Path) -> None:
    verdict = audit(tmp_path / "journal.jsonl", "copa", KEY)
    assert verdict.ok and verdict.reason == "todavía no hay diario"


def test_an_unreadable_journal_says_why_in_spanish(tmp_path: Path) -> None:
    (tmp_path / "journal.jsonl").mkdir()  # a folder where the journal should be
    verdict = audit(tmp_path / "journal.jsonl", "copa", KEY)
    assert not verdict.ok and verdict.first_bad_line == 1
    assert verdict.reason == "no se puede leer: es una carpeta, no un archivo: nombrá el archivo"
