"""The desk's assignments through a real Mosquitto set up as the venue's (accounts, ACLs,
TLS): only the desk may publish one, only its table may read it, and a forged one that
reaches the table (an account that may write anywhere: the ``intruder``) is refused by
the table and changes nothing, not even after a restart."""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from controller.tournament.sim.mosquitto import LocalBroker
from controller.tournament.table.link import load_tournament_settings
from controller.tournament.table.publisher import TablePublisher
from controller.tournament.venue.access import BrokerAccess
from controller.tournament.venue.broker import Venue
from controller.tournament.wire.keys import derive_table_key
from controller.tournament.wire.messages import Assignment, signed_assignment
from controller.tournament.wire.seal import load_key
from controller.tournament.wire.topics import assignment_topic, tournament_prefix
from tests.helpers import wait_until

from ..conftest import MqttProbe

QUARTER = Assignment(
    "mesa01", 1, "r3-m2", "Cuartos de final", "Los del Fondo", "La Barra", 1, 3,
    (("Ana", "Beto"), ("Carla", "Dani")),
)  # fmt: skip


class V5Client:
    """An MQTT 5 client of the venue broker: the broker answers every QoS 1 publish with
    a reason code, so a publish the ACL refuses is seen refused (not only dropped)."""

    def __init__(self, venue: Venue, user: str, password: str) -> None:
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=f"{user}-{time.time_ns()}",
            protocol=mqtt.MQTTv5,
        )  # fmt: skip
        BrokerAccess(user, password, venue.ca_file).apply(self.client)
        self.answers: dict[int, str] = {}
        self.answered = threading.Condition()
        self.client.on_publish = self._on_publish
        connected = threading.Event()
        self.client.on_connect = lambda *args: connected.set()
        self.client.connect("127.0.0.1", venue.port, 10)
        self.client.loop_start()
        assert connected.wait(10), f"{user} could not connect"

    def _on_publish(
        self, client: mqtt.Client, userdata: object, mid: int, reason: object, props: object
    ) -> None:
        with self.answered:
            # "No matching subscribers" is a success too (the message is retained)
            self.answers[mid] = str(reason) if getattr(reason, "is_failure", True) else "accepted"
            self.answered.notify_all()

    def publish(self, topic: str, payload: bytes, *, retain: bool = True) -> str:
        """The broker's answer to a retained QoS 1 publish: ``accepted``, or the failure
        (``Not authorized``)."""
        mid = self.client.publish(topic, payload, qos=1, retain=retain).mid
        with self.answered:
            assert self.answered.wait_for(lambda: mid in self.answers, 10), "no PUBACK"
            return self.answers[mid]

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def mesa_key(venue: Venue, table: str) -> bytes:
    secret = load_key(venue.desk_dir("desk1") / "secret.key", kind="key-file")
    return derive_table_key(secret.key, venue.tournament, table)


def test_only_the_desk_may_assign_and_only_its_table_reads_it(
    venue: Venue, venue_broker: LocalBroker
) -> None:
    prefix = tournament_prefix(venue.tournament)
    topic, data = signed_assignment(mesa_key(venue, "mesa01"), prefix, QUARTER)
    own = MqttProbe(venue, "mesa01", topic)
    other = MqttProbe(venue, "mesa02", topic)  # another table may not read it
    desk_probe = MqttProbe(venue, "desk2", f"{prefix}/+/assign")
    table = V5Client(venue, "mesa01", venue.password("mesa01"))
    desk = V5Client(venue, "desk1", venue.password("desk1"))
    try:
        # a table may publish no assignment: not its own, not another table's
        assert table.publish(topic, b"mesa01 assigns itself") == "Not authorized"
        assert table.publish(assignment_topic(prefix, "mesa02"), b"and mesa02") == "Not authorized"
        assert desk.publish(topic, data) == "accepted"
        assert wait_until(lambda: len(own.messages) == 1 and len(desk_probe.messages) == 1)
        time.sleep(0.3)
        assert own.messages == [(topic, data)] and desk_probe.messages == [(topic, data)]
        assert other.messages == []
    finally:
        for client in (own, other, desk_probe, table, desk):
            client.close()


def test_a_forged_assignment_reaching_the_table_changes_nothing(
    venue: Venue, armed_broker: LocalBroker, tmp_path: Path
) -> None:
    prefix = tournament_prefix(venue.tournament)
    settings = load_tournament_settings(venue.table_dir("mesa01") / "tournament.toml")
    assert settings is not None and settings.key is not None

    def table() -> TablePublisher:
        return TablePublisher(
            "mesa01", "127.0.0.1", venue.port, outbox_dir=tmp_path / "outbox",
            tournament=venue.tournament, key=settings.key, access=settings.access,
        ).start()  # fmt: skip

    desk = V5Client(venue, "desk1", venue.password("desk1"))
    intruder = V5Client(venue, "intruder", "intruder-password")
    pub = table()
    try:
        assert pub.connected.wait(120)
        key = mesa_key(venue, "mesa01")
        topic, first = signed_assignment(key, prefix, QUARTER)
        assert desk.publish(topic, first) == "accepted"
        # taken (``connected`` is set as the table subscribes, before the broker has the
        # subscription: a second assignment published at once could replace the first
        # before the table hears it, which is right, but then only one is journaled)
        assert wait_until(lambda: pub.matches.assignment == QUARTER and len(pub.outbox) == 1)
        second = dataclasses.replace(QUARTER, n=2, chico=2)
        assert desk.publish(topic, signed_assignment(key, prefix, second)[1]) == "accepted"
        # both taken, each journaled as an "assigned" event for the desk
        assert wait_until(lambda: pub.matches.assignment == second and len(pub.outbox) == 2)
        events = len(pub.outbox)

        forged = dataclasses.replace(QUARTER, n=3, match="r3-m9", home="Los Colados")
        forgeries = [
            # a mac made up
            signed_assignment(key, prefix, forged)[1].replace(b'"mac":"', b'"mac":"00'),
            # signed with another table's key (what that table could compute)
            signed_assignment(mesa_key(venue, "mesa02"), prefix, forged)[1],
            # the desk's own first assignment, replayed (n=1, genuine mac)
            first,
        ]
        for payload in forgeries:
            assert intruder.publish(topic, payload) == "accepted"  # the broker lets it by
        assert wait_until(lambda: pub.refused_assignments == 3)
        time.sleep(0.3)
        assert pub.matches.assignment == second and len(pub.outbox) == events
        # the replayed one is now what the broker retains: a restarted table still refuses it
        pub.close()
        pub = table()
        assert pub.connected.wait(120)
        assert wait_until(lambda: pub.refused_assignments == 1)
        card = pub.matches.card()
        assert pub.matches.assignment == second and card is not None and card.chico == 2
    finally:
        pub.close()
        desk.close()
        intruder.close()
