"""The league desk's link to the central broker: every venue's records, checked, counted
once and journaled.

A persistent MQTT session (clean session off, client id ``league-desk``) subscribed at
QoS 1 to ``league/+/tables/+/records/+``: each message is read for its venue
(:func:`.inbox.read_central`), a record's check goes into the journal
(:class:`.ledger.LeagueLedger`, on disk before it counts) and the count is the fold of
the journal. Messages rejected before any check (a bad mac, a venue not in the league)
are kept in :attr:`LeagueDesk.rejected`. A restarted desk reads its journal, and the
records the broker sends again (the retained copies, the session's queue) are repeats.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from ..topics import no_loopback_listener
from .collect import Collected
from .inbox import CentralMessage, RejectedCentral, read_central
from .ledger import LeagueLedger
from .model import League

__all__ = ["RECORDS_TOPIC", "LeagueDesk"]

log = logging.getLogger(__name__)

RECORDS_TOPIC = "league/+/tables/+/records/+"


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
    ) -> None:
        self.league = league
        self.secret = league_secret
        self.ledger = LeagueLedger(folder, league, league_secret)
        self.clock = clock
        self.lock = threading.Lock()
        self.rejected: list[RejectedCentral] = []
        self.collected = Collected({}, (), (), 0)
        self.subscribed = threading.Event()
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
        self.address = (host, port)

    def start(self) -> Collected:
        """Read the journal, then connect (the count so far is returned)."""
        with self.lock:
            self.collected = self.ledger.open()
        self.client.connect(self.address[0], self.address[1], 30)
        self.client.loop_start()
        return self.collected

    def _on_connect(self, client: mqtt.Client, *args: object) -> None:
        client.subscribe(RECORDS_TOPIC, qos=1)

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        got = read_central(self.league, self.secret, msg.topic, bytes(msg.payload))
        with self.lock:
            if isinstance(got, RejectedCentral):
                log.warning("league desk: %s", got.reason)
                self.rejected.append(got)
            elif isinstance(got, CentralMessage) and got.check is not None:
                self.collected = self.ledger.append(got.check, self.clock())

    def snapshot(self) -> Collected:
        with self.lock:
            return self.collected

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
        with self.lock:
            self.ledger.close()
