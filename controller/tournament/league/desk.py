"""The league desk's link to the central broker: every venue's records, checked, counted
once and journaled.

A persistent MQTT session (clean session off, client id ``league-desk``) subscribed at
QoS 1 to ``league/+/tables/+/records/+``: each message is read for its venue
(:func:`.inbox.read_central`), a record's check goes into the journal
(:class:`.ledger.LeagueLedger`, on disk before it counts) and the count is the fold of
the journal. Messages rejected before any check (a bad mac, a venue not in the league)
are kept in :attr:`LeagueDesk.rejected`. A restarted desk reads its journal, and the
records the broker sends again (the retained copies, the session's queue) are repeats.
The league's exports (:mod:`.exports`: standings, matches, games) are rewritten in the
desk's folder when the count changes (at most once a second) and at a stop.

It also follows every venue table's events and statuses (``league/+/tables/+/events``,
``.../status``) for their seqs (:class:`.gaps.SeqWatch`): a hole (what a venue broker lost
to a power cut or an overflowing queue) is asked for again with a resend request on
``league/<venue>/desks/league-desk/resend/<table>``, which the venue's bridge brings to
its broker as ``truco/<league>/desks/league-desk/resend/<table>``, signed with that
table's key (the table serves no other); the table publishes those messages again from
its outbox, and a record among them is counted once like any other.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.reasoncodes import ReasonCode

from ..desk.liveness import RESEND_S, unseen
from ..desk.records import GameResult
from ..desk.state import DeskState, Quota
from ..desk.wording import detail_text
from ..wire.messages import (
    Assignment,
    Event,
    Record,
    ResendRequest,
    Status,
    resend_topic,
    signed_assignment,
)
from ..wire.seal import NO_MATCH, TournamentKey
from ..wire.topics import no_loopback_listener, tournament_prefix
from .bridge import DESK_NAME
from .collect import Collected
from .errors import LeagueError
from .exports import write_league_exports
from .gaps import Hole, SeqWatch
from .inbox import CentralMessage, RejectedCentral, central_topic, read_central, venue_topic
from .keys import derive_venue_secret
from .ledger import LeagueLedger
from .model import Chico, League
from .verify import LeagueRecordCheck, RecordVerdict, check_league_record

if TYPE_CHECKING:
    from .season_desk import SeasonOffice

__all__ = ["RECORDS_TOPIC", "SEQ_TOPICS", "LeagueDesk", "desk_from_folder"]

log = logging.getLogger(__name__)

RECORDS_TOPIC = "league/+/tables/+/records/+"
#: The exports are rewritten at most this often (when the count changed).
EXPORT_S = 1.0
#: The tables' events and statuses: only their seqs are read (for the holes).
SEQ_TOPICS = ("league/+/tables/+/events", "league/+/tables/+/status")
#: Each venue's bridge says here whether its uplink is up (Mosquitto's notification:
#: ``1`` when it connects, ``0`` its will when the central broker loses it).
UPLINK_TOPIC = "league/+/bridge/state"


class LeagueDesk:
    def __init__(
        self,
        league: League,
        league_secret: bytes,
        folder: str | os.PathLike[str],
        *,
        host: str,
        port: int,
        ca_file: str | os.PathLike[str],
        username: str,
        password: str,
        client_id: str = "league-desk",
        clock: Callable[[], float] = time.time,
        today: Callable[[], datetime.date] = datetime.date.today,
        phases: Callable[[Mapping[str, tuple[Chico, ...]]], League] | None = None,
        publish: Callable[[], object] | None = None,
        hand_s: float | None = None,
    ) -> None:
        self.league = league
        #: The shortest a hand takes at a real table (``Quota.hand_s``; ``None``: not
        #: checked, the demos at a thousand times human speed): a game the desk did not
        #: see played is held (:func:`~..desk.liveness.unseen`, outages aside: :meth:`seen`).
        self.hand_s = hand_s
        #: Each venue's uplink outages as the desk saw them: ``(down, up)`` desk times
        #: (its bridge's will ``0`` or the desk's own disconnection; its bridge's ``1`` or
        #: the desk's reconnection); ``_down``: since when a venue's uplink is down now.
        self.outages: dict[str, list[tuple[float, float]]] = {}
        self._down: dict[str, float] = {}
        self._desk_down: dict[str, float] = {}
        #: A season's league after what was counted (:func:`.season.season_league`): the
        #: final phase's matches join the schedule once the groups decide them.
        self.phases = phases
        #: Called after each export (a season's public pages written again).
        self.publish = publish
        #: Where those pages are (the league desk's page serves them under /temporadas/).
        self.pages_dir: Path | None = None
        #: Called after each export and at each connection to the central broker (a
        #: season's tables told their assignment again: :mod:`.season_desk`).
        self.on_count: list[Callable[[], object]] = []
        self.on_connected: list[Callable[[], object]] = []
        #: A season's organiser side (:mod:`.season_desk`; None without ``--season``).
        self.office: SeasonOffice | None = None
        #: The desk's date: a record of a match whose matchday is later is not due.
        self.today = today
        self.venues: dict[str, DeskState] = {}
        #: Records read, their league check, until their place in the table's stream.
        self._pending: dict[tuple[str, str, str], LeagueRecordCheck] = {}
        self.secret = league_secret
        self.folder = Path(folder)
        self.ledger = LeagueLedger(folder, league, league_secret)
        self._export_due = False
        self._exported_at = -EXPORT_S
        self.clock = clock
        self.lock = threading.Lock()
        self.rejected: list[RejectedCentral] = []
        self.collected = Collected({}, (), (), 0)
        self.subscribed = threading.Event()
        self.answered = threading.Event()  # the broker answered a connection (refused or not)
        self.refused: str | None = None  # the broker's reason when it refused the last one
        self.online: bool | None = None  # connected to the central broker (None: not yet)
        self.watch = SeqWatch()
        self.asked: list[Hole] = []  # the resend requests sent, oldest first
        self._counter = 0
        self._stop = threading.Event()
        self._housekeeper = threading.Thread(
            target=self._housekeeping, name="league-desk-gaps", daemon=True
        )
        no_loopback_listener()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=False
        )
        self.client.username_pw_set(username, password)
        self.client.tls_set(ca_certs=str(ca_file))
        self.client.reconnect_delay_set(1, 10)
        self.client.on_connect = self._on_connect
        self.client.on_subscribe = lambda *args: self.subscribed.set()
        self.client.on_message = self._on_message
        self.client.on_disconnect = self._on_disconnect
        self.address = (host, port)

    def open(self) -> Collected:
        """Read the journal (the count so far) and each venue's state, without
        connecting; the exports follow it."""
        with self.lock:
            self.collected = self.ledger.open()
            self._next_phase()
            for club in self.league.clubs:
                if (self.folder / "venues" / club.id).is_dir():
                    self.venue_state(club.id)
        self.export()
        return self.collected

    def export(self) -> list[Path]:
        """Write the league's exports (:mod:`.exports`) into the desk's folder, each only
        if it changed; the housekeeping thread does, at most once every ``EXPORT_S``."""
        with self.lock:
            count, self._export_due = self.collected, False
        self._exported_at = time.monotonic()
        written = write_league_exports(self.league, count, self.folder)
        if self.publish is not None:
            try:
                self.publish()
            except LeagueError as e:  # a season file that no longer reads: said, not fatal
                log.error("league desk: the public pages were not written: %s", e)
        for hook in self.on_count:
            try:
                hook()
            except Exception:  # a table not told now is told at the next change
                log.exception("league desk: telling the tables their matches failed")
        return written

    def start(self) -> Collected:
        """Read the journal, then connect; returns the count the journal held (what
        the broker brings from then on, paho's thread may take before this returns:
        :meth:`snapshot` has it)."""
        count = self.open()
        self.client.connect(self.address[0], self.address[1], 30)
        self.client.loop_start()
        self._housekeeper.start()
        return count

    def _on_connect(
        self,
        client: mqtt.Client,
        userdata: object,
        flags: object,
        reason: ReasonCode,
        properties: object = None,
    ) -> None:
        if reason.is_failure:
            self.refused = str(reason)
            log.info("league desk: the central broker refused the connection: %s", reason)
        else:
            self.refused = None
            self.online = True
            with self.lock:  # the desk's own link down: an outage of every venue's
                now = self.clock()
                for venue in self._desk_down:
                    self.outages.setdefault(venue, []).append((self._desk_down[venue], now))
                self._desk_down.clear()
            client.subscribe([(RECORDS_TOPIC, 1), (UPLINK_TOPIC, 1), *((t, 1) for t in SEQ_TOPICS)])
            for hook in self.on_connected:
                try:
                    hook()
                except Exception:  # paho's thread goes on
                    log.exception("league desk: telling the tables their matches failed")
        self.answered.set()

    def _on_disconnect(self, client: mqtt.Client, *args: object) -> None:
        if self.online:
            with self.lock:
                now = self.clock()
                for club in self.league.clubs:
                    self._desk_down.setdefault(club.id, now)
                    self._down.setdefault(club.id, now)
        self.online = False

    def _uplink(self, venue: str, up: bool, now: float) -> None:
        """A venue's bridge said its uplink went down (its will, from the central broker)
        or came back (it connected) at ``now`` (the lock held)."""
        if not up:
            self._down.setdefault(venue, now)
            return
        down = self._down.pop(venue, None)
        if down is not None:  # a first connection (no outage the desk saw) explains nothing
            self.outages.setdefault(venue, []).append((down, now))

    def seen(
        self, venue: str, arrivals: list[tuple[float, float]], hands: int, lag: float
    ) -> str | None:
        """Why the desk did not see a game of ``venue`` as it was played (``None``: it
        did): :func:`~..desk.liveness.unseen` on its events, except those an outage of
        that venue's uplink explains: played after the link went down (the event's
        ``ts`` plus ``lag``, the table's quickest message: its clock against the desk's)
        and arrived within ``RESEND_S`` after it came back (the venue's broker queued
        what its tables played meanwhile and the bridge delivers it at once: a burst
        that is the bridge's, not the table's). The rest is judged as a venue's desk
        judges a game (late, too fast)."""
        outages = self.outages.get(venue, [])

        def explained(arrived: float, ts: float) -> bool:
            return any(up <= arrived <= up + RESEND_S and ts + lag >= down - RESEND_S
                       for down, up in outages)  # fmt: skip

        live = [(a, ts) for a, ts in arrivals if not explained(a, ts)]
        if len(live) < len(arrivals):  # the rest's pace is the bridge's: only its lateness
            return unseen(live, hands, None)
        return unseen(arrivals, hands, self.hand_s)

    def connected(self) -> bool | None:
        """Whether the central broker is connected now (``None``: not yet once)."""
        return self.online

    def venue_state(self, venue: str) -> DeskState:
        """The venue's tables as its own desk follows them (:class:`~..desk.state.
        DeskState`, in ``venues/<venue>/`` of the desk's folder, read back on a restart):
        each table's stream in seq order from its first message heard, every game's
        events, a second message under a seq taken (a key conflict)."""
        state = self.venues.get(venue)
        if state is None:
            secret = derive_venue_secret(self.secret, self.league.name, venue)
            state = DeskState(self.league.name, out_dir=self.folder / "venues" / venue,
                              key=TournamentKey(secret, f"{self.league.name}:{venue}"),
                              rules=self.league.rules.house, follow=True)  # fmt: skip
            state.on_finished.append(functools.partial(self._finished, venue))
            state.on_conflict.append(functools.partial(self._conflict, venue))
            self.venues[venue] = state
            for result in state.results_list():  # a record journaled there, not here yet
                self._finished(venue, result)
        return state

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        try:
            self._take(msg)
        except Exception:  # one message never stops the desk (paho's loop would end)
            log.exception("league desk: a message on %r could not be taken", msg.topic[:160])

    def _take(self, msg: mqtt.MQTTMessage) -> None:
        now = self.clock()
        parts = msg.topic.split("/")
        if len(parts) == 4 and parts[0] == "league" and parts[2:] == ["bridge", "state"]:
            # a retained copy is old news (given at a subscription)
            if parts[1] in {c.id for c in self.league.clubs} and not msg.retain:
                with self.lock:
                    self._uplink(parts[1], bytes(msg.payload) == b"1", now)
            return
        with self.lock:  # a re-keyed table's key is the venue state's (:meth:`rekey`)
            got = read_central(self.league, self.secret, msg.topic, bytes(msg.payload),
                               today=self.today(), keys=self.key_for)  # fmt: skip
            if isinstance(got, RejectedCentral):
                log.warning("league desk: %s", got.reason)
                self.rejected.append(got)
                return
            if not isinstance(got, CentralMessage):
                return
            message = got.message
            if got.check is not None and self.ledger.has(got.check):
                # the same record again (its retained copy, a QoS 1 redelivery): a repeat
                self.collected = self.ledger.append(got.check, now)
                self._next_phase()
                return
            state = self.venue_state(got.venue)
            if msg.retain:
                # a retained copy: an old message given again at a subscription, or one
                # a bridge carried with its flag; it never starts a table's stream (the
                # desk follows each table from a live message), it may continue it
                followed = state.tables.get(message.table)
                if followed is None or followed.awaiting:
                    return
            elif isinstance(message, Event | Record):
                self.watch.heard(got.venue, message.table, message.seq, now)
            elif isinstance(message, Status) and message.online:
                self.watch.said(got.venue, message.table, message.seq, now)
            if got.check is not None:
                self._pending[(got.venue, got.check.table, got.check.game)] = got.check
            where = venue_topic(self.league, msg.topic)
            if where is not None:  # the venue's own view: seq order, events, conflicts
                state.handle(where[1], bytes(msg.payload), now)
            check = got.check
            if check is None or (got.venue, check.table, check.game) not in self._pending:
                return
            followed = state.tables.get(check.table)
            if (
                followed is not None
                and not followed.awaiting
                and check.seq is not None
                and (check.seq < followed.next_seq)
            ):  # taken in its place, not as its game's first record: another copy of it
                del self._pending[(got.venue, check.table, check.game)]
                self.collected = self.ledger.append(check, now)
                self._next_phase()
                self._export_due = True

    def _finished(self, venue: str, result: GameResult) -> None:
        """A record in its place in its table's stream (the venue's state judged it
        against the table's events): its league check goes into the journal."""
        check = self._pending.pop((venue, result.table, result.game), None)
        if check is None:
            record = self._record_of(venue, result)
            if record is None:
                return
            check = record
        if check.counted and result.problems:
            why = "; ".join(detail_text(p) for p in result.problems)
            check = dataclasses.replace(check, verdict=RecordVerdict.NOT_PLAYED, chico=None,
                                        reason=f"No cuenta: {why}")  # fmt: skip
        elif check.counted:
            followed = self.venues[venue].tables.get(result.table)
            trail = followed.trails.get(result.game) if followed is not None else None
            held = (self.seen(venue, trail.arrivals, len(trail.dealt), followed.min_lag)
                    if trail is not None and followed is not None else None)  # fmt: skip
            if held is not None:
                log.error("league desk: %s/%s %s: %s", venue, result.table, result.game, held)
                check = dataclasses.replace(
                    check,
                    verdict=RecordVerdict.HELD,
                    chico=None,
                    reason=f"No cuenta sola: {detail_text(held)}; la decide el organizador",
                )
        if self.ledger.has(check):
            return
        self.collected = self.ledger.append(check, self.clock())
        self._next_phase()
        self._export_due = True

    def _next_phase(self) -> None:
        """A season's next phase: the schedule as the count now decides it (the lock
        held)."""
        if self.phases is None:
            return
        league = self.phases(self.collected.played)
        if league.schedule != self.league.schedule:
            log.info("league desk: %d matches in the schedule now", len(league.schedule))
            self.league = league
            self.ledger.league = league
            self.collected = self.ledger.count()

    def _record_of(self, venue: str, result: GameResult) -> LeagueRecordCheck | None:
        """The league's check of a record the venue's state kept on disk (a restart
        between the two journals): read back from ``records/``."""
        state = self.venues.get(venue)
        if state is None or state.out_dir is None:
            return None
        try:
            text = (state.out_dir / "records" / result.record).read_text(encoding="utf-8")
        except OSError:
            return None
        record = Record(result.table, result.seq, result.finished_at, result.game,
                        result.winner, result.score, result.hands, True, result.key_id,
                        None, text, None if result.match == NO_MATCH else result.match,
                        None)  # fmt: skip
        day = datetime.date.fromtimestamp(result.finished_at)
        return check_league_record(self.league, self.secret, venue, result.table, record,
                                   today=day)  # fmt: skip

    def key_for(self, venue: str, table: str) -> bytes | None:
        """The key of ``table`` at ``venue`` now: derived from the league's secret, or
        its new one once re-keyed (:meth:`rekey`; the venue's state holds it, journaled
        in its folder); ``None`` for a venue outside the league (the lock held)."""
        if venue not in {c.id for c in self.league.clubs}:
            return None
        return self.venue_state(venue).key_for(table)

    def rekey(self, venue: str, table: str) -> str:
        """A new key for ``table`` at ``venue`` after a key conflict (someone else holds
        its key), as a tournament desk gives one (:meth:`~..desk.state.DeskState.rekey`):
        returns the one-time code someone at the real table types there (``truco-table
        rekey``). From now on only the new key is accepted from it (the old key's
        messages are rejected before any check: they count for nothing), its stream
        starts again at its first messages under the new key, and its key conflict is
        closed (journaled in the league's journal). :class:`~.errors.LeagueError`
        (Spanish) for a venue or table that is not one."""
        with self.lock:
            if venue not in {c.id for c in self.league.clubs}:
                raise LeagueError(f"La sede {venue!r} no está en la liga")
            try:
                code = self.venue_state(venue).rekey(table)
            except ValueError:
                raise LeagueError(f"{table!r} no es el nombre de una mesa") from None
            self.watch.forget(venue, table)
            self.collected = self.ledger.append_rekey(venue, table, self.clock())
            self._export_due = True
        log.warning("league desk: %s/%s was given a new key", venue, table)
        return code

    def _conflict(self, venue: str, table: str, seq: int) -> None:
        """Two messages of ``table`` under ``seq``: someone else holds its key."""
        log.error("league desk: %s/%s: two messages under seq %d", venue, table, seq)
        if any((v, t) == (venue, table) for v, t, _ in self.ledger.conflicts):
            return
        self.collected = self.ledger.append_conflict(venue, table, seq, self.clock())
        self._export_due = True

    def _next_n(self) -> int:
        # above every earlier request of this desk, also across restarts (the clock)
        self._counter = max(self._counter + 1, time.time_ns() // 1000)
        return self._counter

    def ask_again(self, now: float | None = None) -> list[Hole]:
        """Send a resend request for every hole due now (the housekeeping thread does,
        four times a second, while connected); returns the holes asked for."""
        requests: list[tuple[str, bytes]] = []
        with self.lock:
            holes = self.watch.holes(self.clock() if now is None else now)
            for hole in holes:
                local = resend_topic(self.league.name, DESK_NAME, hole.table)
                key = self.key_for(hole.venue, hole.table)
                if key is None:
                    continue
                data = ResendRequest(hole.first, hole.last, self._next_n()).encode(key, local)
                requests.append((central_topic(self.league, hole.venue, local), data))
                self.asked.append(hole)
        for hole, (topic, data) in zip(holes, requests, strict=True):
            log.info("league desk: asking %s/%s for seq %d to %d again",
                     hole.venue, hole.table, hole.first, hole.last)  # fmt: skip
            self.client.publish(topic, data, qos=1)  # outside the lock paho's thread takes
        return holes

    def publish_assignment(self, venue: str, a: Assignment) -> str:
        """Tell ``a.table`` at ``venue`` its match: the assignment signed with that
        table's key over the topic the table reads at its venue
        (``truco/<league>/tables/<table>/assign``), published retained at QoS 1 on
        ``league/<venue>/tables/<table>/assign``, which the venue's bridge brings in.
        Returns the central topic."""
        with self.lock:  # its new key once re-keyed: the table checks with the one it has
            key = self.key_for(venue, a.table)
        if key is None:
            raise LeagueError(f"La sede {venue!r} no está en la liga")
        local, data = signed_assignment(key, tournament_prefix(self.league.name), a)
        topic = central_topic(self.league, venue, local)
        log.info("league desk: %s/%s plays %s (chico %d, n=%d)", venue, a.table, a.match,
                 a.chico, a.n)  # fmt: skip
        self.client.publish(topic, data, qos=1, retain=True)
        return topic

    def playing(self, venue: str, table: str) -> bool:
        """Whether ``table`` at ``venue`` is in the middle of a game (a deal heard, the
        game not won yet), as this desk follows its events."""
        with self.lock:
            state = self.venues.get(venue)
            t = state.tables.get(table) if state is not None else None
            if t is None or t.game is None:
                return False
            trail = t.trails.get(t.game)
            return trail is not None and bool(trail.dealt) and trail.finished is None

    def _housekeeping(self) -> None:
        while not self._stop.wait(0.25):
            if self._export_due and time.monotonic() - self._exported_at >= EXPORT_S:
                try:
                    self.export()
                except OSError:  # a disk error never stops the desk
                    log.exception("league desk: writing the exports failed")
            try:
                with self.lock:  # a table's stream whose wait for its first messages is over
                    for state in self.venues.values():
                        state.settle(self.clock())
            except Exception:  # one failing table never stops the desk
                log.exception("league desk: starting a table's stream failed")
            if not self.online:
                continue
            try:
                self.ask_again()
            except Exception:  # one failing request never stops the desk
                log.exception("league desk: asking for a hole again failed")

    def holes(self) -> tuple[list[Hole], list[Hole]]:
        """``(open, given up)``: the holes in the venues' tables' messages."""
        with self.lock:
            return self.watch.open_holes(), list(self.watch.given_up)

    def snapshot(self) -> Collected:
        with self.lock:
            return self.collected

    def rejections(self) -> tuple[RejectedCentral, ...]:
        """The messages rejected before any check (a bad mac, a venue not in the league)."""
        with self.lock:
            return tuple(self.rejected)

    def stop(self) -> None:
        self._stop.set()
        self.client.disconnect()
        self.client.loop_stop()
        if self._housekeeper.is_alive():
            self._housekeeper.join(5)
        self.export()
        with self.lock:
            self.ledger.close()
            for state in self.venues.values():
                state.close()


def desk_from_folder(
    root: str | os.PathLike[str],
    central: str | None = None,
    *,
    client_id: str = "league-desk",
    season: int | None = None,
    hand_s: float | None = Quota().hand_s,
) -> LeagueDesk:
    """The league desk of the league folder ``root`` (as ``league add-venue`` writes it):
    the league from ``league.toml``, its secret, the desk's account (``desk/broker.pass``)
    and the central CA (``desk/ca.crt``); its journal in ``root/desk/``. ``central``
    (``HOST:PORT``) overrides the address in ``league.toml``. ``season``: that season of
    ``temporadas/`` (:mod:`.season_store`), its journal in ``temporadas/<n>/desk/`` and
    each phase's matches joining the schedule as the count decides them. ``hand_s``: the
    shortest a hand takes (``league desk --hand-s``; 0 or ``None``: not checked). Anything missing
    or wrong is a :class:`~.bridge.LeagueSetupError` or :class:`~.errors.LeagueError` (Spanish)."""
    import tomllib
    from pathlib import Path

    from ..wire.topics import parse_broker
    from .bridge import CENTRAL_PORT, DESK_ACCOUNT, LeagueSetupError, read_league_secret
    from .codec import league_from_toml

    folder = Path(root)
    path = folder / "league.toml"
    if not folder.is_dir():
        raise LeagueSetupError(f"No existe la carpeta de la liga {folder}")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LeagueSetupError(
            f"En {folder} no hay league.toml: no es la carpeta de una liga "
            "(la crea truco-table league add-venue)"
        ) from None
    except (OSError, UnicodeDecodeError) as e:
        raise LeagueSetupError(f"No se puede leer {path}: {e}") from None
    league = league_from_toml(text, str(path))
    address = central if central is not None else tomllib.loads(text)["league"].get("central")
    if not isinstance(address, str):
        raise LeagueSetupError(f"{path}: falta central (HOST:PUERTO del broker central)")
    try:
        host, port = parse_broker(address, CENTRAL_PORT)
    except ValueError:
        raise LeagueSetupError(
            f"La dirección del broker central {address!r} no sirve: va HOST o HOST:PUERTO"
        ) from None
    secret = read_league_secret(folder)
    desk = folder / "desk"
    try:
        password = (desk / "broker.pass").read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        raise LeagueSetupError(
            f"No se puede leer {desk / 'broker.pass'}: la escribe truco-table league add-venue"
        ) from None
    if not (desk / "ca.crt").is_file():
        raise LeagueSetupError(f"Falta {desk / 'ca.crt'}: la escribe truco-table league add-venue")
    journal = desk
    phases = None
    publish = None
    league_of_file = league
    if season is not None:
        from .season import season_league
        from .season_store import load_season, season_count

        the_season = load_season(folder, league, season)
        played = dict(season_count(folder, league, the_season, secret).played)
        league = season_league(the_season, played)
        journal = folder / "temporadas" / str(season) / "desk"

        def phases(p: Mapping[str, tuple[Chico, ...]]) -> League:
            return season_league(the_season, p)

        def publish() -> object:  # every season's public pages, in liga/paginas/
            from .season_store import write_league_site

            return write_league_site(folder, league_of_file, secret, folder / "paginas")

    made = LeagueDesk(
        league, secret, journal, host=host, port=port, ca_file=desk / "ca.crt",
        username=DESK_ACCOUNT, password=password, client_id=client_id, phases=phases,
        publish=publish, hand_s=hand_s,
    )  # fmt: skip
    if season is not None:
        from .season_desk import SeasonOffice

        made.pages_dir = folder / "paginas"
        office = SeasonOffice(folder, league_of_file, secret, season,
                              played=lambda: made.snapshot().played,
                              publish=made.publish_assignment, busy=made.playing)  # fmt: skip
        made.office = office
        made.on_count.append(office.refresh)
        made.on_connected.append(lambda: office.refresh(again=True))
    return made
