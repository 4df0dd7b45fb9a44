"""What the service tells its listeners (the tournament's publisher, the desk), in order,
once what it says is in the record on the card.

While the disk refuses the record, the events wait in a queue that stays bounded:
refusals past ``OUTGOING_REFUSALS`` are dropped (counted in ``refusals_unsent``), a
referee call repeating the one before it is coalesced; what remains is the game's own
events, told as soon as the disk takes the record again (``deliver``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["OUTGOING_REFUSALS", "Outgoing"]

log = logging.getLogger(__name__)

#: refusals kept for the listeners while the record is not durable
OUTGOING_REFUSALS = 256

E = TypeVar("E")


class Outgoing(Generic[E]):
    """The listeners and the events waiting for the record (see the module docstring).
    ``durable``: whether the record is on the card now; ``is_refusal``, ``is_call``:
    which events may be dropped or coalesced while it is not."""

    def __init__(
        self,
        durable: Callable[[], bool],
        is_refusal: Callable[[E], bool],
        is_call: Callable[[E], bool],
    ) -> None:
        self.durable, self.is_refusal, self.is_call = durable, is_refusal, is_call
        #: called on the loop's thread with every event, in order
        self.listeners: list[Callable[[E], None]] = []
        self.queue: list[E] = []
        self._refusals = 0  # refusals in the queue
        self.refusals_unsent = 0  # refusals dropped from the queue (the disk refusing)

    def emit(self, event: E) -> None:
        if not self.durable():
            if self.is_refusal(event):
                if self._refusals >= OUTGOING_REFUSALS:
                    self.refusals_unsent += 1
                    if self.refusals_unsent == 1 or self.refusals_unsent % 10_000 == 0:
                        log.warning(
                            "%d rechazos sin mandar: el registro todavía no está en el disco",
                            self.refusals_unsent,
                        )
                    return
                self._refusals += 1
            elif self.is_call(event) and self.queue[-1:] == [event]:
                return
        self.queue.append(event)
        self.deliver()

    def deliver(self) -> None:
        """Tell the listeners what waits, if the record is on the card now."""
        if not self.durable():
            return  # the disk has not taken the record yet: the desk hears it later
        queue, self.queue = self.queue, []
        self._refusals = 0
        for event in queue:
            for listener in self.listeners:
                try:
                    listener(event)
                except Exception:  # a listener must never stop the table
                    log.exception("falló un oyente con %s", type(event).__name__)
