"""How a table or a desk logs in to the venue's broker: account, password, TLS.

The venue broker (``truco-table venue-broker``, :mod:`controller.tournament.venue.broker`)
has anonymous access off, one account per table and per desk, and TLS with the
venue's own certificate authority. :class:`BrokerAccess` is what a client needs for it;
``apply`` sets it on a paho client. ``None`` everywhere means a local broker without
access control (the demo's and the old tests').
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from pathlib import Path

import paho.mqtt.client as mqtt

__all__ = ["BrokerAccess"]


@dataclass(frozen=True, slots=True)
class BrokerAccess:
    """An account on the broker (the password left out of ``repr``) and the venue CA's
    certificate (``ca_file``: TLS on, the broker's certificate checked against it)."""

    username: str
    password: str = field(repr=False)
    ca_file: Path | None = None

    def apply(self, client: mqtt.Client) -> None:
        client.username_pw_set(self.username, self.password)
        if self.ca_file is not None:
            client.tls_set(
                ca_certs=str(self.ca_file),
                cert_reqs=ssl.CERT_REQUIRED,
                tls_version=ssl.PROTOCOL_TLS_CLIENT,
            )


def access_from_section(section: dict[str, object], base: Path, where: str) -> BrokerAccess | None:
    """The broker access a ``[tournament]`` section names: ``username``,
    ``password_file`` (owner-only, relative to ``base``) and ``ca_file`` (TLS);
    ``None`` without a ``username``. Raises ``ValueError`` naming the key."""
    from ..wire.keys import check_private

    username = section.get("username")
    if username is None:
        for k in ("password_file", "ca_file"):
            if k in section:
                raise ValueError(f"{where}.{k}: está sin username (el usuario del broker)")
        return None
    if not isinstance(username, str) or not username:
        raise ValueError(f"{where}.username: tiene que ser un texto entre comillas")
    name = section.get("password_file")
    if not isinstance(name, str) or not name:
        raise ValueError(
            f"{where}.password_file: tiene que ser la ruta del archivo con la contraseña del broker"
        )
    path = base / Path(name).expanduser()
    check_private(path)
    try:
        password = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{where}.password_file: no puedo leer {path}: {e}") from None
    ca = section.get("ca_file")
    if ca is not None and (not isinstance(ca, str) or not ca):
        raise ValueError(
            f"{where}.ca_file: tiene que ser la ruta del certificado de la CA del local"
        )
    ca_path = base / Path(ca).expanduser() if isinstance(ca, str) else None
    if ca_path is not None and not ca_path.is_file():
        raise ValueError(f"{where}.ca_file: no existe el archivo {ca_path}")
    return BrokerAccess(username, password, ca_path)
