"""The cuttable link the simulations put between tables, venues and brokers: it relays,
drops every connection on a cut, and a venue's uplink keeps its port while it is down."""

from __future__ import annotations

import contextlib
import errno
import socket
import threading
from collections.abc import Iterator

import pytest

from controller.tournament.sim.league import _Uplink
from controller.tournament.sim.netsim import CuttableLink, hold_port


@contextlib.contextmanager
def _echo_server() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that sends back what it gets, on each connection."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.05)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=_echo, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        server.close()


def _echo(conn: socket.socket) -> None:
    with conn:
        while data := conn.recv(4096):
            conn.sendall(data)


def _round_trip(port: int, payload: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(payload)
        got = b""
        while len(got) < len(payload):
            chunk = conn.recv(4096)
            if not chunk:
                break
            got += chunk
        return got


def _assert_held(port: int) -> None:
    """Nothing listens on the port (a connection is refused) and no other socket may
    bind it (a port let go, as the old uplink did, would be bound here)."""
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=10)
    squatter = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    with squatter, pytest.raises(OSError) as taken:
        squatter.bind(("127.0.0.1", port))
    assert taken.value.errno == errno.EADDRINUSE


def test_a_link_relays_and_a_cut_drops_its_connections() -> None:
    with _echo_server() as target:
        link = CuttableLink("127.0.0.1", target)
        try:
            assert _round_trip(link.port, b"hola") == b"hola"
            conn = socket.create_connection(("127.0.0.1", link.port), timeout=10)
            conn.sendall(b"x")
            assert conn.recv(1) == b"x"
            link.cut()
            with contextlib.suppress(ConnectionResetError):
                assert conn.recv(1) == b""  # dropped: end of stream (or reset)
            conn.close()
            link.restore()
            assert _round_trip(link.port, b"de vuelta") == b"de vuelta"
        finally:
            link.close()


def test_a_held_port_refuses_connections_and_is_given_to_no_other_socket() -> None:
    held = hold_port(0)
    port = held.getsockname()[1]
    try:
        _assert_held(port)
    finally:
        held.close()


def test_an_uplink_keeps_its_port_while_down_and_relays_on_it_again() -> None:
    with _echo_server() as target:
        uplink = _Uplink(target)
        try:
            port = uplink.port
            assert _round_trip(port, b"antes") == b"antes"
            uplink.cut()
            assert uplink.down and uplink.cuts == 1
            _assert_held(port)
            uplink.restore()
            assert not uplink.down and uplink.port == port
            assert _round_trip(port, b"despues") == b"despues"
        finally:
            uplink.close()


def test_a_close_right_after_a_cut_wakes_the_relay_before_it_can_have_closed() -> None:
    """The relay reads a cut or a close under the link's lock, and closes its end of the
    wake pair once it has read the close: so every wake is sent under that lock, and a
    ``close`` right after a ``cut`` (an uplink cut: ``_Uplink.cut``) never writes into a
    pair the relay already closed (a broken pipe, seen once in CI)."""
    link = CuttableLink("127.0.0.1", 9)  # nothing behind it: no connection is made
    wake, sent = link._wake_w, []

    class Checked:
        def send(self, data: bytes) -> int:
            assert link._lock.locked(), "a wake sent without the link's lock"
            sent.append(data)
            return wake.send(data)

        def close(self) -> None:
            wake.close()

    link._wake_w = Checked()  # type: ignore[assignment]
    link.cut()
    link.close()
    assert sent == [b"x", b"x"]
