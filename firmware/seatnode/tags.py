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

from seatnode.compat import ticks_diff
from seatnode.mfrc522 import MANY

TAGON = "TAGON"
TAGOFF = "TAGOFF"
TAGMANY = "TAGMANY"

GRACE_MS = 500
CONFIRM_READS = 2


class TagPresence:
    def __init__(self, grace_ms=GRACE_MS, confirm=CONFIRM_READS):
        self.grace_ms = grace_ms
        self.confirm = confirm
        self.current = None  # UID (bytes) of the card on the reader, or None
        self.conflict = False  # several tags are in the field (TAGMANY sent)
        self._last_seen = 0  # when a poll last saw something (a UID or MANY)
        self._candidate = None  # what the last polls read: UID bytes or MANY
        self._count = 0  # how many consecutive polls read it

    def update(self, seen, now):
        """Take one poll result (UID bytes, None or MANY); return a list of (kind, uid).

        ``kind`` is TAGON, TAGOFF or TAGMANY (whose uid is None).
        """
        events = []
        if seen is None:
            self._candidate = None
            self._count = 0
            if ticks_diff(now, self._last_seen) >= self.grace_ms:
                if self.current is not None:
                    events.append((TAGOFF, self.current))
                    self.current = None
                self.conflict = False
            return events
        self._last_seen = now
        if seen is not MANY:
            seen = bytes(seen)
        if seen is self._candidate or (
            seen is not MANY and self._candidate is not MANY and seen == self._candidate
        ):
            self._count += 1
        else:
            self._candidate = seen
            self._count = 1
        if self._count < self.confirm:
            return events
        if seen is MANY:
            if not self.conflict:
                self.conflict = True
                events.append((TAGMANY, None))
            return events
        self.conflict = False
        if seen != self.current:
            if self.current is not None:
                events.append((TAGOFF, self.current))
            self.current = seen
            events.append((TAGON, seen))
        return events
