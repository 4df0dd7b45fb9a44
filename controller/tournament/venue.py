"""The venue's broker set up the way Mosquitto does it: accounts, ACLs, TLS, keys.

``truco-table venue-broker --tournament NAME --tables 20 --desks desk,pantalla
--host 192.168.1.10 --out venue/`` writes, under ``venue/``:

``broker/``
    ``mosquitto.conf`` (anonymous access off, one TLS listener, the password file and
    the ACL file below), ``passwd`` (one account per table and per desk, in
    Mosquitto's own ``$7$`` PBKDF2-SHA512 format, as ``mosquitto_passwd`` writes it),
    ``acl`` (a table may publish only under its own topics and read only its own resend
    requests and its own assignment; a desk may only read the tables' topics, publish
    its own resend requests, and publish (and read back) every table's assignment),
    ``ca.crt``, ``server.crt`` and ``server.key``.
``ca/``
    ``ca.key`` and ``ca.crt``: the venue's certificate authority (keep ``ca.key`` off
    the broker; it signs a new server certificate on a re-run).
``secret.key``
    The tournament's secret (hex): the desks derive every table's key from it.
``tables/<id>/``
    What to copy onto that table: ``tournament.toml`` (its ``[tournament]`` section),
    ``table.key`` (its own key, derived from the secret: :mod:`.keys`), ``broker.pass``
    (its broker password), ``ca.crt``.
``desks/<id>/``
    ``desk.toml``, ``secret.key``, ``broker.pass``, ``ca.crt`` for ``truco-table desk
    --config desks/<id>/desk.toml``.

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

from .keys import derive_table_key, new_secret, write_private
from .topics import check_name, tournament_prefix

__all__ = [
    "DEFAULT_PORT",
    "Venue",
    "VenueError",
    "acl_text",
    "mosquitto_conf",
    "password_line",
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

    def password(self, account: str) -> str:
        folder = self.table_dir(account) if account in self.tables else self.desk_dir(account)
        return (folder / "broker.pass").read_text(encoding="ascii").strip()


def password_line(username: str, password: str, salt: bytes | None = None) -> str:
    """One line of a Mosquitto password file: ``user:$7$101$<salt>$<hash>`` (base64)."""
    salt = salt if salt is not None else secrets.token_bytes(_SALT_BYTES)
    digest = hashlib.pbkdf2_hmac("sha512", password.encode("utf-8"), salt, PBKDF2_ITERATIONS)
    b64 = base64.b64encode
    return f"{username}:$7${PBKDF2_ITERATIONS}${b64(salt).decode()}${b64(digest).decode()}"


def acl_text(tournament: str, tables: Sequence[str], desks: Sequence[str]) -> str:
    """The ACL file: per account, what it may write and read (nothing else)."""
    base = tournament_prefix(tournament)
    root = base.removesuffix("/tables")
    out = [
        f"# written by truco-table venue-broker: tournament {tournament}",
        "# tables publish only under their own topics and read only their resend requests",
        "# and their assignment; desks only read the tables' topics and publish only their",
        "# own resend requests and the tables' assignments (read back after a restart).",
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
    for desk in desks:
        out += [
            f"user {desk}",
            f"topic read {base}/+/status",
            f"topic read {base}/+/events",
            f"topic read {base}/+/records/+",
            f"topic write {root}/desks/{desk}/resend/+",
            f"topic readwrite {base}/+/assign",
            "",
        ]
    return "\n".join(out)


def mosquitto_conf(broker_dir: Path, port: int, bind: str, *, persistence: bool = True) -> str:
    d = broker_dir.resolve()
    lines = [
        "# written by truco-table venue-broker (docs: README, section Tournament security)",
        "per_listener_settings false",
        "allow_anonymous false",
        f"password_file {d / 'passwd'}",
        f"acl_file {d / 'acl'}",
        f"listener {port} {bind}",
        f"cafile {d / 'ca.crt'}",
        f"certfile {d / 'server.crt'}",
        f"keyfile {d / 'server.key'}",
        "tls_version tlsv1.2",
        "max_queued_messages 1000000",
        "max_inflight_messages 100",
        "set_tcp_nodelay true",
        "log_dest stderr",
        "log_type error",
        "log_type warning",
        "log_type notice",
        "connection_messages true",
    ]
    if persistence:
        lines += ["persistence true", f"persistence_location {d / 'data'}/"]
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


def _give_to_broker(broker_dir: Path) -> None:
    """Started as root, Mosquitto drops to its own user (``mosquitto``) before it reads
    the password file, the ACL and the server key: they are given to that user (still
    readable by it alone). Run as another user, the files stay that user's."""
    if os.geteuid() != 0:
        return
    try:
        import pwd

        account = pwd.getpwnam("mosquitto")
    except (ImportError, KeyError):
        return
    for path in (broker_dir, *broker_dir.iterdir()):
        os.chown(path, account.pw_uid, account.pw_gid)


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


