"""The venue's broker set up the way Mosquitto does it: accounts, ACLs, TLS, keys.

``truco-table venue-broker --tournament NAME --tables 20 --desks desk --screens pantalla
--host 192.168.1.10 --out venue/`` writes, under ``venue/``:

``broker/``
    ``mosquitto.conf`` (anonymous access off, client ids bound to the accounts, one TLS
    listener per kind of client with its own ``max_connections``, persistence in
    ``data/``, size and keepalive limits: :func:`mosquitto_conf`), ``passwd`` (one
    account per table, desk and screen, in Mosquitto's own ``$7$`` PBKDF2-SHA512 format,
    as ``mosquitto_passwd`` writes it), ``acl`` (a table may publish only under its own
    topics and read only its own resend requests and its own assignment; a desk may only
    read the tables' topics and publish its own resend requests; only the organiser's
    desk, the first, publishes (and reads back) the tables' assignments; a screen only
    reads), ``truco-limits.conf`` (the systemd drop-in with the open-file limit),
    ``truco-firewall.nft`` (nftables: a few connections per address to the tables'
    listener: :func:`firewall_rules`),
    ``ca.crt``, ``server.crt`` and ``server.key``.
``ca/``
    ``ca.key`` and ``ca.crt``: the venue's certificate authority (keep ``ca.key`` off
    the broker; it signs a new server certificate on a re-run).
``secret.key``
    The tournament's secret (hex): the desks derive every table's key from it.
``tables/<id>/``
    What to copy onto that table: ``tournament.toml`` (its ``[tournament]`` section),
    ``table.key`` (its own key, derived from the secret: :mod:`..wire.keys`), ``broker.pass``
    (its broker password), ``ca.crt``.
``desks/<id>/``
    ``desk.toml``, ``secret.key``, ``broker.pass``, ``ca.crt`` for ``truco-table desk
    --config desks/<id>/desk.toml``.
``screens/<id>/``
    ``desk.toml``, ``broker.pass``, ``ca.crt``: no key at all (a screen signs nothing).

Every key, password and password file is written owner-only (``0600``). A re-run keeps
the secret, the CA and the passwords already there (tables already provisioned keep
working) and adds what is new.

The certificates are made with the ``openssl`` command (Debian's ``openssl`` package,
present on Raspberry Pi OS and every Debian): the project needs no Python crypto
library for a step done once per tournament, and a venue's admin can inspect or
remake them with the same tool.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..wire.keys import derive_table_key, new_secret, write_private
from ..wire.topics import check_name, tournament_prefix
from .front import front_toml

__all__ = [
    "DEFAULT_PORT",
    "Venue",
    "VenueError",
    "acl_text",
    "broker_account",
    "default_inner_port",
    "firewall_rules",
    "mosquitto_conf",
    "password_line",
    "ready_for_broker",
    "setup_venue",
]

DEFAULT_PORT: Final = 8883
#: Mosquitto 2.0's own defaults for ``$7$`` hashes (mosquitto_passwd): PBKDF2-SHA512,
#: 101 iterations, 12-byte salt, 64-byte hash. The passwords are 128 random bits, so
#: the iteration count is not what protects them.
PBKDF2_ITERATIONS: Final = 101
_SALT_BYTES: Final = 12
CERT_DAYS: Final = 400


class VenueError(RuntimeError):
    """The venue cannot be set up (the message says why)."""


@dataclass(frozen=True, slots=True)
class Venue:
    """What ``setup_venue`` wrote: the folder, the tournament, its accounts."""

    root: Path
    tournament: str
    tables: tuple[str, ...]
    desks: tuple[str, ...]
    port: int
    hosts: tuple[str, ...]
    screens: tuple[str, ...] = ()
    local_port: int | None = None  # the desks' listener on 127.0.0.1
    screen_port: int | None = None  # the screens' listener (None: they use the tables')
    #: Mosquitto's tables' listener on 127.0.0.1 behind the door (:mod:`.front`), which
    #: takes ``port`` (None: no door, Mosquitto's tables' listener is ``port`` itself).
    inner_port: int | None = None

    @property
    def organiser(self) -> str:
        """The organiser's desk: the one account that may publish assignments."""
        return self.desks[0]

    @property
    def systemd_limits(self) -> Path:
        return self.root / "broker" / "truco-limits.conf"

    @property
    def firewall(self) -> Path:
        """The nftables rules the broker's machine loads (``nft -f``)."""
        return self.root / "broker" / "truco-firewall.nft"

    @property
    def front_conf(self) -> Path:
        """The door's configuration (:mod:`.front`), when the venue has one."""
        return self.root / "broker" / "truco-front.toml"

    @property
    def broker_conf(self) -> Path:
        return self.root / "broker" / "mosquitto.conf"

    @property
    def ca_file(self) -> Path:
        return self.root / "broker" / "ca.crt"

    def table_dir(self, table: str) -> Path:
        return self.root / "tables" / table

    def desk_dir(self, desk: str) -> Path:
        return self.root / "desks" / desk

    def screen_dir(self, screen: str) -> Path:
        return self.root / "screens" / screen

    def password(self, account: str) -> str:
        if account in self.tables:
            folder = self.table_dir(account)
        elif account in self.screens:
            folder = self.screen_dir(account)
        else:
            folder = self.desk_dir(account)
        return (folder / "broker.pass").read_text(encoding="ascii").strip()


