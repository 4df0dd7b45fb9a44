"""A table in a tournament: the ``[tournament]`` section of its configuration file.

```toml
[tournament]
name = "clausura-2025"          # letters, digits, . _ - (a topic level)
table_id = "mesa07"             # this table's name at the desk
broker = "192.168.1.10:1883"    # the tournament's Mosquitto
profile = "tournament"          # tournament (default) | house
key_file = "tournament.key"     # the sealing key in hex (or key = "<hex>"); relative to
key_id = "clausura-2025:mesa07" # this file; see controller.tournament.wire.seal.load_key
keepalive_s = 5                 # the broker shows the table offline ~1.5x this after a cut
username = "mesa07"             # the table's account on the venue broker
password_file = "broker.pass"   # its password (owner-only)
ca_file = "ca.crt"              # the venue's CA: TLS, the broker's certificate checked
match = "r1-m4"                 # optional: the match sealed into the records until the
                                # desk assigns one (its retained <prefix>/<table>/assign)
```

``truco-table venue-broker`` writes this section for every table, with the table's own
key (derived from the tournament's secret) in ``table.key``. The table refuses to start
with a key file, a configuration holding a key, or a password file that its group or
others can read (``chmod 600``).

``controller/cli/service.py`` (above both the table and the tournament) hands the
table's daemon a link that reads it with :func:`load_tournament_settings`, builds the
service with :func:`~controller.tournament.table.profile.tournament_service_config` when
``profile`` is ``tournament``, and calls :func:`connect_table` before ``service.run``;
``close()`` on the returned publisher at shutdown. The publisher subscribes to the table's
``assign`` topic, keeps the desk's assignment in the outbox folder and shows its match
on the seats before each game (``TableService.set_match``).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...table.service import TableService
from ..venue.access import BrokerAccess, access_from_section
from ..wire.keys import load_private_key
from ..wire.seal import TournamentKey
from ..wire.topics import check_name, parse_broker
from .profile import PROFILE, PROFILES
from .publisher import TablePublisher

__all__ = ["TournamentSettings", "connect_table", "load_tournament_settings"]

_KNOWN = {
    "name",
    "table_id",
    "broker",
    "profile",
    "key",
    "key_file",
    "key_id",
    "keepalive_s",
    "username",
    "password_file",
    "ca_file",
    "match",
}


@dataclass(frozen=True, slots=True)
class TournamentSettings:
    name: str
    table_id: str
    broker_host: str
    broker_port: int = 1883
    key: TournamentKey | None = None
    profile: str = PROFILE
    keepalive_s: int = 5
    access: BrokerAccess | None = None
    match: str | None = None


def load_tournament_settings(path: str | Path) -> TournamentSettings | None:
    """The ``[tournament]`` section of a table's configuration; ``None`` when it has none.

    Raises ``ValueError`` naming the key for a bad value (``KeyConfigError`` for the key).
    """
    path = Path(path)
    data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    section = data.get("tournament")
    if section is None:
        return None
    where = f"{path}: tournament"
    if not isinstance(section, dict):
        raise ValueError(f"{where}: tiene que ser una sección ([tournament])")
    for k in section:
        if k not in _KNOWN:
            raise ValueError(
                f"{where}.{k}: no conozco esa clave (las que hay: {', '.join(sorted(_KNOWN))})"
            )

    def text(k: str, default: str | None = None) -> str:
        value = section.get(k, default)
        if not isinstance(value, str) or not value:
            raise ValueError(f"{where}.{k}: tiene que ser un texto entre comillas")
        return value

    try:
        name = check_name("name", text("name"))
        table_id = check_name("table_id", text("table_id"))
        host, port = parse_broker(text("broker"))
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    profile = text("profile", PROFILE)
    if profile not in PROFILES:
        raise ValueError(f"{where}.profile: tiene que ser uno de {', '.join(PROFILES)}")
    keepalive = section.get("keepalive_s", 5)
    if not isinstance(keepalive, int) or isinstance(keepalive, bool) or not 1 <= keepalive <= 600:
        raise ValueError(
            f"{where}.keepalive_s: tiene que ser un número entero de segundos, de 1 a 600"
        )
    key = None
    if "key" in section or "key_file" in section:
        # KeyConfigError names the file, never the key; a key others can read is refused
        key = load_private_key(path, kind="config")
    access = access_from_section(section, path.parent, where)
    match = section.get("match")
    if match is not None:
        try:
            check_name("match", match)
        except ValueError as e:
            raise ValueError(f"{where}.match: {e}") from None
    return TournamentSettings(name, table_id, host, port, key, profile, keepalive, access, match)


def connect_table(
    service: TableService, settings: TournamentSettings, state_dir: str | Path
) -> TablePublisher:
    """Attach a publisher to ``service`` and start it; its outbox is
    ``<state_dir>/outbox/<tournament>`` (one per tournament: seq numbers and game ids
    start again at 1 in the next one)."""
    publisher = TablePublisher(
        settings.table_id,
        settings.broker_host,
        settings.broker_port,
        outbox_dir=Path(state_dir) / "outbox" / settings.name,
        tournament=settings.name,
        key=settings.key,
        access=settings.access,
        match=settings.match,
        keepalive=settings.keepalive_s,
    )
    publisher.attach(service)
    return publisher.start()
