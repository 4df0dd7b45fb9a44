"""systemd's notification protocol (sd_notify) without a library.

With ``Type=notify`` systemd sets ``NOTIFY_SOCKET``; the service sends ``READY=1`` once
the hardware is up and the game restored, ``WATCHDOG=1`` from its event loop, and
``STATUS=...`` lines that ``systemctl status`` shows. Without the variable (a terminal,
the tests' own socket aside) nothing is sent.
"""

from __future__ import annotations

import logging
import os
import socket
from collections import deque

__all__ = ["FLOOD_MARK", "Notifier", "flood_status", "parse_flood_status"]

#: how the service's status names a flooding seat's dropped events (``STATUS=``, what
#: ``systemctl status`` shows and ``truco-table doctor`` can read back)
FLOOD_MARK = "descartados: "


def flood_status(dropped: dict[int, int]) -> str:
    """``descartados: asiento 1: 12345, asiento 3: 7`` (events dropped since the start)."""
    seats = ", ".join(f"asiento {seat}: {n}" for seat, n in sorted(dropped.items()) if n)
    return f"{FLOOD_MARK}{seats}"


def parse_flood_status(status: str) -> dict[int, int]:
    """The dropped events per seat a ``flood_status`` line says (``{}``: none)."""
    if not status.startswith(FLOOD_MARK):
        return {}
    out: dict[int, int] = {}
    for part in status[len(FLOOD_MARK) :].split(", "):
        words = part.replace(":", " ").split()
        if len(words) == 3 and words[0] == "asiento" and words[1].isdigit() and words[2].isdigit():
            out[int(words[1])] = int(words[2])
    return out


log = logging.getLogger(__name__)

KEEP = 32  # the last messages sent, kept for ``systemctl status``-like inspection and tests


class Notifier:
    """``Notifier(os.environ.get("NOTIFY_SOCKET"))``; ``None`` sends nothing."""

    def __init__(self, address: str | None) -> None:
        if address and address.startswith("@"):
            address = "\0" + address[1:]  # abstract namespace
        self.address = address or None
        #: the last ``KEEP`` messages sent (bounded: a service runs for months)
        self.sent: deque[str] = deque(maxlen=KEEP)
        self.count = 0  # messages sent since the start
        self._failed = False

    @classmethod
    def from_environment(cls) -> Notifier:
        return cls(os.environ.get("NOTIFY_SOCKET"))

    def send(self, *fields: str) -> bool:
        if self.address is None:
            return False
        message = "\n".join(fields)
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.connect(self.address)
                sock.sendall(message.encode("utf-8"))
        except OSError as error:
            if not self._failed:
                log.warning("no pude avisarle a systemd (sd_notify a %s): %s", self.address, error)
                self._failed = True
            return False
        self.sent.append(message)
        self.count += 1
        return True

    def ready(self, status: str = "") -> bool:
        return self.send("READY=1", f"STATUS={status}" if status else "STATUS=ready")

    def watchdog(self) -> bool:
        return self.send("WATCHDOG=1")

    def status(self, text: str) -> bool:
        return self.send(f"STATUS={text}")

    def stopping(self) -> bool:
        return self.send("STOPPING=1")
