"""Two venues bridged to the central broker, each a real Mosquitto on loopback, as
``truco-table league add-venue`` configures them (TLS, accounts, ACLs, remapping).

A table's message at a venue reaches the central broker under that venue's prefix; a
venue's account cannot write under another venue's prefix; with the central broker
stopped, the venue queues what its tables publish and delivers it exactly once, in
order, when the central broker comes back, even if the venue broker was restarted
meanwhile (its queue on disk).
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import json
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode

from controller.cli import main
from controller.table.run_mock import MockRun
from controller.tournament.league.bridge import DESK_ACCOUNT, AddedVenue, add_venue
from controller.tournament.league.collect import Collected, collect
from controller.tournament.league.desk import LeagueDesk
from controller.tournament.league.fixture import fixture
from controller.tournament.league.inbox import CentralMessage, read_central
from controller.tournament.league.model import League as LeagueModel
from controller.tournament.league.model import LeagueMatch
from controller.tournament.league.standings import league_standings
from controller.tournament.league.verify import RecordVerdict
from controller.tournament.sim.mosquitto import LocalBroker, find_mosquitto, free_port
from controller.tournament.table.link import TournamentSettings, load_tournament_settings
from controller.tournament.table.publisher import TablePublisher as RealTable
from controller.tournament.venue.broker import Venue
from tests.helpers import wait_until

from ..conftest import MqttProbe
from ..venue.door import Door
from .helpers import (
    broker_folder,
    game_payloads,
    record_payload,
    running_brokers,
    two_venue_league,
)

LEAGUE = "liga"


class CentralProbe:
    """A persistent session (clean session off) on the central broker: what it may read
    under ``league/#``, in arrival order; it reconnects by itself after a restart."""

    def __init__(self, added: AddedVenue, account: str, password: str) -> None:
        self.messages: list[tuple[str, bytes]] = []
        self.lock = threading.Lock()
        self.subscribed = threading.Event()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=f"probe-{account}-{time.time_ns()}",
            clean_session=False,
        )
        self.client.username_pw_set(account, password)
        self.client.tls_set(ca_certs=str(added.central_ca))
        self.client.reconnect_delay_set(1, 1)
        self.client.on_message = self._on_message
        self.client.on_subscribe = lambda *args: self.subscribed.set()
        self.client.on_connect = self._on_connect
        self.client.connect("127.0.0.1", added.central[1], 10)
        self.client.loop_start()
        assert self.subscribed.wait(10), f"{account} could not subscribe at the central broker"

    def _on_connect(self, client: mqtt.Client, *args: object) -> None:
        client.subscribe("league/#", qos=1)

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        with self.lock:
            self.messages.append((msg.topic, bytes(msg.payload)))

    def topics(self, prefix: str) -> list[tuple[str, bytes]]:
        with self.lock:
            return [(t, p) for t, p in self.messages if t.startswith(prefix)]

    def wait_for(self, prefix: str, count: int) -> list[tuple[str, bytes]]:
        wait_until(lambda: len(self.topics(prefix)) >= count)
        return self.topics(prefix)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@dataclass
class League:
    a: AddedVenue
    b: AddedVenue
    central: LocalBroker
    venue_a: LocalBroker


def _as_venue(added: AddedVenue) -> Venue:
    return Venue(
        added.venue_dir, added.league, added.tables, added.desks, added.port, ("127.0.0.1",)
    )


@pytest.fixture
def league() -> Iterator[League]:
    parent = broker_folder("truco-league-")
    root = parent / "liga"
    central_port = free_port()
    a = add_venue(
        root,
        "bar-a",
        ["mesa01", "mesa02"],
        ["desk"],
        league=LEAGUE,
        central=f"127.0.0.1:{central_port}",
        port=free_port(),
        restart_timeout=(1, 1),
    )
    b = add_venue(root, "bar-b", ["mesa01"], ["desk"], port=free_port(), restart_timeout=(1, 1))
    with running_brokers(parent, a) as (central, venue_a):
        yield League(a, b, central, venue_a)


def _wait_bridge_up(probe: CentralProbe, venue: str, after: int = 0) -> None:
    """The bridge's own notification (``league/<venue>/bridge/state`` = 1) at the central."""

    def up() -> bool:
        return any(p == b"1" for _, p in probe.topics(f"league/{venue}/bridge/state")[after:])

    assert wait_until(up), f"the bridge of {venue} did not come up"


