"""Tag presence: turns raw reader polls into arrive/leave events.

A card lying still on the reader is one arrival, even when a poll now and then
fails to read it: it only counts as gone after no poll has read it for
``grace_ms``.  Putting a different card on the reader ends the old one at once.
"""

from seatnode.compat import ticks_diff

TAGON = "TAGON"
TAGOFF = "TAGOFF"

GRACE_MS = 500


class TagPresence:
    def __init__(self, grace_ms=GRACE_MS):
        self.grace_ms = grace_ms
        self.current = None  # UID (bytes) of the card on the reader, or None
        self._last_seen = 0

    def update(self, uid, now):
        """Take one poll result (UID bytes or None); return a list of (TAGON|TAGOFF, uid)."""
        events = []
        if uid is not None:
            uid = bytes(uid)
            if self.current is not None and uid != self.current:
                events.append((TAGOFF, self.current))
                self.current = None
            if self.current is None:
                self.current = uid
                events.append((TAGON, uid))
            self._last_seen = now
        elif self.current is not None and ticks_diff(now, self._last_seen) >= self.grace_ms:
            events.append((TAGOFF, self.current))
            self.current = None
        return events
