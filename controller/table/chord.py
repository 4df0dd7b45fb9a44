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

__all__ = ["CHORD_S", "COMBOS", "COMBO_S", "REFEREE_CHORD", "ControlCombo", "RefereeChord"]

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


#: Longest time between a table control's two holds (*mazo*, then the second button).
COMBO_S: Final = 3.0
#: The table controls on the pads: hold *mazo*, then hold the second button.
COMBOS: Final = {"no_quiero": "undo", "truco": "new-game"}


class ControlCombo:
    """A table control asked on a pad and its confirmation (the service's docstring):
    hold *mazo*, then (within ``COMBO_S``) hold *no quiero* (undo) or *truco* (a new
    game) at the same seat; a seat of the other team confirms with *quiero* (*no
    quiero* cancels). Pure and clock-driven, as ``RefereeChord``."""

    def __init__(self, window: float = COMBO_S) -> None:
        self.window = window
        self._mazo: tuple[int, float] | None = None  # (seat, when) of a mazo hold
        #: (command, team that must confirm) while a control waits for its answer
        self.asking: tuple[str, int] | None = None

    def answer(self, seat: int, name: str) -> str | None:
        """A press while a control waits: the command confirmed (*quiero* of the other
        team), ``""`` (*no quiero*: cancelled), or None (not an answer)."""
        if self.asking is None:
            return None
        command, team = self.asking
        if seat % 2 != team or name not in ("quiero", "no_quiero"):
            return None
        self.asking = None
        return command if name == "quiero" else ""

    def hold(self, seat: int, name: str, now: float) -> str | None:
        """A hold: the command it asks for (the other team must confirm it), or None."""
        mazo, self._mazo = self._mazo, None
        if mazo is not None and mazo[0] == seat and now - mazo[1] <= self.window:
            command = COMBOS.get(name)
            if command is not None:
                self.asking = (command, 1 - seat % 2)
                return command
        if name == "mazo":
            self._mazo = (seat, now)
        return None

    def forget(self) -> None:
        """The last hold was no control's first half (the dealer's hold that starts play)."""
        self._mazo = None

    def cancel(self) -> None:
        """The referee was called: nothing half-asked or waiting stays."""
        self._mazo = self.asking = None