class TablePublisher:
    """A table of venue A publishing its events at the venue broker, under its account."""

    def __init__(self, venue: Venue, table: str) -> None:
        self.topic = f"truco/{LEAGUE}/tables/{table}/events"
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=f"{table}-{time.time_ns()}"
        )
        self.client.username_pw_set(table, venue.password(table))
        self.client.tls_set(ca_certs=str(venue.ca_file))
        self.client.connect("127.0.0.1", venue.port, 10)
        self.client.loop_start()

    def publish(self, seq: int) -> None:
        info = self.client.publish(self.topic, json.dumps({"seq": seq}), qos=1)
        info.wait_for_publish(10)
        assert info.is_published()

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _mesa01_publishes(league: League, seqs: range) -> None:
    """bar-a's mesa01 sends ``seqs`` (each acknowledged by the venue broker), then leaves."""
    table = TablePublisher(_as_venue(league.a), "mesa01")
    try:
        for seq in seqs:
            table.publish(seq)
    finally:
        table.close()


def _real_table(
    name: str, port: int, folder: Path, settings: TournamentSettings, match: str
) -> RealTable:
    """The shipped table publisher, with ``settings`` (its provisioned key and account),
    its outbox in ``folder``, back at once after a cut."""
    return RealTable(
        name, "127.0.0.1", port, outbox_dir=folder / "outbox", tournament=LEAGUE,
        key=settings.key, access=settings.access, match=match, keepalive=1,
        reconnect_delay=(1, 1),
    )  # fmt: skip


def _matchday_one(
    league: League, tmp_path: Path
) -> tuple[LeagueModel, bytes, LeagueMatch, LeagueMatch, LeagueDesk]:
    """Two venues' league on its first matchday: its model and secret, bar-a's home
    matches of matchdays 1 and 2, and the league desk (not started) once bar-a's bridge
    is up."""
    model = two_venue_league(("bar-a", "bar-b"))
    secret = _league_secret(league)
    today = next(m for m in fixture(model) if m.venue == "bar-a" and m.matchday == 1)
    future = next(m for m in fixture(model) if m.venue == "bar-a" and m.matchday == 2)
    _bar_a_bridge_up(league)
    desk = _league_desk(league, model, secret, tmp_path, lambda: model.first_date)
    return model, secret, today, future, desk


def _league_secret(league: League) -> bytes:
    text = (league.a.root / "secret.key").read_text(encoding="ascii")
    return bytes.fromhex(next(s for s in text.split("\n") if s and s[0] != "#"))


def _league_desk(
    league: League,
    model: LeagueModel,
    secret: bytes,
    tmp_path: Path,
    today: Callable[[], datetime.date],
    hand_s: float | None = None,
) -> LeagueDesk:
    """The league desk on the central broker, logged in with the desk's account."""
    return LeagueDesk(
        model, secret, tmp_path / "desk", host="127.0.0.1", port=league.a.central[1],
        ca_file=league.a.central_ca, username=DESK_ACCOUNT, password=league.a.desk_password(),
        today=today, hand_s=hand_s,
    )  # fmt: skip


def _bar_a_bridge_up(league: League) -> None:
    """Waits for bar-a's bridge with the desk's account, then lets that account go."""
    probe = CentralProbe(league.a, DESK_ACCOUNT, league.a.desk_password())
    _wait_bridge_up(probe, "bar-a")
    probe.close()  # the desk's account is one session (its client id): the desk's alone now


def _seqs(messages: list[tuple[str, bytes]]) -> list[int]:
    return [json.loads(p)["seq"] for _, p in messages]


def test_a_venue_message_reaches_the_central_broker_under_its_prefix(league: League) -> None:
    probe = CentralProbe(league.a, DESK_ACCOUNT, league.a.desk_password())
    table = TablePublisher(_as_venue(league.a), "mesa01")
    try:
        _wait_bridge_up(probe, "bar-a")
        table.publish(1)
        got = probe.wait_for("league/bar-a/tables/", 1)
        assert got == [("league/bar-a/tables/mesa01/events", b'{"seq": 1}')]
        # and nowhere else: not under the venue's own topic, not under another venue
        assert not probe.topics("truco/") and not probe.topics("league/bar-b/")
        # the venue's own desk still reads it at the venue, unchanged
        desk = MqttProbe(_as_venue(league.a), "desk", f"truco/{LEAGUE}/tables/+/events")
        try:
            assert desk.client.is_connected()
        finally:
            desk.close()
    finally:
        table.close()
        probe.close()


