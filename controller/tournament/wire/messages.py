"""The tournament's messages as typed values, built and checked in one place.

:mod:`controller.tournament.wire.topics` describes the topics and the JSON payloads. This
module turns them into frozen dataclasses and back: the table builds a :class:`Status`,
:class:`Event` or :class:`Record` and publishes ``payload()``; the desk gets one back
from :func:`parse_message` (topic and payload), or a :class:`MalformedMessage` saying
what is wrong with it. A :class:`ResendRequest` and an :class:`Assignment` go the other
way (desk to table): the desk signs an assignment with :func:`signed_assignment`, the
table takes it back with :func:`parse_assignment`.

Nothing the network sends reaches the desk's state without passing here: every field
has its type checked, names are checked as topic levels and game ids, numbers are
bounded. What a message *means* (is it genuine, in order, from a known table) is the
desk's business (:mod:`controller.tournament.desk.state`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from .topics import ID_RE, PAYLOAD_VERSION, assignment_topic, encode

__all__ = [
    "ASSIGN_MAC_LABEL",
    "MAC_FIELD",
    "MAX_BEST_OF",
    "MAX_NAME",
    "MAX_SEQ",
    "MAX_TEAM",
    "MAX_TEXT",
    "Assignment",
    "Event",
    "EventKind",
    "KeyLookup",
    "MalformedMessage",
    "Message",
    "NotForThisTable",
    "Record",
    "RejectedMessage",
    "ResendRequest",
    "StaleAssignment",
    "Status",
    "TopicKind",
    "Unauthenticated",
    "UnknownTable",
    "assignment_digest",
    "assignment_from",
    "assignment_mac",
    "assignment_topic",
    "canonical",
    "clean_text",
    "message_mac",
    "parse_assignment",
    "parse_message",
    "parse_resend",
    "resend_filter",
    "resend_topic",
    "signed",
    "signed_assignment",
    "split_topic",
]

#: seq numbers beyond this are refused (a table would need centuries to reach it).
MAX_SEQ: Final = 2**40
#: Counters (status ``n``, a resend request's ``n``) may be clock-based: up to 2**63.
MAX_COUNTER: Final = 2**63 - 1
#: Longest event text kept (a deal's lines are the longest real ones).
MAX_TEXT: Final = 2_000
#: Longest record accepted (a long game's sealed record is well under 100 kB).
MAX_RECORD: Final = 1_000_000
#: An assignment: the longest name (an entrant's, a player's) and round label kept, the
#: most players a team has (trios at a six-seat table), the longest match in chicos.
MAX_NAME: Final = 64
MAX_TEAM: Final = 3
MAX_BEST_OF: Final = 15
#: Longest assignment payload accepted (a full one is well under 2 kB).
MAX_ASSIGNMENT: Final = 16_000


class RejectedMessage(ValueError):
    """A message the desk must not apply (the text says why)."""


class MalformedMessage(RejectedMessage):
    """A message that is not one of the tournament's (the text says what is wrong)."""


class UnknownTable(RejectedMessage):
    """A message from (or about) a table that is not in the tournament."""


class Unauthenticated(RejectedMessage):
    """A message without a valid ``mac`` for its table's key."""


class NotForThisTable(RejectedMessage):
    """An assignment addressed (topic or payload) to another table."""


class StaleAssignment(RejectedMessage):
    """An assignment whose counter ``n`` is not above the last one the table took (an old
    one replayed, or one the table already has)."""


#: What a message's ``mac`` is computed over, after the topic and the payload.
MAC_LABEL: Final = b"truco-msg v1"
MAC_FIELD: Final = "mac"


def canonical(payload: dict[str, Any]) -> bytes:
    """The payload (without its ``mac``) as the bytes its MAC covers: sorted keys, no
    spaces, UTF-8."""
    body = {k: v for k, v in payload.items() if k != MAC_FIELD}
    return json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode(
        "utf-8"
    )


#: What an assignment's ``mac`` is computed over instead: a label of its own, so nothing
#: a table signs with its key (a status, an event, a record) ever passes as one.
ASSIGN_MAC_LABEL: Final = b"truco-assign v1"


