"""The desk on the broker: a ``DeskState`` fed by a persistent MQTT session.

paho-mqtt, a persistent session at QoS 1 (nothing published while the desk is away is
lost); the desk asks tables for the messages of a gap (``.../resend``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from ..messages import ResendRequest
from ..topics import no_loopback_listener, table_prefix, tournament_prefix
from .state import DeskState

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
    ) -> None:
        self.state = state
        self.broker = (broker_host, broker_port)
        self.keepalive = keepalive
        self.connected = threading.Event()
        self._stop = threading.Event()
        no_loopback_listener()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id or f"truco-desk-{state.tournament}",
            protocol=mqtt.MQTTv311,
            clean_session=False,  # the broker keeps what arrives while the desk is away
        )
        self.client.reconnect_delay_set(1, 2)
        self.client.max_inflight_messages_set(100)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
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
            return
        base = tournament_prefix(self.state.tournament)
        client.subscribe(
            [(f"{base}/+/status", 1), (f"{base}/+/events", 1), (f"{base}/+/records/+", 1)]
        )
        self.connected.set()
        log.info("desk: connected to %s:%d", *self.broker)

    def _on_disconnect(
        self, client: mqtt.Client, userdata: object, flags: Any, reason: Any, properties: Any
    ) -> None:
        self.connected.clear()

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        try:
            self.state.handle(msg.topic, msg.payload)
        except Exception:  # one bad message never stops the desk
            log.exception("desk: failed on a message on %s", msg.topic)

    def _housekeeping(self) -> None:
        while not self._stop.wait(0.25):
            if not self.connected.is_set():
                continue
            for table, first, last in self.state.gaps():
                topic = f"{table_prefix(self.state.tournament, table)}/resend"
                self.client.publish(topic, ResendRequest(first, last).encode(), qos=1)

    def stop(self) -> None:
        self._stop.set()
        self.client.disconnect()
        self.client.loop_stop()
        self.state.close()

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
