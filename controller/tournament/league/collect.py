"""The league desk's count: from the checked records, the chicos of each match, each
counted once, and everything that was not counted, flagged.

Pure: a fold over :class:`~.verify.LeagueRecordCheck` values in the order they were
collected (what the central broker delivered). A record received again (the same game
of the same table at the same venue, the same bytes: a QoS 1 redelivery, a retained copy
after a restart) counts once and is not flagged; a *different* record of a game already
collected is flagged and the first one stays; so is a second record claiming a chico of
a match already counted, and a chico past the one that decided the match. Chicos count
in the order the tables numbered them (``chico 1 de 3``), whatever order they arrived in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .fixture import fixture
from .model import Chico, League
from .standings import match_result
from .verify import LeagueRecordCheck

__all__ = ["Collected", "Flag", "KeyConflict", "collect"]


@dataclass(frozen=True)
class Flag:
    """A record that was not counted, and why (Spanish)."""

    check: LeagueRecordCheck
    reason: str


@dataclass(frozen=True)
class KeyConflict:
    """Two messages of one table under one seq: someone else holds its key. ``games``:
    the games of that table counted from that seq on (the ones to review)."""

    venue: str
    table: str
    seq: int
    games: tuple[str, ...]

    @property
    def text(self) -> str:
        """What the league's organiser reads (Spanish)."""
        games = (f"contadas desde ese número: {', '.join(self.games)}: revisalas"
                 if self.games else "ninguna partida contada desde ese número")  # fmt: skip
        return (f"{self.table} de la sede {self.venue}: llegaron dos mensajes distintos con el "
                f"número {self.seq}: alguien más tiene la clave de la mesa; {games}")  # fmt: skip


@dataclass(frozen=True)
class Collected:
    played: Mapping[str, tuple[Chico, ...]]  # match id: its counted chicos, in chico order
    counted: tuple[LeagueRecordCheck, ...]  # the records that count, in arrival order
    flags: tuple[Flag, ...]  # the records that do not (arrival order; past a decision last)
    repeats: int  # the same record received again (counted once, not flagged)
    conflicts: tuple[KeyConflict, ...] = ()  # first on the league's page


def collect(
    league: League,
    checks: Iterable[LeagueRecordCheck],
    conflicts: Iterable[tuple[str, str, int]] = (),
) -> Collected:
    """The league's count after ``checks`` (in arrival order) and the key conflicts
    ``(venue, table, seq)`` seen. One record is one row: the same bytes again are a
    repeat, whatever came before them."""
    by_id = {m.id: m for m in fixture(league)}
    seen: dict[tuple[str, str, str], str] = {}  # (venue, table, game): sha256
    records: set[tuple[str, str, str, str]] = set()  # every record taken, by its bytes
    numbered: dict[tuple[str, int], LeagueRecordCheck] = {}  # (match, chico): its record
    counted: list[LeagueRecordCheck] = []
    flags: list[Flag] = []
    repeats = 0
    for check in checks:
        key = (check.venue, check.table, check.game)
        if (*key, check.record_sha256) in records:
            repeats += 1
            continue
        records.add((*key, check.record_sha256))
        if key in seen:
            flags.append(
                Flag(check, f"Llegó otro registro distinto de {check.game} ({check.venue})")
            )
            continue
        seen[key] = check.record_sha256
        if not check.counted or check.match is None or check.chico is None:
            flags.append(Flag(check, check.reason))
            continue
        number = check.number if check.number is not None else _next_number(numbered, check.match)
        other = numbered.get((check.match, number))
        if other is not None:
            flags.append(
                Flag(
                    check,
                    f"El chico {number} de {check.match} ya contó con {other.game} "
                    f"(mesa {other.table}): {check.game} no cuenta",
                )
            )
            continue
        numbered[(check.match, number)] = check
        counted.append(check)
    played: dict[str, tuple[Chico, ...]] = {}
    kept: list[LeagueRecordCheck] = []
    for match_id in sorted({m for m, _ in numbered}):
        chicos: list[Chico] = []
        for number in sorted(n for m, n in numbered if m == match_id):
            check = numbered[(match_id, number)]
            assert check.chico is not None
            if match_result(league.rules, by_id[match_id], chicos).winner is not None:
                flags.append(Flag(check, f"{match_id} ya estaba definido: el chico {number} sobra"))
                continue
            chicos.append(check.chico)
            kept.append(check)
        played[match_id] = tuple(chicos)
    keep = {id(c) for c in kept}
    final = tuple(c for c in counted if id(c) in keep)
    clashes: list[KeyConflict] = []
    for venue, table, seq in conflicts:
        if any((k.venue, k.table) == (venue, table) for k in clashes):
            continue  # one item per table: its first collision
        games = tuple(f"{c.game} ({c.match})" for c in final
                      if (c.venue, c.table) == (venue, table) and (c.seq or 0) >= seq)  # fmt: skip
        clashes.append(KeyConflict(venue, table, seq, games))
    return Collected(played, final, tuple(flags), repeats, tuple(clashes))


def _next_number(numbered: Mapping[tuple[str, int], LeagueRecordCheck], match: str) -> int:
    """A record that does not say its chico: the next one of its match."""
    return 1 + max((n for m, n in numbered if m == match), default=0)