def password_line(username: str, password: str, salt: bytes | None = None) -> str:
    """One line of a Mosquitto password file: ``user:$7$101$<salt>$<hash>`` (base64)."""
    salt = salt if salt is not None else secrets.token_bytes(_SALT_BYTES)
    digest = hashlib.pbkdf2_hmac("sha512", password.encode("utf-8"), salt, PBKDF2_ITERATIONS)
    b64 = base64.b64encode
    return f"{username}:$7${PBKDF2_ITERATIONS}${b64(salt).decode()}${b64(digest).decode()}"


def acl_text(
    tournament: str, tables: Sequence[str], desks: Sequence[str], screens: Sequence[str] = ()
) -> str:
    """The ACL file: per account, what it may write and read (nothing else). Only the
    organiser's desk (the first desk) may publish an assignment; the other desks and
    the screens may read one; screens publish nothing at all."""
    base = tournament_prefix(tournament)
    root = base.removesuffix("/tables")
    out = [
        f"# written by truco-table venue-broker: tournament {tournament}",
        "# tables publish only under their own topics and read only their resend requests",
        "# and their assignment; desks only read the tables' topics and publish only their",
        "# own resend requests; only the organiser's desk publishes the tables' assignments",
        "# (and reads them back after a restart); screens only read.",
        "",
    ]
    for table in tables:
        out += [
            f"user {table}",
            f"topic write {base}/{table}/status",
            f"topic write {base}/{table}/events",
            f"topic write {base}/{table}/records/+",
            f"topic read {root}/desks/+/resend/{table}",
            f"topic read {base}/{table}/assign",
            "",
        ]
    for n, desk in enumerate(desks):
        out += [
            f"user {desk}",
            f"topic read {base}/+/status",
            f"topic read {base}/+/events",
            f"topic read {base}/+/records/+",
            f"topic write {root}/desks/{desk}/resend/+",
            f"topic {'readwrite' if n == 0 else 'read'} {base}/+/assign",
            "",
        ]
    for screen in screens:
        out += [
            f"user {screen}",
            f"topic read {base}/+/status",
            f"topic read {base}/+/events",
            f"topic read {base}/+/records/+",
            f"topic read {base}/+/assign",
            "",
        ]
    return "\n".join(out)