def test_a_venue_account_cannot_write_under_another_venue_prefix(league: League) -> None:
    probe = CentralProbe(league.a, DESK_ACCOUNT, league.a.desk_password())
    forger = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"forger-{time.time_ns()}")
    forger.username_pw_set(league.a.account, league.a.bridge_password())
    forger.tls_set(ca_certs=str(league.a.central_ca))
    forger.connect("127.0.0.1", league.a.central[1], 10)
    forger.loop_start()
    try:
        # publish() before the CONNACK fails at once
        assert wait_until(forger.is_connected), "the venue's account could not connect"
        for topic in (
            "league/bar-b/tables/mesa01/records/mesa01-g001",  # the other venue's prefix
            "league/bar-b/bridge/state",
            f"truco/{LEAGUE}/tables/mesa01/events",  # outside the league's prefixes
            "league/other",
        ):
            forger.publish(topic, b"forged", qos=1).wait_for_publish(10)
        # then one under its own prefix: once it arrives, the ones before it would have
        forger.publish("league/bar-a/tables/mesa01/events", b"own", qos=1).wait_for_publish(10)
        got = probe.wait_for("league/bar-a/tables/", 1)
        assert got == [("league/bar-a/tables/mesa01/events", b"own")]
        time.sleep(0.2)
        assert [t for t, p in probe.topics("") if p == b"forged"] == []
    finally:
        forger.disconnect()
        forger.loop_stop()
        probe.close()


def test_with_the_central_broker_down_the_venue_queues_and_delivers_once_in_order(
    league: League,
) -> None:
    probe = CentralProbe(league.a, DESK_ACCOUNT, league.a.desk_password())
    table = TablePublisher(_as_venue(league.a), "mesa02")
    try:
        _wait_bridge_up(probe, "bar-a")
        table.publish(1)
        assert _seqs(probe.wait_for("league/bar-a/tables/", 1)) == [1]
        league.central.stop()  # the bar's uplink is gone: the venue keeps playing
        for seq in range(2, 42):
            table.publish(seq)  # the venue broker acknowledges each (QoS 1)
        time.sleep(0.5)
        states_before = len(probe.topics("league/bar-a/bridge/state"))
        league.central.start()  # the link is back (same port, its sessions on disk)
        _wait_bridge_up(probe, "bar-a", after=states_before)
        got = probe.wait_for("league/bar-a/tables/", 41)
        time.sleep(0.5)  # anything more (a duplicate) would come now
        got = probe.topics("league/bar-a/tables/")
        assert _seqs(got) == list(range(1, 42))  # all of them, once each, in order
        assert {t for t, _ in got} == {"league/bar-a/tables/mesa02/events"}
    finally:
        table.close()
        probe.close()


def test_a_venue_broker_restarted_while_the_link_is_down_keeps_its_queue(
    league: League,
) -> None:
    probe = CentralProbe(league.a, DESK_ACCOUNT, league.a.desk_password())
    try:
        _wait_bridge_up(probe, "bar-a")
        league.central.stop()
        _mesa01_publishes(league, range(1, 21))
        league.venue_a.stop()  # a clean stop (systemd's): Mosquitto writes its queue to disk
        league.venue_a.start()
        states_before = len(probe.topics("league/bar-a/bridge/state"))
        league.central.start()
        _wait_bridge_up(probe, "bar-a", after=states_before)
        probe.wait_for("league/bar-a/tables/", 20)
        time.sleep(0.5)
        assert _seqs(probe.topics("league/bar-a/tables/")) == list(range(1, 21))
    finally:
        probe.close()


def test_a_venue_that_rewrites_its_bridge_to_another_prefix_gets_nothing_through(
    league: League,
) -> None:
    """Venue A's admin edits its bridge to land under venue B's prefix: the central ACL
    drops every message (the bridge's account writes only under league/bar-a/)."""
    probe = CentralProbe(league.a, DESK_ACCOUNT, league.a.desk_password())
    try:
        _wait_bridge_up(probe, "bar-a")
        league.venue_a.stop()
        conf = league.a.venue_conf.read_text(encoding="utf-8")
        forged = conf.replace(
            f"topic tables/# out 1 truco/{LEAGUE}/ league/bar-a/",
            f"topic tables/# out 1 truco/{LEAGUE}/ league/bar-b/",
        ).replace("notification_topic league/bar-a/", "notification_topic league/bar-b/")
        assert forged != conf
        league.a.venue_conf.write_text(forged, encoding="utf-8")
        league.venue_a.start()
        _mesa01_publishes(league, range(1, 6))
        # the forged bridge did connect (its account is genuine) and sent its queue
        log = league.central.log
        assert wait_until(lambda: log.read_text(errors="replace").count("as venue-bar-a ") >= 2), (
            "the forged bridge never connected"
        )
        time.sleep(1.0)
        assert probe.topics("league/bar-b/") == []
        assert probe.topics("league/bar-a/tables/") == []
    finally:
        probe.close()


