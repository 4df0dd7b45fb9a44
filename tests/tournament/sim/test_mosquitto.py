"""``free_port``: the ports the tests and the demos start brokers and pages on."""

from __future__ import annotations

import socket
from pathlib import Path

from controller.tournament.sim.mosquitto import _ephemeral_low, free_port


def test_ports_are_below_the_outgoing_range_free_and_never_handed_out_twice() -> None:
    low = _ephemeral_low()
    ports = [free_port() for _ in range(40)]
    assert len(set(ports)) == len(ports)
    assert all(1024 <= p < low for p in ports)  # no client connection takes one meanwhile
    for port in ports[:5]:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", port))  # free: a listener can have it


def test_the_outgoing_range_is_read_from_the_kernel_or_linux_default(tmp_path: Path) -> None:
    (tmp_path / "range").write_text("40000\t60999\n")
    assert _ephemeral_low(str(tmp_path / "range")) == 40000
    assert _ephemeral_low(str(tmp_path / "missing")) == 32768
