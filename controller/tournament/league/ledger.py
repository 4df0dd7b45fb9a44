"""The league desk's journal: every record the central broker delivered, as it was
checked, in arrival order, on disk and tamper-evident.

It is the tournament desk's own :class:`~controller.tournament.desk.journal.AuditJournal`
(a hash chain of JSON lines, each with an HMAC of the journal key derived from the
league's secret; ``fsync`` before it counts; a torn last line cut off), with one line
per :class:`~.verify.LeagueRecordCheck`. The count is a fold of the journal
(:func:`.collect.collect`), so a league desk that restarts reads its journal and is
exactly where it was, and a record the broker delivers again after the restart (a
retained copy, a QoS 1 redelivery) is a repeat, never counted twice. ``truco-table
desk-audit`` checks it at rest like a tournament desk's (the league's name as the
tournament).
"""

from __future__ import annotations

import os
from typing import Any

from ..desk.journal import AuditJournal, JournalError, journal_key
from .collect import Collected, collect
from .model import Chico, League
from .verify import LeagueRecordCheck, RecordVerdict

__all__ = ["LeagueLedger", "check_from_body", "check_to_body"]

WHO = "liga"


def check_to_body(check: LeagueRecordCheck) -> dict[str, Any]:
    chico = check.chico
    return {
        "kind": "record",
        "venue": check.venue,
        "table": check.table,
        "game": check.game,
        "match": check.match,
        "verdict": check.verdict.value,
        "reason": check.reason,
        "chico": None if chico is None else [chico.winner, *chico.points],
        "sha256": check.record_sha256,
        "number": check.number,
    }


def check_from_body(body: dict[str, Any]) -> LeagueRecordCheck:
    """The check a journal line holds (its MAC already verified); :class:`JournalError`
    for a body this version did not write."""
    try:
        raw = body["chico"]
        chico = None if raw is None else Chico(int(raw[0]), (int(raw[1]), int(raw[2])))
        number = body["number"]
        return LeagueRecordCheck(
            str(body["venue"]),
            str(body["table"]),
            str(body["game"]),
            None if body["match"] is None else str(body["match"]),
            RecordVerdict(body["verdict"]),
            str(body["reason"]),
            chico,
            str(body["sha256"]),
            None if number is None else int(number),
        )
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise JournalError(f"a journal line this desk cannot read: {e}") from None


class LeagueLedger:
    """``open()`` replays the journal into the count; ``append(check)`` writes one more
    record's check, durably, and returns the count with it."""

    def __init__(
        self,
        folder: str | os.PathLike[str],
        league: League,
        league_secret: bytes,
        *,
        fsync: bool = True,
    ) -> None:
        self.league = league
        self.journal = AuditJournal(
            folder, league.name, journal_key(league_secret, league.name), fsync=fsync
        )
        self.checks: list[LeagueRecordCheck] = []

    def open(self) -> Collected:
        entries = self.journal.open()
        self.checks = [check_from_body(e.body) for e in entries if e.body.get("kind") == "record"]
        return collect(self.league, self.checks)

    def append(self, check: LeagueRecordCheck, t: float) -> Collected:
        self.journal.append(t, WHO, check_to_body(check))
        self.checks.append(check)
        return collect(self.league, self.checks)

    def close(self) -> None:
        self.journal.close()
