"""Button pad debounce and long press (plain Python, no ``machine``).

What a player sees: a short press (down, then up before ``hold_ms``) is reported
once, when the button is let go, as PRESS; keeping a button down for ``hold_ms``
reports HOLD once, at that moment, and its release reports nothing more.
A contact that chatters for less than ``debounce_ms`` is ignored.

A button down for ``stuck_ms`` (a line shorted to ground, a jammed key, something
leaning on it) reports STUCK once, and its release after that FREED: the Pi tells the
seat and the owner, and plays nothing.
"""

from seatnode.compat import const, micropython, ticks_diff

PRESS = "PRESS"
HOLD = "HOLD"
STUCK = "STUCK"
FREED = "FREED"

DEBOUNCE_MS = const(20)
HOLD_MS = const(800)
STUCK_MS = const(10000)
_NONE = []  # ButtonPad.update's answer when nothing happened: shared, never changed


class Button:
    """One debounced button.  Feed it raw samples with ``update``."""

    def __init__(self, name, debounce_ms=DEBOUNCE_MS, hold_ms=HOLD_MS, stuck_ms=STUCK_MS):
        self.name = name
        self.debounce_ms = debounce_ms
        self.hold_ms = hold_ms
        self.stuck_ms = stuck_ms
        self.pressed = False  # the debounced state
        self._raw = False
        self._raw_since = None
        self._down_since = 0
        self._held = False
        self._stuck = False

    @micropython.native  # its frame on the C stack, not the heap (README section 9)
    def update(self, raw, now):
        """Take one raw sample (True = contact closed); return PRESS, HOLD, STUCK,
        FREED or None."""
        raw = bool(raw)
        if self._raw_since is None or raw != self._raw:
            self._raw = raw
            self._raw_since = now
        if raw != self.pressed and ticks_diff(now, self._raw_since) >= self.debounce_ms:
            self.pressed = raw
            if raw:
                self._down_since = self._raw_since
                self._held = False
            elif self._stuck:
                self._stuck = False
                return FREED
            elif not self._held:
                return PRESS
        if self.pressed and not self._held and ticks_diff(now, self._down_since) >= self.hold_ms:
            self._held = True
            return HOLD
        if (
            self._held
            and not self._stuck
            and self.pressed
            and ticks_diff(now, self._down_since) >= self.stuck_ms
        ):
            self._stuck = True
            return STUCK
        return None


class ButtonPad:
    """The seat's eight buttons, sampled together."""

    def __init__(self, names, debounce_ms=DEBOUNCE_MS, hold_ms=HOLD_MS, stuck_ms=STUCK_MS):
        self.buttons = [Button(name, debounce_ms, hold_ms, stuck_ms) for name in names]
        # a button's contact changed less than the debounce time ago (after the last
        # update): its PRESS, HOLD or FREED may be due within that time, so the node's
        # loop keeps its passes short until it is (seatnode.main)
        self.settling = False

    @micropython.native  # its frame on the C stack, not the heap (README section 9)
    def update(self, raw_states, now):
        """Take one sample per button; return a list of (PRESS|HOLD|STUCK|FREED, name).

        A sample that changes nothing returns the one shared empty list (never to be
        changed): nothing is allocated."""
        events = _NONE
        buttons = self.buttons
        settling = False
        for i in range(min(len(buttons), len(raw_states))):
            button = buttons[i]
            event = button.update(raw_states[i], now)
            if event is not None:
                if events is _NONE:
                    events = []
                events.append((event, button.name))
            if button._raw != button.pressed:
                settling = True
        self.settling = settling
        return events
