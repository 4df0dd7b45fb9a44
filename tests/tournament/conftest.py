"""A real Mosquitto for the tournament tests: a child process on 127.0.0.1, any free port.

``.ci/run`` installs the broker (Debian package ``mosquitto``); the tests that need it
are skipped, saying why, only when the binary cannot be found.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from controller.tournament.sim.mosquitto import LocalBroker, find_mosquitto, free_port
from controller.tournament.table.link import load_tournament_settings
from controller.tournament.table.publisher import TablePublisher
from controller.tournament.venue.broker import Venue, password_line, setup_venue
from controller.tournament.wire.seal import TournamentKey

KEY = TournamentKey(bytes(range(32)), "test-key")


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[LocalBroker]:
    if find_mosquitto() is None:
        pytest.skip("mosquitto not installed (apt-get install mosquitto; .ci/run does)")
    with LocalBroker(workdir=tmp_path / "broker") as b:
        yield b


@pytest.fixture
def key() -> TournamentKey:
    return KEY


# ---------------------------------------------------------------------------- the venue


@pytest.fixture
def venue() -> Iterator[Venue]:
    """The venue as ``truco-table venue-broker`` writes it: tables mesa01..mesa06, desks
    desk1 (the organiser's) and desk2, the screen pantalla, TLS on 127.0.0.1, the
    broker's persistence on (in ``broker/data``). Its folder's parents must let
    Mosquitto's own user through (run as root, Mosquitto drops to it), so not pytest's
    0700 tmp_path."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed (apt-get install openssl; .ci/run does)")
    parent = Path(tempfile.mkdtemp(prefix="truco-venue-"))
    parent.chmod(0o711)
    yield setup_venue(
        parent / "venue",
        "copa",
        [f"mesa{n:02d}" for n in range(1, 7)],
        ["desk1", "desk2"],
        screens=["pantalla"],
        hosts=("127.0.0.1", "localhost"),
        port=free_port(),
        local_port=free_port(),
    )
    shutil.rmtree(parent, ignore_errors=True)


@pytest.fixture
def venue_broker(venue: Venue) -> Iterator[LocalBroker]:
    """A real Mosquitto started with the venue's own configuration."""
    if find_mosquitto() is None:
        pytest.skip("mosquitto not installed (apt-get install mosquitto; .ci/run does)")
    with LocalBroker(venue.port, workdir=venue.root / "run", config=venue.broker_conf) as b:
        yield b


@pytest.fixture
def armed_broker(venue: Venue) -> Iterator[LocalBroker]:
    """The venue broker with one more account, ``intruder`` (password
    ``intruder-password``), that may write and read anything under the tournament: the
    forger's (desk/test_forgeries, venue/test_assignment)."""
    if find_mosquitto() is None:
        pytest.skip("mosquitto not installed (apt-get install mosquitto; .ci/run does)")
    broker_dir = venue.root / "broker"
    with open(broker_dir / "passwd", "a", encoding="ascii") as f:
        f.write(password_line("intruder", "intruder-password") + "\n")
    with open(broker_dir / "acl", "a", encoding="utf-8") as f:
        f.write(f"user intruder\ntopic readwrite truco/{venue.tournament}/#\n")
    with LocalBroker(venue.port, workdir=venue.root / "run", config=venue.broker_conf) as b:
        yield b


class MqttProbe:
    """A client of the venue broker under one account, collecting what it may read."""

    def __init__(self, venue: Venue, account: str, topic: str) -> None:
        self.messages: list[tuple[str, bytes]] = []
        self.lock = threading.Lock()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=f"probe-{account}-{time.time_ns()}"
        )
        self.client.username_pw_set(account, venue.password(account))
        self.client.tls_set(ca_certs=str(venue.ca_file))
        subscribed = threading.Event()
        self.client.on_message = self._on_message
        self.client.on_subscribe = lambda *args: subscribed.set()
        self.client.on_connect = lambda c, *args: c.subscribe(topic, qos=1)
        self.client.connect("127.0.0.1", venue.port, 10)
        self.client.loop_start()
        assert subscribed.wait(10), f"{account} could not subscribe"

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        with self.lock:
            self.messages.append((msg.topic, bytes(msg.payload)))

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def venue_table(venue: Venue, name: str, outbox_dir: Path) -> TablePublisher:
    """Table ``name`` started as the venue set it up (its tournament.toml: key, account),
    publishing to the venue broker with a 1 s keepalive."""
    settings = load_tournament_settings(venue.table_dir(name) / "tournament.toml")
    assert settings is not None
    return TablePublisher(name, "127.0.0.1", venue.port, outbox_dir=outbox_dir,
                          tournament=venue.tournament, key=settings.key,
                          access=settings.access, keepalive=1).start()  # fmt: skip
