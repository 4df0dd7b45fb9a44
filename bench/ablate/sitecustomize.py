"""``bench/table.py --ablate``: the service with part of its redraw left out, in the
service's own process (a profiling aid: what the rest of an event costs, never a figure
of the product).

Put on the service's ``PYTHONPATH`` by the bench (Python imports ``sitecustomize`` at
start-up). ``TRUCO_BENCH_ABLATE`` says what is left out once every seat's panel has
shown its first screen (the bench waits for those before its first event):

* ``redraw``: ``TableService.redraw`` does nothing (no view, screen, content, page or
  frame is made; the loop's ``_stale`` flag is cleared as a redraw clears it);
* ``send``: the screens and their contents are made and compared as always, and
  ``TableService._show`` takes the content without rendering its pages or sending
  them to the node (the seat counts as shown).

The panels then no longer show the table's screens, so the bench skips its check of
the panels' RAM (the record is still checked).
"""

from __future__ import annotations

import os
from typing import Any

_what = os.environ.get("TRUCO_BENCH_ABLATE")

if _what in ("redraw", "send"):
    import controller.table.service as _service

    _Service: Any = _service.TableService
    _redraw, _show = _Service.redraw, _Service._show

    def _every_seat_shown(service: Any) -> bool:
        return all(content is not None for content in service._shown)

    def redraw(self: Any, force: bool = False) -> None:
        if not force and _every_seat_shown(self):
            self._stale = False
            return
        _redraw(self, force)

    def _show_nothing(self: Any, seat: int, display: Any, content: Any) -> bool:
        if _every_seat_shown(self):
            return True
        return bool(_show(self, seat, display, content))

    if _what == "redraw":
        _Service.redraw = redraw
    else:
        _Service._show = _show_nothing
