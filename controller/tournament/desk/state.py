"""The desk's state: every table's progress and every game's result, without the network.

``DeskState`` is the desk without the network (what the tests drive): it takes the
tables' messages (:mod:`controller.tournament.wire.messages`, parsed and checked there) in
whatever order and however many times they arrive, drops duplicates by ``(table, seq)``,
applies each table's events in seq order (holding back those after a gap until it is
filled) and keeps, per table: online/offline, the game, hand and score, the last
events, every refusal (counted and kept as history), what needs the referee (the
*atención* list, sorted by :mod:`controller.tournament.desk.referee`: referee calls and the
exceptional refusals, each until the referee acknowledges it), the finished games.
Every sealed record is saved into ``records/`` and verified with the tournament key: a
record that does not verify, names another game or carries no seal is flagged. Results
come from the records themselves (replayed), not from the live events.

With the tournament's secret (``key``) the desk trusts only what a table proves: every
message must carry the MAC of that table's own key (derived from the secret,
:mod:`controller.tournament.wire.keys`), come from a table of the roster (``tables``), be
newer than what the table said before (seq, and the status counter ``n``) and within
``WINDOW`` of the table's next seq. Anything else is *rejected*: never applied, kept
in ``rejections`` and shown on every view. A record must be sealed with its table's
key, for this tournament, table, game and match (seal v2), and played under the
tournament's house rules (``rules``); the records on disk are checked again against
what was collected (``reverify``) when the desk starts and on a schedule.

Records are judged and checked at rest by :mod:`.records`; the MQTT client is
:mod:`.client`, the terminal board :mod:`.board`, the web page :mod:`.web`.

Files in the desk's folder: ``records/<game>.truco`` (each sealed record as received),
``results.csv`` and ``results.json`` (rewritten after every finished game and on
``export``), ``events.jsonl`` (every message accepted, so a restarted desk resumes; it
is read back through the same checks; and every acknowledgement of an *atención* item,
``{"t", "ack": table, "seqs": [...]}``, synced, re-applied on reload).
"""

from __future__ import annotations

import collections
import contextlib
import csv
import hashlib
import io
import itertools
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ...engine import HouseRules
from ...render.broadcast import DEFAULT_DELAY_S, BroadcastLog
from ...render.broadcast_pages import tv_table
from ..table.outbox import atomic_write
from ..table.profile import tournament_profile
from ..wire.keys import derive_table_key, new_rekey_code, rekey_code, rekeyed
from ..wire.messages import (
    Event,
    EventKind,
    Message,
    Record,
    RejectedMessage,
    Status,
    parse_message,
)
from ..wire.seal import TournamentKey
from ..wire.topics import check_name, tournament_prefix
from .liveness import unseen
from .records import (
    RESULT_FIELDS,
    Copy,
    GameResult,
    RecordJudge,
    check_at_rest,
    rules_problems,
    unseal,
)
from .referee import RefereeItem, RepeatWatch, triage
from .snapshot import Snapshot, load_snapshot, snapshot_key

if TYPE_CHECKING:
    from .organiser import Organiser

__all__ = [
    "WINDOW",
    "Copy",
    "DeskState",
    "GameResult",
    "RefereeItem",
    "Refusal",
    "Rejection",
    "TableState",
    "rules_problems",
    "unseal",
]

log = logging.getLogger(__name__)

GAP_WAIT_S: Final = 0.5  # a gap older than this is asked for again
STALL_S: Final = 2.0  # a table that announced more than we have, silent this long
#: How far ahead of a table's next seq a message may be (further: rejected).
WINDOW: Final = 1_000
#: How long a table's stream waits, once its first message came, for the ones before it
#: (a followed table, a re-keyed one): messages overtake one another on the way (paho
#: sends what it queued before a connection after what is published once connected; a
#: bridge resends what it lost after the next), so the stream starts at the lowest seq
#: heard by then, or earlier, at once, when what was heard from its lowest seq on reaches
#: a game's beginning (:func:`_opens`).
FOLLOW_WAIT_S: Final = 2.0
#: Most messages one resend request asks for (the table serves at most as many).
RESEND_MAX: Final = 500
REVERIFY_S: Final = 60.0  # records on disk are checked again this often
SHOWN_REFUSALS: Final = 20  # a table's last refusals in the snapshot
REJECTIONS_KEPT: Final = 20  # a table's last rejections kept (the rest only counted)
ATTENTION_KEPT: Final = 20  # a table's pending atención items (the rest only counted)
EXPORT_S: Final = 1.0  # the exports are rewritten at most this often
#: What the desk folds from ``events.jsonl``: what its snapshot keeps (:mod:`.snapshot`).
FOLDED: Final = ("tables", "results", "stray", "rejected", "received", "duplicates",
                 "max_latency")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Quota:
    """What one table may send per minute (``DeskState(quota=...)``): beyond it, its
    messages are rejected (counted, one line a minute), never journaled or applied, so
    one table's flood costs every other table nothing. A table at human pace sends
    a few events a minute and a record every few minutes; a table whose messages were
    refused sends them again when the desk asks (the gap)."""

    events: int = 600
    records: int = 20
    #: The shortest a hand takes at a real table: a game whose events reached the desk
    #: faster than this per hand is held (:mod:`.liveness`), whatever their times say.
    hand_s: float = 3.0


#: Characters never printed from the network: C0/C1 controls (ESC and so on), DEL,
#: bidirectional overrides and isolates (they reorder what the referee reads).
_CONTROL_RE: Final = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(text: object, limit: int = 200) -> str:
    """A text from the network made safe for a terminal: control characters removed,
    at most ``limit`` characters."""
    return _CONTROL_RE.sub("", str(text))[:limit]


def _rules_from_line(line: str) -> HouseRules | None:
    try:
        words = line.split()[1:] if line.startswith("table") else line.split()
        return HouseRules.from_options(dict(w.split("=", 1) for w in words))
    except ValueError:
        return None


# ---------------------------------------------------------------------------- the state


@dataclass
class Refusal:
    table: str
    seq: int
    ts: float
    game: str
    seat: int | None
    action: str | None
    code: str
    text: str


@dataclass
class Rejection:
    """A message the desk refused: never applied, shown to the referee."""

    ts: float
    table: str  # as the topic names it (cleaned)
    topic: str
    reason: str
    n: int = 0  # its number among the desk's rejections (their order)

    def row(self) -> dict[str, Any]:
        return {"ts": self.ts, "table": self.table, "topic": self.topic, "reason": self.reason}


