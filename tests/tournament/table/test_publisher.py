"""The table's side: the persistent outbox (no broker), the publisher's messages, and
delivery across network cuts and restarts against a real Mosquitto."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from controller.engine import Claims, HouseRules
from controller.table.run_mock import MockRun
from controller.table.service import Accepted, Finished, NewGame, Refused
from controller.tournament.desk import DeskState, unseal
from controller.tournament.sim.mosquitto import LocalBroker, free_port
from controller.tournament.sim.netsim import CuttableLink
from controller.tournament.table.publisher import TablePublisher
from controller.tournament.wire.seal import TournamentKey, verify
from controller.tournament.wire.topics import decode, parse_broker
from tests.helpers import wait_until

RULES = "table players=2 target=15 flor=off falta=to_win mazo_envido_point=on claims=declared"


# ---------------------------------------------------------------------------- messages


def unreachable_publisher(tmp_path: Path, key: TournamentKey | None = None) -> TablePublisher:
    """A publisher whose broker is not there (a port nobody listens on)."""
    return TablePublisher(
        "mesa01",
        "127.0.0.1",
        free_port(),
        outbox_dir=tmp_path / "outbox",
        tournament="t",
        key=key,
    )


def payloads(pub: TablePublisher) -> list[dict[str, Any]]:
    out = []
    for entry in pub.outbox:
        p = decode(entry.payload)
        assert p is not None and p["seq"] == entry.seq
        out.append(p | {"topic": entry.topic, "retain": entry.retain})
    return out


def test_events_become_numbered_messages(tmp_path: Path, key: TournamentKey) -> None:
    pub = unreachable_publisher(tmp_path, key)
    record = f"{RULES}\nhand\ndeal 0: 1E 2E 3E\ndeal 1: 4C 5C 6C\n0 mazo\n"
    pub.on_event(NewGame(RULES))
    pub.on_event(Accepted("hand\ndeal 0: 1E 2E 3E\ndeal 1: 4C 5C 6C", (0, 0), 1))
    pub.on_event(Refused(1, "1 play 5C", "not_your_turn"))
    pub.on_event(Accepted("0 mazo", (0, 1), 1))
    pub.on_event(Finished(record, 1, (0, 15)))
    pub.on_event(NewGame(RULES))
    got = payloads(pub)
    assert [p["kind"] for p in got] == [
        "new-game",
        "deal",
        "refusal",
        "action",
        "score",
        "finished",
        "record",
        "new-game",
    ]
    assert [p["game"] for p in got] == ["mesa01-g001"] * 7 + ["mesa01-g002"]
    deal = got[1]
    assert deal["text"] == "hand" and deal["dealt"] == 2  # no cards on the wire
    assert got[2]["text"] == "# rechazado: 1 play 5C (not_your_turn)"
    assert got[2]["seat"] == 1 and got[2]["code"] == "not_your_turn"
    assert got[3]["text"] == "0 mazo" and got[4]["score"] == [0, 1]
    rec = got[6]
    assert rec["topic"] == "records/mesa01-g001" and rec["retain"] is True
    assert rec["sealed"] is True and rec["key_id"] == "test-key"
    verdict = verify(rec["record"], key.key)
    assert verdict.ok and verdict.game_id == "mesa01-g001"
    assert unseal(rec["record"]) == record
    assert all(p["topic"] == "events" and not p["retain"] for i, p in enumerate(got) if i != 6)
    pub.close(timeout=0.1)


def test_unsealed_without_a_key(tmp_path: Path) -> None:
    pub = unreachable_publisher(tmp_path)
    pub.on_event(Finished(f"{RULES}\n", 0, (15, 0)))
    rec = payloads(pub)[-1]
    assert rec["sealed"] is False and rec["record"] == f"{RULES}\n"
    pub.close(timeout=0.1)


def test_game_numbers_come_back_from_the_journal(tmp_path: Path) -> None:
    pub = unreachable_publisher(tmp_path)
    pub.on_event(Accepted("0 mazo", (0, 1), 1))
    pub.on_event(Finished(f"{RULES}\n", 1, (0, 15)))
    pub.on_event(Accepted("1 mazo", (1, 0), 1))  # game 2 under way
    pub.close(timeout=0.1)
    again = unreachable_publisher(tmp_path)
    assert again.game == "mesa01-g002" and again.dirty and again.score == (1, 0)
    again.on_event(NewGame(RULES))  # game 2 abandoned: a new game is game 3
    kinds = [(p["kind"], p["game"]) for p in payloads(again)[-2:]]
    assert kinds == [("abandoned", "mesa01-g002"), ("new-game", "mesa01-g003")]
    again.close(timeout=0.1)


def test_the_loop_never_waits_for_the_network(tmp_path: Path) -> None:
    pub = unreachable_publisher(tmp_path).start()
    started = time.perf_counter()
    for i in range(200):
        pub.on_event(Accepted(f"0 play {i}", (0, 0), 1))
    per_event = (time.perf_counter() - started) / 200
    assert per_event < 0.02  # a journal write and an fsync, nothing else
    assert not pub.connected.is_set() and pub.pending() == 200
    pub.close(timeout=0.1)


def test_no_listening_socket_for_paho(tmp_path: Path) -> None:
    pub = unreachable_publisher(tmp_path)
    a, b = mqtt._socketpair_compat()
    try:
        assert a.family == socket.AF_UNIX and b.family == socket.AF_UNIX
    finally:
        a.close()
        b.close()
    pub.close(timeout=0.1)


def test_parse_broker() -> None:
    assert parse_broker("10.0.0.5") == ("10.0.0.5", 1883)
    assert parse_broker("mqtt.local:1884") == ("mqtt.local", 1884)
    assert parse_broker("[::1]:1885") == ("::1", 1885)
    with pytest.raises(ValueError):
        parse_broker("host:port")


# ---------------------------------------------------------------------------- a real broker


class Listener:
    """A plain MQTT subscriber recording everything under a tournament."""

    def __init__(self, broker: LocalBroker, tournament: str = "t") -> None:
        self.messages: list[tuple[str, dict[str, Any], bool]] = []
        self.lock = threading.Lock()
        self.ready = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="listener")
        self.tournament = tournament
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        assert self.ready.wait(120)
        time.sleep(0.1)

    def _on_connect(self, client: mqtt.Client, *args: Any) -> None:
        client.subscribe(f"truco/{self.tournament}/#", qos=1)
        self.ready.set()

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        p = decode(msg.payload)
        assert p is not None
        with self.lock:
            self.messages.append((msg.topic, p, bool(msg.retain)))

    def seqs(self) -> list[int]:
        with self.lock:
            return [
                p["seq"] for t, p, _ in self.messages if t.endswith("/events") or "/records/" in t
            ]

    def statuses(self) -> list[str]:
        with self.lock:
            return [p["state"] for t, p, _ in self.messages if t.endswith("/status")]

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def test_a_cut_then_a_restart_loses_nothing(
    tmp_path: Path, broker: LocalBroker, key: TournamentKey
) -> None:
    """Events made while the network is cut, then a power cut before it comes back, then
    a restart: every message reaches the broker, in seq order per connection, and the
    desk applies each exactly once."""
    listener = Listener(broker)
    link = CuttableLink(broker.host, broker.port)

    def publisher() -> TablePublisher:
        return TablePublisher(
            "mesa01",
            "127.0.0.1",
            link.port,
            outbox_dir=tmp_path / "outbox",
            tournament="t",
            key=key,
        ).start()

    first = publisher()
    assert first.connected.wait(120)
    for i in range(10):
        first.on_event(Accepted(f"0 play {i}", (0, 0), 1))
    assert wait_until(lambda: len(listener.seqs()) == 10)
    link.cut()
    assert wait_until(lambda: "offline" in listener.statuses())  # the last will
    for i in range(10, 25):
        first.on_event(Accepted(f"0 play {i}", (0, 0), 1))  # the table plays on
    time.sleep(0.3)
    assert len(listener.seqs()) == 10
    first.abort()  # the power goes before the network comes back
    link.restore()
    second = publisher()
    assert second.game == "mesa01-g001"
    for i in range(25, 30):
        second.on_event(Accepted(f"0 play {i}", (0, 0), 1))
    assert wait_until(lambda: set(listener.seqs()) == set(range(1, 31)))
    assert second.flush(5)
    assert listener.statuses()[-1] == "online"

    desk = DeskState("t")
    with listener.lock:
        messages = list(listener.messages)
    for topic, payload, _ in messages:
        desk.handle(topic, json.dumps(payload).encode())
    table = desk.tables["mesa01"]
    assert table.next_seq == 31 and table.applied == 30 and not table.buffered
    assert list(table.last)[-1] == "0 play 29"
    second.close()
    assert wait_until(lambda: listener.statuses()[-1] == "offline")
    listener.close()
    link.close()


def five_sent(tmp_path: Path, broker: LocalBroker, key: TournamentKey) -> TablePublisher:
    """mesa02's publisher, started, its first five events sent (seqs 1..5)."""
    pub = TablePublisher(
        "mesa02", broker.host, broker.port, outbox_dir=tmp_path / "o", tournament="t", key=key
    ).start()
    assert pub.connected.wait(120)
    for i in range(5):
        pub.on_event(Accepted(f"1 play {i}", (0, 0), 1))
    assert pub.flush(5)
    return pub


