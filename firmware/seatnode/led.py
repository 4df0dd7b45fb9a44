"""The status LED's patterns (plain Python; ``main`` copies the result to the pins).

Highest priority first:

=============  ==========================================  ====================
name           looks like                                  means
=============  ==========================================  ====================
identify       fast blink, 5 per second                    the Pi sent IDENT
boot           three quick flashes                         just powered up
reader error   double blink every second                   no MFRC522 answers
no host        short blip every two seconds                no heartbeat from Pi
host mode      OFF / ON / SLOW (1 Hz) / FAST (4 Hz)        set by the Pi (LED)
=============  ==========================================  ====================

In host mode, a card arriving or leaving and a button press briefly invert the
LED (80 ms) so the player sees the node noticed.
"""

from seatnode.compat import const, micropython, ticks_add, ticks_diff

BOOT_MS = const(600)
FLASH_MS = const(80)

# (period, ((on_from, on_until), ...)) in milliseconds.
_PATTERNS = {
    "IDENT": (200, ((0, 100),)),
    "BOOT": (200, ((0, 100),)),
    "READER": (1000, ((0, 100), (200, 300))),
    "NOHOST": (2000, ((0, 50),)),
    "OFF": (1000, ()),
    "ON": (1000, ((0, 1000),)),
    "SLOW": (1000, ((0, 500),)),
    "FAST": (250, ((0, 125),)),
}


def _lit(pattern, elapsed):
    period, windows = _PATTERNS[pattern]
    phase = elapsed % period
    for window in windows:  # noqa: SIM110 (any() of a generator allocates it, a pass)
        if window[0] <= phase < window[1]:
            return True
    return False


class StatusLed:
    def __init__(self, now):
        self.boot = now
        self._booting = True
        self.mode = "OFF"
        self._ident_until = None
        self._ident_from = 0
        self._flash_until = None

    def set_mode(self, mode):
        """The Pi's choice of pattern: OFF, ON, SLOW or FAST."""
        if mode in _PATTERNS:
            self.mode = mode

    def identify(self, seconds, now):
        """Blink fast for ``seconds`` (0 stops identifying)."""
        if seconds <= 0:
            self._ident_until = None
        else:
            self._ident_from = now
            self._ident_until = ticks_add(now, seconds * 1000)

    def flash(self, now):
        """Briefly invert the host-mode pattern (card or button feedback)."""
        self._flash_until = ticks_add(now, FLASH_MS)

    def pattern(self, now, host_alive, reader_ok):
        """Name of the pattern shown at ``now`` (for tests and diagnostics)."""
        if self._ident_until is not None:
            if ticks_diff(self._ident_until, now) > 0:
                return "IDENT"
            self._ident_until = None
        if self._booting:
            if ticks_diff(now, self.boot) < BOOT_MS:
                return "BOOT"
            self._booting = False
        if not reader_ok:
            return "READER"
        if not host_alive:
            return "NOHOST"
        return self.mode

    @micropython.native  # its frame on the C stack, not the heap (README section 9)
    def is_on(self, now, host_alive, reader_ok):
        """Whether the LED is lit at ``now``."""
        pattern = self.pattern(now, host_alive, reader_ok)
        if pattern == "IDENT":
            return _lit(pattern, ticks_diff(now, self._ident_from))
        lit = _lit(pattern, ticks_diff(now, self.boot) if pattern == "BOOT" else now)
        if pattern == self.mode and self._flash_until is not None:
            if ticks_diff(self._flash_until, now) > 0:
                return not lit
            self._flash_until = None
        return lit
