"""Idle sockets cannot lock the broker (issue 43): the venue's real Mosquitto, with the
configuration, open-file limit and nftables rules ``truco-table venue-broker`` writes,
and the door in front of its tables' listener (``--inner-port``: :mod:`controller.
tournament.venue.front`), in a network namespace of its own; 10,000 idle TCP connections
from one address and 1,000 from a thousand addresses (another namespace) to the tables'
port: a table and the organiser's desk still log in within 2 s, and the door closes every
idle socket within its 5 s. Nothing of the machine's own network is touched
(:mod:`controller.tournament.sim.netns`); the figures are bench/idle_sockets.py's."""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.tournament.sim.netns import BROKER, CROWD, VenueNet, can_run, crowd_address
from controller.tournament.venue.broker import PER_ADDRESS, Venue, setup_venue
from controller.tournament.venue.front import CONNECT_S

PORT, LOCAL, INNER = 8883, 8884, 8885  # in the broker's own namespace: nothing else there


@pytest.fixture
def netns_venue() -> Iterator[Venue]:
    why = can_run() or (None if shutil.which("openssl") else "openssl not installed")
    if why is not None:
        pytest.skip(why)
    parent = Path(tempfile.mkdtemp(prefix="truco-idle-"))
    parent.chmod(0o711)  # Mosquitto drops to its own user: let it through
    try:
        yield setup_venue(parent / "venue", "copa", ["mesa01", "mesa02"], ["desk1"],
                          hosts=(BROKER, "127.0.0.1"), port=PORT, local_port=LOCAL,
                          inner_port=INNER)  # fmt: skip
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def test_ten_thousand_idle_sockets_lock_out_no_table_and_no_desk(netns_venue: Venue) -> None:
    venue = netns_venue
    files = int(re.search(r"^LimitNOFILE=(\d+)$", venue.systemd_limits.read_text(),
                          re.M).group(1))  # type: ignore[union-attr]  # fmt: skip
    with VenueNet(crowd=1000) as net:
        net.firewall(venue.firewall)
        net.start_broker(venue.broker_conf, files, INNER, venue.root / "mosquitto.log")
        net.start_front(venue.front_conf, PORT, venue.root / "puerta.log")
        one = net.crowd_sockets(PORT, [CROWD], 10_000)
        assert one["refused"] >= 10_000 - PER_ADDRESS  # the firewall: 8 per address
        assert one["unanswered"] == 0, one  # refused with a reset, at once
        many = net.crowd_sockets(PORT, [crowd_address(k) for k in range(1000)], 1)
        assert many["refused"] == 0, many  # a crowd of addresses: each within its limit
        assert many["unanswered"] == 0, many
        assert net.broker_files() < files  # the broker never ran out of files
        ca = venue.ca_file
        table = net.login(table=True, port=PORT, account="mesa01",
                          password=venue.password("mesa01"), ca=ca, wait=120)  # fmt: skip
        desk = net.login(table=False, port=LOCAL, account="desk1",
                         password=venue.password("desk1"), ca=ca, wait=120)  # fmt: skip
        assert table is not None, "a table could not log in past the idle sockets"
        assert desk is not None, "the organiser's desk could not log in past the idle sockets"
        # and the door closes them all (what stays open to the port: nothing of theirs)
        deadline = time.monotonic() + 120
        while net.established(PORT) > 0:
            assert time.monotonic() < deadline, f"idle sockets still open {CONNECT_S} s on"
            time.sleep(0.2)
