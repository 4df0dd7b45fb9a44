"""The tournament at the desk: the competition kept in the audit journal, fed by the
tables' verified records, pairing rounds and assigning tables by itself.

:class:`Organiser` holds a :class:`~controller.tournament.competition.model.Tournament`
and its :class:`~.journal.AuditJournal`. Every change is an action of
:mod:`controller.tournament.competition` written to the journal *before* it takes
effect; a desk that restarts (or loses its power) replays the journal and is where it
was. Changes come from:

- the organiser (:meth:`Organiser.do`): registration, seeding, the start, a manual
  pairing or table, closing a round, a walkover, an override with its reason;
- the tables (:meth:`Organiser.count`): a finished game counts for its match only
  when its record is intact (sealed with its table's key for this tournament, table,
  game and match), replays to a won game under the tournament's rules, and was played
  at the table the match was assigned to. Nothing else moves a result.

After each change, with ``auto`` (the default), the desk moves the tournament on by
itself: a closed round gets the next one paired, every waiting match goes to a free
table of the roster (in roster order), and each table whose assignment changed is
told (``publish``: an :class:`~controller.tournament.wire.messages.Assignment`, numbered
so a table can tell a newer one from a replayed one: each above the last told and the
journal's line count; each is written and synced to ``assignments.jsonl`` before it is
sent, so a desk killed at any moment never uses a number twice).
"""

from __future__ import annotations

import collections
import dataclasses
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..competition.codec import action_from_json, action_to_json
from ..competition.model import (
    Action,
    AssignTable,
    CompetitionError,
    GameCounted,
    Match,
    MatchStatus,
    PairRound,
    Tournament,
)
from ..competition.tournament import apply, free_matches
from ..wire.messages import (
    MAX_COUNTER,
    Assignment,
    Event,
    RejectedMessage,
    assignment_digest,
    assignment_from,
)
from ..wire.seal import NO_MATCH, TournamentKey
from .journal import AuditJournal, JournalError, audit, journal_key
from .records import GameResult
from .snapshot import Snapshot
from .wording import detail_text

__all__ = ["Attention", "Organiser"]

log = logging.getLogger(__name__)

#: Who a journal line says did it.
ORGANISER: Final = "organizador"
DESK: Final = "mesa de control"
AUDIT_S: Final = 10.0  # the journal on the disk is checked again this often
MAX_NAME: Final = 64  # what the table takes in an assignment's names and label
ATTENTION_PER_TABLE: Final = 20  # a table's items on the list (the rest are counted)
SEEN_FILE: Final = "avisos-vistos.json"  # the organiser's items marked as seen
STAYS: Final = ("key-conflict",)  # items a visto does not take off the list
#: A match settled by the organiser: a game played at its table after it counts for nothing.
SETTLED_BY_HAND: Final = (MatchStatus.WALKOVER, MatchStatus.OVERRIDDEN)
TOLD_FILE: Final = "assignments.jsonl"  # every assignment told, written before it is sent
TOLD_RESTORED: Final = 4  # of what was told before a restart, the last kept per table
TOLD_KEPT: Final = 32  # assignments remembered per table, to check the tables' reports
#: What the organiser folds from the journal: what the desk's snapshot keeps of it.
FOLDED: Final = ("_tournament", "requests", "attention", "attention_more")
UNDECIDED: Final = (MatchStatus.ASSIGNED, MatchStatus.PLAYING)
#: A record's verdict as the organiser reads it.
VERDICT: Final = {
    "intact": "íntegro",
    "tampered": "alterado",
    "unsealed": "sin sello",
    "unreadable": "ilegible",
    "unchecked": "sin verificar (la mesa de control no tiene la clave)",
}


@dataclass(frozen=True)
class Attention:
    """Something about the competition a person must look at (shown first on the
    organiser's page)."""

    what: str  # a short kind: record-unknown-match, wrong-table, extra-game, no-table
    text: str  # Spanish, for the organiser
    match: str | None = None
    table: str | None = None
    game: str | None = None

    @property
    def key(self) -> str:
        """What names the item when the organiser marks it as seen (*visto*)."""
        return f"{self.what}:{self.table or ''}:{self.game or self.match or ''}"


