"""Tag presence: turns raw reader polls into arrive, leave and conflict events.

A poll reads one of three things: a UID (bytes), nothing (None), or several tags at
once (``MANY``: anticollision saw a bit collision).  What the Pi is told:

* A card counts as arrived only when ``confirm`` consecutive polls read the same UID
  (a card sliding over the reader, or a second card that is about to land, is not a
  play).  It is one TAGON however long it lies there.
* It counts as gone after no poll has seen it for ``grace_ms`` (a poll that misses
  it now and then does not matter).  A different card confirmed on the reader ends
  the old one at once: TAGOFF, then TAGON.
* Several tags in the field, seen on ``confirm`` consecutive polls, are one TAGMANY
  and never a TAGON: the node does not guess which card was meant.  The conflict
  lasts until one card alone is confirmed or the field has been empty for
  ``grace_ms``; a new conflict after that is reported again.  A card that had
  arrived before the conflict stays on the reader meanwhile (the field is busy, so
  its grace period does not run out).
"""

from seatnode.compat import const, micropython, ticks_diff
from seatnode.mfrc522 import MANY

TAGON = "TAGON"
TAGOFF = "TAGOFF"
TAGMANY = "TAGMANY"

GRACE_MS = const(500)
_NONE = []  # update's answer when nothing happened: shared, never changed
CONFIRM_READS = const(2)


class TagPresence:
    def __init__(self, grace_ms=GRACE_MS, confirm=CONFIRM_READS):
        self.grace_ms = grace_ms
        self.confirm = confirm
        self.current = None  # UID (bytes) of the card on the reader, or None
        self.conflict = False  # several tags are in the field (TAGMANY sent)
        self._last_seen = 0  # when a poll last saw something (a UID or MANY)
        self._candidate = None  # what the last polls read: UID bytes or MANY
        self._count = 0  # how many consecutive polls read it
        # the UID being confirmed, copied here (ISO 14443 UIDs: 4, 7 or 10 bytes) so a
        # poll allocates nothing until a card is confirmed (its TAGON)
        self._copies = {4: bytearray(4), 7: bytearray(7), 10: bytearray(10)}

    @property
    def confirming(self):
        """A new card (or several tags) has been read once and waits for its confirming
        read: the node polls again at once rather than a poll period later."""
        return self._candidate is not None and self._count < self.confirm

    @micropython.native  # its frame on the C stack, not the heap (README section 9)
    def update(self, seen, now):
        """Take one poll result (UID bytes, None or MANY); return a list of (kind, uid).

        ``kind`` is TAGON, TAGOFF or TAGMANY (whose uid is None).  A poll that changes
        nothing returns the one shared empty list (never to be changed) and allocates
        nothing: the UID (the reader's buffer, which its next poll overwrites) is
        copied into a buffer of the tracker's own, and into new bytes only when the
        card is confirmed (TAGON).
        """
        if seen is None:
            self._candidate = None
            self._count = 0
            if ticks_diff(now, self._last_seen) >= self.grace_ms:
                events = _NONE
                if self.current is not None:
                    events = [(TAGOFF, self.current)]
                    self.current = None
                self.conflict = False
                return events
            return _NONE
        self._last_seen = now
        candidate = self._candidate
        if seen is MANY:
            same = candidate is MANY
        else:
            same = candidate is not None and candidate is not MANY and seen == candidate
        if same:
            self._count += 1
        else:
            self._candidate = candidate = seen if seen is MANY else self._copy(seen)
            self._count = 1
        if self._count < self.confirm:
            return _NONE
        if seen is MANY:
            if not self.conflict:
                self.conflict = True
                return [(TAGMANY, None)]
            return _NONE
        self.conflict = False
        if candidate != self.current:
            events = []
            if self.current is not None:
                events.append((TAGOFF, self.current))
            self.current = bytes(candidate)
            events.append((TAGON, self.current))
            return events
        return _NONE

    def _copy(self, uid):
        copy = self._copies.get(len(uid))
        if copy is None:  # not an ISO 14443 length: a copy of its own
            return bytes(uid)
        for i in range(len(uid)):
            copy[i] = uid[i]
        return copy