#: A date when every matchday of the test league has come.
DUE = datetime.date(2027, 3, 6) + datetime.timedelta(days=365)


def test_a_sealed_record_crosses_the_bridge_and_the_league_desk_counts_it(
    league: League,
) -> None:
    model = two_venue_league(("bar-a", "bar-b"))
    secret = _league_secret(league)
    match = next(m for m in fixture(model) if m.venue == "bar-a")
    other = next(m for m in fixture(model) if m.venue == "bar-b")
    probe = CentralProbe(league.a, DESK_ACCOUNT, league.a.desk_password())
    table = TablePublisher(_as_venue(league.a), "mesa01")
    try:
        _wait_bridge_up(probe, "bar-a")
        sent = [
            record_payload(model, secret, "bar-a", "mesa01", match.id, seq=1, chico=1),
            record_payload(
                model, secret, "bar-a", "mesa01", match.id, seq=2, game_number=2, chico=2
            ),
            # bar-a sealing (with its own keys) a match of bar-b: flagged, not counted
            record_payload(model, secret, "bar-a", "mesa01", other.id, seq=3, game_number=3),
        ]
        for topic, data in sent:
            table.client.publish(topic, data, qos=1, retain=True).wait_for_publish(10)
        got = probe.wait_for("league/bar-a/tables/mesa01/records/", 3)
        read = [read_central(model, secret, t, p) for t, p in got]
        checks = [r.check for r in read if isinstance(r, CentralMessage) and r.check]
        assert len(checks) == 3
        count = collect(model, checks)
        assert [f.check.game for f in count.flags] == ["mesa01-g003"]
        assert "se juega en la sede bar-b" in count.flags[0].reason
        assert len(count.played[match.id]) == 2  # two chicos of the bot game: decided
        standings = league_standings(model, count.played)
        assert standings[0].won == 1 and standings[0].games_won == 2
    finally:
        table.close()
        probe.close()


def test_the_league_desk_journals_what_the_bridge_brings_and_restarts_where_it_was(
    league: League, tmp_path: Path
) -> None:
    model = two_venue_league(("bar-a", "bar-b"))
    secret = _league_secret(league)
    match = next(m for m in fixture(model) if m.venue == "bar-a")
    other = next(m for m in fixture(model) if m.venue == "bar-b")

    def desk() -> LeagueDesk:
        return _league_desk(league, model, secret, tmp_path, lambda: DUE)

    def wait(d: LeagueDesk, done: Callable[[Collected], bool]) -> Collected:
        assert wait_until(lambda: done(d.snapshot())), d.snapshot()
        return d.snapshot()

    _bar_a_bridge_up(league)
    first = desk()
    first.start()
    table = TablePublisher(_as_venue(league.a), "mesa02")
    try:
        assert first.subscribed.wait(120)
        seq = 1
        for n, m in ((1, match), (2, match), (3, other)):  # each game's events and record
            for topic, data in game_payloads(model, secret, "bar-a", "mesa02", m.id, seq=seq,
                                             game_number=n, chico=n):  # fmt: skip
                retain = "/records/" in topic  # as a table publishes them
                table.client.publish(topic, data, qos=1, retain=retain).wait_for_publish(10)
                seq += 1
        wait(first, lambda c: len(c.counted) + len(c.flags) == 3)
        first.stop()
        # where it was when it stopped (QoS 1 may have brought a record again meanwhile:
        # a repeat, journalled too)
        count = first.snapshot()
        assert len(count.played[match.id]) == 2 and len(count.flags) == 1
        again = desk()
        # paho's thread runs from loop_start(): a retained record it takes before start()
        # returns (a loaded machine) is the broker's, not the journal's; made certain here
        loop_start = again.client.loop_start

        def loop_start_then_a_repeat() -> MQTTErrorCode:
            started = loop_start()
            assert wait_until(lambda: again.snapshot().repeats >= 1), again.snapshot()
            return started

        again.client.loop_start = loop_start_then_a_repeat  # type: ignore[method-assign]
        assert again.start() == count  # from its journal, before the broker says anything
        assert again.subscribed.wait(120)
        # the retained records come again: repeats, not counted twice
        after = wait(again, lambda c: c.repeats >= 3)
        assert after.played == count.played and after.flags == count.flags
        again.stop()
    finally:
        table.close()