#: The broker's limits (docs/TOURNAMENT.md, "Amenazas"). A payload larger than the
#: largest record a table sends (``messages.MAX_RECORD`` characters, JSON-escaped) is
#: dropped by the broker; a client may ask a keepalive of at most ``MAX_KEEPALIVE`` s
#: (Mosquitto 2.0 enforces it on MQTT 5 clients; the project's clients ask 5 to 10 s).
MESSAGE_SIZE_LIMIT: Final = 2 * 1024 * 1024
MAX_KEEPALIVE: Final = 60
#: Connections the desks' listener on the broker's own machine takes.
LOCAL_CONNECTIONS: Final = 32
#: Connections the screens' listener takes (the one a venue's Wi-Fi may reach).
SCREEN_CONNECTIONS: Final = 64
#: Open files the broker needs beyond its connections (listeners, persistence, log).
SPARE_FILES: Final = 64
AUTOSAVE_S: Final = 10
#: Connections one address may hold on the tables' listener (the firewall's rule,
#: :func:`firewall_rules`): a table holds one, two while a reconnection overlaps.
PER_ADDRESS: Final = 8
#: Connections the tables' listener takes: well above what idle sockets from a thousand
#: addresses hold (Mosquitto keeps a socket that never sends CONNECT about 90 s), so
#: they never fill it before a table logs in; the firewall keeps each address to
#: ``PER_ADDRESS``.
TABLE_LISTENER: Final = 4096


def table_connections(accounts: int) -> int:
    """What the tables' listener takes: every account twice (a reconnection overlaps
    the old socket until the broker drops it), and room for the idle sockets a crowd of
    addresses may hold (``TABLE_LISTENER``)."""
    return max(2 * accounts + 16, TABLE_LISTENER)


def firewall_rules(port: int, screen_port: int | None = None) -> str:
    """The venue's nftables rules (``nft -f broker/truco-firewall.nft``): each address
    may hold at most ``PER_ADDRESS`` connections to the tables' listener (and to the
    screens'), the rest are refused at once with a TCP reset, so one machine's idle
    sockets never take the broker's files nor its listener. Loading it again replaces
    it; it touches nothing else of the machine's firewall."""
    ports = str(port) if screen_port is None else f"{{ {port}, {screen_port} }}"
    return "\n".join(
        [
            "#!/usr/sbin/nft -f",
            "# written by truco-table venue-broker: at most "
            f"{PER_ADDRESS} connections per address to the broker's",
            "# tables' (and screens') listener. Install (Debian's nftables):",
            "#   nft -f truco-firewall.nft      (and in /etc/nftables.conf: include it)",
            "table inet truco_venue",
            "delete table inet truco_venue",
            "table inet truco_venue {",
            "    set per_v4 { type ipv4_addr; flags dynamic; size 65535; }",
            "    set per_v6 { type ipv6_addr; flags dynamic; size 65535; }",
            "    chain input {",
            "        type filter hook input priority filter; policy accept;",
            f"        tcp dport {ports} ct state new add @per_v4 "
            f"{{ ip saddr ct count over {PER_ADDRESS} }} reject with tcp reset",
            f"        tcp dport {ports} ct state new add @per_v6 "
            f"{{ ip6 saddr ct count over {PER_ADDRESS} }} reject with tcp reset",
            "    }",
            "}",
            "",
        ]
    )


def file_limit(accounts: int, *, screens_listener: bool = True) -> int:
    """The open files the broker must be allowed (systemd ``LimitNOFILE``): every
    listener's ``max_connections`` and ``SPARE_FILES``. Mosquitto accepts a connection
    beyond a listener's limit and closes it at once, so the sockets of a flood never
    take the files the others need."""
    total = table_connections(accounts) + LOCAL_CONNECTIONS + SPARE_FILES
    return total + (SCREEN_CONNECTIONS if screens_listener else 0)


def systemd_limits(accounts: int, *, screens_listener: bool = True) -> str:
    """A drop-in for Debian's ``mosquitto.service``: the open-file limit the limits
    above need (the default 1,024 runs out before them on a big venue)."""
    limit = file_limit(accounts, screens_listener=screens_listener)
    return (
        "# written by truco-table venue-broker: the broker's open-file limit, above the sum\n"
        "# of its listeners' max_connections (mosquitto.conf). Install:\n"
        "#   mkdir -p /etc/systemd/system/mosquitto.service.d\n"
        "#   cp truco-limits.conf /etc/systemd/system/mosquitto.service.d/\n"
        "#   systemctl daemon-reload && systemctl restart mosquitto\n"
        "[Service]\n"
        f"LimitNOFILE={limit}\n"
    )


