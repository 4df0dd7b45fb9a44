"""The door in front of the venue broker's tables' listener (issue 43), against the real
Mosquitto ``venue-broker --inner-port`` configures: a socket that says nothing, a TLS
handshake left half-way and bytes that are not TLS are closed within the door's
``connect_s``; a table logs in through it (TLS 1.2 and 1.3) and stays connected."""

from __future__ import annotations

import contextlib
import shutil
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from controller.tournament.sim.mosquitto import LocalBroker, find_mosquitto, free_port
from controller.tournament.venue.broker import Venue, setup_venue
from controller.tournament.venue.front import RecordWatch, load_front

from .door import Door

CONNECT_S = 1.0  # the door's wait in these tests (the venue's is 5 s)


@pytest.fixture
def door() -> Iterator[tuple[Venue, Door]]:
    if find_mosquitto() is None or shutil.which("openssl") is None:
        pytest.skip("mosquitto or openssl not installed (.ci/run installs both)")
    parent = Path(tempfile.mkdtemp(prefix="truco-door-"))
    parent.chmod(0o711)  # Mosquitto drops to its own user: let it through
    inner = free_port()
    venue = setup_venue(parent / "venue", "copa", ["mesa01"], ["desk1"], port=free_port(),
                        local_port=free_port(), inner_port=inner)  # fmt: skip
    broker = LocalBroker(inner, workdir=parent / "run", config=venue.broker_conf)
    broker.start()
    front = Door(venue.front_conf, CONNECT_S)
    try:
        yield venue, front
    finally:
        front.close()
        broker.close()
        shutil.rmtree(parent, ignore_errors=True)


def _closed_within(sock: socket.socket | ssl.SSLSocket, bound: float) -> float:
    """Seconds until the door closes ``sock`` (it sends nothing more)."""
    sock.settimeout(bound)
    start = time.monotonic()
    with contextlib.suppress(ConnectionResetError, ssl.SSLError):
        assert sock.recv(1) == b""
    return time.monotonic() - start


def _mesa01_logs_in(
    venue: Venue, port: int, context: ssl.SSLContext | None = None
) -> tuple[mqtt.Client, threading.Event]:
    """mesa01 (its account, over TLS: the venue's CA, or ``context``) connecting to
    ``port``; the event is set once it is in."""
    up = threading.Event()
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="mesa01")
    client.username_pw_set("mesa01", (venue.table_dir("mesa01") / "broker.pass")
                           .read_text(encoding="utf-8").strip())  # fmt: skip
    if context is None:
        client.tls_set(ca_certs=str(venue.ca_file))
    else:
        client.tls_set_context(context)
    client.on_connect = lambda *args: up.set()
    client.connect("127.0.0.1", port, 5)
    client.loop_start()
    return client, up


def test_the_broker_listens_behind_the_door(door: tuple[Venue, Door]) -> None:
    venue, _ = door
    conf = venue.broker_conf.read_text(encoding="utf-8")
    assert f"listener {venue.inner_port} 127.0.0.1" in conf
    assert f"listener {venue.port} " not in conf
    config = load_front(venue.front_conf)
    assert config.listen == ("127.0.0.1", venue.port) and config.connect_s == 5.0
    assert config.broker == ("127.0.0.1", venue.inner_port)


def test_what_says_nothing_is_closed_and_a_table_logs_in(door: tuple[Venue, Door]) -> None:
    venue, front = door
    idle = socket.create_connection(("127.0.0.1", venue.port))
    context = ssl.create_default_context(cafile=str(venue.ca_file))
    half = context.wrap_socket(socket.create_connection(("127.0.0.1", venue.port)),
                               server_hostname="127.0.0.1")  # fmt: skip
    plain = socket.create_connection(("127.0.0.1", venue.port))
    plain.sendall(b"\x10\x0c\x00\x04MQTT\x04\x02\x00\x3c\x00\x00")  # a CONNECT, no TLS
    tables = []
    try:
        for top in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
            table_context = ssl.create_default_context(cafile=str(venue.ca_file))
            table_context.maximum_version = top
            client, up = _mesa01_logs_in(venue, venue.port, table_context)
            tables.append(client)
            assert up.wait(60), f"a table ({top.name}) could not log in through the door"
            tls = client.socket()
            assert isinstance(tls, ssl.SSLSocket)
            assert tls.version() == top.name.replace("v1_", "v1.")
            client.disconnect()
            client.loop_stop()
        assert _closed_within(plain, 60) < 30  # not TLS: at once
        assert _closed_within(idle, 60) < 30
        assert _closed_within(half, 60) < 30
        # a table that logged in stays past the door's wait
        client, up = _mesa01_logs_in(venue, venue.port)
        tables.append(client)
        assert up.wait(60)
        got = threading.Event()
        client.on_publish = lambda *args: got.set()
        deadline = time.monotonic() + CONNECT_S * 3  # well past the door's wait
        while time.monotonic() < deadline:
            got.clear()
            client.publish("truco/copa/tables/mesa01/status", b"{}", qos=1)
            assert got.wait(60), "the door cut a table that had logged in"
            time.sleep(0.2)
        assert front.front.dropped >= 3 and front.front.relayed >= 3
    finally:
        for c in tables:
            c.disconnect()
            c.loop_stop()
        for s in (idle, half, plain):
            s.close()


