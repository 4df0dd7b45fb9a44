"""The simulated tournament table in its desk-driven mode (``SimTable(assigned=True)``):
it plays only what the desk assigns, one game per assignment, through the venue's real
Mosquitto (accounts, ACLs, TLS); the assignments are published here with the desk's
account and the keys it derives, as the desk does."""

from __future__ import annotations

import time
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from controller.engine import HouseRules
from controller.tournament.sim.demo import SimTable
from controller.tournament.sim.mosquitto import LocalBroker
from controller.tournament.venue.access import BrokerAccess
from controller.tournament.venue.broker import Venue
from controller.tournament.wire.keys import derive_table_key
from controller.tournament.wire.messages import Assignment, signed_assignment
from controller.tournament.wire.seal import load_key, verify
from controller.tournament.wire.topics import decode, tournament_prefix
from tests.helpers import wait_until


def test_a_sim_table_plays_one_game_per_assignment(
    venue: Venue, venue_broker: LocalBroker, tmp_path: Path
) -> None:
    secret = load_key(venue.desk_dir("desk1") / "secret.key", kind="key-file")
    mesa_key = derive_table_key(secret.key, venue.tournament, "mesa01")
    prefix = tournament_prefix(venue.tournament)
    desk = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"desk1-{time.time_ns()}")
    BrokerAccess("desk1", venue.password("desk1"), venue.ca_file).apply(desk)
    desk.connect("127.0.0.1", venue.port, 10)
    desk.loop_start()

    def assign(a: Assignment) -> None:
        topic, data = signed_assignment(mesa_key, prefix, a)
        desk.publish(topic, data, qos=1, retain=True).wait_for_publish(5)

    table = SimTable(
        "mesa01",
        state_dir=tmp_path / "mesa01",
        rules=HouseRules(players=2, target=15),
        broker=("127.0.0.1", venue.port),
        tournament=venue.tournament,
        key=secret,
        seed=5,
        pace=0.005,
        access=BrokerAccess("mesa01", venue.password("mesa01"), venue.ca_file),
        assigned=True,
    ).start()

    def records() -> list[tuple[str | None, int | None]]:
        pub = table.publisher
        assert pub is not None
        out = []
        for entry in pub.outbox:
            p = decode(entry.payload)
            if p is not None and p.get("kind") == "record":
                assert verify(p["record"], mesa_key).match == p.get("match", "-")
                out.append((p.get("match"), p.get("chico")))
        return out

    def played(n: int) -> bool:
        return len(table.archived()) == n and table.idle.is_set()

    final = Assignment("mesa01", 1, "r1-m1", "Final", "Los del Fondo", "La Barra", 1, 3)
    try:
        assert table.idle.wait(120) and table.archived() == []  # nothing assigned: no game
        assign(final)
        assert wait_until(lambda: played(1))
        time.sleep(0.3)
        assert len(table.archived()) == 1  # one game for chico 1, then it waits

        # chico 2; the power goes in the middle of it: the same game goes on, once
        assign(Assignment("mesa01", 2, "r1-m1", "Final", "Los del Fondo", "La Barra", 2, 3))
        assert wait_until(lambda: not table.idle.is_set())
        time.sleep(0.2)
        table.power_cut()
        assert len(table.archived()) == 1  # chico 2 was under way
        table.start()
        assert wait_until(lambda: played(2))

        assign(Assignment("mesa01", 3, None))  # the table is free
        time.sleep(0.5)
        assert played(2)
        assign(Assignment("mesa01", 4, "r2-m3", "Ronda 2", "Truqueros", "El Rejunte", 1, 1))
        assert wait_until(lambda: played(3))
        assign(final)  # the desk's first assignment again (an old counter): nothing
        assert wait_until(lambda: table.publisher is not None
                          and table.publisher.refused_assignments == 1)  # fmt: skip
        time.sleep(0.3)
        assert played(3)
        assert records() == [("r1-m1", 1), ("r1-m1", 2), ("r2-m3", 1)]
        assert table.error is None
    finally:
        table.stop(timeout=2)
        desk.disconnect()
        desk.loop_stop()
