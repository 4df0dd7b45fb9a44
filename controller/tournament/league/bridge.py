"""A venue joins the league: its keys, its accounts, its broker bridged to the central one.

``truco-table league add-venue --dir liga/ --league liga-bares --central 203.0.113.5:8884
--venue bar-lopez --tables 4 --host 192.168.1.10`` writes, under ``liga/``:

``league.toml``
    The league's name and the central broker's address (written on the first run; later
    runs read them, so ``--league`` and ``--central`` may be left out).
``secret.key``
    The league's secret (hex; the league desk's only): every venue's secret, and so every
    table's key, is derived from it (:mod:`.keys`).
``ca/``
    The central broker's certificate authority (keep ``ca.key`` off the broker).
``central/``
    The central broker: ``mosquitto.conf`` (anonymous access off, one TLS listener,
    persistence), ``passwd`` (one account per venue, ``venue-<id>``, and the league desk's,
    ``league-desk``, in Mosquitto's ``$7$`` format), ``acl`` (a venue's account may only
    write under ``league/<id>/`` and read the league desk's resend requests to it; the
    league desk may read ``league/#`` and write only resend requests),
    ``ca.crt``, ``server.crt``, ``server.key``. Rewritten whole on every run, from the
    venues in ``venues/``: reload the running broker (``kill -HUP``) to let a new venue in.
``desk/``
    The league desk's ``broker.pass`` and ``ca.crt`` for the central broker.
``venues/<id>/``
    The venue's folder, to copy to the bar: what ``truco-table venue-broker`` writes
    (:mod:`controller.tournament.venue.broker`: its broker with its own CA, its tables' and
    desks' folders, the door in front of its tables' listener ``broker/truco-front.toml``
    and its nftables rules ``broker/truco-firewall.nft``; its ``secret.key`` is the
    venue's secret, not the league's), plus at
    the end of ``broker/mosquitto.conf`` the bridge to the central broker (below), the
    central CA (``broker/central-ca.crt``) and ``bridge.pass`` (its central password).

The bridge (Mosquitto's own ``connection``): TLS to the central broker checked against
the central CA, the venue's own account, ``cleansession false`` (the central keeps the
bridge's session, the venue its local one) and three topic lines: one remaps the venue's
``truco/<league>/tables/...`` to ``league/<id>/tables/...`` at the central broker, the
next brings the league desk's resend requests (``league/<id>/desks/league-desk/resend/
<table>``) back to the venue as ``truco/<league>/desks/league-desk/resend/<table>``, where
the table reads them (signed with its key: it serves no other; :mod:`.gaps`), and the
last brings the league desk's assignments (``league/<id>/tables/<table>/assign``,
retained, signed with that table's key: :mod:`.season_desk`) to the venue as the
table's own ``truco/<league>/tables/<table>/assign``. Mosquitto subscribes a bridge's
local side with *no local*, so an assignment brought in is not sent back out. While
the link is down the venue broker queues the bridge's QoS 1 messages (up to the venue
conf's ``max_queued_messages``), on disk with ``persistence`` (saved every
``autosave_interval`` seconds and at a clean stop), and sends them in order when it
comes back. Whatever a venue's broker is made to send, the central ACL lets that account
write only under ``league/<id>/``.

Every key, password and password file is written owner-only (``0600``); a re-run keeps
the secrets, the CAs and the passwords already there and adds what is new.
"""

from __future__ import annotations

import os
import secrets
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..venue.broker import (
    VenueError,
    _give_to_broker,
    _make_ca,
    _make_server_cert,
    mosquitto_conf,
    password_line,
    setup_venue,
)
from ..wire.keys import new_secret, write_private
from ..wire.topics import parse_broker
from .errors import LeagueError
from .keys import derive_venue_secret
from .model import check_id

__all__ = [
    "CENTRAL_PORT",
    "DESK_ACCOUNT",
    "DESK_NAME",
    "AddedVenue",
    "LeagueSetupError",
    "add_venue",
    "bridge_section",
    "central_acl",
    "read_league_secret",
    "venue_account",
    "venue_prefix",
]

CENTRAL_PORT: Final = 8884
DESK_ACCOUNT: Final = "league-desk"
#: The league desk's name in its resend requests' topics (``desks/<name>/resend/<table>``).
DESK_NAME: Final = "league-desk"
#: Mosquitto's own default for a bridge's reconnection: jitter from 5 s up to 30 s.
RESTART_TIMEOUT: Final = (5, 30)
_MARK: Final = "# ---- bridge to the league's central broker (truco-table league add-venue)"


class LeagueSetupError(LeagueError):
    """The league's folder or a venue cannot be set up (the message says why, in Spanish)."""