def test_a_record_a_venue_broker_lost_is_asked_for_again_and_counted_once(
    league: League, tmp_path: Path
) -> None:
    """A real table (its outbox, its publisher) at venue A; the uplink goes down after
    its first game, its second game's record reaches the venue broker, which then loses
    power before saving it (killed, its unsaved state gone). The league desk sees the
    hole in the table's seqs when the table says again how far it has got, asks for it
    through the central broker and the bridge, and the table gives it again from its
    outbox: the record arrives once, is counted once, and the hole closes."""
    model = two_venue_league(("bar-a", "bar-b"))
    secret = _league_secret(league)
    match = next(m for m in fixture(model) if m.venue == "bar-a")
    desk = _league_desk(league, model, secret, tmp_path, lambda: DUE)
    delivered: list[tuple[str, bool]] = []
    on_message = desk.client.on_message
    assert on_message is not None

    def counting(client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        delivered.append((msg.topic, msg.retain))
        on_message(client, userdata, msg)

    desk.client.on_message = counting
    desk.client.reconnect_delay_set(1, 1)  # back at once after the central broker's restart
    settings = load_tournament_settings(_as_venue(league.a).table_dir("mesa01") / "tournament.toml")
    assert settings is not None
    run = MockRun(model.rules.house, seed=3, human=None, state_dir=tmp_path / "table")
    table = _real_table("mesa01", league.a.port, tmp_path / "table", settings, match.id)
    table.attach(run.mock.service)

    def bridged() -> int:  # the venue's bridge connections the central broker logged
        return league.central.log.read_text(errors="replace").count("as venue-bar-a ")

    def wait(what: str, done: Callable[[], bool]) -> None:
        assert wait_until(done), (what, desk.asked, desk.holes(), desk.snapshot())

    def counted() -> list[str]:
        return [c.game for c in desk.snapshot().counted]

    try:
        desk.start()
        assert desk.subscribed.wait(120)  # the game's events as they are played, not after
        wait("the bridge up", lambda: bridged() >= 1)  # and it carries them from the first
        table.start()
        run.play_out()
        wait("the first record counted", lambda: counted() == ["mesa01-g001"])
        league.central.stop()  # the uplink is gone: the venue queues
        run.mock.service.new_game()
        run.play_out()
        assert table.flush(10)  # the venue broker has acknowledged every message
        last_seq = table.outbox.last_seq
        record_seq = next(e.seq for e in table.outbox if e.topic == "records/mesa01-g002")
        league.venue_a.kill()  # the bar's power goes before its broker saved anything
        for saved in (league.a.venue_conf.parent / "data").glob("*.db"):
            saved.unlink()
        league.venue_a.start()
        before = bridged()
        league.central.start()
        wait("the bridge up again", lambda: bridged() > before)
        wait("the lost record asked for again and counted",
             lambda: counted() == ["mesa01-g001", "mesa01-g002"])  # fmt: skip
        assert desk.asked and all(h.venue == "bar-a" and h.table == "mesa01" for h in desk.asked)
        # the hole up to what the table said it has (its status, once it was back)
        assert any(h.first <= record_seq <= h.last == last_seq for h in desk.asked)
        wait("the hole closed", lambda: desk.holes() == ([], []))
        time.sleep(1.0)  # anything more (a second answer) would come now
        again = [retained for t, retained in delivered if t.endswith("/records/mesa01-g002")]
        assert again == [False]  # once, as the table gave it again (not a retained copy)
        assert table.refused_resends == 0
        count = desk.snapshot()
        assert not count.flags and len(count.played[match.id]) == 2
    finally:
        table.close()
        run.close()
        desk.stop()
    # the desk's games export, as the organiser's spreadsheet reads it: each chico once
    with open(tmp_path / "desk" / "games.csv", encoding="utf-8", newline="") as f:
        games = [(r["game"], r["venue"], r["counted"]) for r in csv.DictReader(f)]
    assert games == [("mesa01-g001", "bar-a", "true"), ("mesa01-g002", "bar-a", "true")]


def test_a_forged_future_home_match_is_not_counted_and_its_key_conflict_comes_first(
    league: League, tmp_path: Path
) -> None:
    """Issue 43: with bar-a mesa01's key, two records sealed for bar-a's home match of
    matchday 2 (not played yet: the desk's today is matchday 1), with no events, sent as
    the table's next messages. Neither counts; both are flagged, one row each. The real
    table then plays matchday 1: its first messages collide with the forged ones (a key
    conflict: first on the league's page, naming the games counted from that seq: none)
    and its game, whose opening the forgery took, does not count either."""
    from controller.tournament.league.web import standings_page

    model, secret, today_match, future, desk = _matchday_one(league, tmp_path)
    desk.start()
    thief = TablePublisher(_as_venue(league.a), "mesa01")  # the key and account, copied
    try:
        assert desk.subscribed.wait(120)
        for n in (1, 2):  # two chicos 2-0, sealed right, never played, as seqs 1 and 2
            topic, data = record_payload(model, secret, "bar-a", "mesa01", future.id, seq=n,
                                         game_number=n, chico=n)  # fmt: skip
            thief.client.publish(topic, data, qos=1, retain=True).wait_for_publish(10)
        assert wait_until(lambda: len(desk.snapshot().flags) >= 2), desk.snapshot()
        count = desk.snapshot()
        assert count.played == {} and count.counted == ()
        assert [f.check.verdict for f in count.flags] == [RecordVerdict.NOT_DUE] * 2
        assert "todavía no se juega" in count.flags[0].reason
        # the real table plays matchday 1 from seq 1: its first two messages collide
        for topic, data in game_payloads(model, secret, "bar-a", "mesa01", today_match.id,
                                         seq=1, game_number=1, chico=1):  # fmt: skip
            retain = "/records/" in topic
            thief.client.publish(topic, data, qos=1, retain=retain).wait_for_publish(10)
        assert wait_until(
            lambda: bool(desk.snapshot().conflicts) and len(desk.snapshot().flags) >= 3
        ), desk.snapshot()
        count = desk.snapshot()
        [conflict] = count.conflicts
        assert (conflict.venue, conflict.table, conflict.seq, conflict.games) == (
            "bar-a",
            "mesa01",
            1,
            (),
        )
        assert count.played == {}  # nothing decided by a table whose key is in other hands
        page = standings_page(model, count)
        assert page.index('id="conflicts"') < page.index("<h2>Posiciones</h2>")
        assert "alguien más tiene la clave de la mesa" in page
        # one record, one row: the exports list each flagged record once
        desk.export()
        with open(tmp_path / "desk" / "games.csv", encoding="utf-8", newline="") as f:
            rows = [(r["game"], r["record_sha256"], r["counted"]) for r in csv.DictReader(f)]
        assert len(rows) == len(set(rows)) == 3 and {r[2] for r in rows} == {"false"}
    finally:
        thief.close()
        desk.stop()


def test_a_game_a_copied_key_played_offline_is_held_and_one_an_uplink_cut_delayed_counts(
    league: League, tmp_path: Path
) -> None:
    """Issue 43: a copy of bar-a mesa02's key plays a game offline (its outbox fills, no
    broker) and then connects to the venue as the table: its whole game reaches the league
    desk in a burst, with the venue's uplink up all along. It is held, with the reason,
    on the league's page. Then the real mesa01 plays a game while the venue's uplink is
    cut (the central broker down): its events also reach the desk in a burst, when the
    link is back, which the outage explains: it counts. The desk judges as the shipped
    one does (``hand_s`` 3 s, ``desk_from_folder``)."""
    from controller.tournament.league.web import standings_page

    model = two_venue_league(("bar-a", "bar-b"))
    secret = _league_secret(league)
    match = next(m for m in fixture(model) if m.venue == "bar-a")
    _bar_a_bridge_up(league)
    desk = _league_desk(league, model, secret, tmp_path, lambda: DUE, hand_s=3.0)
    desk.client.reconnect_delay_set(1, 1)  # back at once after the central broker's restart
    runs: list[MockRun] = []
    tables: list[RealTable] = []

    def table(name: str, port: int, folder: Path) -> RealTable:
        settings = load_tournament_settings(_as_venue(league.a).table_dir(name) / "tournament.toml")
        assert settings is not None
        made = _real_table(name, port, folder, settings, match.id)
        tables.append(made)
        return made

    def bridged() -> int:  # the venue's bridge connections the central broker logged
        return league.central.log.read_text(errors="replace").count("as venue-bar-a ")

    def verdicts() -> dict[str, RecordVerdict]:
        count = desk.snapshot()
        found = {c.game: c.verdict for c in count.counted}
        found.update({f.check.game: f.check.verdict for f in count.flags})
        return found

    try:
        desk.start()
        assert desk.subscribed.wait(120)
        # the copy: mesa02's key and account, a game played against no broker at all
        copy_run = MockRun(model.rules.house, seed=5, human=None, state_dir=tmp_path / "copy")
        runs.append(copy_run)
        offline = table("mesa02", free_port(), tmp_path / "copy")
        offline.attach(copy_run.mock.service)
        offline.start()
        copy_run.play_out()
        offline.close()
        online = table("mesa02", league.a.port, tmp_path / "copy")  # then connected as mesa02
        online.start()
        assert online.flush(30)
        assert wait_until(lambda: "mesa02-g001" in verdicts()), desk.snapshot()
        assert verdicts()["mesa02-g001"] is RecordVerdict.HELD
        count = desk.snapshot()
        assert count.played == {}
        [flag] = count.flags
        assert "más rápido de lo que se juegan" in flag.reason and "organizador" in flag.reason
        page = standings_page(model, count)
        assert "mesa02-g001" in page and "más rápido de lo que se juegan" in page
        # the real mesa01 plays while the bar's uplink is cut: all of it arrives late
        run = MockRun(model.rules.house, seed=3, human=None, state_dir=tmp_path / "table")
        runs.append(run)
        real = table("mesa01", league.a.port, tmp_path / "table")
        real.attach(run.mock.service)
        real.start()
        assert wait_until(lambda: real.pending() == 0)
        before = bridged()
        league.central.stop()
        run.play_out()
        assert real.flush(10)  # the venue broker has every message; the bridge queues them
        league.central.start()
        assert wait_until(lambda: bridged() > before)
        assert wait_until(lambda: "mesa01-g001" in verdicts()), desk.snapshot()
        assert verdicts()["mesa01-g001"] is RecordVerdict.COUNTED, desk.snapshot()
        assert [c.game for c in desk.snapshot().counted] == ["mesa01-g001"]
    finally:
        for t in tables:
            t.close()
        for r in runs:
            r.close()
        desk.stop()


def test_after_a_key_conflict_the_organiser_rekeys_the_table_and_the_real_one_goes_on(
    league: League, tmp_path: Path
) -> None:
    """Issue 43: a copy of bar-a mesa01's key sends two different messages under seq 1
    (a key conflict at the league desk). The organiser, logged in on the league desk's
    page, re-keys mesa01 there and gets the one-time code; the conflict item goes away.
    The code is typed at the table (``truco-table rekey``, as at a venue); the copy's
    messages under the OLD key are then rejected (they count for nothing), and the real
    table, with its new key, plays a game that counts."""
    from controller.cli import main
    from controller.tournament.desk.sessions import OrganiserAccess
    from controller.tournament.league.web import serve_league
    from tests.helpers import serving

    from .helpers import Client

    model, secret, match, future, desk = _matchday_one(league, tmp_path)
    venue = _as_venue(league.a)
    thief = TablePublisher(venue, "mesa01")  # the key and account, copied
    server = serve_league(desk, 0, access=OrganiserAccess("clave-org", store=tmp_path / "desk"))
    run: MockRun | None = None
    real: RealTable | None = None

    def sent_by_the_copy(game_number: int, seq: int) -> None:
        for topic, data in game_payloads(model, secret, "bar-a", "mesa01", future.id,
                                         seq=seq, game_number=game_number)[:3]:  # fmt: skip
            thief.client.publish(topic, data, qos=1).wait_for_publish(10)

    with serving(server):
        web = Client(server.server_address[1])
        try:
            desk.start()
            assert desk.subscribed.wait(120)
            sent_by_the_copy(7, 1)
            sent_by_the_copy(8, 1)  # other messages under the same seqs: a key conflict
            assert wait_until(lambda: bool(desk.snapshot().conflicts)), desk.snapshot()
            assert web.post("/api/entrar", {"clave": "clave-org"})[0] == 200
            web.csrf = web.post("/api/entrar", {"clave": "clave-org"})[1]["csrf"]
            status, page = web.get("/organizador")
            assert status == 200 and 'data-action="clave"' in page
            assert "alguien más tiene la clave de la mesa" in page
            order = {"action": "clave", "venue": "bar-a", "table": "mesa01"}
            assert web.post("/api/liga", order, csrf="otro")[0] == 401  # CSRF checked
            status, answer = web.post("/api/liga", order)
            assert status == 200, answer
            code = answer["code"]
            assert f"truco-table rekey --config /etc/truco-table/table.toml {code}" in answer["ok"]
            assert desk.snapshot().conflicts == ()  # the item stops alarming
            assert 'data-action="clave"' not in web.get("/organizador")[1]
            # at the table: the code typed in, as at a venue
            config = venue.table_dir("mesa01") / "tournament.toml"
            assert main(["rekey", "--config", str(config), code]) == 0
            # the copy, still under the old key: rejected before any check
            rejected = len(desk.rejections())
            sent_by_the_copy(9, 40)
            assert wait_until(lambda: len(desk.rejections()) >= rejected + 3)
            assert all("mac" in r.reason for r in desk.rejections()[rejected:])
            # the real table, restarted with its new key, plays matchday 1: it counts
            settings = load_tournament_settings(config)
            assert settings is not None and settings.key is not None
            run = MockRun(model.rules.house, seed=3, human=None, state_dir=tmp_path / "table")
            real = _real_table("mesa01", league.a.port, tmp_path / "table", settings, match.id)
            real.attach(run.mock.service)
            real.start()
            run.play_out()
            assert real.flush(30)
            assert wait_until(lambda: bool(desk.snapshot().counted)), desk.snapshot()
            count = desk.snapshot()
            assert [(c.game, c.match) for c in count.counted] == [("mesa01-g001", match.id)]
            assert count.conflicts == () and "mesa01-g009" not in {
                f.check.game for f in count.flags
            }
            # a restarted desk keeps the new key and the conflict closed
            desk.stop()
            again = _league_desk(league, model, secret, tmp_path, lambda: model.first_date)
            reopened = again.open()
            assert reopened.conflicts == () and len(reopened.counted) == 1
            with again.lock:
                assert again.key_for("bar-a", "mesa01") == settings.key.key
            again.ledger.close()
            for state in again.venues.values():
                state.close()
        finally:
            if real is not None:
                real.close()
            if run is not None:
                run.close()
            thief.close()
            desk.stop()


def test_a_league_venue_door_closes_an_idle_socket_and_lets_a_table_in() -> None:
    """``league add-venue`` as the organiser runs it puts the venue's tables' listener
    behind the door: a socket that says nothing is closed, a table logs in through the
    door and what it publishes crosses the bridge to the central broker."""
    if find_mosquitto() is None or shutil.which("openssl") is None:
        pytest.skip("mosquitto or openssl not installed (.ci/run installs both)")
    parent = Path(tempfile.mkdtemp(prefix="truco-league-door-"))
    parent.chmod(0o711)  # Mosquitto's own user must get through
    root = parent / "liga"
    central_port, port, inner = free_port(), free_port(), free_port()
    assert main(["league", "add-venue", "--dir", str(root), "--venue", "bar-a",
                 "--tables", "1", "--league", LEAGUE, "--central", f"127.0.0.1:{central_port}",
                 "--port", str(port), "--inner-port", str(inner)]) == 0  # fmt: skip
    added = AddedVenue(root, LEAGUE, "bar-a", ("127.0.0.1", central_port), ("mesa01",),
                       ("desk",), port, inner)  # fmt: skip
    conf = added.venue_conf.read_text(encoding="utf-8")
    assert f"listener {inner} 127.0.0.1" in conf and f"listener {port} " not in conf
    assert f"dport {port} " in added.firewall.read_text(encoding="utf-8")
    central = LocalBroker(central_port, workdir=parent / "run-central", config=added.central_conf)
    venue = LocalBroker(inner, workdir=parent / "run-a", config=added.venue_conf)
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, parent, ignore_errors=True)
        central.start()
        stack.callback(central.close)
        venue.start()
        stack.callback(venue.close)
        door = stack.enter_context(Door(added.front_conf, connect_s=1.0))
        probe = CentralProbe(added, DESK_ACCOUNT, added.desk_password())
        stack.callback(probe.close)
        idle = stack.enter_context(socket.create_connection(("127.0.0.1", port)))
        table = TablePublisher(_as_venue(added), "mesa01")
        stack.callback(table.close)
        _wait_bridge_up(probe, "bar-a")
        table.publish(1)
        got = probe.wait_for("league/bar-a/tables/", 1)
        assert got == [("league/bar-a/tables/mesa01/events", b'{"seq": 1}')]
        idle.settimeout(60)
        with contextlib.suppress(ConnectionResetError):
            assert idle.recv(1) == b"", "the door left a socket that says nothing open"
        assert door.front.dropped >= 1 and door.front.relayed >= 1
        table.publish(2)  # the table that logged in stays past the door's wait
        assert _seqs(probe.wait_for("league/bar-a/tables/", 2)) == [1, 2]