def _mac(label: bytes, key: bytes, topic: str, payload: dict[str, Any]) -> str:
    data = label + b"\n" + topic.encode("utf-8") + b"\n" + canonical(payload)
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def message_mac(key: bytes, topic: str, payload: dict[str, Any]) -> str:
    """HMAC-SHA256 over the label, the full topic (tournament, table, kind) and the
    canonical payload, whose seq (or status ``n``) is the per-table counter."""
    return _mac(MAC_LABEL, key, topic, payload)


def assignment_mac(key: bytes, topic: str, payload: dict[str, Any]) -> str:
    """An assignment's mac: the table's key over ``truco-assign v1``, the topic and the
    canonical payload (whose ``n`` is the desk's counter for that table)."""
    return _mac(ASSIGN_MAC_LABEL, key, topic, payload)


def signed(key: bytes | None, topic: str, payload: dict[str, Any]) -> bytes:
    """The payload encoded for ``topic``, with its ``mac`` when there is a key."""
    if key is not None:
        payload = payload | {MAC_FIELD: message_mac(key, topic, payload)}
    return encode(payload)


class TopicKind(StrEnum):
    STATUS = "status"
    EVENTS = "events"
    RECORDS = "records"
    RESEND = "resend"
    ASSIGN = "assign"


class EventKind(StrEnum):
    STATE = "state"
    NEW_GAME = "new-game"
    DEAL = "deal"
    ACTION = "action"
    SCORE = "score"
    REFUSAL = "refusal"
    UNDO = "undo"
    FINISHED = "finished"
    ABANDONED = "abandoned"
    LOST = "lost"  # a seq the table's damaged outbox lost (never given again)
    ASSIGNED = "assigned"  # the table took the desk's assignment ``assigned`` (its n)
    REFEREE_CALL = "referee-call"  # a seat called the referee on its pad (``seat``)
    CARDS = "cards"  # the cards read at the deal of hand ``hand``, once it has ended


