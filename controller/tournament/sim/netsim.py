"""A network that can be cut: a TCP relay on 127.0.0.1 between tables and the broker.

``cut()`` drops every connection through the relay at once (as a pulled cable or a
rebooting access point does) and refuses new ones until ``restore()``. Used by the tests
and by ``tournament-demo --flaky N``; one thread relays every connection (selectors).
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading

__all__ = ["CuttableLink", "hold_port"]


def hold_port(port: int) -> socket.socket:
    """Bind ``127.0.0.1:port`` without listening: a connection to it is refused (no
    listener), and no other socket on the machine is given the port (an outgoing
    connection's ephemeral port, another ``bind(0)``) until the holder is closed or passed
    to :class:`CuttableLink` as ``server`` to listen on again."""
    held = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        held.bind(("127.0.0.1", port))
    except OSError:
        held.close()
        raise
    return held


class CuttableLink:
    """Listens on ``127.0.0.1:port`` (``port`` 0: any free one) and relays to ``target``;
    ``server``, a socket :func:`hold_port` bound, is listened on instead."""

    def __init__(
        self, target_host: str, target_port: int, port: int = 0,
        *, server: socket.socket | None = None,
    ) -> None:  # fmt: skip
        self.target = (target_host, target_port)
        self.server = server if server is not None else hold_port(port)
        self.server.listen(64)
        self.server.setblocking(False)
        self.port: int = self.server.getsockname()[1]
        self.up = True
        self.cuts = 0
        self._sel = selectors.DefaultSelector()
        self._sel.register(self.server, selectors.EVENT_READ, None)
        self._peer: dict[socket.socket, socket.socket] = {}
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._pending_cut = False
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="cuttable-link", daemon=True)
        self._thread.start()

    def cut(self) -> None:
        """Drop every connection now; refuse new ones until ``restore``."""
        with self._lock:
            self.up = False
            self.cuts += 1
            self._pending_cut = True
            self._wake()

    def restore(self) -> None:
        with self._lock:
            self.up = True

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._pending_cut = True
            self._wake()
        # No timeout: the relay's own waits are bounded (2 s each), and the caller may
        # bind the port again as soon as this returns, so the listener must be closed.
        self._thread.join()
        self._wake_w.close()

    def _wake(self) -> None:
        """The relay's thread woken, under the lock: it reads what it must do under the
        same lock, so it cannot have seen a close, and closed its end of the wake pair,
        before the byte is sent (else a ``close`` right after a ``cut`` could find that
        end closed by the relay the cut woke, and fail with a broken pipe)."""
        self._wake_w.send(b"x")

    # ------------------------------------------------------------------ the relay

    def _drop(self, sock: socket.socket) -> None:
        peer = self._peer.pop(sock, None)
        for s in (sock, peer):
            if s is None:
                continue
            self._peer.pop(s, None)
            with contextlib.suppress(KeyError, ValueError):
                self._sel.unregister(s)
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def _run(self) -> None:
        while True:
            for key, _ in self._sel.select(timeout=0.5):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if key.data == "wake":
                    with contextlib.suppress(OSError):
                        sock.recv(4096)
                elif sock is self.server:
                    self._accept()
                elif sock in self._peer:
                    self._relay(sock)
            with self._lock:
                cut, closed = self._pending_cut, self._closed
                self._pending_cut = False
            if cut:
                for sock in list(self._peer):
                    if sock in self._peer:
                        self._drop(sock)
            if closed:
                self._sel.close()
                self.server.close()
                self._wake_r.close()
                return

    def _accept(self) -> None:
        try:
            client, _ = self.server.accept()
        except OSError:
            return
        with self._lock:
            up = self.up
        if not up:
            client.close()
            return
        try:
            upstream = socket.create_connection(self.target, timeout=2)
        except OSError:
            client.close()
            return
        for s in (client, upstream):
            s.setblocking(False)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._peer[client], self._peer[upstream] = upstream, client
        self._sel.register(client, selectors.EVENT_READ, "conn")
        self._sel.register(upstream, selectors.EVENT_READ, "conn")

    def _relay(self, sock: socket.socket) -> None:
        peer = self._peer[sock]
        try:
            data = sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._drop(sock)
            return
        try:
            peer.setblocking(True)
            peer.settimeout(2)
            peer.sendall(data)
            peer.setblocking(False)
        except OSError:
            self._drop(sock)
