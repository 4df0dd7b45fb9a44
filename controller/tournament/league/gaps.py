"""The league desk's watch on each venue table's messages: the holes it asks for again.

Every message of a table (events, records, statuses) carries its ``seq``: the table's
outbox numbers them 1, 2, 3, ... for the life of its folder, and keeps every one on its
disk. The bridge and the brokers queue them while a link is down, but a venue broker
that loses power (Mosquitto saves to disk every ``autosave_interval`` seconds) or
overflows its queue (``max_queued_messages``) loses what it held: the table had its
acknowledgement, so it never sends it again by itself. The league desk sees the hole in
the seqs that follow and asks the table for them (a resend request, back through the
central broker and the venue's bridge); the table publishes them again from its outbox.

:class:`SeqWatch` is pure (the caller gives the time). Per venue and table it follows
the seqs from the lowest one heard live within ``FOLLOW_WAIT_S`` of the first (not the
retained copies a subscription brings again: those are old; and messages overtake one
another on the way, as the venue's state allows for: :mod:`..desk.state`); a live
status says how far the table has journaled, so a hole at the end of the night is seen
too. A hole is asked for once it is ``GAP_WAIT_S`` old, again every ``RETRY_S`` while it
stays open, ``RESEND_MAX`` messages at a time, and given up after ``MAX_ASKS`` requests
(:attr:`SeqWatch.given_up`: the messages the table could not give again).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from ..desk.state import FOLLOW_WAIT_S

__all__ = ["GAP_WAIT_S", "MAX_ASKS", "RESEND_MAX", "RETRY_S", "Hole", "SeqWatch"]

#: How long a hole stays open, nothing moving, before it is asked for (what the table
#: sends after a cut may still be on its way through the two brokers and the bridge).
GAP_WAIT_S: Final = 2.0
#: How long a request is given before the same hole is asked for again.
RETRY_S: Final = 10.0
#: Most messages one request asks for (the table serves at most as many).
RESEND_MAX: Final = 500
#: Requests for one hole before the desk gives it up.
MAX_ASKS: Final = 5


@dataclass(frozen=True, slots=True)
class Hole:
    """Seqs ``first`` to ``last`` of ``table`` at ``venue``: never heard."""

    venue: str
    table: str
    first: int
    last: int


@dataclass(slots=True)
class _Table:
    next_seq: int  # the first seq not heard (every one before it was, from the first heard)
    known: int  # the highest seq the table sent or said it has
    changed: float  # when next_seq last moved, or the hole appeared
    above: set[int] = field(default_factory=set)  # heard beyond the hole
    first: int = 0  # where the watch starts (the lowest seq heard)
    since: float | None = None  # when the first event or record was heard
    asked: float | None = None  # when the current hole was last asked for
    asks: int = 0  # requests for the current hole


class SeqWatch:
    def __init__(self) -> None:
        self._tables: dict[tuple[str, str], _Table] = {}
        self.given_up: list[Hole] = []

    def heard(self, venue: str, table: str, seq: int, now: float) -> None:
        """A table's message, as it came live (an event or a record)."""
        t = self._tables.get((venue, table))
        if t is None:
            self._tables[(venue, table)] = _Table(seq + 1, seq, now, first=seq, since=now)
            return
        if seq < t.first and (t.since is None or now - t.since < FOLLOW_WAIT_S):
            # the ones heard so far overtook this one on the way (or only a status came):
            # the watch starts here, what it heard stays heard, what lies between is a hole
            t.above.update(range(t.first, t.next_seq))
            t.first, t.next_seq = seq, seq
        if t.since is None:
            t.since = now
        if seq < t.next_seq or seq in t.above:
            return  # a duplicate (QoS 1) or a message given again
        if seq > t.next_seq:
            if not t.above and t.known < t.next_seq:
                t.changed = now  # the hole appears now
            t.known = max(t.known, seq)
            t.above.add(seq)
            return
        t.known = max(t.known, seq)
        t.next_seq += 1
        while t.next_seq in t.above:
            t.above.discard(t.next_seq)
            t.next_seq += 1
        t.changed, t.asked, t.asks = now, None, 0

    def forget(self, venue: str, table: str) -> None:
        """Start ``table``'s watch again at its next message (it was given a new key:
        what the copy of its old key sent is no hole of the real table's)."""
        self._tables.pop((venue, table), None)

    def said(self, venue: str, table: str, last_seq: int, now: float) -> None:
        """A table's live status: it has journaled every seq up to ``last_seq``."""
        t = self._tables.get((venue, table))
        if t is None:
            self._tables[(venue, table)] = _Table(last_seq + 1, last_seq, now,
                                                  first=last_seq + 1)  # fmt: skip
        elif last_seq > t.known:
            if t.known < t.next_seq and not t.above:
                t.changed = now  # the hole at the end appears now
            t.known = last_seq

    def holes(self, now: float) -> list[Hole]:
        """The holes to ask for now (each marked asked); a hole asked for ``MAX_ASKS``
        times is given up instead."""
        out: list[Hole] = []
        for (venue, table), t in sorted(self._tables.items()):
            if t.above:
                end = min(t.above) - 1
            elif t.known >= t.next_seq:
                end = t.known
            else:
                continue
            if now - t.changed < GAP_WAIT_S:
                continue
            if t.asked is not None and now - t.asked < RETRY_S:
                continue
            hole = Hole(venue, table, t.next_seq, min(end, t.next_seq + RESEND_MAX - 1))
            if t.asks >= MAX_ASKS:
                self.given_up.append(Hole(venue, table, t.next_seq, end))
                self._skip(t, end, now)
                continue
            t.asked, t.asks = now, t.asks + 1
            out.append(hole)
        return out

    def _skip(self, t: _Table, end: int, now: float) -> None:
        t.next_seq = end + 1
        while t.next_seq in t.above:
            t.above.discard(t.next_seq)
            t.next_seq += 1
        t.changed, t.asked, t.asks = now, None, 0

    def open_holes(self) -> list[Hole]:
        """Every hole open now, asked for or not (for the desk's page and the tests)."""
        out = []
        for (venue, table), t in sorted(self._tables.items()):
            if t.above:
                out.append(Hole(venue, table, t.next_seq, min(t.above) - 1))
            elif t.known >= t.next_seq:
                out.append(Hole(venue, table, t.next_seq, t.known))
        return out
