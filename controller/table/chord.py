"""The referee call on the pads: *quiero* and *no quiero* held down together.

Every pad has the two answer buttons, and no player means both at once: holding them
together for a second is the seat's "llamar al árbitro". What the pad reports
(``firmware/PROTOCOL.md``, the same from a seat node and from ``GpioPad``): a short
press when the button is let go, a hold once it has been down 800 ms. So a button kept
down never acts while it is down, and the chord is seen as the two buttons' holds,
one after the other at the same seat, at most ``CHORD_S`` apart:

- pressed together and kept down (in either order): two holds ``CHORD_S`` or less
  apart. Both buttons were then down together for at least 0.8 s - ``CHORD_S``.
- the first hold arrives before the chord is known. It opens that button's menu on
  the seat's display and plays nothing (a hold never plays: its menu needs a further
  press of *quiero*); the chord closes that menu.
- one button let go before its 800 ms is a short press of it (answered or refused as
  any press): the chord was not made, nothing is called.
- the two holds further apart than ``CHORD_S``, or another event of the seat between
  them, are two holds (two menus), no call.

Pure and clock-driven: the service (``controller.table.service``) feeds it every button
event of every seat, from seat nodes and GPIO pads alike, with its own clock, when it
takes the event off its queue. The loop takes events within milliseconds; one held up
longer than ``CHORD_S`` (a stalled disk) could take two holds that were further apart as
a chord: a referee call too many at worst, never a card played or a call answered.
"""

from __future__ import annotations

from typing import Final

__all__ = ["CHORD_S", "REFEREE_CHORD", "RefereeChord"]

#: The buttons held together to call the referee (names as on the wire).
REFEREE_CHORD: Final = frozenset({"quiero", "no_quiero"})
#: Longest time between the two buttons' holds (so, between the two presses).
CHORD_S: Final = 0.5


class RefereeChord:
    """Spots the referee chord in the seats' button events, one seat apart from another."""

    def __init__(self, window: float = CHORD_S) -> None:
        if not 0 < window < 0.8:
            raise ValueError(f"the chord's window must be 0..0.8 s (the hold time), not {window}")
        self.window = window
        self._first: dict[int, tuple[str, float]] = {}  # seat -> (first hold, when)

    def hold(self, seat: int, name: str, now: float) -> bool:
        """A hold of ``name`` at ``seat``; True when it completes the chord."""
        first = self._first.pop(seat, None)
        if name not in REFEREE_CHORD:
            return False
        if first is not None and first[0] != name and now - first[1] <= self.window:
            return True
        self._first[seat] = (name, now)
        return False

    def press(self, seat: int) -> None:
        """A short press at ``seat``: whatever hold came before is no chord's first half."""
        self._first.pop(seat, None)