@dataclass(frozen=True, slots=True)
class Status:
    """``.../status`` (retained): the table is online, or went offline (``reason``)."""

    table: str
    online: bool
    seq: int  # the last seq the table had journaled when it said this
    ts: float
    reason: str | None = None
    n: int = 0  # the table's status counter: every status says a higher one

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "v": PAYLOAD_VERSION,
            "table": self.table,
            "state": "online" if self.online else "offline",
            "ts": self.ts,
            "seq": self.seq,
            "n": self.n,
        }
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True, slots=True)
class Event:
    """``.../events``: one thing that happened at the table (see ``topics``)."""

    table: str
    seq: int
    ts: float
    kind: EventKind
    game: str
    hand: int | None = None
    score: tuple[int, int] | None = None
    text: str = ""
    rules: str | None = None
    players: int | None = None
    seat: int | None = None
    action: str | None = None
    code: str | None = None
    winner: int | None = None
    dealt: int | None = None
    match: str | None = None  # assigned: the match taken (None: the table is free)
    chico: int | None = None
    assigned: int | None = None  # assigned: the assignment's n
    #: assigned: :func:`assignment_digest` of the assignment taken (names, label, seats)
    digest: str | None = None

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "v": PAYLOAD_VERSION,
            "table": self.table,
            "seq": self.seq,
            "ts": self.ts,
            "kind": str(self.kind),
            "game": self.game,
        }
        if self.hand is not None:
            out["hand"] = self.hand
        if self.score is not None:
            out["score"] = list(self.score)
        out["text"] = self.text
        for name in ("rules", "players", "winner", "dealt"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.kind is EventKind.REFUSAL:
            out |= {"seat": self.seat, "action": self.action, "code": self.code}
        elif self.kind is EventKind.UNDO:
            out["action"] = self.action
        elif self.kind is EventKind.ASSIGNED:
            out |= {"match": self.match, "chico": self.chico, "assigned": self.assigned}
            if self.digest is not None:
                out["digest"] = self.digest
        elif self.kind is EventKind.REFEREE_CALL:
            out["seat"] = self.seat
        return out


@dataclass(frozen=True, slots=True)
class Record:
    """``.../records/<game>`` (retained): a finished game's (sealed) record."""

    table: str
    seq: int
    ts: float
    game: str
    winner: int | None
    score: tuple[int, int] | None
    hand: int
    sealed: bool
    key_id: str | None
    error: str | None
    record: str
    match: str | None = None
    chico: int | None = None  # which game of the match (1-based), when it was one

    def payload(self) -> dict[str, Any]:
        out = {
            "v": PAYLOAD_VERSION,
            "table": self.table,
            "seq": self.seq,
            "ts": self.ts,
            "kind": "record",
            "game": self.game,
            "winner": self.winner,
            "score": list(self.score) if self.score is not None else None,
            "hand": self.hand,
            "sealed": self.sealed,
            "key_id": self.key_id,
            "error": self.error,
            "record": self.record,
        }
        if self.match is not None:
            out["match"] = self.match
        if self.chico is not None:
            out["chico"] = self.chico
        return out


@dataclass(frozen=True, slots=True)
class ResendRequest:
    """``truco/<t>/desks/<desk>/resend/<table>`` (desk to table): publish seq ``first``
    to ``last`` again. ``n`` is the desk's counter (every request says a higher one), the
    ``mac`` the table's key over the topic and the payload."""

    first: int
    last: int
    n: int = 0

    def payload(self) -> dict[str, Any]:
        return {"from": self.first, "to": self.last, "n": self.n}

    def encode(self, key: bytes | None, topic: str) -> bytes:
        return signed(key, topic, self.payload())


@dataclass(frozen=True, slots=True)
class Assignment:
    """``truco/<t>/tables/<table>/assign`` (retained, desk to table): the match the table
    plays now, and which of its games.

    ``n`` is the desk's counter for this table: every assignment says a higher one, and
    the table ignores (and counts) one that does not. ``match`` ``None``: the table is
    free. ``home`` is team 0 (seats 0, 2, 4), ``away`` team 1 (seats 1, 3, 5);
    ``players`` their players' names (either may be empty). ``chico`` is the game of the
    match to play now, 1 to ``best_of``. ``label`` is the round as players read it
    ("Cuartos de final", "Ronda 2", "Grupo A, fecha 1").
    """

    table: str
    n: int
    match: str | None
    label: str = ""
    home: str = ""
    away: str = ""
    chico: int = 0
    best_of: int = 0
    players: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())

    def payload(self) -> dict[str, Any]:
        return {
            "v": PAYLOAD_VERSION,
            "kind": "assign",
            "table": self.table,
            "n": self.n,
            "match": self.match,
            "label": self.label,
            "home": self.home,
            "away": self.away,
            "chico": self.chico,
            "best_of": self.best_of,
            "players": [list(self.players[0]), list(self.players[1])],
        }


Message = Status | Event | Record


# ---------------------------------------------------------------------------- parsing


def split_topic(prefix: str, topic: str) -> tuple[str, TopicKind, str | None] | None:
    """``(table, kind, game)`` of a topic under ``prefix`` (``truco/<t>/tables/``);
    ``None`` for a topic outside it. Raises :class:`MalformedMessage` for one inside it
    that is not one of the tournament's."""
    if not topic.startswith(prefix):
        return None
    parts = topic[len(prefix) :].split("/")
    if len(parts) < 2 or not ID_RE.fullmatch(parts[0]):
        raise MalformedMessage(f"not a table's topic: {topic[:120]!r}")
    try:
        kind = TopicKind(parts[1])
    except ValueError:
        raise MalformedMessage(f"unknown topic {topic[:120]!r}") from None
    if kind is TopicKind.RECORDS:
        if len(parts) != 3 or not ID_RE.fullmatch(parts[2]):
            raise MalformedMessage(f"a record's topic names no game: {topic[:120]!r}")
        return parts[0], kind, parts[2]
    if len(parts) != 2:
        raise MalformedMessage(f"unknown topic {topic[:120]!r}")
    return parts[0], kind, None


def _object(data: bytes | bytearray) -> dict[str, Any]:
    try:
        value = json.loads(bytes(data).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):  # deep nesting: not ours
        raise MalformedMessage("not JSON") from None
    if not isinstance(value, dict):
        raise MalformedMessage("not a JSON object")
    return value


