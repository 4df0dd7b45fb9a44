"""A local Mosquitto for demos, tests and benchmarks: a child process on 127.0.0.1.

The configuration it writes listens on the loopback only (``listener PORT 127.0.0.1``)
with anonymous access, keeps nothing on disk, and lets a desk that is away queue many
messages (``max_queued_messages``). ``LocalBroker(config=...)`` runs a configuration
written elsewhere instead, e.g. the venue's (``truco-table venue-broker``: accounts,
ACLs, TLS), which is how the tests run the venue broker.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

__all__ = ["VENUE_SPAN", "LocalBroker", "find_mosquitto", "free_port"]

CONFIG = """\
# written by truco-table: a broker for one machine
listener {port} 127.0.0.1
allow_anonymous true
persistence false
max_queued_messages 1000000
max_inflight_messages 100
set_tcp_nodelay true
log_dest stderr
log_type error
log_type warning
connection_messages false
"""


def find_mosquitto() -> str | None:
    """The ``mosquitto`` binary (``PATH``, then /usr/sbin where Debian puts it)."""
    found = shutil.which("mosquitto")
    if found:
        return found
    for candidate in ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


#: the ports this process has handed out (never handed out twice)
_HANDED_OUT: set[int] = set()


def _ephemeral_low(path: str = "/proc/sys/net/ipv4/ip_local_port_range") -> int:
    """The lowest port the kernel gives outgoing connections (Linux's default 32768)."""
    try:
        with open(path, encoding="ascii") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


#: the ports a venue's broker takes from the one it is given: ``PORT`` (the tables'),
#: ``PORT + 1`` (the desks') and ``PORT + 2`` (Mosquitto's own behind the door:
#: ``controller.tournament.venue.broker.default_inner_port``)
VENUE_SPAN = 3


def free_port() -> int:
    """A port free on 127.0.0.1 for a broker or a page to listen on later.

    It is drawn below the kernel's range for outgoing connections: a port the kernel
    handed out (``bind(..., 0)``) is free now, but between this call and the broker's own
    ``bind`` any client connection (a bridge, a table) may take it as its local port, and
    the broker then fails with "Address already in use". The two ports after it are free
    too and handed out with it (:data:`VENUE_SPAN`): a venue's broker given this port
    listens on all three, and a port handed out later for something else must not be one
    of them. No port is ever handed out twice by one process."""
    low = max(_ephemeral_low(), 2048)
    rng = random.SystemRandom()
    for _ in range(200):
        port = rng.randrange(max(1024, low - 20_000), low - VENUE_SPAN)
        block = range(port, port + VENUE_SPAN)
        if not _HANDED_OUT.isdisjoint(block) or not all(map(_bindable, block)):
            continue
        _HANDED_OUT.update(block)
        return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:  # a crowded machine
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class LocalBroker:
    """``with LocalBroker() as broker: ... broker.port``; ``stop()``/``start()`` again
    on the same port simulate a broker that goes away and comes back."""

    def __init__(
        self,
        port: int = 0,
        *,
        workdir: str | os.PathLike[str] | None = None,
        config: str | os.PathLike[str] | None = None,
        files: int | None = None,
    ) -> None:
        binary = find_mosquitto()
        if binary is None:
            raise FileNotFoundError("mosquitto not found (Debian: apt-get install mosquitto)")
        self.binary = binary
        self.port = port or free_port()
        self.host = "127.0.0.1"
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="truco-broker-")
            workdir = self._tmp.name
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.own_config = config is None
        self.config = self.dir / "mosquitto.conf" if config is None else Path(config)
        self.log = self.dir / "mosquitto.log"
        #: The broker's open-file limit (``RLIMIT_NOFILE``, as systemd's ``LimitNOFILE``
        #: sets it); None: this process's own.
        self.files = files
        self.process: subprocess.Popen[bytes] | None = None

    def _listeners(self) -> list[tuple[str, int]]:
        """Every TCP listener of the configuration (``listener PORT [ADDRESS]``), as
        (address to connect to, port): the broker opens them one after another."""
        found = [(self.host, self.port)]
        for line in self.config.read_text(encoding="utf-8").splitlines():
            words = line.split()
            if len(words) < 2 or words[0] != "listener" or not words[1].isdigit():
                continue
            port = int(words[1])
            address = words[2] if len(words) > 2 else self.host
            if address in ("0.0.0.0", "::"):
                address = self.host
            if port and not address.startswith("/") and (address, port) not in found:
                found.append((address, port))
        return found

    def start(self, timeout: float = 60.0) -> LocalBroker:
        """Start Mosquitto and return once every listener of its configuration takes a
        connection (the tables' one first is not enough: a desk's may not be open yet)."""
        if self.own_config:
            self.config.write_text(CONFIG.format(port=self.port), encoding="utf-8")
        waiting = self._listeners()
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [self.binary, "-c", str(self.config)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                preexec_fn=self._limit_files if self.files is not None else None,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"mosquitto exited ({self.process.returncode}): "
                    + self.log.read_text(encoding="utf-8", errors="replace")[-500:]
                )
            while waiting:
                try:
                    socket.create_connection(waiting[0], timeout=0.2).close()
                except OSError:
                    break
                waiting.pop(0)
            if not waiting:
                return self
            time.sleep(0.02)
        self.stop()
        host, port = waiting[0]
        raise RuntimeError(f"mosquitto did not listen on {host}:{port}")

    def _limit_files(self) -> None:  # in the child, before exec
        import resource

        assert self.files is not None
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.files, self.files))

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def kill(self) -> None:
        """Stop it as a power cut would (SIGKILL): nothing saved that was not saved yet."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None

    def close(self) -> None:
        self.stop()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> LocalBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
