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

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...table.config import ConfigError, key_line
from ...table.service import TableService
from ..venue.access import BrokerAccess, access_from_section
from ..wire.keys import InsecureKeyFileError, load_private_key
from ..wire.seal import KeyConfigError, TournamentKey
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

    Raises ``ConfigError`` (a ``ValueError``) naming the file, the line of the key and
    what it should be, in Spanish (issue 49); the key's own checks (its file's
    permissions) as ``load_private_key`` words them, after the line that names it.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    data: dict[str, Any] = tomllib.loads(text)
    section = data.get("tournament")
    if section is None:
        return None

    def fail(k: str | None, expected: str) -> ConfigError:
        key = "tournament" if k is None else f"tournament.{k}"
        line = key_line(text, key) or key_line(text, "tournament")
        return ConfigError(str(path), key, expected, line)

    if not isinstance(section, dict):
        raise fail(None, f"tendría que ser una tabla ([tournament]), y es {_show(section)}")
    for k in section:
        if k not in _KNOWN:
            raise fail(k, f"clave desconocida (las que hay: {', '.join(sorted(_KNOWN))})")

    def text_of(k: str, default: str | None = None, what: str = "un texto no vacío") -> str:
        value = section.get(k, default)
        if value is None:
            raise fail(k, f"falta: tendría que ser {what}")
        if not isinstance(value, str) or not value:
            raise fail(k, f"tendría que ser {what}, y es {_show(value)}")
        return value

    def name_of(k: str) -> str:
        value = text_of(k, what=_NAME)
        try:
            return check_name(k, value)
        except ValueError:
            raise fail(k, f"tendría que ser {_NAME}, y es {_show(value)}") from None

    name = name_of("name")
    table_id = name_of("table_id")
    broker = text_of("broker", what=_BROKER)
    try:
        host, port = parse_broker(broker)
    except ValueError:
        host, port = "", 0
    if not _HOST.fullmatch(host):
        raise fail("broker", f"tendría que ser {_BROKER}, y es {_show(broker)}")
    profile = section.get("profile", PROFILE)
    if profile not in PROFILES:
        raise fail("profile", f"tendría que ser {' o '.join(PROFILES)}, y es {_show(profile)}")
    keepalive = section.get("keepalive_s", 5)
    if not isinstance(keepalive, int) or isinstance(keepalive, bool) or not 1 <= keepalive <= 600:
        raise fail(
            "keepalive_s",
            f"tendría que ser un número entero de segundos de 1 a 600, y es {_show(keepalive)}",
        )
    _check_key(section, fail)
    key = None
    if "key" in section or "key_file" in section:
        # KeyConfigError names the file, never the key; a key others can read is refused
        try:
            key = load_private_key(path, kind="config")
        except InsecureKeyFileError:
            raise  # its own words: which file, and chmod 600
        except KeyConfigError as e:
            which = "key" if "key" in section else "key_file"
            raise fail(which, f"no puedo usar la clave: {e}") from None
    for k, what in (("username", "el usuario de la mesa en el broker del torneo"),
                    ("password_file", "el archivo con su contraseña"),
                    ("ca_file", "el certificado de la autoridad del torneo")):  # fmt: skip
        if k in section and (not isinstance(section[k], str) or not section[k]):
            raise fail(k, f"tendría que ser {what}, y es {_show(section[k])}")
    if "username" not in section:
        for k in ("password_file", "ca_file"):
            if k in section:
                raise fail(k, "va con username (la cuenta de la mesa en el broker)")
    try:
        access = access_from_section(section, path.parent, f"{path}: tournament")
    except InsecureKeyFileError:
        raise
    except (ValueError, OSError) as e:
        which = next(
            (k for k in ("password_file", "ca_file", "username") if f".{k}" in str(e)),
            "password_file" if "password_file" in section else "username",
        )
        raise fail(which, f"no puedo usar ese archivo: {e}") from None
    match = section.get("match")
    if match is not None:
        if not isinstance(match, str):
            raise fail("match", f"tendría que ser {_NAME}, y es {_show(match)}")
        try:
            check_name("match", match)
        except ValueError:
            raise fail("match", f"tendría que ser {_NAME}, y es {_show(match)}") from None
    return TournamentSettings(name, table_id, host, port, key, profile, keepalive, access, match)


_NAME = "un nombre de 1 a 64 letras, números, '.', '_' o '-' (empieza con letra o número)"
_BROKER = "el broker del torneo: host o host:puerto (por ejemplo 192.168.1.10:1883)"
_HOST = re.compile(r"[A-Za-z0-9._:-]+")  # a name, an IPv4 or an IPv6 address
_HEX = re.compile(r"(?:[0-9A-Fa-f]{2})+")


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _check_key(section: dict[str, Any], fail: Callable[[str | None, str], ConfigError]) -> None:
    """The key's words in the file: one of key (hex) and key_file (a path), its id."""
    if "key" in section and "key_file" in section:
        raise fail("key_file", "va key o key_file, no los dos: borrá uno")
    if "key" in section:
        value = section["key"]
        if not isinstance(value, str) or not _HEX.fullmatch(value.strip()):
            # a key's digits are never shown (the journal and the doctor are not secret)
            shown = "otra cosa" if isinstance(value, str) else _show(value)
            raise fail(
                "key",
                "tendría que ser la clave de la mesa en hexadecimal (pares de dígitos 0-9 y "
                f"A-F), y es {shown}",
            )
    if "key_file" in section and (
        not isinstance(section["key_file"], str) or not section["key_file"]
    ):
        raise fail(
            "key_file",
            "tendría que ser el archivo de la clave (table.key), y es "
            f"{_show(section['key_file'])}",
        )
    key_id = section.get("key_id")
    if key_id is not None and (not isinstance(key_id, str) or not key_id):
        raise fail("key_id", f"tendría que ser el nombre de la clave, y es {_show(key_id)}")


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
