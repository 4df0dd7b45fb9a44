"""The table's side of its hardware: the seats' status file the doctor reads
(:class:`SeatStatus`, told each seat's node and panel by the wiring), and ``truco-table
run``'s exit status when the hardware cannot start. The wiring itself, from the
configuration to seat links, pads, readers and panels, is ``controller.hal.wiring``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..hal.events import LinkEvent, NodeConnected, NodeDisconnected, PanelReport
from .runfile import replace_json

__all__ = ["HARDWARE_EXIT", "SeatStatus", "read_seat_status", "read_status"]

log = logging.getLogger(__name__)

#: ``truco-table run``'s exit status when the hardware cannot start (no pin factory: no
#: /dev/gpiochip*, not a Raspberry Pi; a pin another program holds). Restarting cannot
#: fix it: systemd/truco-table.service lists it in RestartPreventExitStatus.
HARDWARE_EXIT = 3


class SeatStatus:
    """What the service knows of each seat's node and panel, for ``truco-table doctor``.

    A small JSON file (``[table] status_file``, ``/run/truco-table/seats.json`` under
    systemd's ``RuntimeDirectory``, readable by every user), rewritten whole (a temporary
    file and ``os.replace``) whenever a node comes or goes or reports its panel (the
    node's ``PANEL`` state); removed when the service stops. The doctor opens no port the
    service holds: a node's panel is known only to the node, and this is where it says.
    A folder that is not there, or a write that fails, costs the table nothing.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._seats: dict[int, dict[str, Any]] = {}
        self._failed = False
        self._test = False  # the seat test is on
        self._second_run: dict[str, Any] | None = None  # the last second `run` stopped

    def node(self, seat: int, connected: bool) -> None:
        with self._lock:
            entry = self._seats.setdefault(seat, {})
            entry["node"] = "connected" if connected else "disconnected"
            if not connected:
                entry.pop("panel", None)  # known again when the node reports it
            self._write()

    def panel(self, seat: int, report: PanelReport) -> None:
        with self._lock:
            entry = self._seats.setdefault(seat, {})
            entry["node"] = "connected"
            entry["panel"] = {"driver": report.kind, "address": report.address, "ok": report.ok}
            self._write()

    def faults(self, seat: int, faults: dict[str, str]) -> None:
        """The seat's hardware faults (``controller.table.faults``: reader, a stuck
        button, the node on another seat, a card of another deck), by kind: what to say."""
        with self._lock:
            entry = self._seats.setdefault(seat, {})
            if faults:
                entry["faults"] = dict(faults)
            else:
                entry.pop("faults", None)
            self._write()

    def pinmap(self, seat: int, said: str) -> None:
        """The seat's node drives a panel the pin map puts elsewhere (the wrong pin map)."""
        with self._lock:
            self._seats.setdefault(seat, {})["pinmap"] = said
            self._write()

    def second_run(self, pid: int) -> None:
        """A second ``truco-table run`` on this table stopped at the lock."""
        with self._lock:
            self._second_run = {"pid": pid, "at": round(time.time(), 3)}
            self._write()

    def heard(self, seat: int, said: str) -> None:
        """What the seat last heard during the seat test (``botón truco``)."""
        with self._lock:
            entry = self._seats.setdefault(seat, {})
            entry["heard"] = said
            entry["heard_at"] = round(time.time(), 3)
            self._write()

    def set_test(self, on: bool) -> None:
        """The seat test is on (``truco-table doctor --asientos`` follows it)."""
        with self._lock:
            self._test = on
            self._write()

    def listener(
        self,
        seat: int,
        then: Callable[[LinkEvent], None] | None,
        forward: Callable[[int, LinkEvent], None] | None = None,
    ) -> Callable[[LinkEvent], None]:
        """A link's ``display_listener`` that notes the seat's state, then calls ``then``;
        a panel's report also goes to ``forward`` (the service: a seat whose panel does
        not answer is said on the others)."""

        def listen(event: LinkEvent) -> None:
            if isinstance(event, PanelReport):
                self.panel(seat, event)
                if forward is not None:
                    forward(seat, event)
            elif isinstance(event, NodeConnected):
                self.node(seat, True)
            elif isinstance(event, NodeDisconnected):
                self.node(seat, False)
            if then is not None:
                then(event)

        return listen

    def _write(self) -> None:
        if self.path is None or not self.path.parent.is_dir():
            return
        data = {
            "pid": os.getpid(),
            "seats": {str(s): e for s, e in sorted(self._seats.items())},
            "test": self._test,
        }
        if self._second_run is not None:
            data["second_run"] = self._second_run
        try:
            replace_json(self.path, data, prefix=".seats-", sort_keys=True)
        except OSError as error:
            if not self._failed:
                self._failed = True
                log.warning(
                    "no puedo escribir el estado de los asientos en %s: %s", self.path, error
                )

    def close(self) -> None:
        if self.path is None:
            return
        with self._lock, contextlib.suppress(OSError):
            self.path.unlink()


def read_seat_status(path: Path) -> dict[int, dict[str, Any]] | None:
    """The seats' state as a running service wrote it; None when no service writes it
    (no file, or its process is gone). Raises ``PermissionError`` if unreadable."""
    status = read_status(path)
    return None if status is None else status["seats"]


def read_status(path: Path) -> dict[str, Any] | None:
    """The whole status file (``seats`` by number, ``test``, ``second_run``), as
    ``read_seat_status`` reads it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (ValueError, UnicodeDecodeError):
        return None  # half a file cannot be: it is replaced whole; treat as unknown
    if not isinstance(data, dict) or not isinstance(data.get("seats"), dict):
        return None
    pid = data.get("pid")
    if isinstance(pid, int) and pid > 0:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None  # written by a service that is gone
        except PermissionError:
            pass  # alive, another user's
    seats: dict[int, dict[str, Any]] = {}
    for key, entry in data["seats"].items():
        if isinstance(key, str) and key.isdigit() and isinstance(entry, dict):
            seats[int(key)] = entry
    second = data.get("second_run")
    return {
        "seats": seats,
        "test": data.get("test") is True,
        "second_run": second if isinstance(second, dict) else None,
    }
