"""A table's link to the tournament: its events and sealed records, published over MQTT.

``TablePublisher`` is a ``TableService`` listener (``attach(service)``). On the table's
loop it only turns each event into a message and journals it in the persistent outbox
(:mod:`controller.tournament.table.outbox`: one line, ``fsync``); it never waits for the
network. A sender thread hands journaled messages to paho-mqtt in seq order, and paho's
own network thread talks to the broker: it connects out, keeps the connection alive,
reconnects after a cut, and re-sends every message not yet acknowledged, in order. The
table opens no listening socket.

- Network cut: the table plays on; messages pile up in the journal and in paho's queue
  and go out, in order, when the connection is back.
- Table restart (power cut): the journal is read back; whatever the broker had not
  acknowledged (``acked``) is sent again. seq numbers go on from the journal.
- Either way a message may reach the broker twice; the desk drops duplicates by
  ``(table, seq)``. A desk that sees a gap asks for it on
  ``truco/<t>/desks/<desk>/resend/<table>``; the table serves a request only when its mac
  is the table's key's, its counter is above that desk's last one, at most one request
  per desk every ``RESEND_INTERVAL_S`` and at most ``MAX_RESEND`` messages each.
- With a key, every message carries a mac (:func:`~controller.tournament.wire.messages.signed`)
  over its topic and payload, whose seq (status: ``n``, a counter kept in the outbox
  folder) makes each one unique: the desk rejects anything else.
- The desk's assignment (``<prefix>/assign``, retained) says which match the table
  plays: taken only with the table's key's mac under the assignment's own label and a
  counter above the last one's (:class:`~controller.tournament.table.match.TableMatches`
  keeps it, and each game's match and chico, in the outbox folder), journaled as an
  ``assigned`` event, shown on the seats before the game (``TableService.set_match``).
  Each game is sealed with the match it was started for; the configuration's ``match``
  only when the desk never assigned one.

Topics and payloads: :mod:`controller.tournament.wire.topics`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from ...table.service import (
    REFEREE_CALL_MARK,
    Accepted,
    Finished,
    NewGame,
    RefereeCall,
    Refused,
    TableService,
)
from ...transcript import TranscriptError, parse, replay, write
from ..venue.access import BrokerAccess
from ..wire.messages import (
    Assignment,
    Event,
    EventKind,
    Record,
    RejectedMessage,
    Status,
    assignment_digest,
    parse_assignment,
    parse_resend,
    resend_filter,
    signed,
)
from ..wire.seal import SealError, TournamentKey, seal
from ..wire.topics import (
    assignment_topic,
    check_name,
    decode,
    game_id,
    game_number,
    no_loopback_listener,
    table_prefix,
    tournament_prefix,
)
from .match import TableMatches
from .outbox import Entry, Outbox, atomic_write
from .profile import REFUSAL_MARK, UNDO_MARK

__all__ = ["TablePublisher"]

log = logging.getLogger(__name__)

MAX_RESEND = 500  # messages one resend request may ask for
RESEND_INTERVAL_S = 0.2  # one desk's requests are served at most this often
#: Messages the table sends again per minute, for every desk together: resend requests
#: beyond it wait for the next minute (the live messages always go first).
RESENT_PER_MIN = 3_000


class TablePublisher:
    """Publishes one table's events to ``truco/<tournament>/tables/<table_id>/...``.

    ``key``: the table's own key (:mod:`controller.tournament.wire.keys`): it seals the
    records and authenticates every message (records are sent unsealed and messages
    without a mac without one). ``access``: the table's account on the venue broker.
    ``match``: the match this table plays, bound into each record's seal, until the
    desk assigns one (:attr:`matches`).
    ``outbox_dir``: the persistent outbox (e.g. ``<state_dir>/outbox``); one per table.
    ``fsync=False`` only for benchmarks on a RAM disk.
    """

    def __init__(
        self,
        table_id: str,
        broker_host: str,
        broker_port: int = 1883,
        *,
        outbox_dir: str | os.PathLike[str],
        tournament: str = "torneo",
        key: TournamentKey | None = None,
        access: BrokerAccess | None = None,
        match: str | None = None,
        keepalive: int = 5,
        fsync: bool = True,
        client_id: str | None = None,
        max_inflight: int = 100,
        reconnect_delay: tuple[int, int] = (1, 2),
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.table_id = check_name("table id", table_id)
        self.tournament = check_name("tournament", tournament)
        self.prefix = table_prefix(tournament, table_id)
        self.broker = (broker_host, broker_port)
        self.keepalive = keepalive
        self.key = key
        self.match = match
        self.clock = clock
        self.outbox = Outbox(outbox_dir, fsync=fsync, filler=self._lost)
        self.outbox_dir = Path(outbox_dir)
        self.assign_topic = assignment_topic(tournament_prefix(tournament), table_id)
        self.matches = TableMatches(outbox_dir, table_id, fallback=match, fsync=fsync)
        self.refused_assignments = 0  # assignments refused (forged, another's, replayed)
        self._status_path = self.outbox_dir / "status-counter"
        self._status_n = _read_counter(self._status_path)
        self._fsync = fsync
        self._will_n = 0
        self._online_n = 0
        self._resend_seen: dict[str, tuple[int, float]] = {}  # desk -> (last n, when)
        self.refused_resends = 0  # resend requests refused (unauthenticated, replayed)
        self._resent_minute = (-60.0, 0)  # (since, messages sent again since then)

        # what the journal says about the game in progress
        self.game_no = 1
        self.dirty = False  # the current game has seen events since it started
        self._begun: int | None = None  # the last game with a deal or an action journaled
        self.score: tuple[int, int] = (0, 0)
        self.hand = 0
        self.rules_line: str | None = None
        self._last_action: dict[int, str] = {}  # game number -> its last action's text
        #: the hand being played and its ``deal`` lines (said in ``cards`` when it ends)
        self._dealt: tuple[int, list[str]] = (0, [])
        self._read_journal()

        self._append_lock = threading.Lock()
        self._cond = threading.Condition()
        self._acks = threading.Lock()
        self._mids: dict[int, int | None] = {}  # paho's message id -> outbox seq (None: status)
        self._early: set[int] = set()  # acknowledged before publish() returned its mid
        self._resend: list[int] = []
        self._next = self.outbox.acked + 1  # the sender's next seq to hand to paho
        self._stopping = False
        self.connected = threading.Event()
        self.connections = 0  # successful connections so far
        self.service: TableService | None = None

        no_loopback_listener()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id or f"truco-{tournament}-{table_id}",
            protocol=mqtt.MQTTv311,
            clean_session=True,
        )
        if access is not None:
            access.apply(self.client)
        self.client.on_pre_connect = self._on_pre_connect
        self.client.reconnect_delay_set(*reconnect_delay)
        self.client.max_inflight_messages_set(max_inflight)
        self.client.max_queued_messages_set(0)  # no limit: the journal has them anyway
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_publish = self._on_publish
        self.client.on_message = self._on_message
        self._sender = threading.Thread(
            target=self._send_loop, name=f"publisher-{table_id}", daemon=True
        )
        self._started = False

    # ------------------------------------------------------------------ the journal

    def _read_journal(self) -> None:
        for entry in self.outbox:
            p = decode(entry.payload)
            if p is None:
                continue
            number = game_number(str(p.get("game", "")))
            kind = p.get("kind")
            if number is not None:
                if kind in ("finished", "record", "abandoned"):
                    self.game_no, self.dirty = number + 1, False
                elif kind in ("deal", "action", "undo", "refusal", "score"):
                    self.game_no, self.dirty = number, True
                if kind in ("deal", "action", "undo"):
                    self._begun = number
                if kind == "action":
                    self._last_action[number] = str(p.get("text", ""))
                if kind == "abandoned":
                    self.matches.abandon(number)
            if kind == "record" and isinstance(p.get("match"), str):
                chico = p.get("chico")
                if isinstance(chico, int) and not isinstance(chico, bool):
                    self.matches.note_played(p["match"], chico)
            score = p.get("score")
            if isinstance(score, list) and len(score) == 2:
                self.score = (int(score[0]), int(score[1]))
            if isinstance(p.get("hand"), int):
                self.hand = p["hand"]
            if isinstance(p.get("rules"), str):
                self.rules_line = p["rules"]

    @property
    def game(self) -> str:
        """The id of the game in progress (or about to start)."""
        return game_id(self.table_id, self.game_no)

    def _append(
        self, topic: str, make: Callable[[int, float], Event | Record], *, retain: bool = False
    ) -> Entry:
        """Journal the message ``make(seq, ts)`` builds, under the next seq."""
        with self._append_lock:
            message = make(self.outbox.next_seq(), self.clock())
            data = signed(self._mac_key, f"{self.prefix}/{topic}", message.payload())
            entry = self.outbox.append(topic, data, retain=retain)
        self._wake()
        return entry

    def _event(self, kind: EventKind, text: str, **fields: Any) -> Entry:
        game = fields.pop("game", self.game)
        fields.setdefault("hand", self.hand)
        if "score" in fields and fields["score"] is not None:
            fields["score"] = tuple(fields["score"])
        fields.setdefault("score", self.score)

        def make(seq: int, ts: float) -> Event:
            return Event(self.table_id, seq, ts, kind, game, text=text, **fields)

        return self._append("events", make)

    # ------------------------------------------------------------------ the table's side

    def attach(self, service: TableService) -> None:
        """Listen to ``service`` and announce the table's state (call on the loop's thread,
        before ``service.run``)."""
        self.service = service
        service.listeners.append(self.on_event)
        from ...table import service as service_module

        if not hasattr(service_module, "Undone"):
            # The service does not report the referee's undo as an event (yet): wrap it.
            original = service.undo

            def undo() -> bool:
                done = original()
                if done:
                    last = service.table.last
                    text = str(last.action) if last is not None else "?"
                    self._undone(text, service.table.game.score, service.table.game.hand_number)
                return done

            setattr(service, "undo", undo)  # noqa: B010 - shadows the method on this instance
        game = service.table.game
        self._recover_lost_finish(service)
        self.rules_line = game.rules.to_line()
        self.score, self.hand = game.score, game.hand_number
        fresh = game.hand_number == 0 and not game.hand_actions
        if fresh and self.dirty and self.game_no in self._last_action:
            # the game this journal was following is gone (a new game after a restart)
            self._event(EventKind.ABANDONED, "", hand=0, score=(0, 0))
            self.matches.abandon(self.game_no)
            self.game_no, self.dirty = self.game_no + 1, False
        if game.hand_in_progress and game.winner is None and game.hand_number:
            # restarted in the middle of a hand: its cards (read back from the table's
            # record) are said in ``cards`` once it ends, as if it had not restarted
            lines = [line.strip() for line in write(game).splitlines()]
            last = max(i for i, line in enumerate(lines) if line.lower() == "hand")
            dealt = [line for line in lines[last + 1 :] if line.split(None, 1)[:1] == ["deal"]]
            self._dealt = (game.hand_number, dealt)
        self._event(EventKind.STATE, "", rules=self.rules_line, players=game.players)
        service.set_match(self.matches.card(), waiting=self.matches.waits())

    def _recover_lost_finish(self, service: TableService) -> None:
        """The power went after a game's last action but before its record was journaled:
        the service archived the won game on restart; publish that record now."""
        if not self.dirty or service.store is None or service.table.game.hand_actions:
            return
        archived = service.store.archived()
        last_action = self._last_action.get(self.game_no)
        if not archived or last_action is None:
            return
        text = archived[-1].read_text(encoding="utf-8")
        try:
            result = replay(parse(text))
        except TranscriptError:
            return
        game = result.game
        moves = game.hand_actions
        if game.winner is None or not moves or str(moves[-1]) != last_action:
            return
        log.info("publishing the record of %s, won before a restart", self.game)
        self.on_event(Finished(text, game.winner, game.score))

    def on_event(self, event: object) -> None:
        """The ``TableService`` listener (runs on the table's loop; never blocks on I/O
        other than the journal's own write)."""
        if isinstance(event, Accepted):
            self._accepted(event)
        elif isinstance(event, Refused):
            self._refused(event)
        elif isinstance(event, Finished):
            self._finished(event)
        elif isinstance(event, NewGame):
            self._new_game(event)
        elif isinstance(event, RefereeCall):
            text = f"{REFEREE_CALL_MARK}{event.seat}"
            self._event(EventKind.REFEREE_CALL, text, seat=event.seat)
        elif type(event).__name__ == "Undone":  # a service that reports undos itself
            text = str(getattr(event, "text", getattr(event, "action", "?")))
            score = tuple(getattr(event, "score", self.score))
            self._undone(
                text.removeprefix(UNDO_MARK),
                (int(score[0]), int(score[1])),
                int(getattr(event, "hand", self.hand)),
            )

    def _accepted(self, event: Accepted) -> None:
        first = event.text.split(None, 1)[0].lower() if event.text.strip() else ""
        kind = EventKind.DEAL if first in ("hand", "dealer", "deal") else EventKind.ACTION
        if self._begun != self.game_no:  # the game starts: the current assignment's
            self.matches.start(self.game_no)  # (saved before the journal has the start)
            self._begun = self.game_no
        self.dirty = True
        self.hand = event.hand
        changed = event.score != self.score
        self.score = event.score
        if kind is EventKind.DEAL:
            # the cards dealt are secret while the hand is played (a ``cards`` event says
            # them once it has ended, for the desk's delayed broadcast)
            lines = event.text.split("\n")
            dealt = [line for line in lines if line.split(None, 1)[:1] == ["deal"]]
            shown = "\n".join(line for line in lines if line not in dealt)
            self._event(kind, shown, dealt=len(dealt))
            self._dealt = (event.hand, dealt)
        else:
            self._event(kind, event.text)
            self._cards_if_over()
        if kind is EventKind.ACTION:
            self._last_action[self.game_no] = event.text
        if changed:
            self._event(EventKind.SCORE, f"{event.score[0]}-{event.score[1]}")

    def _cards_if_over(self) -> None:
        """The hand's cards, once it has ended at the table (``cards``)."""
        hand, dealt = self._dealt
        game = self.service.table.game if self.service is not None else None
        if not dealt or game is None or game.hand_number != hand:
            return
        if game.hand_in_progress and game.winner is None:  # (a game won ends its hand)
            return
        self._dealt = (hand, [])
        self._event(EventKind.CARDS, "\n".join(dealt), hand=hand)

    def _refused(self, event: Refused) -> None:
        what = event.action or f"{event.seat} (carta desconocida)"
        self._event(
            EventKind.REFUSAL,
            f"{REFUSAL_MARK}{what} ({event.code})",
            seat=event.seat,
            action=event.action,
            code=event.code,
        )

    def _undone(self, action: str, score: tuple[int, int], hand: int) -> None:
        self.score, self.hand = score, hand
        self._event(EventKind.UNDO, f"{UNDO_MARK}{action}", action=action)

    def _finished(self, event: Finished) -> None:
        gid = self.game
        self.score = event.score
        self._event(EventKind.FINISHED, f"gana el equipo {event.winner}", winner=event.winner)
        record, sealed, error = event.record, False, None
        played = self.matches.of(self.game_no)
        if self.key is not None:
            try:
                record = seal(
                    event.record,
                    self.key.key,
                    key_id=self.key.key_id,
                    game_id=gid,
                    tournament=self.tournament,
                    table=self.table_id,
                    match=played.match,
                )
                sealed = True
            except SealError as e:
                log.error("cannot seal the record of %s: %s; sending it unsealed", gid, e)
                error = str(e)
        key_id = self.key.key_id if sealed and self.key is not None else None
        hand = self.hand

        def make(seq: int, ts: float) -> Record:
            return Record(
                self.table_id, seq, ts, gid, event.winner, event.score, hand, sealed, key_id,
                error, record, played.match, played.chico,
            )  # fmt: skip

        self._append(f"records/{gid}", make, retain=True)
        self.matches.finish(self.game_no)
        self.game_no, self.dirty = self.game_no + 1, False
        self._show_match()

    def _new_game(self, event: NewGame) -> None:
        if self.dirty:
            self._event(EventKind.ABANDONED, "", score=None)
            self.matches.abandon(self.game_no)
            self.game_no, self.dirty = self.game_no + 1, False
            self._show_match()
        self.rules_line, self.score, self.hand = event.rules, (0, 0), 0
        if self.service is not None:
            self.score = self.service.table.game.score
        self._event(EventKind.NEW_GAME, event.rules, rules=event.rules)

    # ------------------------------------------------------------------ the desk's assignment

    def _show_match(self) -> None:
        """The seats show the assignment's match before the next game (on the loop)."""
        if self.service is not None:
            self.service.set_match(self.matches.card(), waiting=self.matches.waits())

    def _on_assignment(self, topic: str, payload: bytes | bytearray) -> None:
        """An assignment from the broker (paho's thread): checked, kept, journaled,
        handed to the table's loop."""
        prefix = tournament_prefix(self.tournament)
        try:
            assignment = parse_assignment(prefix, self.table_id, topic, payload, self._mac_key)
            if not self.matches.take(assignment):
                return  # the one the table has, given again at a reconnection
        except RejectedMessage as e:
            self.refused_assignments += 1
            log.warning("%s: refused an assignment: %s", self.table_id, e)
            return
        log.info("%s: the desk assigns %s", self.table_id, _describe(assignment))
        self._event(
            EventKind.ASSIGNED,
            _describe(assignment),
            match=assignment.match,
            chico=assignment.chico if assignment.match is not None else None,
            assigned=assignment.n,
            digest=assignment_digest(assignment),
        )
        if self.service is not None:  # the card is read on the loop, when it draws
            self.service.call_soon(self._show_match)

    # ------------------------------------------------------------------ the network side

    def _lost(self, seq: int, before: Entry | None) -> tuple[str, bytes]:
        """The outbox's filler: a seq its damage lost, as a signed ``lost`` event of the
        game the message before it was about (the desk applies it and goes on)."""
        game = game_id(self.table_id, 1)
        p = decode(before.payload) if before is not None else None
        if p is not None and isinstance(p.get("game"), str):
            game = p["game"]
        event = Event(self.table_id, seq, self.clock(), EventKind.LOST, game)
        return "events", signed(self._mac_key, f"{self.prefix}/events", event.payload())

    @property
    def _mac_key(self) -> bytes | None:
        return self.key.key if self.key is not None else None

    def _next_status_n(self) -> int:
        """The next status counter, saved before it is used (a restarted table goes on
        above it, so an old status replayed is never newer than the table's last). It is
        at least the wall clock in milliseconds, so it still grows when the saved counter
        is lost with a clock that is right."""
        self._status_n = max(self._status_n + 1, int(self.clock() * 1000))
        atomic_write(self._status_path, f"{self._status_n}\n".encode("ascii"), fsync=self._fsync)
        return self._status_n

    def _status(self, state: str, reason: str | None = None, n: int = 0) -> bytes:
        online = state == "online"
        status = Status(self.table_id, online, self.outbox.last_seq, self.clock(), reason, n)
        return signed(self._mac_key, f"{self.prefix}/status", status.payload())

    def _on_pre_connect(self, client: mqtt.Client, userdata: object) -> None:
        # the will is set anew before every connection, its counter above the online's
        self._online_n = self._next_status_n()
        self._will_n = self._next_status_n()
        client.will_set(
            f"{self.prefix}/status",
            self._status("offline", "lost", self._will_n),
            qos=1,
            retain=True,
        )

    def start(self) -> TablePublisher:
        """Connect (in the background: a broker that is down is retried) and send."""
        if self._started:
            return self
        self._started = True
        self.client.connect_async(self.broker[0], self.broker[1], keepalive=self.keepalive)
        self.client.loop_start()
        self._sender.start()
        return self

    def _on_connect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.ConnectFlags,
        reason: Any,
        properties: Any,
    ) -> None:
        if getattr(reason, "is_failure", False):
            log.warning("%s: broker refused the connection: %s", self.table_id, reason)
            return
        self.connections += 1
        online = self._status("online", n=self._online_n)
        info = client.publish(f"{self.prefix}/status", online, qos=1, retain=True)
        self._sent(info.mid, None)  # its PUBACK comes later on this same thread
        client.subscribe(
            [(resend_filter(self.tournament, self.table_id), 1), (self.assign_topic, 1)]
        )
        self.connected.set()
        log.info("%s: connected to %s:%d", self.table_id, *self.broker)

    def _on_disconnect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: mqtt.DisconnectFlags,
        reason: Any,
        properties: Any,
    ) -> None:
        if self.connected.is_set() and not self._stopping:
            log.warning("%s: lost the broker (%s); playing on", self.table_id, reason)
        self.connected.clear()

    def _on_publish(
        self, client: mqtt.Client, userdata: object, mid: int, reason: Any, properties: Any
    ) -> None:
        # on paho's thread, which holds its own locks: take only ours, never call paho
        with self._acks:
            if mid not in self._mids:
                self._early.add(mid)
                return
            seq = self._mids.pop(mid)
        if seq is not None:
            self.outbox.ack(seq)

    def _sent(self, mid: int, seq: int | None) -> None:
        """Remember which message ``mid`` is (after ``publish`` returned it)."""
        with self._acks:
            if mid in self._early:
                self._early.discard(mid)
            else:
                self._mids[mid] = seq
                return
        if seq is not None:
            self.outbox.ack(seq)

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        if msg.topic == self.assign_topic:
            self._on_assignment(msg.topic, msg.payload)
            return
        try:
            desk, request = parse_resend(
                self.tournament, self.table_id, msg.topic, msg.payload, self._mac_key
            )
        except RejectedMessage as e:
            self.refused_resends += 1
            log.warning("%s: refused a resend request: %s", self.table_id, e)
            return
        now = time.monotonic()
        last_n, last_at = self._resend_seen.get(desk, (-1, -RESEND_INTERVAL_S))
        if request.n <= last_n:
            self.refused_resends += 1
            log.warning("%s: refused a replayed resend request from %s", self.table_id, desk)
            return
        if now - last_at < RESEND_INTERVAL_S:
            return  # at most one request per desk per interval
        self._resend_seen[desk] = (request.n, now)
        first = request.first
        last = min(request.last, first + MAX_RESEND - 1, self.outbox.last_seq)
        if last < first:
            return
        start, spent = self._resent_minute
        if now - start >= 60.0:
            start, spent = now, 0
        last = min(last, first + RESENT_PER_MIN - spent - 1)
        if last < first:
            self.refused_resends += 1
            log.warning("%s: resend requests over %d messages a minute: refused", self.table_id,
                        RESENT_PER_MIN)  # fmt: skip
            return
        self._resent_minute = (start, spent + last - first + 1)
        log.info("%s: the desk asks for %d..%d again", self.table_id, first, last)
        with self._cond:
            queued = set(self._resend)  # two desks asking the same: sent once
            self._resend.extend(s for s in range(max(first, 1), last + 1) if s not in queued)
            self._cond.notify()

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify()

    def _send_loop(self) -> None:
        last_save = time.monotonic()
        while True:
            with self._cond:
                while not self._stopping and self._next > self.outbox.last_seq and not self._resend:
                    if not self._cond.wait(timeout=0.5):
                        break
                if self._stopping:
                    return
                resend, self._resend = self._resend, []
            batch = [e for e in (self.outbox.get(s) for s in resend) if e is not None]
            fresh = self.outbox.entries(self._next)
            if fresh:
                self._next = fresh[-1].seq + 1
            for entry in batch + fresh:
                info = self.client.publish(
                    f"{self.prefix}/{entry.topic}", entry.payload, qos=1, retain=entry.retain
                )
                self._sent(info.mid, entry.seq)
            now = time.monotonic()
            if now - last_save >= 0.5:
                last_save = now
                try:
                    self.outbox.save_acked()
                except OSError as e:
                    log.warning("%s: cannot save the outbox's progress: %s", self.table_id, e)

    def pending(self) -> int:
        """Messages the broker has not acknowledged yet."""
        return len(self.outbox.unacked())

    def flush(self, timeout: float) -> bool:
        """Wait until the broker acknowledged everything journaled so far."""
        deadline = time.monotonic() + timeout
        while self.pending():
            if time.monotonic() > deadline:
                return False
            self._wake()
            time.sleep(0.02)
        return True

    def _stop_sender(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._sender.is_alive():
            self._sender.join(timeout=5)

    def close(self, timeout: float = 2.0) -> None:
        """Stop cleanly: deliver what is pending (up to ``timeout`` s), say ``offline``."""
        if self._started:
            deadline = time.monotonic() + timeout
            self.connected.wait(timeout)  # reconnecting after a cut: say goodbye all the same
            self.flush(max(0.0, deadline - time.monotonic()))
            if self.connected.is_set():
                stopped = self._status("offline", "stopped", self._next_status_n())
                info = self.client.publish(f"{self.prefix}/status", stopped, qos=1, retain=True)
                deadline = max(deadline, time.monotonic() + 0.5)
                while not _published(info) and time.monotonic() < deadline:
                    time.sleep(0.01)
            self._stop_sender()
            self.client.disconnect()
            self.client.loop_stop()
        self.outbox.close()

    def abort(self) -> None:
        """Stop as a power cut would (tests): no goodbye, the broker sends the last will."""
        self._stop_sender()
        sock = self.client.socket()
        self.client.loop_stop()
        if sock is not None:
            sock.close()
        self.outbox.close()


def _describe(a: Assignment) -> str:
    """An assignment in a line of the journal and the log (Spanish: the desk shows it)."""
    if a.match is None:
        return "mesa libre"
    return f"{a.match}: {a.label}, {a.home} vs {a.away}, chico {a.chico} de {a.best_of}"


def _read_counter(path: Path) -> int:
    try:
        return int(path.read_text(encoding="ascii").strip() or 0)
    except (OSError, ValueError):
        return 0


def _published(info: mqtt.MQTTMessageInfo) -> bool:
    try:
        return info.is_published()
    except (RuntimeError, ValueError):  # not sent: the connection went meanwhile
        return False