class Organiser:
    """The desk's competition (see the module docstring); thread-safe.

    ``tables``: the roster, in the order free tables are given out. ``publish``: how
    an assignment reaches a table (the MQTT client's); ``None`` keeps them in
    :attr:`assignments` only (tests, a desk without a broker yet).
    """

    def __init__(
        self,
        folder: str | Path,
        name: str,
        *,
        key: TournamentKey | None,
        tables: Sequence[str],
        publish: Callable[[Assignment], None] | None = None,
        auto: bool = True,
        fsync: bool = True,
        clock: Callable[[], float] = time.time,
        lock: threading.RLock | None = None,
        resume: Snapshot | None = None,
    ) -> None:
        #: The desk shares its own (``DeskState.lock``): one lock, no order to get wrong.
        self.lock = lock if lock is not None else threading.RLock()
        self.clock = clock
        self.tables = tuple(tables)
        self.auto = auto
        self.publish = publish
        self.journal = AuditJournal(
            folder, name, journal_key(key.key, name) if key is not None else None, fsync=fsync
        )
        self.attention: list[Attention] = []
        #: Per table, the items beyond ``ATTENTION_PER_TABLE``, only counted.
        self.attention_more: collections.Counter[str] = collections.Counter()
        #: Called after every change (the desk rewrites its exports).
        self.on_change: list[Callable[[], None]] = []
        #: What each table was last told (None: not told since the desk started).
        self.assignments: dict[str, Assignment] = {}
        #: Every assignment told to each table by this run of the desk, by its ``n``
        #: (the last ``TOLD_KEPT``): what the tables' ``assigned`` events must match.
        self.told: dict[str, collections.OrderedDict[int, Assignment]] = {}
        #: The highest counter each table says it took (its ``assigned`` events; the
        #: desk's state gives it, also after a restart): one above the journal's line
        #: count was never this desk's, and the next assignment goes above it.
        self.taken: Callable[[str], int] = lambda table: 0
        #: The organiser's requests already journaled (the page's id of each action,
        #: kept with it): one sent again after a desk restart is done once only.
        self.requests: dict[str, Action] = {}
        #: The items the organiser marked as seen (*visto*), by their key: never listed
        #: (nor logged) again, also after a restart (``SEEN_FILE``).
        self._seen_path = Path(folder) / SEEN_FILE
        self.seen: set[str] = _read_seen(self._seen_path)
        #: The seq of a game's record in its table's stream (the desk's state gives it):
        #: a key conflict names the games counted from the colliding seq on.
        self.record_seq: Callable[[str], int | None] = lambda game: None
        self._tournament = Tournament(name)
        # JournalTampered: the desk does not start
        entries = self.journal.open(mark=resume.journal_lines if resume is not None else None)
        start = 0
        if (
            resume is not None
            and resume.competition is not None
            and resume.journal_lines <= len(entries)
            and self.journal.marked == resume.journal_digest
        ):  # the snapshot fits the journal: only what came after it is replayed
            for field in FOLDED:
                setattr(self, field, resume.competition[field])
            start = resume.journal_lines
        elif resume is not None:
            log.warning("desk: the snapshot does not fit %s: replaying it all", self.journal.path)
        for entry in entries[start:]:
            action = action_from_json(entry.body["action"])
            self._tournament = apply(self._tournament, action)
            request = entry.body.get("request")
            if isinstance(request, str):
                self.requests[request] = action
        log.info("desk: tournament %s resumed from %d journal lines", name, self.journal.lines)
        #: Every assignment this desk tells a table is first written (and synced) to
        #: ``TOLD_FILE``: a desk that restarts, however it stopped, reads back the last
        #: counter it used (and goes above it: no table is ever told two assignments
        #: under one number) and what it told each table (a table's ``assigned`` event
        #: that arrives after the restart is checked against it too).
        self._told_path = Path(folder) / TOLD_FILE
        self._last_n = 0
        self._read_told()
        self._told_file: Any = open(self._told_path, "ab")  # noqa: SIM115
        self._audit: tuple[float, bool] = (self.clock(), True)

    def fold(self) -> dict[str, Any]:
        """What this organiser folded from the journal (for the desk's snapshot)."""
        with self.lock:
            return {field: getattr(self, field) for field in FOLDED}

    @property
    def audit_ok(self) -> bool:
        """The journal on the disk still checks (looked at again every ``AUDIT_S``): an
        edit made while the desk runs shows on every page."""
        with self.lock:
            when, ok = self._audit
            now = self.clock()
            if now - when >= AUDIT_S:
                verdict = audit(self.journal.path, self.journal.tournament, self.journal.key)
                ok = verdict.ok and verdict.lines == self.journal.lines
                if not ok and self._audit[1]:
                    log.error("desk: the journal on the disk no longer checks: %s", verdict.reason)
                self._audit = (now, ok)
            return ok

    # ------------------------------------------------------------------ reading

    @property
    def tournament(self) -> Tournament:
        with self.lock:
            return self._tournament

    @property
    def keyed(self) -> bool:
        return self.journal.keyed

    # ------------------------------------------------------------------ changes

    def do(self, action: Action, who: str = ORGANISER, request: str | None = None) -> Tournament:
        """Apply ``action`` (refused: :class:`CompetitionError`, nothing written),
        journal it, then move on by itself (``auto``). ``request``: the page's id of
        this action (journaled with it); an id already journaled is not done again
        (the page sends an action again when the desk restarted before answering)."""
        with self.lock:
            if request is not None and request in self.requests:
                return self._tournament
            self._do(action, who, request)
            if self.auto:
                self._advance()
            self._tell_tables()
            self._changed()
            return self._tournament

    def done_before(self, request: str | None) -> bool:
        """Whether the organiser's request ``request`` is in the journal already."""
        with self.lock:
            return request is not None and request in self.requests

    def _do(self, action: Action, who: str, request: str | None = None) -> None:
        new = apply(self._tournament, action)  # refused before anything is written
        body: dict[str, Any] = {"action": action_to_json(action)}
        if request is not None:
            body["request"] = request
        self.journal.append(self.clock(), who, body)
        self._tournament = new
        if request is not None:
            self.requests[request] = action

    def count(self, result: GameResult) -> bool:
        """A finished game (judged from its record by the desk): counted for its
        match if it proves one; ``True`` when it was counted now."""
        if result.match == NO_MATCH:
            return False
        with self.lock:
            t = self._tournament
            try:
                match = t.match(result.match)
            except KeyError:
                self._flag("record-unknown-match", result,
                           f"{result.game}: el registro es de un partido que no existe "
                           f"({result.match})")  # fmt: skip
                return False
            if any(g.game == result.game for g in match.games):
                return False  # counted before (the desk replays its records on start)
            if result.held is not None and result.verdict == "intact" and not result.problems:
                self._flag("held", result,
                           f"{result.game} ({match.id}, {result.table}) retenida, no se cuenta "
                           f"sola: {detail_text(result.held).removeprefix('retenida: ')}. Si "
                           "se jugó de verdad en esa mesa, cargá el resultado a mano")  # fmt: skip
                return False
            if not result.ok or result.winner is None:
                why = detail_text("; ".join([result.detail, *result.problems]))
                self._flag("record-not-counted", result,
                           f"{result.game} ({match.id}): no se cuenta, el registro es "
                           f"{VERDICT.get(result.verdict, result.verdict)}: {why}")  # fmt: skip
                return False
            if match.result.status in SETTLED_BY_HAND:
                self._flag("after-decided", result,
                           f"{result.game} ({match.id}, {result.table}): se jugó después de que "
                           f"el partido quedó definido a mano ({match.result.status.value}); "
                           "no cambia el resultado")  # fmt: skip
                return False
            if match.table != result.table:
                self._flag("wrong-table", result,
                           f"{result.game}: {result.table} jugó {match.id}, que está asignado "
                           f"a {match.table or 'ninguna mesa'}")  # fmt: skip
                return False
            game = GameCounted(match.id, result.game, result.table, result.score,
                               result.winner, result.sha256)  # fmt: skip
            try:
                self._do(game, result.table)
            except CompetitionError as e:
                self._flag("extra-game", result, f"{result.game} ({match.id}): {e}")
                return False
            if self.auto:
                self._advance()
            self._tell_tables()
            self._changed()
            return True

    def _changed(self) -> None:
        for callback in self.on_change:
            try:
                callback()
            except Exception:  # the exports are rewritten at the next change
                log.exception("desk: a change listener failed")

    def dismiss(self, key: str) -> bool:
        """The organiser saw the item ``key`` (its *visto*): off the list for good (the
        key-conflict alarms stay until the table is re-keyed); whether it was there."""
        with self.lock:
            found = [a for a in self.attention if a.key == key and a.what not in STAYS]
            if not found:
                return False
            self.attention = [a for a in self.attention if a.key != key]
            self.seen.add(key)
            tmp = self._seen_path.with_name(self._seen_path.name + ".tmp")
            tmp.write_text(json.dumps(sorted(self.seen), ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, self._seen_path)
            return True

    def _flag(self, what: str, result: GameResult, text: str) -> None:
        item = Attention(what, text, result.match, result.table, result.game)
        if item in self.attention or item.key in self.seen:
            return
        if sum(1 for a in self.attention if a.table == result.table) >= ATTENTION_PER_TABLE:
            self.attention_more[result.table] += 1  # a flood from one table: counted
            return
        self.attention.append(item)
        log.warning("desk: %s", text)

    # ------------------------------------------------------------------ moving on

    def _advance(self) -> None:
        """Pair the next round when the current one is closed; give every waiting
        match a free table."""
        for _ in range(1000):  # each pass makes one change at most; bounded
            t = self._tournament
            if t.spec is None or t.finished:
                return
            if t.round == 0 or t.round in t.closed:
                try:
                    self._do(PairRound(t.round + 1), DESK)
                except CompetitionError as e:
                    log.info("desk: round %d not paired: %s", t.round + 1, e)
                    return
                continue
            busy = {m.table for m in t.matches if m.table and m.result.status in UNDECIDED}
            free = [table for table in self.tables if table not in busy]
            waiting = free_matches(t)
            if not waiting or not free:
                return
            self._do(AssignTable(waiting[0].id, free[0]), DESK)

    def wanted(self, table: str) -> Assignment:
        """What ``table`` should be playing now (a match, or nothing)."""
        t = self._tournament
        n = self.journal.lines
        taken = self.taken(table)
        if taken >= n:  # the table took a counter this desk never used: go above it
            n = min(taken + 1, MAX_COUNTER)
        for m in t.matches:
            if m.table == table and m.result.status in UNDECIDED:
                return self._assignment(t, m, n)
        return Assignment(table, n, None, "", "", "", 0, 0, ((), ()))

    def _assignment(self, t: Tournament, m: Match, n: int) -> Assignment:
        assert m.table is not None
        home = t.entrant(m.pairing.home)
        away = t.entrant(m.pairing.away) if m.pairing.away is not None else None
        players = (
            tuple(_short(p.name) for p in home.players),
            tuple(_short(p.name) for p in away.players) if away else (),
        )
        return Assignment(m.table, n, m.id, _short(m.label), _short(home.name),
                          _short(away.name) if away else "", m.chico, m.best_of,
                          players)  # fmt: skip

    def _tell_tables(self) -> None:
        news = []
        for table in self.tables:
            want = self.wanted(table)
            told = self.assignments.get(table)
            if told is not None and _same(told, want):
                continue
            want = dataclasses.replace(want, n=self._next_counter(table))
            news.append(want)
        if not news:
            return
        self._write_told(news)  # on the disk before any is sent
        for want in news:
            table = want.table
            self.assignments[table] = want
            self._remember(want)
            if self.publish is not None:
                try:
                    self.publish(want)
                except Exception as e:  # the broker is away: the desk tells again on connect
                    log.warning("desk: %s is told its assignment later: %s", table, e)
                    del self.assignments[table]

    def _next_counter(self, table: str) -> int:
        """The counter of the next assignment told to ``table``: above every one told
        before (by this run, or any run before it: ``TOLD_FILE``), above the journal's
        line count and above whatever the table says it took."""
        n = min(max(self.journal.lines, self._last_n + 1, self.taken(table) + 1), MAX_COUNTER)
        self._last_n = n
        return n

    def _remember(self, a: Assignment) -> None:
        history = self.told.setdefault(a.table, collections.OrderedDict())
        history[a.n] = a
        while len(history) > TOLD_KEPT:
            history.popitem(last=False)

    def _read_told(self) -> None:
        """What the desk told the tables before (its last ``TOLD_KEPT`` per table, and
        its last counter); a line torn by a crash never reached a table (it is written
        whole before the assignment is sent) and is cut off."""
        try:
            raw = self._told_path.read_bytes()
        except FileNotFoundError:
            return
        end = raw.rfind(b"\n") + 1
        last: dict[str, collections.deque[dict[str, Any]]] = {}
        for line in raw[:end].splitlines():
            try:
                obj = json.loads(line)
                n = obj["n"]
                table = str(obj["table"])
            except (ValueError, KeyError, TypeError) as e:
                raise JournalError(f"{self._told_path}: una línea no es una asignación "
                                   "avisada (no se puede leer)") from e
            if not isinstance(n, int):
                raise JournalError(f"{self._told_path}: una línea no es una asignación avisada "
                                   f"(su n es {n!r}, no un número)")  # fmt: skip
            self._last_n = max(self._last_n, n)
            last.setdefault(table, collections.deque(maxlen=TOLD_RESTORED)).append(obj)
        for table, objs in last.items():  # only the last few of each table are read whole
            for obj in objs:
                try:
                    self._remember(assignment_from(obj, table))
                except RejectedMessage as e:
                    raise JournalError(f"{self._told_path}: una línea no es una asignación "
                                       f"avisada válida de {table}") from e
        if end != len(raw):
            with open(self._told_path, "r+b") as f:
                f.truncate(end)

    def _write_told(self, news: Sequence[Assignment]) -> None:
        data = b"".join(
            json.dumps(a.payload(), ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
            for a in news
        )
        self._told_file.write(data)
        self._told_file.flush()
        if self.journal.fsync:
            os.fsync(self._told_file.fileno())

    def check_assigned(self, e: Event) -> None:
        """A table's ``assigned`` event: what it took must be an assignment this desk
        sent it (the same counter, match, chico and names). Any difference goes first
        on the organiser's list: someone else wrote to the table."""
        with self.lock:
            history = self.told.get(e.table)
            sent = history.get(e.assigned) if history and e.assigned is not None else None
            what = f"{e.match} (chico {e.chico})" if e.match else "ningún partido"
            if sent is None:
                text = (f"{e.table} tomó una asignación que esta mesa de control no mandó "
                        f"(n={e.assigned}: {what}); alguien más le escribe a la mesa")  # fmt: skip
            elif (e.match, e.chico if e.match else None) != (
                sent.match,
                sent.chico if sent.match else None,
            ) or (e.digest is not None and e.digest != assignment_digest(sent)):
                text = (f"{e.table} tomó una asignación distinta de la que se le mandó "
                        f"(n={e.assigned}: {what}; se le mandó "
                        f"{sent.match or 'ningún partido'}, con sus nombres)")  # fmt: skip
            else:
                return
            item = Attention("assignment-differs", text, e.match, e.table)
            if item not in self.attention:
                self.attention.insert(0, item)
                log.error("desk: %s", text)
            if sent is None and e.assigned is not None and e.assigned >= self._last_n:
                # it would refuse every real one below it: tell it again, above it
                self.assignments.pop(e.table, None)
                self._tell_tables()

    def key_conflict(self, table: str, seq: int) -> None:
        """Two senders with ``table``'s key (a message under a seq already taken): first
        on the organiser's list, once per table, with the games counted from that table
        whose record came at or after that seq (``record_seq``: a forger who got a whole
        game in before the table's next message took the seqs from there on)."""
        with self.lock:
            counted = [(g.game, m.id) for m in self._tournament.matches for g in m.games
                       if g.table == table]  # fmt: skip
            after = [f"{game} ({match})" for game, match in counted
                     if (self.record_seq(game) or 0) >= seq]  # fmt: skip
            text = (f"{table}: llegaron dos mensajes distintos con el número {seq}: alguien "
                    "más tiene la clave de la mesa. "
                    + (f"Contadas desde ese número: {', '.join(after)}: revisalas"
                       if after else "Ninguna partida contada desde ese número")
                    + "; cambiale la clave a la mesa")  # fmt: skip
            if any(a.what == "key-conflict" and a.table == table for a in self.attention):
                return
            self.attention.insert(0, Attention("key-conflict", text, None, table))
            log.error("desk: %s", text)

    def rekeyed(self, table: str) -> None:
        """``table`` was given a new key (:meth:`.DeskState.rekey`): its key-conflict
        item says so (it stays first, with the games to review), and its assignment is
        told again under the new key."""
        with self.lock:
            for i, a in enumerate(self.attention):
                if a.what == "key-conflict" and a.table == table and "Clave nueva" not in a.text:
                    self.attention[i] = Attention(a.what, a.text + ". Clave nueva dada: la "
                                                  "mesa sigue cuando le escriban el código",
                                                  a.match, a.table, a.game)  # fmt: skip
            self.assignments.pop(table, None)
            self._tell_tables()

    def retell(self) -> None:
        """Tell every table again (the desk (re)connected to the broker)."""
        with self.lock:
            self.assignments.clear()
            self._tell_tables()

    def close(self) -> None:
        self.journal.close()
        self._told_file.close()

    def summary(self) -> dict[str, Any]:
        with self.lock:
            return {
                "journal_lines": self.journal.lines,
                "keyed": self.keyed,
                "attention": [a.__dict__ for a in self.attention],
                "attention_more": dict(self.attention_more),
            }


def _read_seen(path: Path) -> set[str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return set()
    except (OSError, ValueError) as e:
        log.warning("desk: %s cannot be read (%s): the items seen are listed again", path, e)
        return set()
    return {x for x in data if isinstance(x, str)} if isinstance(data, list) else set()


def _short(text: str) -> str:
    """A name as an assignment carries it (at most ``MAX_NAME`` characters; the seats
    shorten it further to fit)."""
    return text if len(text) <= MAX_NAME else text[: MAX_NAME - 1] + "…"


def _same(a: Assignment, b: Assignment) -> bool:
    return (a.match, a.label, a.home, a.away, a.chico, a.best_of, a.players) == (
        b.match, b.label, b.home, b.away, b.chico, b.best_of, b.players,
    )  # fmt: skip
