"""The refusals' rate limit: a stuck button is counted, not told refusal by refusal.

A seat's first ``REFUSAL_BURST`` refusals in a window of ``REFUSAL_WINDOW_S`` (the
window opens at its first refusal) are told one by one: to the listeners (the desk),
and under the tournament profile in the record. Those beyond are counted by code; when
the window closes (its time is up, or an action is accepted: the count comes before it)
the service says how many in one journal line and, under the tournament profile, one
record comment (``# rechazos sin anotar: asiento 1, 4995 (not_your_turn 4995)``).
"""

from __future__ import annotations

from collections import Counter

__all__ = ["REFUSAL_BURST", "REFUSAL_COUNT_MARK", "REFUSAL_WINDOW_S", "RefusalLimit"]

REFUSAL_BURST = 5
REFUSAL_WINDOW_S = 10.0
REFUSAL_COUNT_MARK = "# rechazos sin anotar: asiento "


class RefusalLimit:
    """Each seat's refusal window (see the module docstring). Time comes from the
    caller; the service's timer heap closes each window when its time is up."""

    def __init__(self, burst: int = REFUSAL_BURST, window: float = REFUSAL_WINDOW_S) -> None:
        self.burst, self.window = burst, window
        self._told: dict[int, int] = {}  # per seat with a window open: refusals told in it
        self._untold: dict[int, Counter[str]] = {}  # per seat, by code
        self.untold = 0  # refusals counted, not told one by one (since the start)

    def opens(self, seat: int) -> bool:
        """Whether a refusal of ``seat`` now opens its window (none is open)."""
        return seat not in self._told

    def admit(self, seat: int, code: str) -> bool:
        """One refusal of ``seat``: True to tell it, False when it is only counted."""
        told = self._told.get(seat, 0)
        if told >= self.burst:
            self._untold.setdefault(seat, Counter())[code] += 1
            self.untold += 1
            return False
        self._told[seat] = told + 1
        return True

    @property
    def counting(self) -> bool:
        """Whether some seat has refusals counted and not yet said."""
        return bool(self._untold)

    def seats(self) -> list[int]:
        """The seats with a window open."""
        return list(self._told)

    def close(self, seat: int) -> Counter[str] | None:
        """Close ``seat``'s window: its refusals counted in it (None if none)."""
        self._told.pop(seat, None)
        return self._untold.pop(seat, None) or None