def venue_account(venue: str) -> str:
    """The venue's account on the central broker: ``venue-<id>``."""
    return f"venue-{check_id('El id de la sede', venue, LeagueSetupError)}"


def venue_prefix(venue: str) -> str:
    """Where the venue's messages land on the central broker: ``league/<id>/``."""
    return f"league/{check_id('El id de la sede', venue, LeagueSetupError)}/"


def bridge_section(
    *,
    league: str,
    venue: str,
    central: tuple[str, int],
    cafile: Path,
    password: str,
    restart_timeout: tuple[int, int] = RESTART_TIMEOUT,
) -> str:
    """The end of the venue's ``mosquitto.conf``: the bridge to the central broker. Its
    queue is saved every ``autosave_interval`` the venue's own part sets, once
    (:data:`~controller.tournament.venue.broker.AUTOSAVE_S`: Mosquitto takes the last
    value it reads, so a second one here would override it)."""
    host, port = central
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return "\n".join(
        [
            _MARK,
            f"# the venue's tables (truco/{league}/tables/...) reach the league as",
            f"# {venue_prefix(venue)}tables/...; queued here while the link is down",
            f"connection league-{venue}",
            f"address {address}",
            "bridge_protocol_version mqttv311",
            f"bridge_cafile {cafile.resolve()}",
            "bridge_tls_version tlsv1.2",
            "bridge_insecure false",
            f"remote_clientid {venue_account(venue)}",  # the central binds ids to accounts
            f"remote_username {venue_account(venue)}",
            f"remote_password {password}",
            "cleansession false",
            "local_cleansession false",
            "start_type automatic",
            f"restart_timeout {restart_timeout[0]} {restart_timeout[1]}",
            "keepalive_interval 30",
            "try_private true",
            "notifications true",
            f"notification_topic {venue_prefix(venue)}bridge/state",
            f"topic tables/# out 1 truco/{league}/ {venue_prefix(venue)}",
            "# and the league desk's resend requests and assignments come back to the tables",
            f"topic desks/{DESK_NAME}/resend/+ in 1 truco/{league}/ {venue_prefix(venue)}",
            f"topic tables/+/assign in 1 truco/{league}/ {venue_prefix(venue)}",
            "",
        ]
    )


def central_acl(venues: Sequence[str]) -> str:
    """The central broker's ACL: each venue writes only its tables' messages and its
    bridge's state under its prefix, and reads only the league desk's resend requests to
    it; the desk reads everything and writes only resend requests."""
    out = [
        "# written by truco-table league add-venue: each venue's account may write only",
        "# its tables' messages and its bridge's state under its own prefix (league/<venue>/)",
        "# and read only the league desk's resend requests and assignments to its tables;",
        "# the league desk may read them all and write only resend requests and assignments",
        "# (signed with each table's key: a venue cannot write another's).",
        "",
        f"user {DESK_ACCOUNT}",
        "topic read league/#",
        f"topic write league/+/desks/{DESK_NAME}/resend/+",
        "topic write league/+/tables/+/assign",
        "",
    ]
    for venue in venues:
        prefix = venue_prefix(venue)
        out += [
            f"user {venue_account(venue)}",
            f"topic write {prefix}tables/+/status",
            f"topic write {prefix}tables/+/events",
            f"topic write {prefix}tables/+/records/+",
            f"topic write {prefix}bridge/state",
            f"topic read {prefix}desks/{DESK_NAME}/resend/+",
            f"topic read {prefix}tables/+/assign",
            "",
        ]
    return "\n".join(out)


@dataclass(frozen=True, slots=True)
class AddedVenue:
    """What :func:`add_venue` wrote: the league's folder and the venue's."""

    root: Path
    league: str
    venue: str
    central: tuple[str, int]
    tables: tuple[str, ...]
    desks: tuple[str, ...]
    port: int
    #: Mosquitto's tables' listener on 127.0.0.1 behind the venue's door (None: no door).
    inner_port: int | None = None

    @property
    def venue_dir(self) -> Path:
        return self.root / "venues" / self.venue

    @property
    def front_conf(self) -> Path:
        """The door's configuration (``truco-table venue-door --config``), if it has one."""
        return self.venue_dir / "broker" / "truco-front.toml"

    @property
    def firewall(self) -> Path:
        """The venue's nftables rules (``nft -f``): a few connections per address."""
        return self.venue_dir / "broker" / "truco-firewall.nft"

    @property
    def venue_conf(self) -> Path:
        return self.venue_dir / "broker" / "mosquitto.conf"

    @property
    def central_conf(self) -> Path:
        return self.root / "central" / "mosquitto.conf"

    @property
    def central_ca(self) -> Path:
        return self.root / "central" / "ca.crt"

    @property
    def account(self) -> str:
        return venue_account(self.venue)

    def bridge_password(self) -> str:
        return _read_password(self.venue_dir / "bridge.pass")

    def desk_password(self) -> str:
        return _read_password(self.root / "desk" / "broker.pass")


