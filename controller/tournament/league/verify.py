"""The league desk's check of one sealed record collected through a venue's bridge.

A record arrives at the central broker as ``league/<venue>/tables/<table>/records/<game>``:
the venue is the one whose account could write there (the central ACL), the table the
one its topic names. The record counts only if all of this holds:

1. the venue is a club of the league;
2. its seal (v2) verifies with the key of that table at that venue, derived from the
   league's secret (:func:`.keys.venue_table_key`), and binds the league, that table,
   that game and a match (the tournament desk's own :class:`~controller.tournament.desk.
   records.RecordJudge` does this and replays the record);
3. the match is in the league's fixture, assigned to that venue, and due: its matchday's
   date has come (a record for a later matchday is *not due*);
4. the game was played at the league's house rules, was won, and the table reported the
   score the record replays to.

A venue that was taken over holds its own secret, so it can seal whatever it likes for
its own tables; what it cannot do is get a record counted for a match of another venue
(3) or as another venue's table (2): at most it spoils its own matches, and each refusal
says why, in Spanish, for the league's organiser. Pure: no I/O, no clock (``now`` is
given, for the tournament judge's ``finished_at`` only).
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from ..desk.records import RecordJudge
from ..desk.wording import detail_text
from ..wire.messages import Record
from ..wire.seal import NO_MATCH
from .errors import LeagueError
from .fixture import fixture
from .keys import venue_table_key
from .model import Chico, League

__all__ = ["LeagueRecordCheck", "RecordVerdict", "check_league_record", "split_league_topic"]


class RecordVerdict(StrEnum):
    COUNTED = "counted"  # intact, the venue's own match, at the league's rules: it counts
    UNKNOWN_VENUE = "unknown-venue"  # under the prefix of a venue the league does not have
    FORGED = "forged"  # the seal does not verify with that table's key at that venue
    UNSEALED = "unsealed"
    NOT_A_MATCH = "not-a-match"  # sealed for no match, or one not in the fixture
    WRONG_VENUE = "wrong-venue"  # a match of the fixture, but assigned to another venue
    PROBLEMS = "problems"  # other house rules, not won, or a score other than reported
    NOT_DUE = "not-due"  # a match of a matchday not open yet (its date still to come)
    NOT_PLAYED = "not-played"  # the table's events never showed this game played so
    HELD = "held"  # the desk did not see it played (:mod:`..desk.liveness`): the organiser decides


@dataclass(frozen=True)
class LeagueRecordCheck:
    venue: str
    table: str
    game: str
    match: str | None
    verdict: RecordVerdict
    reason: str  # Spanish, for the league's organiser
    chico: Chico | None  # what it counts (only when COUNTED)
    record_sha256: str
    number: int | None = None  # which chico of the match the table said it was (1-based)
    seq: int | None = None  # the record's seq in its table's stream

    @property
    def counted(self) -> bool:
        return self.verdict is RecordVerdict.COUNTED


def split_league_topic(topic: str) -> tuple[str, str, str] | None:
    """``(venue, table, game)`` of ``league/<venue>/tables/<table>/records/<game>``."""
    parts = topic.split("/")
    if len(parts) != 6 or parts[0] != "league" or parts[2] != "tables" or parts[4] != "records":
        return None
    venue, table, game = parts[1], parts[3], parts[5]
    return (venue, table, game) if venue and table and game else None


def check_league_record(
    league: League,
    league_secret: bytes,
    venue: str,
    table: str,
    record: Record,
    *,
    now: float = 0.0,
    today: datetime.date | None = None,
    key_for: Callable[[str], bytes | None] | None = None,
) -> LeagueRecordCheck:
    """Whether ``record``, collected under ``venue``'s prefix as ``table``'s, counts;
    ``today`` (the league desk's date when it arrived): a match of a later matchday is
    not due yet (``None``: not checked). ``key_for``: the venue's tables' keys as the
    league desk holds them now (a table re-keyed after a key conflict has its new one:
    :meth:`.desk.LeagueDesk.rekey`); ``None``: derived from the league's secret."""
    digest = hashlib.sha256(record.record.encode("utf-8")).hexdigest()
    match = record.match if record.match not in (None, NO_MATCH) else None

    def out(verdict: RecordVerdict, reason: str, chico: Chico | None = None) -> LeagueRecordCheck:
        return LeagueRecordCheck(
            venue, table, record.game, match, verdict, reason, chico, digest, record.chico,
            record.seq,
        )  # fmt: skip

    if venue not in {c.id for c in league.clubs}:
        return out(RecordVerdict.UNKNOWN_VENUE, f"La sede {venue!r} no está en la liga")
    judge = RecordJudge(
        league.name,
        key_for=key_for or (lambda t: venue_table_key(league_secret, league.name, venue, t)),
        has_secret=True,
        rules=league.rules.house,
    )
    result = judge.judge(table, record, "", now)
    if result.verdict == "unsealed":
        return out(RecordVerdict.UNSEALED, "El registro no tiene sello: no cuenta")
    if result.verdict != "intact":
        return out(
            RecordVerdict.FORGED,
            f"El sello no es el de {table} en la sede {venue}: {detail_text(result.detail)}",
        )
    if match is None:
        return out(RecordVerdict.NOT_A_MATCH, "El registro no es de ningún partido de la liga")
    scheduled = {m.id: m for m in fixture(league)}.get(match)
    if scheduled is None:
        return out(RecordVerdict.NOT_A_MATCH, f"El partido {match} no está en el fixture")
    if scheduled.venue != venue:
        return out(
            RecordVerdict.WRONG_VENUE,
            f"El partido {match} se juega en la sede {scheduled.venue}, no en {venue}",
        )
    day = scheduled.date
    if today is not None and day > today:
        return out(
            RecordVerdict.NOT_DUE,
            f"El partido {match} es de la {scheduled.label}, el {day.strftime('%d/%m/%Y')}: "
            "todavía no se juega, no cuenta",
        )
    if result.problems or result.winner is None:
        return out(
            RecordVerdict.PROBLEMS,
            "El registro no cuenta: " + "; ".join(detail_text(p) for p in result.problems),
        )
    try:
        chico = Chico(result.winner, (result.score[0], result.score[1]))
    except LeagueError as e:
        return out(RecordVerdict.PROBLEMS, f"El registro no cuenta: {e}")
    return out(RecordVerdict.COUNTED, f"Cuenta para {match} ({scheduled.label})", chico)
