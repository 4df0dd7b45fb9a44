"""The league desk's journal: the count survives a restart exactly, a redelivered record
after it is a repeat, a changed line is found, a torn last line is cut off."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from controller.tournament.desk.journal import JournalError, JournalTampered, audit, journal_key
from controller.tournament.league.fixture import fixture
from controller.tournament.league.ledger import LeagueLedger, check_from_body, conflict_from_body
from controller.tournament.league.model import Chico
from controller.tournament.league.verify import LeagueRecordCheck, RecordVerdict

from .helpers import make_league

SECRET = bytes(range(16, 48))
LEAGUE = make_league(4, 2)
MATCH = fixture(LEAGUE)[0]


def _check(
    game: str, number: int, winner: int = 0, verdict: RecordVerdict = RecordVerdict.COUNTED
) -> LeagueRecordCheck:
    counted = verdict is RecordVerdict.COUNTED
    return LeagueRecordCheck(
        MATCH.venue, "mesa01", game, MATCH.id, verdict, "motivo",
        Chico(winner, (30, 10) if winner == 0 else (10, 30)) if counted else None,
        game.rjust(64, "0"), number,
    )  # fmt: skip


def test_the_count_survives_a_restart_and_a_redelivery_is_a_repeat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def spied(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spied)
    ledger = LeagueLedger(tmp_path, LEAGUE, SECRET)
    assert ledger.open().played == {}
    ledger.append(_check("g1", 1), 100.0)
    before = len(synced)
    count = ledger.append(_check("g9", 1, verdict=RecordVerdict.FORGED), 101.0)
    assert len(synced) > before  # on disk before it counts
    assert count.played == {MATCH.id: (Chico(0, (30, 10)),)} and len(count.flags) == 1
    ledger.close()

    again = LeagueLedger(tmp_path, LEAGUE, SECRET)
    restored = again.open()
    assert restored == count
    after = again.append(_check("g1", 1), 200.0)  # the retained record, delivered again
    assert after.played == count.played and after.repeats == 1
    after = again.append(_check("g2", 2), 201.0)
    assert after.played == {MATCH.id: (Chico(0, (30, 10)), Chico(0, (30, 10)))}
    again.close()
    verdict = audit(tmp_path / "journal.jsonl", LEAGUE.name, journal_key(SECRET, LEAGUE.name))
    assert verdict.ok and verdict.lines == 4 and verdict.keyed


def test_a_changed_line_is_found_and_a_torn_line_cut_off(tmp_path: Path) -> None:
    ledger = LeagueLedger(tmp_path, LEAGUE, SECRET, fsync=False)
    ledger.open()
    ledger.append(_check("g1", 1, winner=1), 1.0)
    ledger.append(_check("g2", 2), 2.0)
    ledger.close()
    path = tmp_path / "journal.jsonl"
    raw = path.read_bytes()
    path.write_bytes(raw + b'{"n": 3, "t"')  # a power cut in the middle of a line
    reopened = LeagueLedger(tmp_path, LEAGUE, SECRET, fsync=False)
    assert len(reopened.open().counted) == 2
    reopened.close()
    assert path.read_bytes() == raw
    path.write_bytes(raw.replace(b'"chico":[1,10,30]', b'"chico":[0,30,10]'))
    with pytest.raises(JournalTampered) as e:
        LeagueLedger(tmp_path, LEAGUE, SECRET, fsync=False).open()
    assert e.value.line == 1
    with pytest.raises(JournalTampered):  # another league's secret cannot read it
        path.write_bytes(raw)
        LeagueLedger(tmp_path, LEAGUE, bytes(32), fsync=False).open()


def test_a_journal_body_this_version_did_not_write_is_said_in_spanish() -> None:
    for read, body in ((check_from_body, {}), (conflict_from_body, {"venue": "bar-a"})):
        with pytest.raises(JournalError) as e:
            read(body)
        assert str(e.value).startswith("una línea del diario que esta mesa no sabe leer: ")
