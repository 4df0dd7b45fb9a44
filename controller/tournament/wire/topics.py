"""The MQTT topics and payloads of a tournament (one broker, many tables, one desk).

All topics live under ``truco/<tournament>/tables/<table>/``:

``status`` (retained, QoS 1)
    ``{"v": 1, "table": "mesa01", "state": "online", "seq": 42, "ts": ...}`` on every
    connection; the last will, set when connecting, is the same with ``"state":
    "offline"`` (and ``"reason": "lost"``), so a table that loses power or the network
    shows as offline as soon as the broker notices. A table that stops cleanly publishes
    ``offline`` itself (``"reason": "stopped"``).
``events`` (QoS 1)
    One JSON object per event, in ``seq`` order: ``{"v": 1, "table", "seq", "ts",
    "kind", "game", "hand", "score": [a, b], "text", ...}``. ``seq`` counts every message
    of the table's outbox (events and records) from 1, across games and restarts;
    ``ts`` is the table's wall clock when the event happened. Kinds:

    - ``state``: the table (re)started; ``rules`` (the ``table`` line) and the game's
      hand and score as restored.
    - ``new-game``: a new game starts; ``rules``.
    - ``deal``: a hand was dealt and read; ``text`` is its ``dealer``/``hand`` lines
      and ``dealt`` the number of seats whose cards were read. The cards themselves are
      not sent while the game is played (anyone on the broker could read them); they
      are in the sealed record at the end.
    - ``action``: an accepted action (``text`` is its transcript line, ``0 truco``).
    - ``cards``: the hand ``hand`` has ended: ``text`` is its ``deal`` lines (the cards
      read at its deal), for the desk's delayed broadcast. Never sent while that hand is
      played; a hand the referee's undo opens again is held back again by the desk.
    - ``score``: the score changed (after the action that changed it).
    - ``refusal``: a refused action: ``seat``, ``action`` (``null`` for an unknown card),
      ``code``; ``text`` is the record's comment (``# rechazado: ...``).
    - ``undo``: the referee undid ``action``; ``text`` is ``# deshecho por el árbitro:
      ...``; ``score`` after the undo.
    - ``referee-call``: a player called the referee (*quiero* and *no quiero* held
      together on the pad): ``seat``; ``text`` is ``# llamado al árbitro: asiento N``.
    - ``finished``: the game was won: ``winner``.
    - ``abandoned``: a new game was started before this one was won.
``records/<game>`` (retained, QoS 1)
    The finished game's record: ``{"v": 1, "table", "seq", "ts", "kind": "record",
    "game", "winner", "score", "sealed": true, "key_id", "record": "<sealed record>"}``
    (``controller.tournament.wire.seal``; unsealed when the table has no key). Retained, so
    a desk that starts late still collects every record.
``truco/<tournament>/desks/<desk>/resend/<table>`` (QoS 1, desk to table)
    ``{"from": a, "to": b, "n": c}``: the desk saw a gap; the table publishes those
    messages of its outbox again (at most 500; ``n`` is the desk's counter). Tables only
    ever connect out: they open no listening socket.
``truco/<tournament>/tables/<table>/assign`` (retained, QoS 1, desk to table)
    The match the table plays now: ``{"v": 1, "kind": "assign", "table", "n", "match",
    "label", "home", "away", "chico", "best_of", "players": [[...], [...]]}``
    (:class:`~controller.tournament.wire.messages.Assignment`; ``"match": null``: the table is
    free). Only the desk may publish it, only that table may read it; ``n`` is the
    desk's counter for the table (an assignment with a lower one changes nothing), the
    ``mac`` the table's key over ``truco-assign v1``, the topic and the payload.

With a key, every payload carries ``"mac"``, the HMAC-SHA256 of the table's own key
over ``truco-msg v1``, the topic and the payload without it; statuses carry ``"n"``,
the table's status counter. :mod:`controller.tournament.wire.messages` builds, parses and
checks them all.

Game ids are ``<table>-g<NNN>`` (``mesa01-g003``), numbered per table from 1.
"""

from __future__ import annotations

import json
import re
import socket
from typing import Any, Final

__all__ = [
    "ID_RE",
    "PAYLOAD_VERSION",
    "assignment_topic",
    "check_name",
    "decode",
    "encode",
    "game_id",
    "game_number",
    "no_loopback_listener",
    "parse_broker",
    "table_prefix",
    "tournament_prefix",
]

PAYLOAD_VERSION: Final = 1
#: Table and tournament names: safe in a topic level and in a game id.
ID_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_GAME_RE: Final = re.compile(r"(.+)-g([0-9]{3,})")


def check_name(what: str, value: str) -> str:
    if not isinstance(value, str) or not ID_RE.fullmatch(value):
        raise ValueError(
            f"{what} {value!r}: de 1 a 64 letras, números, '.', '_' o '-', "
            "empezando por una letra o un número"
        )
    return value


def tournament_prefix(tournament: str) -> str:
    return f"truco/{check_name('tournament', tournament)}/tables"


def table_prefix(tournament: str, table: str) -> str:
    return f"{tournament_prefix(tournament)}/{check_name('table id', table)}"


def assignment_topic(prefix: str, table: str) -> str:
    """Where the desk tells ``table`` its match: ``<prefix>/<table>/assign``, ``prefix``
    being :func:`tournament_prefix` (``truco/<tournament>/tables``)."""
    return f"{prefix}/{check_name('table id', table)}/assign"


def game_id(table: str, number: int) -> str:
    return f"{table}-g{number:03d}"


def game_number(game: str) -> int | None:
    m = _GAME_RE.fullmatch(game)
    return int(m[2]) if m else None


def encode(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def decode(data: bytes | bytearray) -> dict[str, Any] | None:
    """A payload's JSON object, or ``None`` when it is not one."""
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def parse_broker(text: str, default_port: int = 1883) -> tuple[str, int]:
    """``host``, ``host:port`` or ``[v6]:port`` to ``(host, port)``."""
    text = text.strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, port = text.split(":")
    else:
        host, port = text, ""
    if not host:
        raise ValueError(f"falta el host (la dirección) en {text!r}")
    if port and (not port.isdigit() or not 0 < int(port) < 65536):
        raise ValueError(f"el puerto no sirve en {text!r}")
    return host, int(port) if port else default_port


def _unix_socketpair() -> tuple[socket.socket, socket.socket]:
    a, b = socket.socketpair()
    a.setblocking(False)
    b.setblocking(False)
    return a, b


def no_loopback_listener() -> None:
    """Make paho-mqtt wake its network thread through a Unix socket pair.

    paho 2.x builds its wake-up pair by listening on a TCP port of 127.0.0.1 for a moment
    (a Windows work-around), at every connection. A table must open no listening socket
    (and its systemd unit may deny it IP traffic other than to the broker), so on POSIX
    the pair comes from ``socket.socketpair()`` instead. Idempotent.
    """
    import paho.mqtt.client as mqtt_client

    if hasattr(socket, "AF_UNIX"):
        mqtt_client._socketpair_compat = _unix_socketpair