def mosquitto_conf(
    broker_dir: Path,
    port: int,
    bind: str,
    *,
    persistence: bool = True,
    accounts: int = 64,
    local_port: int | None = None,
    screen_port: int | None = None,
    screen_bind: str | None = None,
    inner_port: int | None = None,
) -> str:
    """The broker's configuration: one TLS listener per kind of client, each with its
    own ``max_connections``, so idle sockets on one (a patron on the venue's Wi-Fi
    reaching the screens' listener) never keep a table or the desk from logging in:

    - the tables' listener on ``bind``:``port`` (the tables' own network), or, behind the
      door (:mod:`.front`, which takes ``bind``:``port``), on 127.0.0.1:``inner_port``;
    - the desks' listener on 127.0.0.1:``local_port`` (the broker's own machine);
    - the screens' listener on ``screen_bind``:``screen_port`` (only with both).
    """
    d = broker_dir.resolve()
    tls = [
        # every account's client id is its own name: no account can take over another's
        # session (the client id a client sends is replaced by its account's). A
        # listener's own setting in Mosquitto 2.0: given on each one.
        "use_username_as_clientid true",
        f"cafile {d / 'ca.crt'}",
        f"certfile {d / 'server.crt'}",
        f"keyfile {d / 'server.key'}",
        "tls_version tlsv1.2",
    ]
    lines = [
        "# written by truco-table venue-broker (docs/TOURNAMENT.md: threat model)",
        "per_listener_settings false",
        "allow_anonymous false",
        f"password_file {d / 'passwd'}",
        f"acl_file {d / 'acl'}",
        f"message_size_limit {MESSAGE_SIZE_LIMIT}",
        f"max_keepalive {MAX_KEEPALIVE}",
        "max_queued_messages 1000000",
        "max_inflight_messages 100",
        "set_tcp_nodelay true",
        "log_dest stderr",
        "log_type error",
        "log_type warning",
        "log_type notice",
        "connection_messages true",
        "",
        "# the tables (and desks elsewhere on the tables' network)"
        + (f", behind the door on {bind}:{port} (truco-front.toml)" if inner_port else ""),
        f"listener {inner_port} 127.0.0.1" if inner_port else f"listener {port} {bind}",
        f"max_connections {table_connections(accounts)}",
        *tls,
    ]
    if local_port is not None:
        lines += [
            "",
            "# the desks on the broker's own machine",
            f"listener {local_port} 127.0.0.1",
            f"max_connections {LOCAL_CONNECTIONS}",
            *tls,
        ]
    if screen_port is not None and screen_bind is not None:
        lines += [
            "",
            "# the screens (the only listener the venue's public network should reach)",
            f"listener {screen_port} {screen_bind}",
            f"max_connections {SCREEN_CONNECTIONS}",
            *tls,
        ]
    lines.append("")
    if persistence:
        lines += [
            "persistence true",
            f"persistence_location {d / 'data'}/",
            f"autosave_interval {AUTOSAVE_S}",
        ]
    else:
        lines.append("persistence false")
    return "\n".join(lines) + "\n"


def _openssl(*args: str, cwd: Path) -> None:
    binary = shutil.which("openssl")
    if binary is None:
        raise VenueError("openssl not found (Debian: apt-get install openssl)")
    done = subprocess.run(
        [binary, *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=60
    )
    if done.returncode != 0:
        raise VenueError(f"openssl {args[0]} failed: {done.stderr.strip()[-300:]}")


def _make_ca(ca_dir: Path, tournament: str) -> None:
    ca_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    if (ca_dir / "ca.key").exists() and (ca_dir / "ca.crt").exists():
        return
    _openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", "ca.key", "-out", "ca.crt", "-days", str(CERT_DAYS), "-sha256",
        "-subj", f"/CN=truco-table venue CA {tournament}",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        cwd=ca_dir,
    )  # fmt: skip
    os.chmod(ca_dir / "ca.key", 0o600)