class _Fields:
    """Typed access to a payload's fields; every miss raises :class:`MalformedMessage`."""

    def __init__(self, p: dict[str, Any]) -> None:
        self.p = p

    def whole(self, name: str, low: int = 0, high: int = MAX_SEQ) -> int:
        value = self.p.get(name)
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise MalformedMessage(f"{name}: expected a whole number {low}..{high}")
        return value

    def opt_whole(self, name: str, low: int = 0, high: int = MAX_SEQ) -> int | None:
        return None if self.p.get(name) is None else self.whole(name, low, high)

    def number(self, name: str) -> float:
        value = self.p.get(name)
        if not isinstance(value, int | float) or isinstance(value, bool) or value != value:
            raise MalformedMessage(f"{name}: expected a number")
        return float(value)

    def text(self, name: str, limit: int = MAX_TEXT) -> str:
        value = self.p.get(name)
        if not isinstance(value, str) or len(value) > limit:
            raise MalformedMessage(f"{name}: expected a text of at most {limit} characters")
        return value

    def opt_text(self, name: str, limit: int = MAX_TEXT) -> str | None:
        return None if self.p.get(name) is None else self.text(name, limit)

    def name(self, name: str) -> str:
        value = self.text(name, 64)
        if not ID_RE.fullmatch(value):
            raise MalformedMessage(f"{name}: not a valid name")
        return value

    def score(self, name: str = "score") -> tuple[int, int]:
        value = self.p.get(name)
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in value)
            or not all(0 <= x <= 1000 for x in value)
        ):
            raise MalformedMessage(f"{name}: expected two points")
        return value[0], value[1]

    def flag(self, name: str) -> bool:
        value = self.p.get(name, False)
        if not isinstance(value, bool):
            raise MalformedMessage(f"{name}: expected true or false")
        return value


def _same_table(f: _Fields, table: str) -> None:
    named = f.p.get("table", table)
    if named != table:
        raise MalformedMessage(f"the payload names table {str(named)[:64]!r}")


KeyLookup = Callable[[str], bytes | None]


def parse_message(
    prefix: str, topic: str, data: bytes | bytearray, keys: KeyLookup | None = None
) -> Message | None:
    """The message on ``topic``; ``None`` for a topic outside ``prefix`` or a resend
    request (the desk's own kind).

    ``keys`` gives a table's key (``None``: not a table of the tournament); with it,
    every message must carry the ``mac`` of :func:`message_mac`. Without it (a desk with
    no key) messages are taken unauthenticated. Raises :class:`MalformedMessage`,
    :class:`UnknownTable` or :class:`Unauthenticated`.
    """
    where = split_topic(prefix, topic)
    if where is None:
        return None
    table, kind, game = where
    if kind in (TopicKind.RESEND, TopicKind.ASSIGN):
        return None
    obj = _object(data)
    if keys is not None:
        key = keys(table)
        if key is None:
            raise UnknownTable(f"{table} is not a table of this tournament")
        mac = obj.get(MAC_FIELD)
        if not isinstance(mac, str):
            raise Unauthenticated(f"{kind} from {table} carries no mac")
        if not hmac.compare_digest(mac, message_mac(key, topic, obj)):
            raise Unauthenticated(f"{kind} from {table}: the mac does not match its key")
    f = _Fields(obj)
    _same_table(f, table)
    if kind is TopicKind.STATUS:
        state = f.p.get("state")
        if state not in ("online", "offline"):
            raise MalformedMessage("state: expected online or offline")
        ts = f.number("ts") if "ts" in f.p else 0.0
        seq = f.whole("seq") if "seq" in f.p else 0
        reason = None if state == "online" else (f.opt_text("reason", 64) or "lost")
        n = f.whole("n", 0, MAX_COUNTER) if "n" in f.p else 0
        return Status(table, state == "online", seq, ts, reason, n)
    seq = f.whole("seq", 1)
    ts = f.number("ts") if "ts" in f.p else 0.0
    if kind is TopicKind.RECORDS:
        assert game is not None
        if f.name("game") != game:
            raise MalformedMessage("the payload names another game than its topic")
        return Record(
            table,
            seq,
            ts,
            game,
            f.opt_whole("winner", 0, 1),
            None if f.p.get("score") is None else f.score(),
            f.whole("hand", 0, 10_000) if "hand" in f.p else 0,
            f.flag("sealed"),
            f.opt_text("key_id", 100),
            f.opt_text("error"),
            f.text("record", MAX_RECORD),
            None if f.p.get("match") is None else f.name("match"),
            f.opt_whole("chico", 1, MAX_BEST_OF),
        )
    try:
        event_kind = EventKind(str(f.p.get("kind")))
    except ValueError:
        raise MalformedMessage("kind: not an event kind") from None
    if event_kind is EventKind.REFEREE_CALL and f.p.get("seat") is None:
        raise MalformedMessage("a referee call names no seat")
    return Event(
        table,
        seq,
        ts,
        event_kind,
        f.name("game"),
        f.opt_whole("hand", 0, 10_000),
        None if f.p.get("score") is None else f.score(),
        f.text("text") if "text" in f.p else "",
        f.opt_text("rules", 500),
        f.opt_whole("players", 2, 6),
        f.opt_whole("seat", 0, 5),
        f.opt_text("action", 200),
        f.opt_text("code", 64),
        f.opt_whole("winner", 0, 1),
        f.opt_whole("dealt", 0, 6),
        None if f.p.get("match") is None else f.name("match"),
        f.opt_whole("chico", 0, MAX_BEST_OF),
        f.opt_whole("assigned", 0, MAX_COUNTER),
        _digest(f.p.get("digest")),
    )


