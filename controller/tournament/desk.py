"""The tournament desk: follows every table through the broker, keeps the results.

``DeskState`` is the desk without the network (what the tests drive): it takes the
tables' messages (:mod:`controller.tournament.topics`) in whatever order and however
many times they arrive, drops duplicates by ``(table, seq)``, applies each table's
events in seq order (holding back those after a gap until it is filled) and keeps, per
table: online/offline, the game, hand and score, the last events, the refusals waiting
for a referee, the finished games. Every sealed record is saved into ``records/`` and
verified with the tournament key: a record that does not verify, names another game or
carries no seal is flagged. Results come from the records themselves (replayed), not
from the live events.

``Desk`` adds the MQTT client (paho-mqtt: a persistent session at QoS 1, so nothing
published while the desk is away is lost) and asks tables for the messages of a gap
(``.../resend``). ``serve_http`` serves the scoreboard page and its JSON on 127.0.0.1
only; ``render_board`` is the terminal scoreboard (matchsticks as text).

Files in the desk's folder: ``records/<game>.truco`` (each sealed record as received),
``results.csv`` and ``results.json`` (rewritten after every finished game and on
``export``), ``events.jsonl`` (every message received, so a restarted desk resumes).
"""

from __future__ import annotations

import collections
import contextlib
import csv
import datetime
import functools
import io
import ipaddress
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlsplit

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from ..engine import HouseRules
from ..render.matchsticks import HALF_POINTS, POINTS_PER_SQUARE, sticks_for_score
from ..transcript import TranscriptError, parse, replay
from .outbox import atomic_write
from .profile import profile_problems
from .seal import TAG_MARK, NotSealedError, SealError, TournamentKey, verify
from .topics import (
    ID_RE,
    check_name,
    decode,
    encode,
    no_loopback_listener,
    table_prefix,
    tournament_prefix,
)

__all__ = [
    "Desk",
    "DeskState",
    "GameResult",
    "TableState",
    "render_board",
    "serve_http",
    "sticks_text",
    "unseal",
]

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


_GLYPHS: Final = " |┌⊓□⧄"  # 0..5 sticks of one square: left, top, right, bottom, diagonal