def _read_password(path: Path) -> str:
    return path.read_text(encoding="ascii").strip()


def _password(path: Path) -> str:
    if path.exists():
        return _read_password(path)
    password = secrets.token_urlsafe(18)
    write_private(path, (password + "\n").encode("ascii"))
    return password


def _league_file(
    root: Path, league: str | None, central: str | None
) -> tuple[str, tuple[str, int]]:
    """The league's name and central address: from ``league.toml``, or given (first run)."""
    path = root / "league.toml"
    if path.exists():
        try:
            section = tomllib.loads(path.read_text(encoding="utf-8")).get("league")
            if not isinstance(section, dict):
                raise TypeError
            name, address = section["name"], section["central"]
            if not isinstance(name, str) or not isinstance(address, str):
                raise TypeError
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, TypeError, KeyError):
            raise LeagueSetupError(
                f"{path} no se puede leer: tiene que tener [league] con name y central"
            ) from None
        if league is not None and league != name:
            raise LeagueSetupError(f"La liga de {root} es {name!r}, no {league!r}")
        if central is not None and central != address:
            raise LeagueSetupError(
                f"El broker central de {root} es {address}, no {central} "
                f"(para cambiarlo, editá {path})"
            )
    else:
        if league is None or central is None:
            raise LeagueSetupError(
                f"{root} todavía no es la carpeta de una liga: la primera vez hay que dar "
                "--league NOMBRE y --central HOST:PUERTO"
            )
        name, address = league, central
    check_id("El nombre de la liga", name, LeagueSetupError)
    try:
        where = parse_broker(address, CENTRAL_PORT)
    except ValueError:
        raise LeagueSetupError(
            f"La dirección del broker central {address!r} no sirve: va HOST o HOST:PUERTO"
        ) from None
    if not path.exists():
        root.mkdir(parents=True, exist_ok=True, mode=0o755)
        path.write_text(f'[league]\nname = "{name}"\ncentral = "{address}"\n', encoding="utf-8")
    return name, where


def read_league_secret(root: Path) -> bytes:
    """The league's secret from ``root/secret.key`` (the league desk's); a missing or
    unreadable file is a :class:`LeagueSetupError` saying so."""
    if not (root / "secret.key").exists():
        raise LeagueSetupError(
            f"En {root} no está secret.key: la crea truco-table league add-venue"
        )
    return _league_secret(root)


def _league_secret(root: Path) -> bytes:
    path = root / "secret.key"
    if path.exists():
        lines = [s for s in path.read_text(encoding="ascii").split("\n") if s and s[0] != "#"]
        try:
            secret = bytes.fromhex(lines[0])
        except (IndexError, ValueError):
            raise LeagueSetupError(f"{path} no tiene un secreto en hexadecimal") from None
        if len(secret) < 16:
            raise LeagueSetupError(f"El secreto de {path} es demasiado corto")
        return secret
    secret = new_secret()
    write_private(path, f"# the league's secret: the league desk only\n{secret.hex()}\n".encode())
    return secret


def _venue_secret(venue_dir: Path, secret: bytes) -> None:
    """The venue's secret where ``setup_venue`` keeps it (it then reuses it)."""
    path = venue_dir / "secret.key"
    if path.exists():
        lines = [s for s in path.read_text(encoding="ascii").split("\n") if s and s[0] != "#"]
        if not lines or lines[0].strip() != secret.hex():
            raise LeagueSetupError(
                f"{path} tiene otro secreto: esa carpeta no es de esta sede de esta liga"
            )
        return
    write_private(path, f"# the venue's secret: its desks only\n{secret.hex()}\n".encode())


def _central(root: Path, name: str, central: tuple[str, int], bind: str | None) -> None:
    """The central broker's folder, whole, from the venues already in the league."""
    ca_dir, central_dir = root / "ca", root / "central"
    central_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    _make_ca(ca_dir, f"league {name}")
    if not (central_dir / "server.crt").exists() or not (central_dir / "server.key").exists():
        _make_server_cert(ca_dir, central_dir, [central[0]])
    ca_cert = (ca_dir / "ca.crt").read_bytes()
    (central_dir / "ca.crt").write_bytes(ca_cert)
    desk_dir = root / "desk"
    desk_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    (desk_dir / "ca.crt").write_bytes(ca_cert)
    lines = [password_line(DESK_ACCOUNT, _password(desk_dir / "broker.pass"))]
    venues = sorted(p.name for p in (root / "venues").iterdir() if (p / "bridge.pass").exists())
    for venue in venues:
        pw = _read_password(root / "venues" / venue / "bridge.pass")
        lines.append(password_line(venue_account(venue), pw))
    write_private(central_dir / "passwd", ("\n".join(lines) + "\n").encode("ascii"))
    write_private(central_dir / "acl", central_acl(venues).encode("utf-8"))
    conf = mosquitto_conf(central_dir, central[1], bind or central[0], persistence=True)
    write_private(central_dir / "mosquitto.conf", conf.encode("utf-8"))
    (central_dir / "data").mkdir(exist_ok=True, mode=0o700)  # persistence_location
    _give_to_broker(central_dir)