def _make_server_cert(ca_dir: Path, broker_dir: Path, hosts: Sequence[str]) -> None:
    names = []
    for host in hosts:
        try:
            ipaddress.ip_address(host)
        except ValueError:
            names.append(f"DNS:{host}")
        else:
            names.append(f"IP:{host}")
    with tempfile.TemporaryDirectory(prefix="truco-venue-") as tmp:
        work = Path(tmp)
        (work / "ext.cnf").write_text(
            f"subjectAltName={','.join(names)}\nbasicConstraints=critical,CA:FALSE\n"
            "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n",
            encoding="ascii",
        )
        _openssl(
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", "server.key", "-out", "server.csr", "-subj", f"/CN={hosts[0]}",
            cwd=work,
        )  # fmt: skip
        _openssl(
            "x509", "-req", "-in", "server.csr", "-CA", str(ca_dir / "ca.crt"),
            "-CAkey", str(ca_dir / "ca.key"), "-CAcreateserial", "-out", "server.crt",
            "-days", str(CERT_DAYS), "-sha256", "-extfile", "ext.cnf",
            cwd=work,
        )  # fmt: skip
        write_private(broker_dir / "server.key", (work / "server.key").read_bytes())
        (broker_dir / "server.crt").write_bytes((work / "server.crt").read_bytes())
    for leftover in (ca_dir / "ca.srl",):
        leftover.unlink(missing_ok=True)


def broker_account() -> tuple[int, int] | None:
    """The (uid, gid) Mosquitto runs as when started by this process: its own account
    (``mosquitto``) when this process is root, since Mosquitto drops to it before it
    reads its files; None when it keeps this process's user (not root, or no such
    account)."""
    if os.geteuid() != 0:
        return None
    try:
        import pwd

        account = pwd.getpwnam("mosquitto")
    except (ImportError, KeyError):
        return None
    return account.pw_uid, account.pw_gid


def _give_to_broker(broker_dir: Path) -> None:
    """Started as root, Mosquitto drops to its own user (``mosquitto``) before it reads
    the password file, the ACL and the server key: they are given to that user (still
    readable by it alone), the folder and everything in it (``data/`` too). Run as
    another user, the files stay that user's."""
    account = broker_account()
    if account is None:
        return
    for folder, dirs, files in os.walk(broker_dir):
        for name in (folder, *(os.path.join(folder, f) for f in (*dirs, *files))):
            os.chown(name, *account)


def _passable(folder: Path, account: tuple[int, int]) -> bool:
    """Whether ``account`` may go through every folder from the root down to ``folder``."""
    uid, gid = account
    for step in (folder, *folder.parents):
        st = step.stat()
        if st.st_uid == uid:
            ok = bool(st.st_mode & 0o100)
        elif st.st_gid == gid:
            ok = bool(st.st_mode & 0o010)
        else:
            ok = bool(st.st_mode & 0o001)
        if not ok:
            return False
    return True


def ready_for_broker(broker_dir: Path, spare: Path | None = None) -> Path:
    """The configuration to start Mosquitto with, whoever starts it (``truco-table
    venue-night``): the broker's files readable by the user Mosquitto runs as.

    Not root: Mosquitto keeps this user, whose files they are: ``mosquitto.conf`` as it
    is. Root: Mosquitto drops to ``mosquitto``; the folder and its files are given to
    it, and when a folder above it does not let that user through (a venue written
    under ``/root``, 0700), a copy of the broker's folder is made in ``spare`` (default:
    a new folder under /run, else the temporary folder; 0700, the broker's) with a
    configuration pointing at it, which is returned."""
    broker_dir = broker_dir.resolve()
    conf = broker_dir / "mosquitto.conf"
    account = broker_account()
    if account is None:
        return conf
    _give_to_broker(broker_dir)
    if _passable(broker_dir, account):
        return conf
    if spare is None:
        base = "/run" if os.access("/run", os.W_OK) else None
        spare = Path(tempfile.mkdtemp(prefix="truco-broker-", dir=base))
    spare = spare.resolve()
    spare.mkdir(parents=True, exist_ok=True, mode=0o700)
    for item in broker_dir.iterdir():
        if item.is_dir():
            shutil.copytree(item, spare / item.name, dirs_exist_ok=True)
        elif item.name != "mosquitto.conf":
            shutil.copy2(item, spare / item.name)
    text = conf.read_text(encoding="utf-8").replace(str(broker_dir), str(spare))
    (spare / "mosquitto.conf").write_text(text, encoding="utf-8")
    os.chmod(spare, 0o700)
    _give_to_broker(spare)
    if not _passable(spare, account):
        raise VenueError(f"{spare}: Mosquitto's user cannot reach it")
    return spare / "mosquitto.conf"