def _digest(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not re.fullmatch(r"[0-9a-f]{16,64}", value):
        raise MalformedMessage("digest: expected hex")
    return value


def assignment_digest(a: Assignment) -> str:
    """What a table says it took, in its ``assigned`` event: the SHA-256 (first 16 bytes,
    hex) of the assignment's payload, so the desk sees a changed name, label or seat."""
    return hashlib.sha256(canonical(a.payload())).hexdigest()[:32]


def parse_resend(
    tournament: str, table: str, topic: str, data: bytes | bytearray, key: bytes | None
) -> tuple[str, ResendRequest]:
    """``(desk, request)`` of a resend request for ``table`` on ``topic``
    (``truco/<t>/desks/<desk>/resend/<table>``), authenticated with the table's ``key``
    when it has one. Raises :class:`MalformedMessage` or :class:`Unauthenticated`."""
    base = f"truco/{tournament}/desks/"
    parts = topic[len(base) :].split("/") if topic.startswith(base) else []
    if (
        len(parts) != 3
        or parts[1] != "resend"
        or parts[2] != table
        or not ID_RE.fullmatch(parts[0])
    ):
        raise MalformedMessage(f"not a resend request for {table}: {topic[:120]!r}")
    obj = _object(data)
    if key is not None:
        mac = obj.get(MAC_FIELD)
        if not isinstance(mac, str) or not hmac.compare_digest(mac, message_mac(key, topic, obj)):
            raise Unauthenticated(f"a resend request from {parts[0]} without a valid mac")
    f = _Fields(obj)
    first, last = f.whole("from", 1), f.whole("to", 1)
    if last < first:
        raise MalformedMessage("to: before from")
    n = f.whole("n", 0, MAX_COUNTER) if "n" in f.p else 0
    return parts[0], ResendRequest(first, last, n)


def resend_topic(tournament: str, desk: str, table: str) -> str:
    """Where desk ``desk`` asks ``table`` for messages again (the desk's command topic)."""
    return f"truco/{tournament}/desks/{desk}/resend/{table}"


def resend_filter(tournament: str, table: str) -> str:
    """What ``table`` subscribes to: every desk's resend requests for it."""
    return f"truco/{tournament}/desks/+/resend/{table}"


# ---------------------------------------------------------------------------- assignments


def clean_text(value: str) -> str:
    """A text for the players' screens and the terminal: NFC, every control or format
    character (a newline, an escape, a bidi override) a space, runs of spaces one."""
    chars = (
        " " if unicodedata.category(ch).startswith("C") else ch
        for ch in unicodedata.normalize("NFC", value)
    )
    return " ".join("".join(chars).split())


def assignment_from(payload: dict[str, Any], table: str) -> Assignment:
    """The assignment an (already authenticated) payload holds for ``table``, with every
    check of :func:`parse_assignment` but the mac (the table reads back its own copy
    with it). Raises :class:`MalformedMessage` or :class:`NotForThisTable`."""
    return _assignment(_Fields(payload), table)


def _assignment(f: _Fields, table: str) -> Assignment:
    """The assignment ``f`` holds for ``table`` (its mac already checked)."""
    if f.p.get("kind") != "assign":
        raise MalformedMessage("kind: expected assign")
    named = f.p.get("table")
    if named != table:
        raise NotForThisTable(f"an assignment for table {str(named)[:64]!r}, not {table}")
    n = f.whole("n", 0, MAX_COUNTER)
    match = None if f.p.get("match") is None else f.name("match")

    def name(field: str, limit: int = MAX_NAME) -> str:
        return clean_text(f.text(field, limit)) if field in f.p else ""

    label, home, away = name("label"), name("home"), name("away")
    teams = f.p.get("players", [[], []])
    if (
        not isinstance(teams, list)
        or len(teams) != 2
        or not all(isinstance(t, list) and len(t) <= MAX_TEAM for t in teams)
        or not all(isinstance(x, str) and 0 < len(x) <= MAX_NAME for t in teams for x in t)
    ):
        raise MalformedMessage(
            f"players: expected two lists of at most {MAX_TEAM} names of at most "
            f"{MAX_NAME} characters"
        )
    players = (
        tuple(c for c in map(clean_text, teams[0]) if c),
        tuple(c for c in map(clean_text, teams[1]) if c),
    )
    if match is None:
        chico, best_of = f.whole("chico", 0, MAX_BEST_OF), f.whole("best_of", 0, MAX_BEST_OF)
    else:
        best_of = f.whole("best_of", 1, MAX_BEST_OF)
        chico = f.whole("chico", 1, best_of)
        if not home or not away:
            raise MalformedMessage("home, away: a match names both entrants")
    return Assignment(table, n, match, label, home, away, chico, best_of, players)


def parse_assignment(
    prefix: str,
    table: str,
    topic: str,
    data: bytes | bytearray,
    key: bytes | None,
) -> Assignment:
    """The assignment for ``table`` on ``topic`` (``<prefix>/<table>/assign``, ``prefix``
    being ``truco/<t>/tables``), authenticated with the table's ``key`` when it has one.
    Texts come back cleaned (:func:`clean_text`). Raises :class:`MalformedMessage`,
    :class:`NotForThisTable` or :class:`Unauthenticated`; whether it is newer than the
    last one taken is the table's to say (:class:`StaleAssignment`,
    :meth:`~controller.tournament.table.match.TableMatches.take`)."""
    if topic != assignment_topic(prefix, table):
        parts = topic[len(prefix) + 1 :].split("/") if topic.startswith(prefix + "/") else []
        if len(parts) == 2 and parts[1] == "assign":
            raise NotForThisTable(f"an assignment for another table: {topic[:120]!r}")
        raise MalformedMessage(f"not an assignment for {table}: {topic[:120]!r}")
    if len(data) > MAX_ASSIGNMENT:
        raise MalformedMessage(f"an assignment of {len(data)} bytes (at most {MAX_ASSIGNMENT})")
    obj = _object(data)
    if key is not None:
        mac = obj.get(MAC_FIELD)
        if not isinstance(mac, str) or not hmac.compare_digest(
            mac, assignment_mac(key, topic, obj)
        ):
            raise Unauthenticated(f"an assignment for {table} without a valid mac")
    return _assignment(_Fields(obj), table)


def signed_assignment(key: bytes | None, prefix: str, a: Assignment) -> tuple[str, bytes]:
    """``(topic, payload)`` for the desk to publish (retained, QoS 1): ``a`` signed with
    the table's ``key`` (:func:`~controller.tournament.wire.keys.derive_table_key`). Raises
    :class:`MalformedMessage` for an assignment the table would refuse (a bad name, a
    chico beyond ``best_of``, ...)."""
    topic = assignment_topic(prefix, a.table)
    payload = a.payload()
    _assignment(_Fields(payload), a.table)  # the table's own checks, before it is sent
    if key is not None:
        payload = payload | {MAC_FIELD: assignment_mac(key, topic, payload)}
    return topic, encode(payload)