def add_venue(
    root: str | os.PathLike[str],
    venue: str,
    tables: Sequence[str],
    desks: Sequence[str],
    *,
    league: str | None = None,
    central: str | None = None,
    hosts: Sequence[str] = ("127.0.0.1",),
    port: int = 8883,
    bind: str | None = None,
    central_bind: str | None = None,
    rules: str | None = None,
    restart_timeout: tuple[int, int] = RESTART_TIMEOUT,
    inner_port: int | None = None,
) -> AddedVenue:
    """Issue ``venue``'s keys and accounts, write its folder (``venues/<id>/``) with its
    broker bridged to the central one, and rewrite the central broker's accounts and ACL.
    ``inner_port``: the venue's tables connect to a door (:mod:`..venue.front`,
    ``broker/truco-front.toml``) on ``port`` and Mosquitto's tables' listener is on
    127.0.0.1:``inner_port`` (None: no door, as :func:`..venue.broker.setup_venue`).
    Raises :class:`LeagueSetupError` (Spanish) for anything that cannot be used."""
    base = Path(root)
    check_id("El id de la sede", venue, LeagueSetupError)
    for table in tables:
        check_id("El id de la mesa", table, LeagueSetupError)
    for desk in desks:
        check_id("El nombre de la mesa de control", desk, LeagueSetupError)
    if not tables:
        raise LeagueSetupError("Una sede necesita al menos una mesa (--tables)")
    if not desks:
        raise LeagueSetupError("Una sede necesita al menos una mesa de control (--desks)")
    if len(set(tables)) != len(tables) or set(tables) & set(desks):
        raise LeagueSetupError(
            "Los nombres de mesas y mesas de control tienen que ser todos distintos"
        )
    if not hosts:
        raise LeagueSetupError("Falta la dirección del broker de la sede (--host)")
    if not 0 < port < 65536:
        raise LeagueSetupError(f"El puerto {port} no sirve: va de 1 a 65535")
    if inner_port is not None and not 0 < inner_port < 65536:
        raise LeagueSetupError(f"El puerto de adentro {inner_port} no sirve: va de 1 a 65535")
    if inner_port in (port, port + 1):
        raise LeagueSetupError(
            f"El puerto de adentro {inner_port} ya lo usa otro listener del broker de la sede "
            f"(las mesas, {port}; las mesas de control, {port + 1})"
        )
    try:
        name, where = _league_file(base, league, central)
        secret = _league_secret(base)
        venue_dir = base / "venues" / venue
        venue_dir.mkdir(parents=True, exist_ok=True, mode=0o755)
        _venue_secret(venue_dir, derive_venue_secret(secret, name, venue))
        setup_venue(
            venue_dir,
            name,
            tables,
            desks,
            hosts=hosts,
            port=port,
            bind=bind,
            rules=rules,
            persistence=True,
            inner_port=inner_port,
        )
        password = _password(venue_dir / "bridge.pass")
        _central(base, name, where, central_bind)
        central_ca = venue_dir / "broker" / "central-ca.crt"
        central_ca.write_bytes((base / "central" / "ca.crt").read_bytes())
        conf_path = venue_dir / "broker" / "mosquitto.conf"
        conf = conf_path.read_text(encoding="utf-8").split(_MARK)[0]
        conf += bridge_section(
            league=name,
            venue=venue,
            central=where,
            cafile=central_ca,
            password=password,
            restart_timeout=restart_timeout,
        )
        write_private(conf_path, conf.encode("utf-8"))  # it holds the bridge's password
        (venue_dir / "broker" / "data").mkdir(exist_ok=True, mode=0o700)  # the queue's disk
        _give_to_broker(venue_dir / "broker")
    except VenueError as e:
        raise LeagueSetupError(f"No se pudo preparar la sede {venue}: {e}") from None
    except OSError as e:
        where_ = f" ({e.filename})" if e.filename else ""
        raise LeagueSetupError(
            f"No se pudo escribir la carpeta de la liga{where_}: {e.strerror or e}"
        ) from None
    return AddedVenue(base, name, venue, where, tuple(tables), tuple(desks), port, inner_port)
