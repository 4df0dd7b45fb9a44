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
from paho.mqtt.reasoncodes import ReasonCode

from ..wire.topics import no_loopback_listener
from .collect import Collected
from .inbox import CentralMessage, RejectedCentral, read_central
from .ledger import LeagueLedger
from .model import League

__all__ = ["RECORDS_TOPIC", "LeagueDesk", "desk_from_folder"]

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
        self.answered = threading.Event()  # the broker answered a connection (refused or not)
        self.refused: str | None = None  # the broker's reason when it refused the last one
        self.online: bool | None = None  # connected to the central broker (None: not yet)
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
        """Read the journal (the count so far), without connecting."""
        with self.lock:
            self.collected = self.ledger.open()
            return self.collected

    def start(self) -> Collected:
        """Read the journal, then connect (the count so far is returned)."""
        self.open()
        self.client.connect(self.address[0], self.address[1], 30)
        self.client.loop_start()
        return self.collected

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
            client.subscribe(RECORDS_TOPIC, qos=1)
        self.answered.set()

    def _on_disconnect(self, client: mqtt.Client, *args: object) -> None:
        self.online = False

    def connected(self) -> bool | None:
        """Whether the central broker is connected now (``None``: not yet once)."""
        return self.online

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

    def rejections(self) -> tuple[RejectedCentral, ...]:
        """The messages rejected before any check (a bad mac, a venue not in the league)."""
        with self.lock:
            return tuple(self.rejected)

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
        with self.lock:
            self.ledger.close()


def desk_from_folder(
    root: str | os.PathLike[str], central: str | None = None, *, client_id: str = "league-desk"
) -> LeagueDesk:
    """The league desk of the league folder ``root`` (as ``league add-venue`` writes it):
    the league from ``league.toml``, its secret, the desk's account (``desk/broker.pass``)
    and the central CA (``desk/ca.crt``); its journal in ``root/desk/``. ``central``
    (``HOST:PORT``) overrides the address in ``league.toml``. Anything missing or wrong is
    a :class:`~.bridge.LeagueSetupError` or :class:`~.errors.LeagueError` (Spanish)."""
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
    return LeagueDesk(
        league, secret, desk, host=host, port=port, ca_file=desk / "ca.crt",
        username=DESK_ACCOUNT, password=password, client_id=client_id,
    )  # fmt: skip
