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
  them to the node (the seat counts as shown);
* ``text``: as ``send``, but each redrawn seat's node is sent what a node that drew its
  own text would need: one ``DT`` frame for each of the score and the three lines that
  changed (the text's UTF-8 in base64, 32 characters an argument), in one write,
  through the seat's link (the node's firmware knows no ``DT``: it ignores it). What
  the design the benchmarks page names ("the nodes drawing their panels' text") would
  leave the Pi, without its flow control: an estimate of that design before it is
  built, never the product's figure.

The panels then no longer show the table's screens, so the bench skips its check of
the panels' RAM (the record is still checked).
"""

from __future__ import annotations

import binascii
import os
from typing import Any

_what = os.environ.get("TRUCO_BENCH_ABLATE")

if _what in ("redraw", "send", "text"):
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

    def _chunks(text: str) -> tuple[str, ...]:
        """``text`` as a frame's arguments: UTF-8 in base64, 32 characters an argument."""
        coded = binascii.b2a_base64(text.encode(), newline=False).decode() or "-"
        return tuple(coded[at : at + 32] for at in range(0, len(coded), 32))

    def _parts(content: Any) -> tuple[str, ...]:
        return (f"{content.ours} {content.theirs} {content.target}", *content.texts)

    def _show_text(self: Any, seat: int, display: Any, content: Any) -> bool:
        if not _every_seat_shown(self):
            return bool(_show(self, seat, display, content))
        old = _parts(self._shown[seat])
        messages = [
            ("DT", (str(index), *_chunks(part)))
            for index, (part, was) in enumerate(zip(_parts(content), old, strict=False))
            if part != was
        ]
        link = getattr(display, "_link", None)
        if messages and link is not None:
            link.send_many(messages)
        return True

    if _what == "redraw":
        _Service.redraw = redraw
    elif _what == "send":
        _Service._show = _show_nothing
    else:
        _Service._show = _show_text
