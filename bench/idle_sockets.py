"""Idle sockets against the venue's broker (issue 43): do a table and a desk still log in?

The venue's real Mosquitto runs with the configuration ``truco-table venue-broker``
writes and the open-file limit of its systemd drop-in, in a network namespace of its own
(:mod:`controller.tournament.sim.netns`; root, ``ip``, ``nft``); from another namespace a
patron's machine opens 10,000 TCP connections to the tables' port from one address and
then 1,000 from a thousand addresses, and holds them without a word (no TLS, no
CONNECT). Then a table logs in on the tables' port and the organiser's desk on the
desks' listener (the broker's loopback), each timed to its CONNACK. Runs: without the
venue's nftables rules and without the door (``firewall=off door=off``), with the rules
only, and with the rules and the door in front of the tables' listener (``--inner-port``:
:mod:`controller.tournament.venue.front`, which closes what has not sent its CONNECT in
5 s; ``idle_closed_s``: from the login until no idle socket is open to the port).

Prints one key=value line per run::

    firewall=on door=on one_address_tried=10000 one_address_held=8 refused=9992
    thousand_held=1000 broker_files=22 table_login_s=0.06 desk_login_s=0.07
    idle_closed_s=4.1 load=3.1

(``table_login_s=none``: the table could not log in within ``--wait`` seconds.) Run as
root: ``.venv/bin/python bench/idle_sockets.py [--wait 10]``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.tournament.sim.netns import BROKER, CROWD, VenueNet, can_run, crowd_address
from controller.tournament.venue.broker import setup_venue

PORT, LOCAL, INNER = 8883, 8884, 8885


def run(firewall: bool, door: bool, wait: float) -> str:
    parent = Path(tempfile.mkdtemp(prefix="truco-idle-bench-"))
    parent.chmod(0o711)
    try:
        venue = setup_venue(parent / "venue", "copa", ["mesa01", "mesa02"], ["desk1"],
                            hosts=(BROKER, "127.0.0.1"), port=PORT, local_port=LOCAL,
                            inner_port=INNER if door else None)  # fmt: skip
        limits = venue.systemd_limits.read_text(encoding="utf-8")
        files = int(re.search(r"^LimitNOFILE=(\d+)$", limits, re.M).group(1))  # type: ignore[union-attr]
        with VenueNet(crowd=1000) as net:
            if firewall:
                net.firewall(venue.firewall)
            net.start_broker(venue.broker_conf, files, INNER if door else PORT,
                             parent / "mosquitto.log")  # fmt: skip
            if door:
                net.start_front(venue.front_conf, PORT, parent / "puerta.log")
            one = net.crowd_sockets(PORT, [CROWD], 10_000)
            many = net.crowd_sockets(PORT, [crowd_address(k) for k in range(1000)], 1)
            held_files = net.broker_files()
            ca = venue.ca_file
            table = net.login(table=True, port=PORT, account="mesa01",
                              password=venue.password("mesa01"), ca=ca, wait=wait)  # fmt: skip
            desk = net.login(table=False, port=LOCAL, account="desk1",
                             password=venue.password("desk1"), ca=ca, wait=wait)  # fmt: skip
            start, closed = time.monotonic(), "none"
            while time.monotonic() - start < 30:
                if net.established(PORT) == 0:
                    closed = f"{time.monotonic() - start:.1f}"
                    break
                time.sleep(0.1)
        load = os.getloadavg()[0]
        return (
            f"firewall={'on' if firewall else 'off'} door={'on' if door else 'off'} "
            "one_address_tried=10000 "
            f"one_address_held={one['held']} refused={one['refused']} "
            f"thousand_held={many['held']} broker_files={held_files} broker_file_limit={files} "
            f"table_login_s={'none' if table is None else table} "
            f"desk_login_s={'none' if desk is None else desk} idle_closed_s={closed} "
            f"load={load:.1f}"
        )
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--wait", type=float, default=10.0, help="seconds a login may take")
    args = parser.parse_args()
    why = can_run()
    if why is not None:
        print(f"skipped: {why}", file=sys.stderr)
        return 2
    for firewall, door in ((False, False), (True, False), (True, True), (False, True)):
        print(run(firewall, door, args.wait), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
