"""What a flood of authenticated junk from one table costs the desk (issue 25).

10^4 messages signed with one table's key (as a stolen key would send them: events and
junk records in seq order, every tenth a record, every third far ahead of the window)
are handed to a ``DeskState`` with its folder on disk, in this process, with the venue's
quota (``Quota()``, as ``truco-table desk`` runs it) and without (the demos'). Then the
snapshot the page serves is timed. What it leaves out: the broker, TLS and the network
(tests/tournament/venue/test_insider.py runs the same flood through the venue's Mosquitto),
and another table's messages interleaved.

Prints one key=value line per run::

    quota=on messages=10000 seconds=0.61 per_msg_us=61 snapshot_ms=1.4 results=20

Run: ``.venv/bin/python bench/desk_flood.py [--messages 10000]``.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time

from controller.tournament.desk.state import DeskState, Quota
from controller.tournament.sim.flood import flood
from controller.tournament.wire.keys import derive_table_key
from controller.tournament.wire.seal import TournamentKey

KEY = TournamentKey(bytes(range(32)), "bench")


def junk(count: int) -> list[tuple[str, bytes]]:
    return list(flood(derive_table_key(KEY.key, "copa", "mesa01"), count))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--messages", type=int, default=10_000)
    args = p.parse_args()
    logging.disable(logging.CRITICAL)
    messages = junk(args.messages)
    for quota in (Quota(), None):
        with tempfile.TemporaryDirectory(prefix="truco-flood-") as folder:
            state = DeskState("copa", out_dir=folder, key=KEY, tables=["mesa01", "mesa02"],
                              quota=quota)  # fmt: skip
            start = time.perf_counter()
            for topic, payload in messages:
                state.handle(topic, payload)
            seconds = time.perf_counter() - start
            start = time.perf_counter()
            state.snapshot()
            snapshot_ms = (time.perf_counter() - start) * 1000
            print(
                f"quota={'on' if quota else 'off'} messages={len(messages)} "
                f"seconds={seconds:.2f} per_msg_us={seconds / len(messages) * 1e6:.0f} "
                f"snapshot_ms={snapshot_ms:.1f} results={len(state.results)}",
                flush=True,
            )
            state.close()


if __name__ == "__main__":
    main()
