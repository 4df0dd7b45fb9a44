"""The door in front of the venue broker's tables' listener: a connection that has not
spoken MQTT within a few seconds is closed (issue 43).

Mosquitto 2.0 keeps a connection that never sends ``CONNECT`` for 90 s (a new client's
keepalive is a hard-coded 60 s, times 1.5, checked every 5 s: ``src/context.c`` and
``src/keepalive.c``; Debian 12 ships 2.0.11, Debian 13 2.0.21, the same) and has no option
to shorten it, so sockets that say nothing hold the broker's files and its listener's
``max_connections``. :class:`BrokerFront` listens where the tables connect (the address and
port of their ``tournament.toml``) and relays each connection, bytes as they are, to
Mosquitto's tables' listener on the broker's own loopback (``127.0.0.1``, the port
``venue-broker`` wrote next to it):

- a connection that sends nothing reaches no broker at all: the relay to Mosquitto opens
  with the client's first bytes;
- the TLS between the table and Mosquitto is untouched (the door holds no key and no
  certificate): it reads only the TLS record headers the client sends, five bytes in the
  clear before each record, and a connection whose client has not sent its first
  application-data record within ``CONNECT_S`` seconds is closed, both ways. With TLS 1.2
  (the only version the venue's listeners take) the client's first application-data record
  is its MQTT ``CONNECT``, the first thing an MQTT client says once the handshake is done:
  so an idle socket, a handshake left half-way, or anything that is not TLS is gone
  within ``CONNECT_S``;
- at most ``MAX_WAITING`` connections wait for their ``CONNECT`` at once: beyond, the oldest
  waiting one is closed to let the new one in (a table that connects during a flood gets
  its few milliseconds); the venue's nftables rules keep each address to a few connections
  before any of this (``broker/truco-firewall.nft``).

Mosquitto sees every table come from 127.0.0.1 (its log names the account, not the
address; the door's log counts what it closed). Pure asyncio, one thread; run with
``truco-table venue-door --config broker/truco-front.toml`` (``truco-table venue-night``
does it, with Mosquitto).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ...textfile import os_reason

__all__ = [
    "CONNECT_S",
    "MAX_WAITING",
    "BrokerFront",
    "FrontConfig",
    "RecordWatch",
    "Spoke",
    "front_toml",
    "load_front",
    "run_front",
]

log = logging.getLogger(__name__)

#: Seconds a connection has to reach its MQTT ``CONNECT`` (the TLS handshake included).
CONNECT_S: Final = 5.0
#: Connections waiting for their ``CONNECT`` at once.
MAX_WAITING: Final = 8192
#: TLS record content types (RFC 5246, 6.2.1).
HANDSHAKE: Final = 22
APPLICATION_DATA: Final = 23
_TLS_TYPES: Final = frozenset({20, 21, HANDSHAKE, APPLICATION_DATA})
_CHUNK: Final = 65536
#: Seconds a closing connection has to take what was written to it.
LINGER_S: Final = 5.0


class RecordWatch:
    """One side of a TLS stream, record header by record header: how many
    application-data records have begun (``app``), or whether it is not TLS (``bad``)."""

    def __init__(self) -> None:
        self.app = 0
        self.bad = False
        self._header = b""
        self._skip = 0

    def feed(self, data: bytes) -> None:
        i = 0
        while i < len(data) and not self.bad:
            if self._skip:
                step = min(self._skip, len(data) - i)
                self._skip -= step
                i += step
                continue
            take = min(5 - len(self._header), len(data) - i)
            self._header += data[i : i + take]
            i += take
            if len(self._header) < 5:
                return
            kind, major = self._header[0], self._header[1]
            if kind not in _TLS_TYPES or major != 3:
                self.bad = True
            elif kind == APPLICATION_DATA:
                self.app += 1
            self._skip = int.from_bytes(self._header[3:5], "big")
            self._header = b""


class Spoke:
    """Whether the client has begun its MQTT ``CONNECT``: its first application-data
    record after its handshake. With TLS 1.2 that is its first one; with TLS 1.3 its
    Finished is already one (sent as application data), so the second: the server's
    flight before it (EncryptedExtensions, Certificate...) is application data only in TLS
    1.3, and the door has read it before the client could answer it."""

    def __init__(self) -> None:
        self.client, self.server = RecordWatch(), RecordWatch()
        self._needed: int | None = None

    def from_client(self, data: bytes) -> bool:
        self.client.feed(data)
        if self.client.app and self._needed is None:
            self._needed = 2 if self.server.app else 1
        return self._needed is not None and self.client.app >= self._needed


@dataclass(frozen=True, slots=True)
class FrontConfig:
    listen: tuple[str, int]  # where the tables connect
    broker: tuple[str, int]  # Mosquitto's tables' listener, on its loopback
    connect_s: float = CONNECT_S
    max_waiting: int = MAX_WAITING


def _address(text: str, what: str) -> tuple[str, int]:
    host, sep, port = str(text).rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ValueError(f"{what}: se espera dirección:puerto, no {text!r}")
    return host.strip("[]"), int(port)


def load_front(path: Path) -> FrontConfig:
    """``broker/truco-front.toml`` as ``venue-broker`` writes it."""
    with open(path, "rb") as f:
        data = tomllib.load(f).get("front", {})
    return FrontConfig(
        _address(data.get("listen", ""), "listen"),
        _address(data.get("broker", ""), "broker"),
        float(data.get("connect_s", CONNECT_S)),
        int(data.get("max_waiting", MAX_WAITING)),
    )


def front_toml(listen: tuple[str, int], broker: tuple[str, int]) -> str:
    """What ``venue-broker`` writes as ``broker/truco-front.toml``."""
    host = f"[{listen[0]}]" if ":" in listen[0] else listen[0]
    return (
        "# written by truco-table venue-broker: the door in front of the tables' listener\n"
        "# (truco-table venue-door --config truco-front.toml; venue-night starts it): a\n"
        f"# connection that has not sent its MQTT CONNECT within {CONNECT_S:g} s is closed;\n"
        "# the rest go on to Mosquitto, on its own loopback.\n"
        "[front]\n"
        f'listen = "{host}:{listen[1]}"\n'
        f'broker = "{broker[0]}:{broker[1]}"\n'
        f"connect_s = {CONNECT_S:g}\n"
        f"max_waiting = {MAX_WAITING}\n"
    )


class BrokerFront:
    def __init__(self, config: FrontConfig) -> None:
        self.config = config
        #: The connections not past their CONNECT yet, oldest first.
        self._waiting: dict[int, asyncio.StreamWriter] = {}
        self._next_id = 0
        self.relayed = 0  # connections that reached their CONNECT
        self.dropped = 0  # closed for saying nothing (in time, or nothing TLS)
        self.evicted = 0  # the oldest waiting one closed to let a new one in
        self.server: asyncio.Server | None = None
        self._said = (time.monotonic(), 0)  # the last summary logged: (when, dropped then)

    async def start(self) -> asyncio.Server:
        host, port = self.config.listen
        self.server = await asyncio.start_server(
            self._client, host, port, backlog=4096, reuse_address=True, limit=_CHUNK
        )
        return self.server

    @property
    def waiting(self) -> int:
        """Connections not past their CONNECT yet."""
        return len(self._waiting)

    def port(self) -> int:
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while len(self._waiting) >= self.config.max_waiting:
            # full: the oldest waiting connection goes (it had the longest to speak), so a
            # table that connects now is never the one turned away
            oldest = next(iter(self._waiting))
            self._waiting.pop(oldest).transport.abort()
            self.evicted += 1
        me, self._next_id = self._next_id, self._next_id + 1
        self._waiting[me] = writer
        upstream: asyncio.StreamWriter | None = None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.connect_s
        spoke = Spoke()
        pump: asyncio.Task[None] | None = None
        cut = True  # closed at once (nothing of a table's to deliver), else gracefully
        try:
            async with asyncio.timeout_at(deadline) as timer:
                first = await reader.read(_CHUNK)
                said = spoke.from_client(first)
                if not first or spoke.client.bad:
                    self.dropped += 1
                    return
                up_reader, upstream = await asyncio.open_connection(*self.config.broker)
                pump = asyncio.create_task(_copy(up_reader, writer, spoke.server))
                upstream.write(first)
                while not said:
                    data = await reader.read(_CHUNK)
                    if not data:
                        return
                    said = spoke.from_client(data)
                    if spoke.client.bad:
                        self.dropped += 1
                        return
                    upstream.write(data)
                    await upstream.drain()
                timer.reschedule(None)  # it spoke: a table's connection from here on
            self._waiting.pop(me, None)
            self.relayed += 1
            cut = False
            await _copy(reader, upstream)
        except TimeoutError:
            self.dropped += 1
        except OSError:
            pass
        finally:
            self._waiting.pop(me, None)
            for w in (writer, upstream):
                if w is not None:
                    _shut(w, at_once=cut)
            if pump is not None:
                pump.cancel()
                with contextlib.suppress(asyncio.CancelledError, OSError):
                    await pump
            self._summary()

    def _summary(self) -> None:
        since, before = self._said
        now = time.monotonic()
        if self.dropped > before and now - since >= 60.0:
            log.warning("la puerta del broker cerró %d conexiones que no mandaron CONNECT en "
                        "%g s", self.dropped - before, self.config.connect_s)  # fmt: skip
            self._said = (now, self.dropped)


async def _copy(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, watch: RecordWatch | None = None
) -> None:
    """Bytes from ``reader`` to ``writer`` until either end closes (``watch`` reads the
    record headers until the first application data, before the bytes go on)."""
    try:
        while data := await reader.read(_CHUNK):
            if watch is not None:
                watch.feed(data)
                if watch.app or watch.bad:
                    watch = None
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        _shut(writer, at_once=False)


def _shut(writer: asyncio.StreamWriter, *, at_once: bool) -> None:
    """Close one side: at once (a connection dropped), or after what is already written
    (a table's last packet), and at once all the same if its peer reads nothing more
    within ``LINGER_S``."""
    transport = writer.transport
    if at_once:
        transport.abort()
        return
    if transport.is_closing():
        return  # already closing, after what was written
    transport.close()
    asyncio.get_running_loop().call_later(LINGER_S, transport.abort)


def _more_files(wanted: int) -> None:
    """Raise the process's open-file limit towards ``wanted`` (as far as its hard limit
    lets): a service starts with 1,024, and every waiting connection holds one."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    top = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < top:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (top, hard))


async def serve(config: FrontConfig, stop: asyncio.Event | None = None) -> None:
    _more_files(2 * config.max_waiting + 1024)
    front = BrokerFront(config)
    server = await front.start()
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop.set)
    log.info("la puerta del broker escucha en %s:%d y pasa a %s:%d",
             *config.listen, *config.broker)  # fmt: skip
    async with server:
        await stop.wait()


def run_front(path: Path) -> int:
    """``truco-table venue-door --config broker/truco-front.toml``: the door until SIGTERM
    or Ctrl-C; 2 when its configuration cannot be read, 1 when it cannot listen."""
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    try:
        config = load_front(path)
    except OSError as e:
        print(f"truco-table venue-door: no se puede leer {path}: {os_reason(e)}", file=sys.stderr)
        return 2
    except tomllib.TOMLDecodeError:
        print(f"truco-table venue-door: {path} no es un TOML válido", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"truco-table venue-door: {path}: {e}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(config))
    except OSError as e:
        print(f"truco-table venue-door: no puede escuchar en {config.listen[0]}:"
              f"{config.listen[1]}: {os_reason(e)}", file=sys.stderr)  # fmt: skip
        return 1
    return 0
