"""A seat node simulated on a pseudo-terminal, running the firmware's NodeApp.

The test side of the pty pair plays the Pico: bytes the Pi writes reach
``NodeApp.receive``; frames the app sends are written back.  The node appears
under a fake ``/dev/serial/by-id`` directory as a symlink to the pty's slave,
so ``unplug()`` (close the pty, remove the link) and ``plug()`` (new pty, new
link) look to the Pi exactly like pulling and re-inserting the USB cable.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import tty
from pathlib import Path

from seatnode import protocol
from seatnode.compat import ticks_diff, ticks_ms
from seatnode.node import NodeApp
from seatnode.panel import Panel


class SimNode:
    def __init__(
        self,
        by_id_dir: Path,
        serial: str = "e6614103e7ab1234",
        seat: int | None = 0,
        heartbeat_ms: int = 100,
        poll_ms: int = 20,
        panel: object = None,
        stuck_ms: int | None = None,
    ) -> None:
        """``panel``: a panel model on the node's I2C (tests/firmware/fake_oled.py), whose
        type the node drives; it keeps its RAM across unplugging unless power-cycled."""
        self.serial = serial
        self.seat = seat
        self.stuck_ms = stuck_ms  # None: the firmware's
        self.heartbeat_ms = heartbeat_ms
        self.poll_ms = poll_ms
        self.link = by_id_dir / f"usb-MicroPython_Board_in_FS_mode_{serial}-if00"
        self.app: NodeApp | None = None
        self.tag: bytes | None = None
        self.buttons = [False] * len(protocol.BUTTONS)
        self.silent = False  # True: keep the port but send nothing (a hung node)
        #: whether its MFRC522 answers: set at each poll as main.py sets it (the firmware
        #: then says it at once in a heartbeat); False at plug(): none fitted
        self.reader_ok = True
        self.received: list[bytes] = []  # raw bytes from the Pi, for assertions
        self.boots = 0
        self.panel = panel
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._master = -1
        self._slave = -1

    # -- cable ------------------------------------------------------------------------
    def plug(self) -> None:
        """Power up a fresh node (new pty) and make it appear under by-id."""
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        if self.link.is_symlink() or self.link.exists():
            self.link.unlink()
        self.link.symlink_to(os.ttyname(slave))
        now = ticks_ms()
        with self._lock:
            self.app = NodeApp(
                self._write,
                self.seat,
                self.serial,
                now,
                heartbeat_ms=self.heartbeat_ms,
                **({} if self.stuck_ms is None else {"stuck_ms": self.stuck_ms}),
                reader_version=0x92 if self.reader_ok else 0x00,
            )
            self.app.reader_ok = self.reader_ok
            if self.panel is not None:
                kind = type(self.panel).__name__[:-5].lower()  # SSD1306Model -> ssd1306
                self.app.attach_panel(Panel(self.panel, kind), None, now)
        self.boots += 1
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="simnode", daemon=True)
        self._thread.start()

    def unplug(self) -> None:
        """Yank the cable: the port path disappears and the Pi's reads fail."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
        if self.link.is_symlink():
            self.link.unlink()
        for fd in (self._master, self._slave):
            if fd >= 0:
                os.close(fd)
        self._master = self._slave = -1

    # -- what the player does -----------------------------------------------------------
    def set_button(self, name: str, down: bool) -> None:
        with self._lock:
            self.buttons[protocol.BUTTONS.index(name)] = down

    def inject(self, raw: bytes) -> None:
        """Write raw bytes to the Pi as if the node had sent them (garbage tests)."""
        with self._lock:
            self._write(raw)

    @property
    def host_alive(self) -> bool:
        with self._lock:
            return self.app is not None and self.app.host_alive(ticks_ms())

    # -- node loop ------------------------------------------------------------------------
    def _write(self, frame: bytes) -> None:
        if self.silent:
            return
        # Nobody listening: USB CDC drops the data too.
        with contextlib.suppress(OSError):
            os.write(self._master, frame)

    def _run(self) -> None:
        next_poll = ticks_ms()
        while not self._stop.is_set():
            try:
                readable, _, _ = select.select([self._master], [], [], 0.005)
            except (OSError, ValueError):
                return
            data = b""
            if readable:
                try:
                    data = os.read(self._master, 4096)
                except (BlockingIOError, OSError):
                    data = b""
            now = ticks_ms()
            with self._lock:
                app = self.app
                assert app is not None
                if data:
                    self.received.append(data)
                    app.receive(data, now)
                app.buttons(list(self.buttons), now)
                if ticks_diff(now, next_poll) >= 0:
                    next_poll = now + self.poll_ms
                    app.reader_ok = self.reader_ok  # main.py: init, or alive() after a read
                    app.tag(self.tag if self.reader_ok else None, now)
                app.tick(now)
