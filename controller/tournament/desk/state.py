"""The desk's state: every table's progress and every game's result, without the network.

``DeskState`` is the desk without the network (what the tests drive): it takes the
tables' messages (:mod:`controller.tournament.messages`, parsed and checked there) in
whatever order and however many times they arrive, drops duplicates by ``(table, seq)``,
applies each table's events in seq order (holding back those after a gap until it is
filled) and keeps, per table: online/offline, the game, hand and score, the last
events, the refusals waiting for a referee, the finished games. Every sealed record is
saved into ``records/`` and verified with the tournament key: a record that does not
verify, names another game or carries no seal is flagged. Results come from the
records themselves (replayed), not from the live events.

The MQTT client is :mod:`.client`, the terminal board :mod:`.board`, the web page
:mod:`.web`.

Files in the desk's folder: ``records/<game>.truco`` (each sealed record as received),
``results.csv`` and ``results.json`` (rewritten after every finished game and on
``export``), ``events.jsonl`` (every message received, so a restarted desk resumes).
"""

from __future__ import annotations

import collections
import contextlib
import csv
import datetime
import io
import json
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ...engine import HouseRules
from ...transcript import TranscriptError, parse, replay
from ..messages import Event, EventKind, MalformedMessage, Record, Status, parse_message
from ..outbox import atomic_write
from ..profile import profile_problems
from ..seal import TAG_MARK, NotSealedError, SealError, TournamentKey, verify
from ..topics import check_name, tournament_prefix

__all__ = ["DeskState", "GameResult", "Refusal", "TableState", "unseal"]

log = logging.getLogger(__name__)

RESULT_FIELDS: Final = (
    "tournament",
    "table",
    "game",
    "winner",
    "score_0",
    "score_1",
    "hands",
    "verdict",
    "detail",
    "key_id",
    "rules",
    "record",
    "finished_at",
)
_TAG_RE: Final = re.compile(re.escape(TAG_MARK) + r"[0-9a-f]{64}$")
GAP_WAIT_S: Final = 0.5  # a gap older than this is asked for again
STALL_S: Final = 2.0  # a table that announced more than we have, silent this long


def unseal(sealed: str) -> str:
    """The record without its tags and seal line (what the table archived)."""
    out = []
    for line in sealed.replace("\r\n", "\n").split("\n"):
        if line.startswith("#~seal "):
            continue
        out.append(_TAG_RE.sub("", line))
    text = "\n".join(out)
    return text if text.endswith("\n") else text + "\n"


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
class GameResult:
    tournament: str
    table: str
    game: str
    winner: int | None
    score: tuple[int, int]
    hands: int
    verdict: str  # intact | tampered | unsealed | unchecked | unreadable
    detail: str
    key_id: str | None
    rules: str
    record: str  # file name under records/
    finished_at: float
    problems: list[str] = field(default_factory=list)
    copies: int = 1  # the same game received with a different record: flagged

    def row(self) -> dict[str, Any]:
        return {
            "tournament": self.tournament,
            "table": self.table,
            "game": self.game,
            "winner": self.winner,
            "score_0": self.score[0],
            "score_1": self.score[1],
            "hands": self.hands,
            "verdict": self.verdict,
            "detail": "; ".join([self.detail, *self.problems]),
            "key_id": self.key_id,
            "rules": self.rules,
            "record": self.record,
            "finished_at": datetime.datetime.fromtimestamp(self.finished_at, datetime.UTC)
            .isoformat(timespec="seconds")
            .replace("+00:00", "Z"),
        }

    @property
    def ok(self) -> bool:
        return self.verdict == "intact" and not self.problems and self.copies == 1


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
    refusals: list[Refusal] = field(default_factory=list)
    games: list[str] = field(default_factory=list)
    next_seq: int = 1
    buffered: dict[int, Event | Record] = field(default_factory=dict)
    duplicates: int = 0
    applied: int = 0
    known_seq: int = 0
    last_progress: float = 0.0
    last_request: float = 0.0
    received_at: float = 0.0

    def summary(self) -> dict[str, Any]:
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
            "refusals": [
                {k: v for k, v in r.__dict__.items() if k != "table"} for r in self.refusals
            ],
            "games": list(self.games),
            "seq": self.next_seq - 1,
            "waiting": sorted(self.buffered),
            "duplicates": self.duplicates,
        }