def test_record_headers_split_across_reads() -> None:
    """The door reads a TLS stream's record headers wherever the reads cut them."""
    stream = (bytes([22, 3, 1, 0, 3]) + b"abc" + bytes([20, 3, 3, 0, 1]) + b"\x01"
              + bytes([23, 3, 3, 0, 2]) + b"zz" + bytes([23, 3, 3, 0, 0]))  # fmt: skip
    for cut in range(1, len(stream)):
        watch = RecordWatch()
        for i in range(0, len(stream), cut):
            watch.feed(stream[i : i + cut])
        assert (watch.app, watch.bad) == (2, False), cut
    watch = RecordWatch()
    watch.feed(b"GET / HTTP/1.1\r\n")
    assert watch.bad


def test_a_tables_last_words_before_it_closes_reach_the_broker(door: tuple[Venue, Door]) -> None:
    """A table that publishes and closes at once (its goodbye, then the socket): the door
    delivers what it wrote before closing its side to Mosquitto."""
    venue, _ = door
    got: list[bytes] = []
    heard = threading.Event()
    desk = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="desk1")
    desk.username_pw_set("desk1", (venue.desk_dir("desk1") / "broker.pass")
                         .read_text(encoding="utf-8").strip())  # fmt: skip
    desk.tls_set(ca_certs=str(venue.ca_file))
    subscribed = threading.Event()
    desk.on_connect = lambda c, *args: c.subscribe("truco/copa/tables/+/events", 1)
    desk.on_subscribe = lambda *args: subscribed.set()

    def on_message(client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        got.append(bytes(msg.payload))
        heard.set()

    desk.on_message = on_message
    desk.connect("127.0.0.1", venue.local_port or 0, 5)  # the desks' own listener
    desk.loop_start()
    try:
        assert subscribed.wait(60)
        table, up = _mesa01_logs_in(venue, venue.port)
        assert up.wait(60)
        table.publish("truco/copa/tables/mesa01/events", b"adios", qos=0)
        table.disconnect()  # right after: the publish and the DISCONNECT, then the close
        table.loop_stop()
        assert heard.wait(60), "the table's last message was lost at the door"
        assert got == [b"adios"]
    finally:
        desk.disconnect()
        desk.loop_stop()


def test_a_full_door_lets_a_table_in_and_closes_its_oldest_waiting_socket(
    door: tuple[Venue, Door],
) -> None:
    """Three idle sockets fill a door that lets three wait (the venue's lets 8,192): a
    table that connects now gets in, and the oldest idle socket is the one closed."""
    venue, _ = door
    with Door(venue.front_conf, 120.0, max_waiting=3, listen=("127.0.0.1", 0)) as small:
        sockets = [socket.create_connection(("127.0.0.1", small.front.port())) for _ in range(3)]
        try:
            deadline = time.monotonic() + 60
            while small.front.waiting < 3:
                assert time.monotonic() < deadline
                time.sleep(0.01)
            client, up = _mesa01_logs_in(venue, small.front.port())
            try:
                assert up.wait(60), "a full door turned the table away"
            finally:
                client.disconnect()
                client.loop_stop()
            assert _closed_within(sockets[0], 60) < 30  # the oldest went
            assert small.front.evicted >= 1
        finally:
            for s in sockets:
                s.close()