def _password(path: Path) -> str:
    if path.exists():
        return path.read_text(encoding="ascii").strip()
    password = secrets.token_urlsafe(18)
    write_private(path, (password + "\n").encode("ascii"))
    return password


def _secret(root: Path) -> bytes:
    path = root / "secret.key"
    if path.exists():
        return bytes.fromhex(
            next(s for s in path.read_text(encoding="ascii").split("\n") if s and s[0] != "#")
        )
    secret = new_secret()
    write_private(path, f"# the tournament's secret: desks only\n{secret.hex()}\n".encode())
    return secret


def _broker_address(host: str, port: int) -> str:
    return f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"


def default_inner_port(port: int, local_port: int | None = None,
                       screen_port: int | None = None) -> int:
    """Mosquitto's tables' listener behind the door when none is named: the first port
    from ``port`` + 2 that no other listener of the venue takes."""
    local = port + 1 if local_port is None else local_port
    inner = port + 2
    while inner in (port, local, screen_port):
        inner += 1
    return inner


def setup_venue(
    root: str | os.PathLike[str],
    tournament: str,
    tables: Sequence[str],
    desks: Sequence[str],
    *,
    screens: Sequence[str] = (),
    hosts: Sequence[str] = ("127.0.0.1",),
    port: int = DEFAULT_PORT,
    bind: str | None = None,
    local_port: int | None = None,
    screen_port: int | None = None,
    screen_bind: str | None = None,
    rules: str | None = None,
    persistence: bool = True,
    inner_port: int | None = None,
) -> Venue:
    """Write the venue's broker configuration, keys and per-table/per-desk/per-screen
    files. The first desk is the organiser's (the only account that may publish
    assignments; its ``desk.toml`` reaches the broker on 127.0.0.1:``local_port``,
    default ``port + 1``, the desks' own listener). Screens get no secret at all.
    ``inner_port``: the tables connect to a door (:mod:`.front`, ``broker/truco-front.toml``)
    on ``port``, and Mosquitto's tables' listener is on 127.0.0.1:``inner_port``."""
    tournament = check_name("tournament", tournament)
    tables = tuple(check_name("table id", t) for t in tables)
    desks = tuple(check_name("desk", d) for d in desks)
    screens = tuple(check_name("screen", d) for d in screens)
    if not tables or not desks:
        raise VenueError("a venue needs at least one table and one desk")
    accounts = (*tables, *desks, *screens)
    if len(set(accounts)) != len(accounts):
        clash = sorted({a for a in accounts if accounts.count(a) > 1})
        raise VenueError(f"account names must be unique: {clash}")
    if not hosts:
        raise VenueError("name the broker's address (--host) as the tables will reach it")
    if (screen_port is None) != (screen_bind is None):
        raise VenueError("the screens' listener needs both its address and its port")
    local_port = port + 1 if local_port is None else local_port
    if inner_port is not None and inner_port in (port, local_port, screen_port):
        raise VenueError(f"the broker's inner port {inner_port} is taken by another listener")
    base = Path(root).absolute()  # openssl runs in another folder: paths must not be relative
    base.mkdir(parents=True, exist_ok=True, mode=0o755)  # the folders inside are 0700
    secret = _secret(base)
    ca_dir, broker_dir = base / "ca", base / "broker"
    broker_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    if persistence:  # Mosquitto does not create it: without it nothing is ever kept
        (broker_dir / "data").mkdir(exist_ok=True, mode=0o700)
    _make_ca(ca_dir, tournament)
    names = [*hosts, *(h for h in ("127.0.0.1", screen_bind) if h and h not in hosts)]
    _make_server_cert(ca_dir, broker_dir, names)
    ca_cert = (ca_dir / "ca.crt").read_bytes()
    (broker_dir / "ca.crt").write_bytes(ca_cert)
    broker = _broker_address(hosts[0], port)
    lines = []
    for table in tables:
        folder = base / "tables" / table
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        password = _password(folder / "broker.pass")
        lines.append(password_line(table, password))
        key = derive_table_key(secret, tournament, table)
        write_private(folder / "table.key", f"# the key of {table} only\n{key.hex()}\n".encode())
        (folder / "ca.crt").write_bytes(ca_cert)
        write_private(
            folder / "tournament.toml",
            (
                "[tournament]\n"
                f'name = "{tournament}"\n'
                f'table_id = "{table}"\n'
                f'broker = "{broker}"\n'
                'key_file = "table.key"\n'
                f'key_id = "{tournament}:{table}"\n'
                f'username = "{table}"\n'
                'password_file = "broker.pass"\n'
                'ca_file = "ca.crt"\n'
            ).encode(),
        )
    roster = ", ".join(f'"{t}"' for t in tables)
    for n, desk in enumerate(desks):
        folder = base / "desks" / desk
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        password = _password(folder / "broker.pass")
        lines.append(password_line(desk, password))
        write_private(folder / "secret.key", (base / "secret.key").read_bytes())
        (folder / "ca.crt").write_bytes(ca_cert)
        where = _broker_address("127.0.0.1", local_port) if n == 0 else broker
        note = (
            f"# the organiser's desk, on the broker's machine (elsewhere: broker = \"{broker}\")\n"
            if n == 0
            else ""
        )
        write_private(
            folder / "desk.toml",
            (
                note + "[tournament]\n"
                f'name = "{tournament}"\n'
                f'broker = "{where}"\n'
                'key_file = "secret.key"\n'
                f'key_id = "{tournament}"\n'
                f'username = "{desk}"\n'
                'password_file = "broker.pass"\n'
                'ca_file = "ca.crt"\n'
                f"tables = [{roster}]\n" + (f'rules = "{rules}"\n' if rules else "")
            ).encode(),
        )
    screen_broker = (
        broker if screen_port is None else _broker_address(str(screen_bind), screen_port)
    )
    for screen in screens:
        folder = base / "screens" / screen
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        password = _password(folder / "broker.pass")
        lines.append(password_line(screen, password))
        (folder / "ca.crt").write_bytes(ca_cert)
        write_private(
            folder / "desk.toml",
            (
                "# a screen: it only reads, and holds no key that signs anything\n"
                "[tournament]\n"
                f'name = "{tournament}"\n'
                f'broker = "{screen_broker}"\n'
                f'username = "{screen}"\n'
                'password_file = "broker.pass"\n'
                'ca_file = "ca.crt"\n'
                f"tables = [{roster}]\n" + (f'rules = "{rules}"\n' if rules else "")
            ).encode(),
        )
    write_private(broker_dir / "passwd", ("\n".join(lines) + "\n").encode("ascii"))
    acl = acl_text(tournament, tables, desks, screens)
    (broker_dir / "acl").write_text(acl, encoding="utf-8")
    os.chmod(broker_dir / "acl", 0o600)
    conf = mosquitto_conf(
        broker_dir, port, bind or hosts[0], persistence=persistence, accounts=len(accounts),
        local_port=local_port, screen_port=screen_port, screen_bind=screen_bind,
        inner_port=inner_port,
    )  # fmt: skip
    (broker_dir / "mosquitto.conf").write_text(conf, encoding="utf-8")
    door = broker_dir / "truco-front.toml"
    if inner_port is not None:
        door.write_text(front_toml((bind or hosts[0], port), ("127.0.0.1", inner_port)),
                        encoding="utf-8")  # fmt: skip
    else:
        door.unlink(missing_ok=True)
    (broker_dir / "truco-limits.conf").write_text(
        systemd_limits(len(accounts), screens_listener=screen_port is not None), encoding="utf-8"
    )
    (broker_dir / "truco-firewall.nft").write_text(
        firewall_rules(port, screen_port), encoding="utf-8"
    )
    _give_to_broker(broker_dir)
    return Venue(base, tournament, tables, desks, port, tuple(hosts), screens, local_port,
                 screen_port, inner_port)  # fmt: skip
