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
from collections.abc import Iterable
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
        "seq": check.seq,
    }


def check_from_body(body: dict[str, Any]) -> LeagueRecordCheck:
    """The check a journal line holds (its MAC already verified); :class:`JournalError`
    for a body this version did not write."""
    try:
        raw = body["chico"]
        chico = None if raw is None else Chico(int(raw[0]), (int(raw[1]), int(raw[2])))
        number = body["number"]
        seq = body.get("seq")  # journals written before issue 43 have none
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
            None if seq is None else int(seq),
        )
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise JournalError(f"una línea del diario que esta mesa no sabe leer: {e}") from None


def conflict_from_body(body: dict[str, Any]) -> tuple[str, str, int]:
    """A key conflict a journal line holds: ``(venue, table, seq)``."""
    try:
        return str(body["venue"]), str(body["table"]), int(body["seq"])
    except (KeyError, TypeError, ValueError) as e:
        raise JournalError(f"una línea del diario que esta mesa no sabe leer: {e}") from None


def fold_conflicts(bodies: Iterable[dict[str, Any]]) -> list[tuple[str, str, int]]:
    """The key conflicts still open after a journal's lines, in order: a ``conflict``
    line opens one, a ``rekey`` line (the organiser gave that table a new key:
    :meth:`.desk.LeagueDesk.rekey`) closes that table's."""
    open_: list[tuple[str, str, int]] = []
    for body in bodies:
        if body.get("kind") == "conflict":
            open_.append(conflict_from_body(body))
        elif body.get("kind") == "rekey":
            venue, table = str(body.get("venue")), str(body.get("table"))
            open_ = [c for c in open_ if (c[0], c[1]) != (venue, table)]
    return open_


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
        self.conflicts: list[tuple[str, str, int]] = []  # (venue, table, seq)

    def open(self) -> Collected:
        entries = self.journal.open()
        self.checks = [check_from_body(e.body) for e in entries if e.body.get("kind") == "record"]
        self.conflicts = fold_conflicts(e.body for e in entries)
        return self.count()

    def count(self) -> Collected:
        return collect(self.league, self.checks, self.conflicts)

    def has(self, check: LeagueRecordCheck) -> bool:
        """The same record of the same game was journaled already."""
        key = (check.venue, check.table, check.game, check.record_sha256)
        return any((c.venue, c.table, c.game, c.record_sha256) == key for c in self.checks)

    def append(self, check: LeagueRecordCheck, t: float) -> Collected:
        self.journal.append(t, WHO, check_to_body(check))
        self.checks.append(check)
        return self.count()

    def append_conflict(self, venue: str, table: str, seq: int, t: float) -> Collected:
        """Two messages of ``table`` at ``venue`` under one ``seq``: someone else holds
        its key (journaled: a restarted desk still shows it first)."""
        body = {"kind": "conflict", "venue": venue, "table": table, "seq": seq}
        self.journal.append(t, WHO, body)
        self.conflicts.append((venue, table, seq))
        return self.count()

    def append_rekey(self, venue: str, table: str, t: float) -> Collected:
        """The organiser gave ``table`` at ``venue`` a new key: its key conflict is
        closed (journaled: a restarted desk no longer shows it)."""
        self.journal.append(t, WHO, {"kind": "rekey", "venue": venue, "table": table})
        self.conflicts = [c for c in self.conflicts if (c[0], c[1]) != (venue, table)]
        return self.count()

    def close(self) -> None:
        self.journal.close()