#: A table's last seqs whose content the desk remembers: another message under one
#: of them is a second sender with the table's key.
DIGESTS_KEPT: Final = 4 * WINDOW
#: The games whose events a table keeps at the desk (the last ones: a record comes
#: right after its game's events).
TRAILS: Final = 4


def _statement(line: str) -> str:
    """A record's or an event's statement as compared: no comment, lower case, single
    spaces."""
    return " ".join(line.split("#", 1)[0].lower().split())


def _opens(m: Event | Record) -> bool:
    """Whether a table's stream can start at ``m``: nothing before it is needed to follow
    the game it belongs to (a game begun, a table (re)started before its first deal, the
    first deal). A record, a later deal or an action needs its game's earlier events."""
    if not isinstance(m, Event):
        return False
    if m.kind is EventKind.NEW_GAME:
        return True
    if m.kind is EventKind.STATE:
        return not m.hand
    return m.kind is EventKind.DEAL and m.hand == 1


@dataclass
class GameTrail:
    """What a table's authenticated events said of one game, in seq order: the record
    of that game must say the same (:meth:`DeskState._agreement`)."""

    game: str
    lines: list[str] = field(default_factory=list)  # hands, dealers, actions (undos out)
    dealt: list[int] = field(default_factory=list)  # the cards dealt, hand by hand
    finished: tuple[int | None, tuple[int, int]] | None = None  # (winner, score)
    recorded: bool = False  # its record came (a second one is a copy)
    #: The table restarted during the game (a ``state`` event after its first deal): a
    #: power cut can lose events it had not journaled yet (and the game resumes from
    #: what its record kept), so then every statement the table sent must be in the
    #: record, not the same list.
    resumed: bool = False
    #: ``(arrived at the desk, the table's ts)`` of each event, in seq order: whether the
    #: desk saw the game as it was played (:func:`.liveness.unseen`).
    arrivals: list[tuple[float, float]] = field(default_factory=list)

    def take(self, e: Event) -> None:
        if e.kind is EventKind.STATE and self.dealt:
            self.resumed = True
        elif e.kind is EventKind.DEAL:
            self.lines += [x for x in (_statement(w) for w in e.text.split("\n")) if x]
            self.dealt.append(e.dealt or 0)
        elif e.kind is EventKind.ACTION:
            self.lines += [x for x in (_statement(w) for w in e.text.split("\n")) if x]
        elif e.kind is EventKind.UNDO:
            undone = _statement(e.action or e.text.split(":", 1)[-1])
            for i in range(len(self.lines) - 1, -1, -1):
                if self.lines[i] == undone:
                    del self.lines[i]
                    break
        elif e.kind is EventKind.FINISHED:
            self.finished = (e.winner, e.score if e.score is not None else (0, 0))


@dataclass
class TableState:
    table: str
    online: bool | None = None
    status_ts: float | None = None
    offline_reason: str | None = None
    rules: str | None = None
    target: int = 30
    players: int = 2
    game: str | None = None
    hand: int = 0
    score: tuple[int, int] = (0, 0)
    last: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=6))
    refusals: list[Refusal] = field(default_factory=list)  # every one, in seq order
    refusal_counts: collections.Counter[str] = field(default_factory=collections.Counter)
    attention: list[RefereeItem] = field(default_factory=list)  # acknowledged ones too
    acked: set[int] = field(default_factory=set)  # the seqs of the attention acknowledged
    watch: RepeatWatch = field(default_factory=RepeatWatch)
    games: list[str] = field(default_factory=list)
    next_seq: int = 1
    buffered: dict[int, Event | Record] = field(default_factory=dict)
    arrivals: dict[int, float] = field(default_factory=dict)  # when each buffered one came
    min_lag: float = float("inf")  # the quickest message: desk's clock minus the table's
    duplicates: int = 0
    applied: int = 0
    known_seq: int = 0
    last_progress: float = 0.0
    last_request: float = 0.0
    received_at: float = 0.0
    last_seen: float | None = None  # desk clock, last authenticated message
    status_n: int = -1  # the last status counter accepted
    held_since: float | None = None  # messages held back for a gap since then
    rejected: int = 0
    rules_problems: list[str] = field(default_factory=list)
    digests: dict[int, bytes] = field(default_factory=dict)  # seq -> what it said
    conflicts: int = 0  # messages under a seq taken with another content
    assigned_n: int = 0  # the highest assignment counter the table says it took
    status_digest: bytes | None = None  # of the last status accepted
    minute: tuple[float, int, int] = (-60.0, 0, 0)  # (since, events, records) for the quota
    over_quota: int = 0  # messages rejected for the quota
    rejections: collections.deque[Rejection] = field(
        default_factory=lambda: collections.deque(maxlen=REJECTIONS_KEPT)
    )
    attention_more: int = 0  # atención items beyond ATTENTION_KEPT, counted only
    #: Re-keyed (:meth:`DeskState.rekey`), or followed (``follow``), and its stream not
    #: started yet: its first messages start it (the old key's seqs are the copy's too),
    #: at the lowest seq heard (:data:`FOLLOW_WAIT_S`).
    awaiting: bool = False
    rekeys: int = 0  # how many times it was given a new key
    awaiting_since: float | None = None  # when its first message came, while awaiting
    trails: collections.OrderedDict[str, GameTrail] = field(default_factory=collections.OrderedDict)
    #: the game being played, as its statements were heard (no card read at a deal ever
    #: comes here during play): who is mano, a hand's end and its calls, for the TV
    heard: BroadcastLog | None = None
    heard_game: str | None = None  # the game ``heard`` follows

    def trail(self, game: str) -> GameTrail:
        trail = self.trails.get(game)
        if trail is None:
            trail = self.trails[game] = GameTrail(game)
            while len(self.trails) > TRAILS:
                self.trails.popitem(last=False)
        return trail

    def pending(self) -> list[RefereeItem]:
        """The *atención* items not acknowledged yet, oldest first."""
        return [a for a in self.attention if a.seq not in self.acked]

    def summary(self, now: float | None = None) -> dict[str, Any]:
        return {
            "table": self.table,
            "online": self.online,
            "offline_reason": self.offline_reason,
            "rules": self.rules,
            "target": self.target,
            "players": self.players,
            "game": self.game,
            "hand": self.hand,
            "score": list(self.score),
            "last": list(self.last),
            "refusals": [  # the last ones (all are counted in refusal_counts)
                {k: v for k, v in r.__dict__.items() if k != "table"}
                for r in self.refusals[-SHOWN_REFUSALS:]
            ],
            "refusal_counts": dict(sorted(self.refusal_counts.items())),
            "attention": [a.row() for a in self.pending()],
            "attention_more": self.attention_more,
            "over_quota": self.over_quota,
            "acknowledged": len(self.acked),
            "games": list(self.games),
            "seq": self.next_seq - 1,
            "waiting": sorted(self.buffered),
            "held_back": len(self.buffered),
            "held_since": self.held_since,
            "waiting_for": self.next_seq if self.buffered else None,
            "duplicates": self.duplicates,
            "rejected": self.rejected,
            "conflicts": self.conflicts,
            "rekeys": self.rekeys,
            "awaiting_new_key": self.awaiting,
            "last_seen": self.last_seen,
            "silent_s": round(now - self.last_seen, 1)
            if now is not None and self.last_seen is not None
            else None,
            "rules_problems": list(self.rules_problems),
        }


