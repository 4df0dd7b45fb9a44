"""The desk on the broker: a ``DeskState`` fed by a persistent MQTT session.

paho-mqtt, a persistent session at QoS 1 (nothing published while the desk is away is
lost); the desk asks tables for the messages of a gap on its own command topic
(``truco/<t>/desks/<name>/resend/<table>``, authenticated with the table's key). Any
number of desks and screens follow one tournament side by side: each has its own
``name`` (its broker account on the venue broker), so its own client id and session.
The desk tells its state when it connects and when it loses the broker, and checks
the records on disk again every ``reverify_s`` seconds.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from ..venue.access import BrokerAccess
from ..wire.messages import ResendRequest, resend_topic
from ..wire.topics import check_name, no_loopback_listener, tournament_prefix
from .state import REVERIFY_S, DeskState

__all__ = ["Desk", "all_finished"]

log = logging.getLogger(__name__)


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
        access: BrokerAccess | None = None,
        name: str | None = None,
        reverify_s: float = REVERIFY_S,
    ) -> None:
        self.state = state
        self.name = check_name("desk", name or (access.username if access else "desk"))
        self.reverify_s = reverify_s
        self._counter = 0
        self.connections = 0  # successful connections (another desk with this id: many)
        self.broker = (broker_host, broker_port)
        self.keepalive = keepalive
        self.connected = threading.Event()
        self._stop = threading.Event()
        no_loopback_listener()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id or f"truco-desk-{state.tournament}-{self.name}",
            protocol=mqtt.MQTTv311,
            clean_session=False,  # the broker keeps what arrives while the desk is away
        )
        if access is not None:
            access.apply(self.client)
        self.client.reconnect_delay_set(1, 2)
        self.client.max_inflight_messages_set(100)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        #: Called (in the network thread) after each successful connection.
        self.on_connected: list[Callable[[], None]] = []
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
            self.state.broker_down()
            return
        base = tournament_prefix(self.state.tournament)
        client.subscribe(
            [(f"{base}/+/status", 1), (f"{base}/+/events", 1), (f"{base}/+/records/+", 1)]
        )
        self.connections += 1
        self.connected.set()
        self.state.broker_up()
        log.info("desk: connected to %s:%d as %s", *self.broker, self.name)
        for callback in self.on_connected:
            try:
                callback()
            except Exception:  # one failing listener never stops the desk
                log.exception("desk: a connection listener failed")

    def _on_disconnect(
        self, client: mqtt.Client, userdata: object, flags: Any, reason: Any, properties: Any
    ) -> None:
        self.connected.clear()
        self.state.broker_down()

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        try:
            self.state.handle(msg.topic, msg.payload)
        except Exception:  # one bad message never stops the desk
            log.exception("desk: failed on a message on %s", msg.topic)

    def _next_n(self) -> int:
        # above every earlier request of this desk, also across restarts (the clock)
        self._counter = max(self._counter + 1, time.time_ns() // 1000)
        return self._counter

    def _housekeeping(self) -> None:
        last_check = time.monotonic()
        while not self._stop.wait(0.25):
            try:
                self.state.flush_exports()
            except Exception:  # a disk error never stops the desk
                log.exception("desk: rewriting the exports failed")
            if time.monotonic() - last_check >= self.reverify_s:
                last_check = time.monotonic()
                try:
                    self.state.reverify()
                except Exception:  # a disk error never stops the desk
                    log.exception("desk: checking the records on disk failed")
            self.state.settle()  # a re-keyed table's stream, its wait over
            if not self.connected.is_set():
                continue
            for table, first, last in self.state.gaps():
                topic = resend_topic(self.state.tournament, self.name, table)
                request = ResendRequest(first, last, self._next_n())
                payload = request.encode(self.state.key_for(table), topic)
                self.client.publish(topic, payload, qos=1)

    def publish_retained(self, topic: str, payload: bytes) -> None:
        """Publish ``payload`` retained (QoS 1): a table that connects later gets it."""
        self.client.publish(topic, payload, qos=1, retain=True)

    def stop(self) -> None:
        self._stop.set()
        self.client.disconnect()
        self.client.loop_stop()
        self.state.close()

    def power_cut(self) -> None:
        """Stop as the laptop's power going would: no goodbye to the broker, nothing
        written beyond what is already on the disk (the tests and the demo)."""
        self._stop.set()
        self.client.loop_stop()
        sock = self.client.socket()
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()

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
