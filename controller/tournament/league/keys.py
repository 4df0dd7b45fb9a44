"""A league's keys: one secret for the league, one secret per venue derived from it, and
each venue's table keys derived from its venue's secret.

::

    venue_secret = HKDF-SHA256(ikm=league secret, salt="truco-table v1",
                               info="venue" 0 league 0 venue)
    table_key    = derive_table_key(venue_secret, league, table)   # keys.py, as a tournament

so a venue (its desk holds its ``secret.key``, the venue secret) derives its own
tables' keys and no other venue's, and the league desk (the league secret) derives every
table's key of every venue. A record sealed at one venue never verifies as another
venue's, even when both have a table named ``mesa01``.
"""

from __future__ import annotations

from ..wire.keys import derive_table_key, hkdf_sha256
from ..wire.seal import MIN_KEY_BYTES, KeyConfigError
from .model import check_id

__all__ = ["derive_venue_secret", "venue_table_key"]

_SALT = b"truco-table v1"


def derive_venue_secret(league_secret: bytes, league: str, venue: str) -> bytes:
    """The secret of ``venue`` in ``league`` (32 bytes): what that venue's desk holds."""
    if len(league_secret) < MIN_KEY_BYTES:
        raise KeyConfigError("El secreto de la liga es demasiado corto (al menos 16 bytes)")
    info = b"venue\0" + check_id("El nombre de la liga", league).encode()
    info += b"\0" + check_id("El id de la sede", venue).encode()
    return hkdf_sha256(league_secret, salt=_SALT, info=info)


def venue_table_key(league_secret: bytes, league: str, venue: str, table: str) -> bytes:
    """The key of ``table`` at ``venue``: what that table seals its records with."""
    check_id("El id de la mesa", table)
    return derive_table_key(derive_venue_secret(league_secret, league, venue), league, table)
