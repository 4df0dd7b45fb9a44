"""Handing hardware events to the table from a device's own thread."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

__all__ = ["deliver"]


def deliver(
    log: logging.Logger,
    seat: int,
    on_event: Callable[[int, Any], None],
    event: object,
    failures: int,
) -> int:
    """Call ``on_event(seat, event)``; returns the updated count of failed calls.

    A failing callback never stops the device: the first failure is logged with its
    traceback, later ones at debug level only.
    """
    try:
        on_event(seat, event)
    except Exception:
        failures += 1
        if failures == 1:
            log.exception("asiento %d: on_event falló con %r", seat, event)
        else:
            log.debug("seat %d: on_event failed again for %r", seat, event)
    return failures
