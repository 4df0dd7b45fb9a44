"""Whole tournaments on this machine: how long each format takes from registration to
the final standings, with the desk's power cut half-way.

Each run is ``truco-table tournament-demo --format ...`` (:func:`run_cup`): the venue's
Mosquitto (accounts, ACLs, TLS), the desk with its competition and journal, and as many
simulated tables as the largest round needs (the real table service on mock hardware,
bots at every seat, ``--speed`` times human speed). What it leaves out: human pace (a
15-point game of people takes minutes, not the bots' tenths of a second), the tables'
own Pis (every table runs in this process's threads, on this machine's cores), real
networks and disks other than this machine's.

Prints one key=value line per format::

    format=knockout entrants=16 best_of=3 players=4 wall_s=41.3 games=41 matches=16
    journal_lines=... status=0

Run: ``.venv/bin/python bench/cup.py [--players 4] [--speed 1000]``.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from controller.tournament.competition.model import Format
from controller.tournament.sim.cup import CupOptions, run_cup

RUNS: tuple[dict[str, Any], ...] = (
    dict(format=Format.KNOCKOUT, entrants=16, best_of=3),
    dict(format=Format.ROUND_ROBIN, entrants=8),
    dict(format=Format.SWISS, entrants=24, rounds=5),
    dict(format=Format.GROUPS, entrants=16, groups=4),
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--players", type=int, choices=(2, 4, 6), default=4)
    p.add_argument("--speed", type=float, default=1000.0)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    worst = 0
    for run in RUNS:
        with tempfile.TemporaryDirectory(prefix="truco-cup-") as tmp:
            folder = Path(tmp)
            opts = CupOptions(out=folder, http_port=0, quiet=True, speed=args.speed,
                              team_size=args.players // 2, timeout=1200, **run)  # fmt: skip
            start = time.monotonic()
            status = run_cup(opts, io.StringIO())
            wall = time.monotonic() - start
            desk = folder / "desk"
            games = len(list((desk / "records").glob("*.truco")))
            matches = json.loads((desk / "matches.json").read_text())["matches"] if (
                desk / "matches.json").exists() else []  # fmt: skip
            lines = len((desk / "journal.jsonl").read_bytes().splitlines())
        fields = {k: (v.value if isinstance(v, Format) else v) for k, v in run.items()}
        print(" ".join(f"{k}={v}" for k, v in fields.items())
              + f" players={args.players} wall_s={wall:.1f} games={games}"
              f" matches={len(matches)} journal_lines={lines} status={status}")  # fmt: skip
        sys.stdout.flush()
        worst = max(worst, status)
    return worst


if __name__ == "__main__":
    sys.exit(main())
