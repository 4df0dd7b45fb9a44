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

__all__ = ["Notifier"]

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
                log.warning("sd_notify to %s failed: %s", self.address, error)
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