def test_the_desk_asks_for_a_gap_again(
    tmp_path: Path, broker: LocalBroker, key: TournamentKey
) -> None:
    """A message the desk never got (here: dropped on purpose) is sent again on request;
    only a request with the table's mac and a new counter is served, and no more than
    MAX_RESEND messages for one request."""
    from controller.tournament.table.publisher import MAX_RESEND, RESEND_INTERVAL_S
    from controller.tournament.wire.messages import ResendRequest, resend_topic

    pub = five_sent(tmp_path, broker, key)
    listener = Listener(broker)  # late: it missed seqs 1..5
    pub.on_event(Accepted("1 play 5", (0, 0), 1))
    assert wait_until(lambda: listener.seqs() == [6])
    request = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="asker")
    request.connect(broker.host, broker.port)
    request.loop_start()
    topic = resend_topic("t", "desk", "mesa02")

    def ask(payload: bytes) -> None:
        request.publish(topic, payload, qos=1).wait_for_publish(5)
        time.sleep(RESEND_INTERVAL_S + 0.1)

    ask(b'{"from": 1, "to": 5, "n": 1}')  # no mac
    ask(ResendRequest(1, 5, 2).encode(bytes(32), topic))  # another key's mac
    assert listener.seqs() == [6]
    ask(ResendRequest(1, 5, 3).encode(key.key, topic))
    assert wait_until(lambda: sorted(listener.seqs()) == [1, 2, 3, 4, 5, 6])
    ask(ResendRequest(1, 5, 3).encode(key.key, topic))  # the same request replayed
    time.sleep(0.3)
    assert len(listener.seqs()) == 6
    for i in range(MAX_RESEND + 50):
        pub.on_event(Accepted(f"1 play {i}", (0, 0), 1))
    assert pub.flush(20)
    assert wait_until(lambda: len(listener.seqs()) == 6 + MAX_RESEND + 50)
    before = len(listener.seqs())
    ask(ResendRequest(1, 10**9, 4).encode(key.key, topic))  # asks for everything there is
    assert wait_until(lambda: len(listener.seqs()) == before + MAX_RESEND)
    time.sleep(0.5)
    assert len(listener.seqs()) == before + MAX_RESEND
    request.disconnect()
    request.loop_stop()
    listener.close()
    pub.close()


