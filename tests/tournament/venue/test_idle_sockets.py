"""Idle sockets cannot lock the broker (issue 43): the venue's real Mosquitto, with the
configuration, open-file limit and nftables rules ``truco-table venue-broker`` writes,
in a network namespace of its own; 10,000 idle TCP connections from one address and
1,000 from a thousand addresses (another namespace) to the tables' listener, held; a
table and the organiser's desk still log in. Nothing of the machine's own network is
touched (:mod:`controller.tournament.sim.netns`); the figures are bench/idle_sockets.py's."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.tournament.sim.netns import BROKER, CROWD, VenueNet, can_run, crowd_address
from controller.tournament.venue.broker import PER_ADDRESS, Venue, setup_venue

PORT, LOCAL = 8883, 8884  # in the broker's own namespace: nothing else listens there


@pytest.fixture
def netns_venue() -> Iterator[Venue]:
    why = can_run() or (None if shutil.which("openssl") else "openssl not installed")
    if why is not None:
        pytest.skip(why)
    parent = Path(tempfile.mkdtemp(prefix="truco-idle-"))
    parent.chmod(0o711)  # Mosquitto drops to its own user: let it through
    try:
        yield setup_venue(parent / "venue", "copa", ["mesa01", "mesa02"], ["desk1"],
                          hosts=(BROKER, "127.0.0.1"), port=PORT, local_port=LOCAL)  # fmt: skip
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def test_ten_thousand_idle_sockets_lock_out_no_table_and_no_desk(netns_venue: Venue) -> None:
    venue = netns_venue
    files = int(re.search(r"^LimitNOFILE=(\d+)$", venue.systemd_limits.read_text(),
                          re.M).group(1))  # type: ignore[union-attr]  # fmt: skip
    with VenueNet(crowd=1000) as net:
        net.firewall(venue.firewall)
        net.start_broker(venue.broker_conf, files, PORT, venue.root / "mosquitto.log")
        one = net.crowd_sockets(PORT, [CROWD], 10_000)
        assert one["held"] <= PER_ADDRESS and one["refused"] >= 10_000 - PER_ADDRESS
        many = net.crowd_sockets(PORT, [crowd_address(k) for k in range(1000)], 1)
        assert many["held"] == 1000  # a crowd of addresses: each within its limit
        assert net.broker_files() < files  # the broker never ran out of files
        ca = venue.ca_file
        table = net.login(table=True, port=PORT, account="mesa01",
                          password=venue.password("mesa01"), ca=ca, wait=120)  # fmt: skip
        desk = net.login(table=False, port=LOCAL, account="desk1",
                         password=venue.password("desk1"), ca=ca, wait=120)  # fmt: skip
        assert table is not None, "a table could not log in past the idle sockets"
        assert desk is not None, "the organiser's desk could not log in past the idle sockets"