def setup_venue(
    root: str | os.PathLike[str],
    tournament: str,
    tables: Sequence[str],
    desks: Sequence[str],
    *,
    hosts: Sequence[str] = ("127.0.0.1",),
    port: int = DEFAULT_PORT,
    bind: str | None = None,
    rules: str | None = None,
    persistence: bool = True,
) -> Venue:
    """Write the venue's broker configuration, keys and per-table/per-desk files."""
    tournament = check_name("tournament", tournament)
    tables = tuple(check_name("table id", t) for t in tables)
    desks = tuple(check_name("desk", d) for d in desks)
    if not tables or not desks:
        raise VenueError("a venue needs at least one table and one desk")
    if clash := sorted(set(tables) & set(desks)) or len(set(tables)) != len(tables):
        raise VenueError(f"account names must be unique: {clash}")
    if not hosts:
        raise VenueError("name the broker's address (--host) as the tables will reach it")
    base = Path(root)
    base.mkdir(parents=True, exist_ok=True, mode=0o755)  # the folders inside are 0700
    secret = _secret(base)
    ca_dir, broker_dir = base / "ca", base / "broker"
    broker_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    _make_ca(ca_dir, tournament)
    _make_server_cert(ca_dir, broker_dir, hosts)
    ca_cert = (ca_dir / "ca.crt").read_bytes()
    (broker_dir / "ca.crt").write_bytes(ca_cert)
    broker = f"{hosts[0]}:{port}" if ":" not in hosts[0] else f"[{hosts[0]}]:{port}"
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
    for desk in desks:
        folder = base / "desks" / desk
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        password = _password(folder / "broker.pass")
        lines.append(password_line(desk, password))
        write_private(folder / "secret.key", (base / "secret.key").read_bytes())
        (folder / "ca.crt").write_bytes(ca_cert)
        write_private(
            folder / "desk.toml",
            (
                "[tournament]\n"
                f'name = "{tournament}"\n'
                f'broker = "{broker}"\n'
                'key_file = "secret.key"\n'
                f'key_id = "{tournament}"\n'
                f'username = "{desk}"\n'
                'password_file = "broker.pass"\n'
                'ca_file = "ca.crt"\n'
                f"tables = [{roster}]\n" + (f'rules = "{rules}"\n' if rules else "")
            ).encode(),
        )
    write_private(broker_dir / "passwd", ("\n".join(lines) + "\n").encode("ascii"))
    (broker_dir / "acl").write_text(acl_text(tournament, tables, desks), encoding="utf-8")
    os.chmod(broker_dir / "acl", 0o600)
    conf = mosquitto_conf(broker_dir, port, bind or hosts[0], persistence=persistence)
    (broker_dir / "mosquitto.conf").write_text(conf, encoding="utf-8")
    _give_to_broker(broker_dir)
    return Venue(base, tournament, tables, desks, port, tuple(hosts))