def test_a_table_sends_again_a_bounded_number_of_messages_a_minute(
    tmp_path: Path, broker: LocalBroker, key: TournamentKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However many desks ask, a table sends again at most RESENT_PER_MIN messages a
    minute (here 8): the live ones are never held behind a flood of requests."""
    from controller.tournament.table import publisher
    from controller.tournament.wire.messages import ResendRequest, resend_topic

    monkeypatch.setattr(publisher, "RESENT_PER_MIN", 8)
    pub = five_sent(tmp_path, broker, key)
    listener = Listener(broker)
    request = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="asker")
    request.connect(broker.host, broker.port)
    request.loop_start()
    for n, desk in enumerate(("desk", "desk2", "desk3"), start=1):
        topic = resend_topic("t", desk, "mesa02")
        request.publish(topic, ResendRequest(1, 5, n).encode(key.key, topic), qos=1)
        time.sleep(0.3)
    assert wait_until(lambda: len(listener.seqs()) == 8)
    time.sleep(0.5)
    assert len(listener.seqs()) == 8 and pub.refused_resends == 1
    pub.on_event(Accepted("1 play 9", (0, 0), 1))  # a live one still goes out
    assert wait_until(lambda: 6 in listener.seqs())
    request.disconnect()
    request.loop_stop()
    listener.close()
    pub.close()


def test_a_mock_table_publishes_its_whole_game(
    tmp_path: Path, broker: LocalBroker, key: TournamentKey
) -> None:
    listener = Listener(broker)
    rules = HouseRules(players=2, target=15, claims=Claims.DECLARED)
    run = MockRun(rules, seed=4, human=None, state_dir=tmp_path / "state")
    pub = TablePublisher(
        "mesa03",
        broker.host,
        broker.port,
        outbox_dir=tmp_path / "state" / "outbox",
        tournament="t",
        key=key,
    )
    pub.attach(run.mock.service)
    pub.start()
    run.play_out()
    assert pub.flush(10)
    archived = (tmp_path / "state" / "archive").glob("*.truco")
    own = next(iter(archived)).read_text(encoding="utf-8")
    assert wait_until(lambda: any("/records/" in t for t, _, _ in listener.messages))
    with listener.lock:
        record = next(p for t, p, _ in listener.messages if t.endswith("/records/mesa03-g001"))
    assert verify(record["record"], key.key).ok
    assert unseal(record["record"]) == own
    assert tuple(record["score"]) == run.game.score
    pub.close()
    run.close()
    listener.close()


# ---------------------------------------------------------------------------- restarts


def mock_run(state: Path) -> MockRun:
    return MockRun(
        HouseRules(target=15, claims=Claims.DECLARED), seed=9, human=None, state_dir=state
    )


def test_a_restart_mid_game_goes_on_with_the_same_game(tmp_path: Path) -> None:
    run = mock_run(tmp_path)
    pub = unreachable_publisher(tmp_path)
    pub.attach(run.mock.service)
    for _ in range(12):
        if run.needs_deal():
            run.deal()
        else:
            run.bot_step()
    hand = run.game.hand_number
    run.close()
    pub.close(timeout=0.1)
    run = mock_run(tmp_path)  # restored from current.truco
    again = unreachable_publisher(tmp_path)
    again.attach(run.mock.service)
    last = payloads(again)[-1]
    assert last["kind"] == "state" and last["game"] == "mesa01-g001"
    assert last["hand"] == run.game.hand_number >= min(hand, 1)
    assert "abandoned" not in [p["kind"] for p in payloads(again)]
    run.close()
    again.close(timeout=0.1)


def test_a_record_lost_to_a_power_cut_is_sent_after_the_restart(
    tmp_path: Path, key: TournamentKey
) -> None:
    run = mock_run(tmp_path)
    pub = unreachable_publisher(tmp_path, key)
    pub.attach(run.mock.service)
    listeners = run.mock.service.listeners
    listeners[listeners.index(pub.on_event)] = lambda e: (
        None if isinstance(e, Finished) else pub.on_event(e)  # the power went just then
    )
    run.play_out()
    own = next((tmp_path / "archive").glob("*.truco")).read_text(encoding="utf-8")
    run.close()
    pub.close(timeout=0.1)
    assert "record" not in [p["kind"] for p in payloads(pub)]
    run = mock_run(tmp_path)  # a new game: the won one was archived
    again = unreachable_publisher(tmp_path, key)
    again.attach(run.mock.service)
    got = payloads(again)
    record = next(p for p in got if p["kind"] == "record")
    assert record["game"] == "mesa01-g001" and unseal(record["record"]) == own
    assert got[-1]["kind"] == "state" and got[-1]["game"] == "mesa01-g002"
    run.close()
    again.close(timeout=0.1)


def test_a_real_desk_gets_a_gap_filled_by_the_table(
    tmp_path: Path, broker: LocalBroker, key: TournamentKey
) -> None:
    """The desk's own resend request (its clock-based counter, its mac) is one the table
    serves: a desk that joined late gets the events it missed."""
    from controller.tournament.desk import Desk
    from controller.tournament.wire.keys import table_key

    pub = TablePublisher(
        "mesa04", broker.host, broker.port, outbox_dir=tmp_path / "o", tournament="t",
        key=table_key(key, "t", "mesa04"),
    ).start()  # fmt: skip
    assert pub.connected.wait(120)
    for i in range(3):
        pub.on_event(Accepted(f"0 play {i}", (0, 0), 1))
    assert pub.flush(5)
    desk = Desk(DeskState("t", key=key), broker.host, broker.port, name="late").start()
    try:
        assert desk.connected.wait(120)
        time.sleep(0.3)
        pub.on_event(Accepted("0 play 3", (0, 0), 1))  # the desk sees 4 and a gap before it
        assert desk.wait(lambda s: "mesa04" in s.tables and s.tables["mesa04"].next_seq == 5, 10)
        assert list(desk.state.tables["mesa04"].last)[-4:] == [f"0 play {i}" for i in range(4)]
        assert pub.refused_resends == 0 and desk.state.rejected == 0
    finally:
        desk.stop()
        pub.close()