class DeskState:
    """Everything the desk knows (see the module docstring); thread-safe.

    ``key`` is the tournament's secret (each table's key is derived from it); ``tables``
    the roster (messages from any other table are rejected); ``rules`` the tournament's
    house rules (records played under others are flagged).
    """

    def __init__(
        self,
        tournament: str,
        *,
        out_dir: str | Path | None = None,
        key: TournamentKey | None = None,
        profile: str | None = None,
        tables: Sequence[str] | None = None,
        rules: HouseRules | None = None,
        track_latency: bool = False,
        clock: Callable[[], float] = time.time,
        quota: Quota | None = None,
        follow: bool = False,
    ) -> None:
        self.tournament = check_name("tournament", tournament)
        #: Each table's stream starts at its first message heard, not at seq 1 (the
        #: league desk's view of a venue: it may start after the tables did).
        self.follow = follow
        self.prefix = tournament_prefix(tournament) + "/"
        self.key = key
        self.profile = profile
        self.rules = rules
        self.roster = tuple(check_name("table id", t) for t in tables) if tables else None
        #: the broadcast (``/transmision/<table>``): its delay, its own key (besides the
        #: organiser's) and the teaching tables (cards at once, no delay)
        self.broadcast_delay_s = DEFAULT_DELAY_S
        self.broadcast_key: str | None = None
        self.teaching: frozenset[str] = frozenset()
        self.clock = clock
        self.tables: dict[str, TableState] = {}
        self.results: dict[str, GameResult] = {}
        #: The last rejections of messages naming no table of the tournament (a table's
        #: own are kept in its ``TableState.rejections``, REJECTIONS_KEPT each).
        self.stray: collections.deque[Rejection] = collections.deque(maxlen=REJECTIONS_KEPT)
        self.rejected = 0
        self.quota = quota
        self._exported = -EXPORT_S  # monotonic time of the last export
        self.export_due = False
        self.broker_connected: bool | None = None  # None: not connected yet
        self.broker_since: float | None = None
        self.track_latency = track_latency
        self.latencies: list[float] = []  # seconds from the table's event to its delivery
        self.max_latency = 0.0
        self.received = 0
        self.duplicates = 0
        self.last_reverify: float | None = None
        self.lock = threading.RLock()
        # one export at a time: the desk's threads and its owner (``close``, a cup's end)
        # may export at once, and two writers of one file share its ``.tmp``
        self._export_lock = threading.Lock()
        self.on_finished: list[Callable[[GameResult], None]] = []
        #: Called with every ``assigned`` event a table sends (applied in seq order):
        #: the organiser compares it with what it sent (:meth:`.Organiser.check_assigned`).
        self.on_assigned: list[Callable[[Event], None]] = []
        #: Called with ``(table, seq)`` when a second message comes under a seq already
        #: taken: someone else holds the table's key (:meth:`.Organiser.key_conflict`).
        self.on_conflict: list[Callable[[str, int], None]] = []
        #: The tournament run at this desk (:class:`~.organiser.Organiser`): None for a
        #: desk that only follows tables.
        self.competition: Organiser | None = None
        self._keys: dict[str, bytes] = {}
        self.judge = RecordJudge(self.tournament, self.key_for, key is not None, profile, rules)
        self.out_dir = Path(out_dir) if out_dir is not None else None
        #: The snapshot this desk started from (None: it replayed everything).
        self.resumed: Snapshot | None = None
        self._log: io.TextIOWrapper | None = None
        self._replaying = False
        if self.out_dir is not None:
            (self.out_dir / "records").mkdir(parents=True, exist_ok=True)
            self._replaying = True  # the exports are written once, after it
            try:
                self._reload()
            finally:
                self._replaying = False
            self._log = self._open_journal(self.out_dir / "events.jsonl")
            if self.resumed is None:  # from a snapshot: checked soon after the start
                self.reverify()

    # ------------------------------------------------------------------ keys

    def key_for(self, table: str) -> bytes | None:
        """The key of ``table`` (derived from the secret); ``None`` for a table outside
        the roster, or without a secret."""
        if self.key is None or (self.roster is not None and table not in self.roster):
            return None
        key = self._keys.get(table)
        if key is None:
            try:
                key = self._keys[table] = derive_table_key(self.key.key, self.tournament, table)
            except ValueError:
                return None
        return key

    def rekey(self, table: str, code: str | None = None, now: float | None = None) -> str:
        """A new key for ``table`` after a key conflict (someone else holds its key):
        ``HMAC(its key, code)`` (:func:`~..wire.keys.rekeyed`); returns the code, which
        someone at the real table types there (``truco-table rekey``). From now on only
        the new key is accepted from it, and its first messages under it start its
        stream again (:data:`FOLLOW_WAIT_S`). Journaled (synced) first: a restarted desk
        keeps it."""
        with self.lock:
            key = self.key_for(table)
            if key is None:
                raise ValueError(f"{table} no es una mesa de este torneo")
            code = rekey_code(code) if code is not None else new_rekey_code()
            if self._log is not None:
                line = {"t": self.clock() if now is None else now, "rekey": table, "code": code}
                self._log.write(json.dumps(line) + "\n")
                self._log.flush()
                os.fsync(self._log.fileno())
            self._rekey(table, code)
            log.warning("desk: %s was given a new key", table)
            return code

    def _rekey(self, table: str, code: str) -> None:
        key = self.key_for(check_name("table id", table))
        if key is None:
            raise ValueError(f"{table} is not a table of this tournament")
        self._keys[table] = rekeyed(key, code)
        t = self.table(table)
        t.awaiting, t.rekeys = True, t.rekeys + 1
        t.buffered.clear()
        t.arrivals.clear()
        t.digests.clear()
        t.trails.clear()
        t.known_seq, t.held_since, t.awaiting_since = 0, None, None

    # ------------------------------------------------------------------ the broker

    def broker_up(self, now: float | None = None) -> None:
        with self.lock:
            if self.broker_connected is not True:
                self.broker_connected, self.broker_since = (
                    True,
                    self.clock() if now is None else now,
                )

    def broker_down(self, now: float | None = None) -> None:
        with self.lock:
            if self.broker_connected is not False:
                self.broker_connected = False
                self.broker_since = self.clock() if now is None else now

    # ------------------------------------------------------------------ input

    def _reload(self) -> None:
        assert self.out_dir is not None
        path = self.out_dir / "events.jsonl"
        if self.key is not None:
            snap = load_snapshot(self.out_dir, snapshot_key(self.key.key, self.tournament),
                                 self.tournament)  # fmt: skip
            if snap is not None:
                for name in FOLDED:
                    setattr(self, name, snap.state[name])
                self.resumed = snap
        if not path.exists():
            return
        count = 0
        offset = self.resumed.events_offset if self.resumed is not None else 0
        with open(path, "rb") as raw:
            raw.seek(offset)
            f = io.TextIOWrapper(raw, encoding="utf-8")
            for line in f:
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    obj = json.loads(line)
                    if "ack" in obj:
                        self._reapply_ack(obj["ack"], obj["seqs"])
                        continue
                    if "rekey" in obj:
                        self._rekey(str(obj["rekey"]), str(obj["code"]))
                        continue
                    self.handle(
                        obj["topic"], obj["payload"].encode("utf-8"), obj["t"], journal=False
                    )
                    count += 1
        for t in self.tables.values():
            t.online = None  # unknown until the broker tells again
        log.info("desk: resumed from %s (%d messages%s)", path, count,
                 " after its snapshot" if self.resumed is not None else "")  # fmt: skip

    def fold(self) -> Snapshot | None:
        """What this desk folded so far, and up to where in ``events.jsonl`` (with its
        lock held; the organiser's part is added by the desk: :mod:`.snapshot`); None
        once its journal is closed (or it keeps none)."""
        with self.lock:
            if self._log is None or self.out_dir is None:
                return None
            self._log.flush()
            offset = os.fstat(self._log.fileno()).st_size
            # the digest of events.jsonl up to the offset: filled in by who writes it
            return Snapshot(self.tournament, offset, "",
                            {name: getattr(self, name) for name in FOLDED})  # fmt: skip

    @staticmethod
    def _open_journal(path: Path) -> io.TextIOWrapper:
        """The journal, to append to; a line torn by a power cut is ended first, so that
        the next line is not glued to it (and lost with it on the next reload)."""
        torn = False
        if path.exists():
            with open(path, "rb") as f:
                if f.seek(0, os.SEEK_END) > 0:
                    f.seek(-1, os.SEEK_END)
                    torn = f.read(1) != b"\n"
        log_file = open(path, "a", encoding="utf-8")  # noqa: SIM115
        if torn:
            log_file.write("\n")
            log_file.flush()
        return log_file

    def table(self, table_id: str) -> TableState:
        state = self.tables.get(table_id)
        if state is None:
            state = self.tables[table_id] = TableState(table_id, awaiting=self.follow)
        return state

    @property
    def rejections(self) -> list[Rejection]:
        """The rejections kept (each table's last REJECTIONS_KEPT), oldest first."""
        with self.lock:
            kept = [*self.stray, *(r for t in self.tables.values() for r in t.rejections)]
        return sorted(kept, key=lambda r: (r.ts, r.n))

    def _reject(self, topic: str, reason: str, now: float, table: str | None = None) -> None:
        if table is None:
            rest = topic[len(self.prefix) :] if topic.startswith(self.prefix) else topic
            table = rest.split("/", 1)[0]
        table = clean(table, 64)
        self.rejected += 1
        rejection = Rejection(now, table, clean(topic, 160), clean(reason), self.rejected)
        t = self.tables.get(table)
        if t is None and self.roster is not None and table in self.roster:
            t = self.table(table)
        if t is not None:
            t.rejected += 1
            t.rejections.append(rejection)
            if t.rejected > REJECTIONS_KEPT and t.rejected % 1000:
                return  # logged: the first ones, then one in a thousand
        else:
            self.stray.append(rejection)
            if self.rejected > 1000 and self.rejected % 1000:
                return
        log.warning("desk: rejected a message on %r: %s", topic[:160], clean(reason))

    def _still_over(self, topic: str, now: float) -> bool:
        """A message of a table already over its quota this minute: counted and
        dropped before it is even read (only the table's own account may write its
        topics; it went over with messages that carried its key)."""
        rest = topic[len(self.prefix) :] if topic.startswith(self.prefix) else None
        if rest is None or rest.endswith("/status"):
            return False
        t = self.tables.get(rest.split("/", 1)[0])
        if t is None or self.quota is None:
            return False
        since, events, records = t.minute
        if not 0 <= now - since < 60.0:
            return False
        over = records > self.quota.records if "/records/" in rest else events > self.quota.events
        if over:
            t.over_quota += 1
            t.rejected += 1
            self.rejected += 1
        return over

    def _over_quota(self, t: TableState, m: Message, now: float) -> str | None:
        """Why ``m`` is over its table's quota (``None``: it is within it)."""
        if self.quota is None or isinstance(m, Status):
            return None
        since, events, records = t.minute
        if now - since >= 60.0 or now < since:
            since, events, records = now, 0, 0
        if isinstance(m, Record):
            records += 1
            over = records > self.quota.records
            limit = f"{self.quota.records} records"
        else:
            events += 1
            over = events > self.quota.events
            limit = f"{self.quota.events} events"
        t.minute = (since, events, records)
        return f"{t.table} sent more than {limit} in a minute" if over else None

    def handle(
        self,
        topic: str,
        payload: bytes | bytearray,
        now: float | None = None,
        *,
        journal: bool = True,
    ) -> None:
        """One message from the broker (any order, any number of times)."""
        now = self.clock() if now is None else now
        keys = self.key_for if self.key is not None else None
        with self.lock:
            if journal and self.quota is not None and self._still_over(topic, now):
                return
            try:
                message = parse_message(self.prefix, topic, payload, keys)
            except RejectedMessage as e:  # malformed, unknown table, unauthenticated
                self._reject(topic, str(e), now)
                return
            if message is None:
                return
            if isinstance(message, Status) and self._same_status(message, payload, now):
                return
            if self.key is None and self.roster is not None and message.table not in self.roster:
                self._reject(topic, f"{message.table} is not a table of this tournament", now)
                return
            if journal and self.quota is not None and self.key is not None:
                quota_of = self.table(message.table)  # authenticated: a roster table
                over = self._over_quota(quota_of, message, now)
                if over is not None:
                    quota_of.over_quota += 1
                    self._reject(topic, f"over the quota: {over}", now, message.table)
                    return
            followed = self.tables.get(message.table)
            if followed is not None:  # its wait over before this message came
                self._settle(followed, now, journal)
            why = self._refuse(message)
            if why is not None:
                self._reject(topic, why, now, message.table)
                return
            t = self.table(message.table)
            t.received_at = now
            t.last_seen = now
            if isinstance(message, Status):
                t.status_n = message.n
                t.status_digest = hashlib.sha256(bytes(payload)).digest()
                t.online = message.online
                t.offline_reason = message.reason
                t.status_ts = now
                t.known_seq = max(t.known_seq, min(message.seq, t.next_seq - 1 + WINDOW))
                self._journal(journal, now, topic, payload)
                return
            seq = message.seq
            self.received += 1
            digest = hashlib.sha256(bytes(payload)).digest()[:16]
            if (seq < t.next_seq and not t.awaiting) or seq in t.buffered:
                known = t.digests.get(seq)
                if known is not None and known != digest:
                    t.conflicts += 1
                    self._reject(topic, f"another message under seq {seq}, already taken: "
                                 "the table's key is in other hands", now, t.table)  # fmt: skip
                    for callback in self.on_conflict if journal else ():
                        try:
                            callback(t.table, seq)
                        except Exception:  # a listener never stops the desk
                            log.exception("desk: a conflict listener failed")
                    return
                t.duplicates += 1
                self.duplicates += 1
                return
            self._journal(journal, now, topic, payload, durable=isinstance(message, Record))
            t.known_seq = max(t.known_seq, seq)
            t.buffered[seq] = message
            t.arrivals[seq] = now
            t.digests[seq] = digest
            while len(t.digests) > DIGESTS_KEPT:
                del t.digests[next(iter(t.digests))]
            if t.awaiting:
                # its first events or records (under its new key): its stream starts at
                # the lowest seq heard, once that is a game's beginning or it had its wait
                # (a status says how far it journaled, not what it sent: it starts nothing)
                if t.awaiting_since is None:
                    t.awaiting_since = now
                start = min(t.buffered)
                run = itertools.takewhile(t.buffered.__contains__, itertools.count(start))
                if any(_opens(t.buffered[s]) for s in run) or len(t.buffered) >= WINDOW:
                    self._begin(t, now, journal)
                return
            self._drain(t, now, journal)

    def _settle(self, t: TableState, now: float, journal: bool) -> None:
        """Start an awaiting table's stream whose wait is over (at the moment it ended:
        the same whether a later message or the desk's housekeeping finds it so)."""
        if t.awaiting and t.awaiting_since is not None:
            ended = t.awaiting_since + FOLLOW_WAIT_S
            if now >= ended:
                self._begin(t, ended, journal)

    def settle(self, now: float | None = None) -> None:
        """Start every awaiting table's stream whose wait is over (the desk's
        housekeeping calls it: a table may send nothing more for a while)."""
        now = self.clock() if now is None else now
        with self.lock:
            for t in list(self.tables.values()):
                self._settle(t, now, True)

    def _begin(self, t: TableState, now: float, journal: bool) -> None:
        """An awaiting table's stream starts at the lowest seq it sent so far."""
        t.awaiting, t.awaiting_since = False, None
        if not t.buffered:
            return
        t.next_seq = min(t.buffered)
        for seq in [s for s in t.buffered if s > t.next_seq - 1 + WINDOW]:
            del t.buffered[seq]  # what a table in step never sends this far ahead
            t.arrivals.pop(seq, None)
        log.info("desk: %s is followed from seq %d", t.table, t.next_seq)
        self._drain(t, now, journal)

    def _drain(self, t: TableState, now: float, journal: bool) -> None:
        """Apply what is buffered from the table's next seq on, in seq order."""
        while t.next_seq in t.buffered:
            pending = t.buffered.pop(t.next_seq)
            arrived = t.arrivals.pop(t.next_seq, now)
            t.next_seq += 1
            t.applied += 1
            t.last_progress = now
            if isinstance(pending, Event):
                self._apply(t, pending, now, arrived)
            else:  # a record is judged in its place in the table's stream, only
                self._record(t, pending, now, write=journal)
        if t.buffered and t.held_since is None:
            t.held_since = now
        elif not t.buffered:
            t.held_since = None

    def _same_status(self, m: Status, payload: bytes | bytearray, now: float) -> bool:
        """The very status the table said last, delivered again (the broker gives its
        retained copy at every (re)connection, also to a desk that restarted): still
        the table's last word, so it says again whether the table is online; a
        duplicate, never a replay."""
        t = self.tables.get(m.table)
        if t is None or m.n != t.status_n or t.status_digest is None:
            return False
        if hashlib.sha256(bytes(payload)).digest() != t.status_digest:
            return False
        t.online, t.offline_reason, t.status_ts = m.online, m.reason, now
        t.duplicates += 1
        self.duplicates += 1
        return True

    def _refuse(self, m: Message) -> str | None:
        """Why an authentic message is still not taken (``None``: it is)."""
        t = self.tables.get(m.table)
        if isinstance(m, Status):
            if self.key is not None and t is not None and m.n <= t.status_n:
                return f"replayed status (counter {m.n}, the table is at {t.status_n})"
            return None
        next_seq = t.next_seq if t is not None else 1
        if t is not None and t.awaiting:
            return None  # re-keyed: its stream starts again with this message
        if m.seq > next_seq - 1 + WINDOW:
            return f"seq {m.seq} is outside the window ({next_seq}..{next_seq - 1 + WINDOW})"
        if isinstance(m, Record) and not m.game.startswith(f"{m.table}-g"):
            return f"{m.table} sent a record of another table's game ({m.game})"
        return None

    def _journal(
        self,
        journal: bool,
        now: float,
        topic: str,
        payload: bytes | bytearray,
        *,
        durable: bool = False,
    ) -> None:
        """One accepted message into ``events.jsonl`` (``durable``: on the disk before
        this returns, as every record is: a game's result is never lost by the desk)."""
        if journal and self._log is not None:
            self._log.write(
                json.dumps(
                    {"t": now, "topic": topic, "payload": bytes(payload).decode("utf-8")},
                    ensure_ascii=False,
                )
                + "\n"
            )
            self._log.flush()
            if durable:
                os.fsync(self._log.fileno())

    def _apply(self, t: TableState, e: Event, now: float, arrived: float | None = None) -> None:
        """One event, in its table's seq order; ``arrived``: when it reached the desk
        (``now`` when it is applied as it comes; earlier when it waited for a gap)."""
        arrived = now if arrived is None else arrived
        if e.ts:
            latency = now - e.ts
            # the table's clock is its own (a day behind, a minute ahead): the delay shown
            # is beyond the table's quickest message, so a skewed clock is no delay
            t.min_lag = min(t.min_lag, latency)
            self.max_latency = max(self.max_latency, latency - t.min_lag)
            if self.track_latency:
                self.latencies.append(latency)
            t.trail(e.game).arrivals.append((arrived, e.ts))
        t.game = e.game
        if e.kind is not EventKind.ASSIGNED:
            t.trail(e.game).take(e)
        else:
            t.assigned_n = max(t.assigned_n, e.assigned or 0)
            for callback in self.on_assigned:
                try:
                    callback(e)
                except Exception:  # a listener never stops the desk
                    log.exception("desk: an assignment listener failed")
        if e.hand is not None:
            t.hand = e.hand
        if e.score is not None:
            t.score = e.score
        if e.rules is not None:
            t.rules = e.rules
            parsed = _rules_from_line(e.rules)
            if parsed is not None:
                t.target, t.players = parsed.target, parsed.players
                t.rules_problems = (
                    rules_problems(parsed, self.rules) if self.rules is not None else []
                )
        self._hear(t, e, now)
        if e.kind is EventKind.DEAL:
            t.last.append(f"mano {t.hand}")
        elif e.kind in (EventKind.ACTION, EventKind.UNDO):
            t.last.append(e.text)
        elif e.kind is EventKind.REFUSAL:
            t.last.append(e.text)
            t.refusals.append(
                Refusal(t.table, e.seq, e.ts or now, e.game, e.seat, e.action, e.code or "", e.text)
            )
            t.refusal_counts[e.code or ""] += 1
        elif e.kind is EventKind.REFEREE_CALL:
            t.last.append(f"el asiento {e.seat} llamó al árbitro")
        elif e.kind is EventKind.NEW_GAME:
            t.last.append("partido nuevo")
        elif e.kind is EventKind.FINISHED:
            t.last.append(f"gana el equipo {e.winner} {t.score[0]}-{t.score[1]}")
        elif e.kind is EventKind.ABANDONED:
            t.last.append("partido abandonado")
        concern = triage(e, t.watch, now)
        if concern is not None and len(t.attention) - len(t.acked) >= ATTENTION_KEPT:
            t.attention_more += 1  # the list stays short; the rest are counted
        elif concern is not None:
            item = RefereeItem(
                t.table, e.seq, e.ts or now, e.game, e.seat, concern, clean(e.text), arrived
            )
            t.attention.append(item)

    @staticmethod
    def _hear(t: TableState, e: Event, now: float) -> None:
        """The game's statements for the TV (``TableState.heard``)."""
        heard = t.heard
        if heard is None:
            heard = t.heard = BroadcastLog(t.table)
        kind = e.kind
        if kind is EventKind.STATE and e.hand and e.game == t.heard_game and heard.hands:
            pass  # the table restarted in the middle of the game heard: it goes on
        elif kind in (EventKind.NEW_GAME, EventKind.STATE) and e.rules:
            heard.add(now, e.rules)  # a table line: a game from its start (or a restart)
            t.heard_game = e.game
        elif kind is EventKind.DEAL and e.text:
            if e.hand is not None and 0 < e.hand <= heard.hands:
                # the table restarted between a deal and its first action: the deal is
                # read again (the same hand's number), the first reading is gone
                heard.drop_hands(e.hand)
            heard.add(now, e.text)
        elif kind is EventKind.ACTION and e.text:
            heard.add(now, e.text)
        elif kind is EventKind.UNDO:
            heard.undo()
        elif kind is EventKind.FINISHED and heard.hands:
            heard.hand_ended(heard.hands, now)  # the game won ends its hand
        elif kind is EventKind.CARDS and e.hand is not None and e.hand == heard.hands:
            # the hand has ended at the table: its cards, for the delayed broadcast (a
            # game heard only since a restart has other hand numbers: left out)
            heard.add_deal(e.hand, e.text.splitlines())
            heard.hand_ended(e.hand, now)

    def tv(self, names: Callable[[str], tuple[str, str] | None] | None = None) -> dict[str, Any]:
        """The bar's TV: every table's score, mano, a hand's end, a flor or a falta envido
        called; never a card. ``names``: the teams' names at a table, when known."""
        with self.lock:
            now = self.clock()
            ids = sorted(set(self.tables) | set(self.roster or ()))
            out = []
            for k in ids:
                t = self.tables.get(k) or TableState(k)
                shown = tv_table(t.heard or BroadcastLog(k), now)
                if shown["hand"] != t.hand:  # heard since a restart only: not this hand's
                    shown |= {"mano": None, "hand_over": False, "flor": False,
                              "falta_envido": False}  # fmt: skip
                known = names(k) if names is not None else None
                shown |= {
                    "table": k,
                    "started": t.game is not None,
                    "score": list(t.score),
                    "hand": t.hand,
                    "target": t.target,
                    "players": t.players,
                    "online": t.online,
                    "names": list(known) if known else ["Equipo 0", "Equipo 1"],
                }
                out.append(shown)
            return {"tournament": self.tournament, "tables": out}

    def broadcast(
        self, table: str, names: Callable[[str], tuple[str, str] | None] | None = None
    ) -> dict[str, Any] | None:
        """The broadcast of ``table`` (``None``: no such table): the game as it was
        ``broadcast_delay_s`` ago, a hand's cards only once that hand has ended at the
        table (the desk hears them then: the ``cards`` event); a teaching table's at
        once. :meth:`~controller.render.broadcast.BroadcastLog.view`."""
        with self.lock:
            t = self.tables.get(table)
            if t is None and table not in (self.roster or ()):
                return None
            heard = (t.heard if t is not None else None) or BroadcastLog(table)
            known = names(table) if names is not None else None
            if known:
                heard.names = known
            teaching = table in self.teaching
            delay = 0.0 if teaching else self.broadcast_delay_s
            return heard.view(self.clock(), delay, teaching=teaching)

    def _record(self, t: TableState, r: Record, now: float, *, write: bool = True) -> None:
        """A record: saved (``write``; a desk reading its journal back only checks the
        file against it), judged, and the game's result unless it has one."""
        game, text = r.game, r.record
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        name = f"{game}.truco"
        existing = self.results.get(game)
        if existing is not None:
            if digest == existing.sha256 or any(c.sha256 == digest for c in existing.other_copies):
                return  # the same record again
            existing.copies += 1
            name = f"{game}.copy-{existing.copies}.truco"
            existing.problems.append(f"a different record of this game came as {name}")
        if self.out_dir is not None and write:
            atomic_write(self.out_dir / "records" / name, text.encode("utf-8"))
        result = self.judge.judge(t.table, r, name, now)
        result.sha256 = digest
        result.seq = r.seq
        if existing is None:
            result.problems.extend(self._agreement(t, r))
            trail = t.trails.get(r.game)
            if trail is not None and not result.problems and self.quota is not None:
                # a venue's desk (the demos and benches play a thousand times faster)
                result.held = unseen(trail.arrivals, len(trail.dealt), self.quota.hand_s)
        if existing is not None:
            existing.other_copies.append(
                Copy(name, digest, result.verdict, "; ".join([result.detail, *result.problems]),
                     result.score if result.verdict != "unreadable" else None, result.winner)
            )  # fmt: skip
            log.error("desk: %s sent another record for %s (%s)", t.table, game, name)
            self.export_soon()
            return
        self.results[game] = result
        if game not in t.games:
            t.games.append(game)
        if result.verdict != "intact" or result.problems:
            log.error(
                "desk: record %s: %s %s %s", game, result.verdict, result.detail, result.problems
            )
        self.export_soon()
        for callback in self.on_finished:
            callback(result)

    def _agreement(self, t: TableState, r: Record) -> list[str]:
        """How a record differs from what its table's events said of its game before it
        (empty: it agrees). A record counts only for a game its table announced on its
        authenticated stream and finished there with the same deal, actions and final
        score; a game the desk never saw played is listed and moves no result."""
        trail = t.trails.get(r.game)
        if trail is None or not trail.dealt:
            return ["the table never announced this game on its events"]
        if trail.recorded:
            return ["the table had sent a record of this game already"]
        trail.recorded = True
        problems = []
        if trail.finished is None:
            problems.append("the table's events never said this game was won")
        text = unseal(r.record) if "#~seal " in r.record else r.record
        lines: list[str] = []
        dealt: list[int] = []
        for raw in text.split("\n"):
            line = _statement(raw)
            if not line or line.startswith(("table ", "score ")) or line == "table":
                continue
            if line.startswith("deal "):
                if dealt:
                    dealt[-1] += 1
                continue
            if line == "hand":
                dealt.append(0)
            lines.append(line)
        if trail.resumed:  # every statement the table sent is in the record
            # but its hands: a deal the power cut took before the record kept it is
            # dealt again after the restart, so the events say that "hand" twice
            missing = collections.Counter(x for x in trail.lines if x != "hand") - (
                collections.Counter(lines)
            )
            if missing:
                problems.append(
                    f"the table's events said {next(iter(missing))[:60]}, which the record "
                    "does not have"
                )
        elif lines != trail.lines:
            at = next(
                (i for i, (a, b) in enumerate(zip(lines, trail.lines, strict=False)) if a != b),
                min(len(lines), len(trail.lines)),
            )
            said = trail.lines[at] if at < len(trail.lines) else "nothing"
            wrote = lines[at] if at < len(lines) else "nothing"
            problems.append(
                f"the record's statement {at + 1} ({wrote[:60]}) is not what the table's "
                f"events said ({said[:60]})"
            )
        elif dealt != trail.dealt:
            problems.append("the record's deals are not the ones the table's events said")
        if trail.finished is not None:
            winner, score = trail.finished
            if (r.winner, r.score) != (winner, score):
                problems.append(
                    f"the table's events ended {score[0]}-{score[1]}, won by team {winner}"
                )
        return problems

    # ------------------------------------------------------------------ records at rest

    def reverify(self, now: float | None = None) -> list[str]:
        """Check the record files against what was collected
        (:func:`~.records.check_at_rest`); the games found tampered now."""
        now = self.clock() if now is None else now
        with self.lock:
            self.last_reverify = now
            if self.out_dir is None:
                return []
            found = check_at_rest(self.out_dir / "records", self.results.values(), now)
        if found:
            self.export()
        return found

    # ------------------------------------------------------------------ the referee

    def ack(self, table: str, seq: int | None = None) -> int:
        """A referee saw one of a table's *atención* items (the event ``seq``: a referee
        call, an exceptional refusal...) or all of them; returns how many. Journaled and
        synced first, so a restarted desk keeps it."""
        with self.lock:
            t = self.tables.get(table)
            if t is None:
                return 0
            seqs = [a.seq for a in t.pending() if seq is None or a.seq == seq]
            if not seqs:
                return 0
            if self._log is not None:
                line = {"t": self.clock(), "ack": table, "seqs": seqs}
                self._log.write(json.dumps(line) + "\n")
                self._log.flush()
                os.fsync(self._log.fileno())
            t.acked.update(seqs)
            return len(seqs)

    def _reapply_ack(self, table: object, seqs: object) -> None:
        """An acknowledgement read back from the journal."""
        if not isinstance(table, str) or not isinstance(seqs, list):
            raise ValueError("not an acknowledgement")
        wanted = {s for s in seqs if isinstance(s, int) and not isinstance(s, bool)}
        self.table(check_name("table id", table)).acked.update(wanted)

    def attention(self) -> list[RefereeItem]:
        """Every table's *atención* items not acknowledged yet, in the order they
        reached the desk."""
        with self.lock:
            items = [a for t in self.tables.values() for a in t.pending()]
        # as they reached the desk: a table's clock (a day behind) never reorders them
        return sorted(items, key=lambda a: (a.at, a.table, a.seq))

    # ------------------------------------------------------------------ gaps

    def gaps(self, now: float | None = None) -> list[tuple[str, int, int]]:
        """``(table, first, last)`` ranges to ask the tables for again (at most
        ``RESEND_MAX`` messages each)."""
        now = self.clock() if now is None else now
        out = []
        with self.lock:
            for t in self.tables.values():
                self._settle(t, now, True)
                if t.awaiting or now - t.last_request < GAP_WAIT_S:
                    continue
                if t.buffered:
                    oldest = min(t.buffered)
                    if now - t.received_at >= GAP_WAIT_S or len(t.buffered) > 50:
                        last = min(oldest - 1, t.next_seq + RESEND_MAX - 1)
                        out.append((t.table, t.next_seq, last))
                        t.last_request = now
                elif t.online and t.known_seq >= t.next_seq and now - t.last_progress >= STALL_S:
                    last = min(t.known_seq, t.next_seq + RESEND_MAX - 1)
                    out.append((t.table, t.next_seq, last))
                    t.last_request = now
        return out

    # ------------------------------------------------------------------ output

    def results_list(self) -> list[GameResult]:
        with self.lock:
            return sorted(self.results.values(), key=lambda r: (r.table, r.game))

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            now = self.clock()
            tables = [self.tables[k].summary(now) for k in sorted(self.tables)]
            if self.roster is not None:  # the roster's tables never heard from, too
                tables += [TableState(k).summary(now) for k in self.roster if k not in self.tables]
                tables.sort(key=lambda t: t["table"])
            results = [r.full() for r in self.results_list()]
            return {
                "tournament": self.tournament,
                "time": now,
                "broker": {
                    "connected": self.broker_connected,
                    "since": self.broker_since,
                    "for_s": round(now - self.broker_since, 1)
                    if self.broker_since is not None
                    else None,
                },
                "tables": tables,
                "results": results,
                "online": sum(1 for t in self.tables.values() if t.online)
                if self.broker_connected is not False
                else 0,
                "held_back": [t["table"] for t in tables if t["held_back"]],
                "attention": [a.row() for a in self.attention()],
                "attention_pending": sum(len(t.pending()) for t in self.tables.values()),
                "refusals_total": sum(len(t.refusals) for t in self.tables.values()),
                "flagged": sum(1 for r in self.results.values() if not r.ok),
                "rejected": self.rejected,
                "rejections": [r.row() for r in self.rejections[-50:]],
                "received": self.received,
                "duplicates": self.duplicates,
                "max_latency_s": round(self.max_latency, 4),
                "house_rules": tournament_profile(self.rules).to_line()
                if self.rules is not None
                else None,
                "last_reverify": self.last_reverify,
            }

    def results_csv(self) -> str:
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=RESULT_FIELDS, lineterminator="\n")
        writer.writeheader()
        for r in self.results_list():
            writer.writerow(r.row())
        return buf.getvalue()

    def results_json(self) -> str:
        snap = self.snapshot()
        data = {
            "tournament": self.tournament,
            "exported_at": snap["time"],
            "house_rules": snap["house_rules"],
            "games": [r.full() for r in self.results_list()],
            "tables": [
                {
                    "table": t["table"],
                    "online": t["online"],
                    "game": t["game"],
                    "score": t["score"],
                    "games_finished": t["games"],
                    "attention_pending": len(t["attention"]),
                    "refusal_counts": t["refusal_counts"],
                    "last_seen": t["last_seen"],
                    "rejected": t["rejected"],
                }
                for t in snap["tables"]
            ],
            "rejected": snap["rejected"],
            "rejections": snap["rejections"],
        }
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"

    def export_soon(self) -> None:
        """Rewrite the exports now, or within ``EXPORT_S`` when they were rewritten less
        than that ago (:meth:`flush_exports`, called by the desk's housekeeping): a
        flood of records never rewrites them more than once a second."""
        if self._replaying or time.monotonic() - self._exported < EXPORT_S:
            self.export_due = True
        else:
            self.export()

    def flush_exports(self) -> None:
        """The exports :meth:`export_soon` put off, if their time has come."""
        if self.export_due and time.monotonic() - self._exported >= EXPORT_S:
            self.export()

    def export(self, out_dir: str | Path | None = None) -> tuple[Path, Path] | None:
        """Write ``results.csv`` and ``results.json`` (atomically); their paths."""
        folder = Path(out_dir) if out_dir is not None else self.out_dir
        if folder is None:
            return None
        # The locks in one order, everywhere: the state's (the organiser's too), then the
        # exports'. A record handled on the broker's thread exports holding the state's;
        # taken the other way round here, the housekeeping's export and that thread waited
        # for each other for ever (the desk froze, its page too, under a load of 8). What
        # is written is read under both: the last written is the newest; the files are
        # written under the exports' lock alone, from values that never change.
        with self.lock:
            self._export_lock.acquire()
            try:
                if out_dir is None:
                    self._exported, self.export_due = time.monotonic(), False
                csv_text, json_text = self.results_csv(), self.results_json()
                competition = self.competition
                tournament = competition.tournament if competition is not None else None
                results = self.results_list() if tournament is not None else []
            except BaseException:
                self._export_lock.release()
                raise
        try:
            folder.mkdir(parents=True, exist_ok=True)
            atomic_write(folder / "results.csv", csv_text.encode("utf-8"), fsync=False)
            atomic_write(folder / "results.json", json_text.encode("utf-8"), fsync=False)
            if tournament is not None:  # standings, matches and games too
                from .exports import write_exports

                write_exports(tournament, folder, results)
        finally:
            self._export_lock.release()
        return folder / "results.csv", folder / "results.json"

    def close(self) -> None:
        self.export()
        if self._log is not None:
            self._log.close()
            self._log = None
