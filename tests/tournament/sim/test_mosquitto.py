"""``free_port``: the ports the tests and the demos start brokers and pages on; a
``LocalBroker`` started is one whose every listener takes a connection."""

from __future__ import annotations

import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from controller.tournament.sim.mosquitto import (
    VENUE_SPAN,
    LocalBroker,
    _ephemeral_low,
    find_mosquitto,
    free_port,
)
from controller.tournament.venue.broker import default_inner_port, setup_venue


def test_ports_are_below_the_outgoing_range_free_and_never_handed_out_twice() -> None:
    low = _ephemeral_low()
    ports = [free_port() for _ in range(40)]
    assert len(set(ports)) == len(ports)
    assert all(1024 <= p < low for p in ports)  # no client connection takes one meanwhile
    for port in ports[:5]:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", port))  # free: a listener can have it


def test_a_port_comes_with_the_two_a_venue_broker_takes_after_it() -> None:
    """A venue's broker given PORT listens on PORT + 1 and PORT + 2 too: those are free
    when the port is handed out, and no later port lands on them (CI once saw "Address
    already in use" from a venue broker whose PORT + 1 or + 2 was another's)."""
    ports = [free_port() for _ in range(200)]
    taken = [p + k for p in ports for k in range(VENUE_SPAN)]
    # the span is the venue's own: its tables', its desks' (PORT + 1) and its inner port
    assert VENUE_SPAN == 3 and default_inner_port(ports[0]) == ports[0] + VENUE_SPAN - 1
    assert len(set(taken)) == len(taken)
    for port in ports[:5]:
        for k in range(VENUE_SPAN):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", port + k))


def test_a_port_whose_next_ones_are_taken_is_not_handed_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A draw whose block holds a taken port is skipped. The taken port is the test's own
    word (``_bindable``), not a neighbour's on the machine: the ports around a real one
    may be anybody's (a CI run beside this one once took them)."""
    import controller.tournament.sim.mosquitto as mosquitto

    busy = 30_000
    draws = iter([busy - 2, busy - 1, busy, busy - 3])

    class Draw:
        def randrange(self, low: int, high: int) -> int:
            return next(draws)

    monkeypatch.setattr("random.SystemRandom", Draw)
    monkeypatch.setattr(mosquitto, "_ephemeral_low", lambda: 65000)
    monkeypatch.setattr(mosquitto, "_HANDED_OUT", set())
    monkeypatch.setattr(mosquitto, "_bindable", lambda port: port != busy)
    assert free_port() == busy - 3  # the three before it each cover ``busy``
    assert sorted(mosquitto._HANDED_OUT) == [busy - 3, busy - 2, busy - 1]


def test_a_port_a_listener_holds_is_not_bindable() -> None:
    from controller.tournament.sim.mosquitto import _bindable

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port: int = listening.getsockname()[1]
        assert not _bindable(port)


def test_the_outgoing_range_is_read_from_the_kernel_or_linux_default(tmp_path: Path) -> None:
    (tmp_path / "range").write_text("40000\t60999\n")
    assert _ephemeral_low(str(tmp_path / "range")) == 40000
    assert _ephemeral_low(str(tmp_path / "missing")) == 32768


def test_a_venue_broker_started_takes_the_desks_at_once() -> None:
    """``start`` returns once every listener of the venue's configuration is open, the
    desks' one too (it waited for the tables' alone: under a load of 8 a desk that
    connected at once to its own listener was refused)."""
    if find_mosquitto() is None or shutil.which("openssl") is None:
        pytest.skip("mosquitto or openssl not installed (.ci/run installs both)")
    parent = Path(tempfile.mkdtemp(prefix="truco-listeners-"))
    parent.chmod(0o711)  # Mosquitto drops to its own user: let it through
    try:
        inner, local = free_port(), free_port()
        venue = setup_venue(parent / "venue", "copa", ["mesa01"], ["desk1"], port=free_port(),
                            local_port=local, inner_port=inner)  # fmt: skip
        broker = LocalBroker(inner, workdir=parent / "run", config=venue.broker_conf)
        assert ("127.0.0.1", inner) in broker._listeners()
        assert ("127.0.0.1", local) in broker._listeners()
        with broker:
            for port in (inner, local):
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
    finally:
        shutil.rmtree(parent, ignore_errors=True)
