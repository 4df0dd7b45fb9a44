"""What the league desk reads on the central broker: a venue's message, authenticated.

A table publishes ``truco/<league>/tables/<table>/...`` at its venue, with the ``mac`` of
its own key over that topic; the venue's bridge carries it to ``league/<venue>/tables/
<table>/...``. The league desk puts the venue's topic back (the bridge's remapping
undone), checks the mac with the key of that table at that venue (derived from the
league's secret) and parses it as the venue desk does
(:func:`controller.tournament.wire.messages.parse_message`); a record is then checked for
the league (:func:`.verify.check_league_record`). Pure.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Callable
from dataclasses import dataclass

from ..wire.messages import (
    MalformedMessage,
    Message,
    Record,
    RejectedMessage,
    Unauthenticated,
    parse_message,
)
from ..wire.topics import tournament_prefix
from .keys import venue_table_key
from .model import League
from .verify import LeagueRecordCheck, check_league_record

__all__ = ["CentralMessage", "RejectedCentral", "central_topic", "read_central", "venue_topic"]


@dataclass(frozen=True)
class CentralMessage:
    venue: str
    message: Message
    check: LeagueRecordCheck | None  # a record's check for the league; None otherwise


@dataclass(frozen=True)
class RejectedCentral:
    venue: str | None
    topic: str
    reason: str  # Spanish


def venue_topic(league: League, topic: str) -> tuple[str, str] | None:
    """``(venue, the topic as its table published it)`` of ``league/<venue>/tables/...``."""
    parts = topic.split("/", 3)
    if len(parts) != 4 or parts[0] != "league" or not parts[1] or parts[2] != "tables":
        return None
    return parts[1], f"{tournament_prefix(league.name)}/{parts[3]}"


def central_topic(league: League, venue: str, topic: str) -> str:
    """Where the central broker has venue ``venue``'s ``truco/<league>/...`` topic: under
    ``league/<venue>/...`` (the bridge's remapping, both ways)."""
    local = f"truco/{league.name}/"
    if not topic.startswith(local):
        raise ValueError(f"not a topic of the league {league.name}: {topic[:120]!r}")
    return f"league/{venue}/{topic[len(local) :]}"


def read_central(
    league: League,
    league_secret: bytes,
    topic: str,
    data: bytes,
    *,
    now: float = 0.0,
    today: datetime.date | None = None,
    keys: Callable[[str, str], bytes | None] | None = None,
) -> CentralMessage | RejectedCentral | None:
    """The venue's message on ``topic``; ``None`` for what is not a table's (the bridge's
    own state, a resend request or an assignment). ``keys``: ``(venue, table)`` to that
    table's key now (a re-keyed table's new one: its old key's messages are rejected);
    ``None``: derived from the league's secret."""
    where = venue_topic(league, topic)
    if where is None:
        return None
    venue, local = where
    if venue not in {c.id for c in league.clubs}:
        return RejectedCentral(venue, topic, f"La sede {venue!r} no está en la liga")

    def key(table: str) -> bytes | None:
        if keys is not None:
            return keys(venue, table)
        return venue_table_key(league_secret, league.name, venue, table)

    try:
        message = parse_message(tournament_prefix(league.name) + "/", local, data, key)
    except Unauthenticated:
        why = "su mac no es el de la clave de esa mesa en esa sede"
        return RejectedCentral(venue, topic, f"Mensaje rechazado de {venue}: {why}")
    except MalformedMessage as e:
        why = f"mal formado ({e})"
        return RejectedCentral(venue, topic, f"Mensaje rechazado de {venue}: {why}")
    except (RejectedMessage, ValueError) as e:
        return RejectedCentral(venue, topic, f"Mensaje rechazado de {venue}: {e}")
    if message is None:
        return None
    check = None
    if isinstance(message, Record):
        check = check_league_record(
            league, league_secret, venue, message.table, message, now=now, today=today,
            key_for=None if keys is None else functools.partial(keys, venue),
        )  # fmt: skip
    return CentralMessage(venue, message, check)