class DeskState:
    """Everything the desk knows (see the module docstring); thread-safe."""

    def __init__(
        self,
        tournament: str,
        *,
        out_dir: str | Path | None = None,
        key: TournamentKey | None = None,
        profile: str | None = None,
        track_latency: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.tournament = check_name("tournament", tournament)
        self.prefix = tournament_prefix(tournament) + "/"
        self.key = key
        self.profile = profile
        self.clock = clock
        self.tables: dict[str, TableState] = {}
        self.results: dict[str, GameResult] = {}
        self.track_latency = track_latency
        self.latencies: list[float] = []  # seconds from the table's event to its delivery
        self.max_latency = 0.0
        self.received = 0
        self.duplicates = 0
        self.lock = threading.RLock()
        self.on_finished: list[Callable[[GameResult], None]] = []
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self._log: io.TextIOWrapper | None = None
        if self.out_dir is not None:
            (self.out_dir / "records").mkdir(parents=True, exist_ok=True)
            self._reload()
            self._log = open(self.out_dir / "events.jsonl", "a", encoding="utf-8")  # noqa: SIM115

    # ------------------------------------------------------------------ input

    def _reload(self) -> None:
        assert self.out_dir is not None
        path = self.out_dir / "events.jsonl"
        if not path.exists():
            return
        count = 0
        with open(path, encoding="utf-8") as f:
            for line in f:
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    obj = json.loads(line)
                    self.handle(
                        obj["topic"], obj["payload"].encode("utf-8"), obj["t"], journal=False
                    )
                    count += 1
        for t in self.tables.values():
            t.online = None  # unknown until the broker tells again
        log.info("desk: resumed from %s (%d messages)", path, count)

    def table(self, table_id: str) -> TableState:
        state = self.tables.get(table_id)
        if state is None:
            state = self.tables[table_id] = TableState(table_id)
        return state

    def handle(
        self,
        topic: str,
        payload: bytes | bytearray,
        now: float | None = None,
        *,
        journal: bool = True,
    ) -> None:
        """One message from the broker (any order, any number of times)."""
        try:
            message = parse_message(self.prefix, topic, payload)
        except MalformedMessage as e:
            log_bad(f"{topic[:120]}: {e}")
            return
        if message is None:
            return
        now = self.clock() if now is None else now
        with self.lock:
            t = self.table(message.table)
            t.received_at = now
            if isinstance(message, Status):
                t.online = message.online
                t.offline_reason = message.reason
                t.status_ts = now
                t.known_seq = max(t.known_seq, message.seq)
                return
            seq = message.seq
            self.received += 1
            if isinstance(message, Record):
                self._record(t, message, now)
            if seq < t.next_seq or seq in t.buffered:
                t.duplicates += 1
                self.duplicates += 1
                return
            if journal and self._log is not None:
                self._log.write(
                    json.dumps(
                        {"t": now, "topic": topic, "payload": bytes(payload).decode("utf-8")},
                        ensure_ascii=False,
                    )
                    + "\n"
                )
                self._log.flush()
            t.known_seq = max(t.known_seq, seq)
            t.buffered[seq] = message
            while t.next_seq in t.buffered:
                pending = t.buffered.pop(t.next_seq)
                t.next_seq += 1
                t.applied += 1
                t.last_progress = now
                if isinstance(pending, Event):
                    self._apply(t, pending, now)

    def _apply(self, t: TableState, e: Event, now: float) -> None:
        if e.ts:
            latency = now - e.ts
            self.max_latency = max(self.max_latency, latency)
            if self.track_latency:
                self.latencies.append(latency)
        t.game = e.game
        if e.hand is not None:
            t.hand = e.hand
        if e.score is not None:
            t.score = e.score
        if e.rules is not None:
            t.rules = e.rules
            with contextlib.suppress(ValueError):
                words = e.rules.split()[1:]
                parsed = HouseRules.from_options(dict(w.split("=", 1) for w in words))
                t.target, t.players = parsed.target, parsed.players
        if e.kind is EventKind.DEAL:
            t.last.append(f"mano {t.hand}")
        elif e.kind in (EventKind.ACTION, EventKind.UNDO):
            t.last.append(e.text)
        elif e.kind is EventKind.REFUSAL:
            t.last.append(e.text)
            t.refusals.append(
                Refusal(
                    t.table, e.seq, e.ts or now, e.game, e.seat, e.action, e.code or "", e.text
                )
            )
        elif e.kind is EventKind.NEW_GAME:
            t.last.append("partida nueva")
        elif e.kind is EventKind.FINISHED:
            t.last.append(f"gana el equipo {e.winner} {t.score[0]}-{t.score[1]}")
        elif e.kind is EventKind.ABANDONED:
            t.last.append("partida abandonada")

    def _record(self, t: TableState, r: Record, now: float) -> None:
        game, text = r.game, r.record
        name = f"{game}.truco"
        existing = self.results.get(game)
        if existing is not None:
            path = self.out_dir / "records" / existing.record if self.out_dir else None
            if path is None or not path.exists() or path.read_text(encoding="utf-8") == text:
                return  # the same record again
            existing.copies += 1
            name = f"{game}.copy-{existing.copies}.truco"
            existing.problems.append(f"a different record of this game came as {name}")
        if self.out_dir is not None:
            atomic_write(self.out_dir / "records" / name, text.encode("utf-8"), fsync=False)
        if existing is not None:
            log.error("desk: %s sent another record for %s (%s)", t.table, game, name)
            return
        result = self._judge(t.table, r, name, now)
        if not game.startswith(f"{t.table}-g"):
            result.problems.append(f"table {t.table} sent the record of another table's game")
        self.results[game] = result
        if game not in t.games:
            t.games.append(game)
        if result.verdict != "intact" or result.problems:
            log.error(
                "desk: record %s: %s %s %s", game, result.verdict, result.detail, result.problems
            )
        self.export()
        for callback in self.on_finished:
            callback(result)

    def _judge(self, table: str, r: Record, name: str, now: float) -> GameResult:
        game, text = r.game, r.record
        verdict, detail, key_id = "unchecked", "no tournament key at the desk", None
        plain = text
        sealed = any(line.startswith("#~seal ") for line in text.splitlines())
        if sealed:
            plain = unseal(text)
        if self.key is not None:
            try:
                v = verify(text, self.key.key, key_id=self.key.key_id)
            except NotSealedError:
                verdict, detail = "unsealed", "the record carries no seal"
            except SealError as e:
                verdict, detail = "unreadable", str(e)
            else:
                if not v.ok:
                    verdict, detail = "tampered", f"line {v.first_bad_line}: {v.reason}"
                elif v.game_id != game:
                    verdict, detail = "tampered", f"sealed as game {v.game_id}, sent as {game}"
                else:
                    verdict, detail, key_id = "intact", f"{v.lines} lines", v.key_id
        problems: list[str] = []
        winner: int | None = None
        score: tuple[int, int] = (0, 0)
        hands = 0
        rules = ""
        try:
            replayed = replay(parse(plain)).game
        except TranscriptError as e:
            problems.append(f"the record does not replay (line {e.line}: {e.message})")
            if verdict == "intact":
                verdict = "unreadable"
        else:
            winner, score, hands = replayed.winner, replayed.score, replayed.hand_number
            rules = replayed.rules.to_line()
            if winner is None:
                problems.append("the record ends before the game was won")
            reported = r.score
            if reported is not None and reported != score:
                problems.append(f"the table reported {reported[0]}-{reported[1]}")
            if self.profile == "tournament":
                problems.extend(profile_problems(replayed.rules))
        return GameResult(
            self.tournament,
            table,
            game,
            winner,
            score,
            hands,
            verdict,
            detail,
            key_id,
            rules,
            name,
            r.ts or now,
            problems,
        )

    # ------------------------------------------------------------------ the referee

    def ack(self, table: str, seq: int | None = None) -> int:
        """A referee saw a table's refusal (``seq``) or all of them; returns how many."""
        with self.lock:
            t = self.tables.get(table)
            if t is None:
                return 0
            before = len(t.refusals)
            t.refusals = [r for r in t.refusals if seq is not None and r.seq != seq]
            return before - len(t.refusals)

    # ------------------------------------------------------------------ gaps

    def gaps(self, now: float | None = None) -> list[tuple[str, int, int]]:
        """``(table, first, last)`` ranges to ask the tables for again."""
        now = self.clock() if now is None else now
        out = []
        with self.lock:
            for t in self.tables.values():
                if now - t.last_request < GAP_WAIT_S:
                    continue
                if t.buffered:
                    oldest = min(t.buffered)
                    if now - t.received_at >= GAP_WAIT_S or len(t.buffered) > 50:
                        out.append((t.table, t.next_seq, oldest - 1))
                        t.last_request = now
                elif t.online and t.known_seq >= t.next_seq and now - t.last_progress >= STALL_S:
                    out.append((t.table, t.next_seq, t.known_seq))
                    t.last_request = now
        return out

    # ------------------------------------------------------------------ output

    def results_list(self) -> list[GameResult]:
        with self.lock:
            return sorted(self.results.values(), key=lambda r: (r.table, r.game))

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            tables = [self.tables[k].summary() for k in sorted(self.tables)]
            results = [r.row() | {"ok": r.ok} for r in self.results_list()]
            return {
                "tournament": self.tournament,
                "time": self.clock(),
                "tables": tables,
                "results": results,
                "online": sum(1 for t in self.tables.values() if t.online),
                "refusals_pending": sum(len(t.refusals) for t in self.tables.values()),
                "flagged": sum(1 for r in self.results.values() if not r.ok),
                "received": self.received,
                "duplicates": self.duplicates,
                "max_latency_s": round(self.max_latency, 4),
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
            "games": [r.row() | {"ok": r.ok} for r in self.results_list()],
            "tables": [
                {
                    "table": t["table"],
                    "online": t["online"],
                    "game": t["game"],
                    "score": t["score"],
                    "games_finished": t["games"],
                    "refusals_pending": len(t["refusals"]),
                }
                for t in snap["tables"]
            ],
        }
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"

    def export(self, out_dir: str | Path | None = None) -> tuple[Path, Path] | None:
        """Write ``results.csv`` and ``results.json`` (atomically); their paths."""
        folder = Path(out_dir) if out_dir is not None else self.out_dir
        if folder is None:
            return None
        folder.mkdir(parents=True, exist_ok=True)
        with self.lock:
            csv_text, json_text = self.results_csv(), self.results_json()
        atomic_write(folder / "results.csv", csv_text.encode("utf-8"), fsync=False)
        atomic_write(folder / "results.json", json_text.encode("utf-8"), fsync=False)
        return folder / "results.csv", folder / "results.json"

    def close(self) -> None:
        self.export()
        if self._log is not None:
            self._log.close()
            self._log = None


def log_bad(what: str) -> None:
    log.warning("desk: ignored a malformed message (%s)", what)


