"""A stolen table key's flood: authenticated junk as a thief would send it (issue 25).

Events and junk records signed with one table's key, in seq order (every tenth a
record) and every third far ahead of the window. The tests send it through the venue's
Mosquitto (tests/tournament/venue/test_insider.py); ``bench/desk_flood.py`` hands it to
a desk's state and times it.
"""

from __future__ import annotations

from collections.abc import Iterator

from controller.tournament.wire.messages import signed

__all__ = ["flood"]


def flood(key: bytes, count: int, table: str = "mesa01", tournament: str = "copa"
          ) -> Iterator[tuple[str, bytes]]:  # fmt: skip
    """``count`` (topic, signed payload) pairs signed with ``key`` (the table's)."""
    base = f"truco/{tournament}/tables/{table}"
    junk = "x" * 300
    in_order = 0
    for i in range(count):
        if i % 3:
            in_order += 1
            seq = in_order
        else:
            seq = 5_000 + i
        if i % 10 == 1:
            topic = f"{base}/records/{table}-g{i:05d}"
            body = {"v": 1, "table": table, "seq": seq, "ts": 0, "kind": "record",
                    "game": f"{table}-g{i:05d}", "winner": 0, "score": [15, 0],
                    "record": junk}  # fmt: skip
        else:
            topic = f"{base}/events"
            body = {"v": 1, "table": table, "seq": seq, "ts": 0, "kind": "refusal",
                    "game": f"{table}-g001", "seat": 0, "action": None,
                    "code": "unknown_card", "text": junk}  # fmt: skip
        yield topic, signed(key, topic, body)
