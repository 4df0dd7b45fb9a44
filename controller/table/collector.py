"""The cyclic garbage collector's passes, moved to the table's quiet moments.

CPython's collector runs a pass of its young generation inside whichever allocation
takes the young objects past a threshold (700 by default): at a table, inside some
player's event, the panels late by the pass (and, one pass in ten, by the middle
generation's, and one in a hundred by a full one). A table is quiet most of the time:
players think between their calls, and a hand's end waits for the next deal. The
service's run (``truco-table run``) therefore raises the young generation's threshold
to ``SAFETY_THRESHOLD`` (a net only: in a game it is never reached) and makes the passes
itself, on the first turn of the loop once no player's event came for ``QUIET_S``:
the generation CPython would pick then (the oldest whose count is past its threshold),
so the middle and full passes keep their rhythm (CPython also puts a full pass off
until the old generation grew by a quarter; here, after ``freeze_heap``, a full pass
walks only what play made, on a quiet turn). A turn that handles a
player's event never makes one. What it is worth: docs/dev/benchmarks.md, "An eleventh
pass".

The collector's due moment is an entry on the service's timer heap that bounds no wait
(``wake=False``: it rides on the turns the loop makes anyway, a node's heartbeat, the
tick); the pass itself is made at the end of a turn (``TableService.step``), when no
player's event came since the entry was set, so an entry that comes due on an event's
turn only sets it again.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable
from typing import Final

from .timers import Timers

__all__ = ["QUIET_S", "SAFETY_THRESHOLD", "QuietCollector"]

log = logging.getLogger(__name__)

#: no player's event for this long: the table is quiet, the collector's pass is made
QUIET_S: Final = 0.5
#: the young objects past which CPython's collector runs by itself, wherever it is (no
#: hand of the bench's games reached it between two quiet moments: docs/dev/benchmarks.md)
SAFETY_THRESHOLD: Final = 10_000
_KEY: Final = "collector"


class QuietCollector:
    """The collector's passes on the quiet turns of one service's loop (see the module
    docstring). ``played()`` counts the players' events handled so far."""

    def __init__(self, timers: Timers, played: Callable[[], int]) -> None:
        self._timers, self._played = timers, played
        self.enabled = False  # ``enable``: the service's run only (process-wide)
        self.due = False  # the quiet moment may have come: ``collect`` at the turn's end
        self._armed = False  # a pass is waited for
        self._mark = 0  # ``played()`` when the wait began
        self.passes = [0, 0, 0]  # the passes made, by generation

    def enable(self) -> None:
        """From now on the young generation is collected here, on quiet turns, and by
        CPython only past ``SAFETY_THRESHOLD``. Process-wide (the collector's threshold):
        ``truco-table run`` calls it once; a library or a test of the service never does."""
        _, middle, old = gc.get_threshold()
        gc.set_threshold(SAFETY_THRESHOLD, middle, old)
        self.enabled = True
        log.info(
            "el recolector de memoria pasa cuando la mesa está quieta (%.1f s sin jugadas)",
            QUIET_S,
        )

    def arm(self) -> None:
        """Something was drawn (play made objects): a pass is due once the table is quiet."""
        if self._armed or not self.enabled:
            return
        self._armed = True
        self._wait()

    def _wait(self) -> None:
        self._mark = self._played()
        self._timers.after(QUIET_S, self._ripe, _KEY, wake=False)

    def _ripe(self) -> None:
        self.due = True

    def collect(self) -> None:
        """At a turn's end once due: the pass, when no player's event came since the wait
        began; otherwise the wait begins again."""
        self.due = False
        if self._played() != self._mark:
            self._wait()  # play went on
            return
        self._armed = False
        counts, limits = gc.get_count(), gc.get_threshold()
        generation = 2 if counts[2] > limits[2] else 1 if counts[1] > limits[1] else 0
        gc.collect(generation)
        self.passes[generation] += 1

    def close(self) -> None:
        self._timers.cancel(_KEY)
        self._armed = self.due = False