def sticks_text(points: int, target: int) -> str:
    """The score in matchsticks, one character a square (``⧄`` is five), malas and
    buenas apart: ``⧄⧄⧄│⧄┌`` is 22 of 30; beyond the target, ``+N``."""
    counts: dict[tuple[int, int], int] = collections.Counter(
        (s.half, s.square) for s in sticks_for_score(max(points, 0), target)
    )
    halves = []
    for half in range(target // HALF_POINTS):
        squares = [counts.get((half, sq), 0) for sq in range(HALF_POINTS // POINTS_PER_SQUARE)]
        halves.append("".join(_GLYPHS[n] for n in squares))
    text = "│".join(halves)
    if points > target:
        text += f"+{points - target}"
    return text


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
    buffered: dict[int, dict[str, Any]] = field(default_factory=dict)
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
        if not topic.startswith(self.prefix):
            return
        parts = topic[len(self.prefix) :].split("/")
        if len(parts) < 2:
            return
        table_id, what = parts[0], parts[1]
        if what == "resend":
            return
        if not ID_RE.fullmatch(table_id):
            log_bad(topic)
            return
        now = self.clock() if now is None else now
        p = decode(payload)
        if p is None:
            log_bad(topic)
            return
        with self.lock:
            t = self.table(table_id)
            t.received_at = now
            if what == "status":
                t.online = p.get("state") == "online"
                t.offline_reason = None if t.online else str(p.get("reason", "lost"))
                t.status_ts = now
                if isinstance(p.get("seq"), int):
                    t.known_seq = max(t.known_seq, p["seq"])
                return
            seq = p.get("seq")
            if what not in ("events", "records") or not isinstance(seq, int) or seq < 1:
                log_bad(topic)
                return
            self.received += 1
            if what == "records":
                self._record(t, p, now)
            if seq < t.next_seq or seq in t.buffered:
                t.duplicates += 1
                self.duplicates += 1
                return
            if journal and self._log is not None:
                self._log.write(
                    json.dumps(
                        {"t": now, "topic": topic, "payload": payload.decode("utf-8")},
                        ensure_ascii=False,
                    )
                    + "\n"
                )
                self._log.flush()
            t.known_seq = max(t.known_seq, seq)
            t.buffered[seq] = p
            while t.next_seq in t.buffered:
                event = t.buffered.pop(t.next_seq)
                t.next_seq += 1
                t.applied += 1
                t.last_progress = now
                self._apply(t, event, now)

    def _apply(self, t: TableState, p: dict[str, Any], now: float) -> None:
        ts = p.get("ts")
        if isinstance(ts, int | float):
            latency = now - ts
            self.max_latency = max(self.max_latency, latency)
            if self.track_latency:
                self.latencies.append(latency)
        kind = str(p.get("kind", ""))
        text = str(p.get("text", ""))
        if isinstance(p.get("game"), str):
            t.game = p["game"]
        if isinstance(p.get("hand"), int):
            t.hand = p["hand"]
        score = p.get("score")
        if isinstance(score, list) and len(score) == 2 and all(isinstance(x, int) for x in score):
            t.score = (score[0], score[1])
        rules = p.get("rules")
        if isinstance(rules, str):
            t.rules = rules
            with contextlib.suppress(ValueError):
                words = rules.split()[1:]
                parsed = HouseRules.from_options(dict(w.split("=", 1) for w in words))
                t.target, t.players = parsed.target, parsed.players
        if kind == "deal":
            t.last.append(f"mano {t.hand}")
        elif kind in ("action", "undo"):
            t.last.append(text)
        elif kind == "refusal":
            t.last.append(text)
            seat = p.get("seat")
            t.refusals.append(
                Refusal(
                    t.table,
                    int(p["seq"]),
                    float(ts) if isinstance(ts, int | float) else now,
                    str(p.get("game", "")),
                    seat if isinstance(seat, int) else None,
                    p.get("action") if isinstance(p.get("action"), str) else None,
                    str(p.get("code", "")),
                    text,
                )
            )
        elif kind == "new-game":
            t.last.append("partido nuevo")
        elif kind == "finished":
            t.last.append(f"gana el equipo {p.get('winner')} {t.score[0]}-{t.score[1]}")
        elif kind == "abandoned":
            t.last.append("partido abandonado")

    def _record(self, t: TableState, p: dict[str, Any], now: float) -> None:
        game = p.get("game")
        text = p.get("record")
        if not isinstance(game, str) or not isinstance(text, str):
            log_bad(f"record from {t.table}")
            return
        try:
            check_name("game id", game)
        except ValueError:
            log_bad(f"record {game!r} from {t.table}")
            return
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
        result = self._judge(t.table, game, text, p, name, now)
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

    def _judge(
        self, table: str, game: str, text: str, p: dict[str, Any], name: str, now: float
    ) -> GameResult:
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
            reported = p.get("score")
            if isinstance(reported, list) and tuple(reported) != score:
                problems.append(f"the table reported {reported[0]}-{reported[1]}")
            if self.profile == "tournament":
                problems.extend(profile_problems(replayed.rules))
        ts = p.get("ts")
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
            float(ts) if isinstance(ts, int | float) else now,
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


# ---------------------------------------------------------------------------- the terminal


def render_board(state: DeskState, width: int = 120) -> str:
    """The scoreboard as text (what ``truco-table desk`` prints every second)."""
    snap = state.snapshot()
    tables = snap["tables"]
    finished = len(snap["results"])
    lines = [
        f"Torneo {snap['tournament']}: {len(tables)} tables, {snap['online']} online, "
        f"{sum(1 for t in tables if t['online'] is False and t['offline_reason'] != 'stopped')} "
        "lost, "
        f"{finished} games finished, {snap['refusals_pending']} refusals for the referee, "
        f"{snap['flagged']} records flagged",
        "",
        f"{'TABLE':<10} {'STATE':<8} {'GAME':<14} {'HAND':>4}  "
        f"{'TEAM 0':<11}{'':>4}  {'TEAM 1':<11}{'':>4}  {'REF':>3}  LAST",
    ]
    for t in tables:
        if t["online"] is None:
            state_text = "?"
        elif t["online"]:
            state_text = "online"
        else:  # a clean stop is not the referee's worry; a lost table is
            state_text = "stopped" if t["offline_reason"] == "stopped" else "OFFLINE"
        s0, s1 = t["score"]
        target = t["target"] if t["target"] in (15, 30) else 30
        last = t["last"][-1].replace("\n", " ") if t["last"] else ""
        row = (
            f"{t['table']:<10} {state_text:<8} {t['game'] or '-':<14} {t['hand']:>4}  "
            f"{sticks_text(s0, target):<11}{s0:>4}  {sticks_text(s1, target):<11}{s1:>4}  "
            f"{len(t['refusals']) or '':>3}  {last}"
        )
        lines.append(row[:width])
    flagged = [r for r in snap["results"] if not r["ok"]]
    if flagged:
        lines.append("")
        lines.append("Flagged records:")
        for r in flagged:
            lines.append(f"  {r['game']}: {r['verdict']}: {r['detail']}"[:width])
    pending = [(t["table"], r) for t in tables for r in t["refusals"]]
    if pending:
        lines.append("")
        lines.append("Refusals waiting for a referee:")
        for table, r in pending[-8:]:
            lines.append(f"  {table} #{r['seq']}: {r['text']}"[:width])
    return "\n".join(lines)


# ---------------------------------------------------------------------------- the web page


_PAGE: Final = """<!doctype html>
<html lang="es"><head><meta charset="utf-8"><title>Torneo de truco</title>
<style>
body{font-family:system-ui,sans-serif;margin:1em;background:#0f3d24;color:#f4f1e8}
table{border-collapse:collapse;width:100%}td,th{padding:.3em .5em;border-bottom:1px solid #2d6b46;
text-align:left;vertical-align:middle}th{font-weight:600}.off{color:#ff8a80;font-weight:700}
.on{color:#b9f6ca}.bad{background:#7f1d1d}.n{font-variant-numeric:tabular-nums;text-align:right}
img{image-rendering:pixelated;background:#000;border-radius:3px}button{font-size:.8em}
a{color:#ffe082}.muted{color:#a5c8b3;font-size:.85em}
</style></head><body>
<h1 id="title">Torneo</h1><p id="summary" class="muted"></p>
<table><thead><tr><th>Mesa</th><th>Estado</th><th>Partida</th><th class="n">Mano</th>
<th>Equipo 0</th><th class="n"></th><th>Equipo 1</th><th class="n"></th>
<th>Rechazos para el árbitro</th><th>Últimas jugadas</th></tr></thead>
<tbody id="tables"></tbody></table>
<h2>Resultados</h2>
<p><a href="/results.csv">results.csv</a> · <a href="/results.json">results.json</a></p>
<table><thead><tr><th>Partida</th><th>Mesa</th><th>Ganador</th><th class="n">Tanteador</th>
<th class="n">Manos</th><th>Registro</th><th>Sello</th></tr></thead>
<tbody id="results"></tbody></table>
<script>
const ESC = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"};
const esc = s => String(s ?? "").replace(/[&<>"']/g, c => ESC[c]);
const sticks = (p, t) => `<img alt="${p}" src="/sticks/${p}-${t}.png" width="126" height="76">`;
const online = t => t.online === null ? "?" : t.online ? "en línea"
  : t.offline_reason === "stopped" ? "apagada" : "FUERA DE LÍNEA";
const refusal = (t, r) => `<div>${esc(r.text)}
  <button data-table="${esc(t.table)}" data-seq="${r.seq}">visto</button></div>`;
document.addEventListener("click", async ev => {
  const b = ev.target.closest("button[data-table]");
  if (!b) return;
  await fetch("/api/ack", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({table: b.dataset.table, seq: Number(b.dataset.seq)})});
  refresh();
});
async function refresh() {
  let s;
  try { s = await (await fetch("/api/state")).json(); } catch (e) { return; }
  document.getElementById("title").textContent = "Torneo " + s.tournament;
  document.getElementById("summary").textContent =
    `${s.tables.length} mesas, ${s.online} en línea · ${s.results.length} partidos terminados · ` +
    `${s.refusals_pending} rechazos para el árbitro · ${s.flagged} registros señalados · ` +
    `demora máxima ${s.max_latency_s} s`;
  document.getElementById("tables").innerHTML = s.tables.map(t => `<tr>
    <td>${esc(t.table)}</td><td class="${t.online ? "on" : "off"}">${online(t)}</td>
    <td>${esc(t.game)}</td><td class="n">${t.hand}</td>
    <td>${sticks(t.score[0], t.target)}</td><td class="n">${t.score[0]}</td>
    <td>${sticks(t.score[1], t.target)}</td><td class="n">${t.score[1]}</td>
    <td>${t.refusals.map(r => refusal(t, r)).join("")}</td>
    <td class="muted">${t.last.map(esc).join("<br>")}</td></tr>`).join("");
  document.getElementById("results").innerHTML = s.results.map(r => `
    <tr class="${r.ok ? "" : "bad"}"><td>${esc(r.game)}</td><td>${esc(r.table)}</td>
    <td>equipo ${esc(r.winner)}</td><td class="n">${r.score_0}-${r.score_1}</td>
    <td class="n">${r.hands}</td>
    <td><a href="/records/${encodeURIComponent(r.record)}">${esc(r.record)}</a></td>
    <td>${esc(r.verdict)}${r.ok ? "" : ": " + esc(r.detail)}</td></tr>`).join("");
}
refresh(); setInterval(refresh, 1000);
</script></body></html>
"""


@functools.lru_cache(maxsize=256)
def sticks_png(points: int, target: int) -> bytes:
    """One team's score drawn by :mod:`controller.render.matchsticks`, twice the size."""
    from PIL import Image, ImageDraw

    from ..render.matchsticks import draw_score

    image = Image.new("1", (63, 38), 0)
    draw_score(ImageDraw.Draw(image), (0, 0, 63, 38), points, target, fill=1)
    buf = io.BytesIO()
    image.resize((126, 76), Image.Resampling.NEAREST).save(buf, format="PNG")
    return buf.getvalue()


class _Handler(BaseHTTPRequestHandler):
    server_version = "truco-desk"
    state: DeskState  # set on the subclass made by serve_http

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("http: " + format, *args)

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = unquote(urlsplit(self.path).path)
        state = self.state
        if path in ("/", "/index.html"):
            self._send(200, _PAGE.encode("utf-8"), "text/html; charset=utf-8")
        elif path == "/api/state":
            body = json.dumps(state.snapshot(), ensure_ascii=False).encode("utf-8")
            self._send(200, body, "application/json")
        elif path == "/results.csv":
            self._send(200, state.results_csv().encode("utf-8"), "text/csv; charset=utf-8")
        elif path == "/results.json":
            self._send(200, state.results_json().encode("utf-8"), "application/json")
        elif path.startswith("/records/") and state.out_dir is not None:
            name = path[len("/records/") :]
            target = state.out_dir / "records" / name
            if "/" in name or not name.endswith(".truco") or not target.is_file():
                self._send(404, b"no such record\n", "text/plain")
            else:
                self._send(200, target.read_bytes(), "text/plain; charset=utf-8")
        elif m := re.fullmatch(r"/sticks/([0-9]{1,3})-(15|30)\.png", path):
            self._send(200, sticks_png(int(m[1]), int(m[2])), "image/png")
        else:
            self._send(404, b"not found\n", "text/plain")

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        # JSON only: a cross-site form cannot send it without a CORS preflight we never answer
        if path != "/api/ack" or not self.headers.get("Content-Type", "").startswith(
            "application/json"
        ):
            self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain")
            return
        try:
            length = min(int(self.headers.get("Content-Length", "0")), 10_000)
            body = json.loads(self.rfile.read(length) or b"{}")
            table = str(body["table"])
            seq = body.get("seq")
            seq = int(seq) if seq is not None else None
        except (ValueError, KeyError, TypeError):
            self._send(HTTPStatus.BAD_REQUEST, b"expected {table, seq}\n", "text/plain")
            return
        done = self.state.ack(table, seq)
        self._send(200, encode({"acknowledged": done}), "application/json")


def serve_http(state: DeskState, port: int = 8080, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """Serve the scoreboard on ``host:port`` (loopback only) in a daemon thread;
    ``server.server_address`` has the port (``port=0``: any free one)."""
    if not ipaddress.ip_address(host).is_loopback:
        raise ValueError(f"the desk's page is served on the loopback only, not {host}")
    handler = type("DeskHandler", (_Handler,), {"state": state})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="desk-http", daemon=True).start()
    return server


# ---------------------------------------------------------------------------- MQTT


class Desk:
    """The desk on the broker: a ``DeskState`` fed by a persistent MQTT session."""

    def __init__(
        self,
        state: DeskState,
        broker_host: str,
        broker_port: int = 1883,
        *,
        client_id: str | None = None,
        keepalive: int = 10,
    ) -> None:
        self.state = state
        self.broker = (broker_host, broker_port)
        self.keepalive = keepalive
        self.connected = threading.Event()
        self._stop = threading.Event()
        no_loopback_listener()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id or f"truco-desk-{state.tournament}",
            protocol=mqtt.MQTTv311,
            clean_session=False,  # the broker keeps what arrives while the desk is away
        )
        self.client.reconnect_delay_set(1, 2)
        self.client.max_inflight_messages_set(100)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        self._thread = threading.Thread(target=self._housekeeping, name="desk-gaps", daemon=True)

    def start(self) -> Desk:
        self.client.connect_async(self.broker[0], self.broker[1], keepalive=self.keepalive)
        self.client.loop_start()
        self._thread.start()
        return self

    def _on_connect(
        self, client: mqtt.Client, userdata: object, flags: Any, reason: Any, properties: Any
    ) -> None:
        if getattr(reason, "is_failure", False):
            log.warning("desk: broker refused the connection: %s", reason)
            return
        base = tournament_prefix(self.state.tournament)
        client.subscribe(
            [(f"{base}/+/status", 1), (f"{base}/+/events", 1), (f"{base}/+/records/+", 1)]
        )
        self.connected.set()
        log.info("desk: connected to %s:%d", *self.broker)

    def _on_disconnect(
        self, client: mqtt.Client, userdata: object, flags: Any, reason: Any, properties: Any
    ) -> None:
        self.connected.clear()

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        try:
            self.state.handle(msg.topic, msg.payload)
        except Exception:  # one bad message never stops the desk
            log.exception("desk: failed on a message on %s", msg.topic)

    def _housekeeping(self) -> None:
        while not self._stop.wait(0.25):
            if not self.connected.is_set():
                continue
            for table, first, last in self.state.gaps():
                topic = f"{table_prefix(self.state.tournament, table)}/resend"
                self.client.publish(topic, encode({"from": first, "to": last}), qos=1)

    def stop(self) -> None:
        self._stop.set()
        self.client.disconnect()
        self.client.loop_stop()
        self.state.close()

    def wait(self, predicate: Callable[[DeskState], bool], timeout: float) -> bool:
        """Poll ``predicate`` until true or ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.state.lock:
                if predicate(self.state):
                    return True
            time.sleep(0.05)
        with self.state.lock:
            return predicate(self.state)


def all_finished(tables: Iterable[str], games: int) -> Callable[[DeskState], bool]:
    """A ``Desk.wait`` predicate: every table's ``games`` records are in."""
    wanted = list(tables)

    def done(state: DeskState) -> bool:
        return all(
            len(state.tables[t].games) >= games if t in state.tables else False for t in wanted
        )

    return done
