"""How many tables one desk and one Mosquitto follow, every event delivered within 1 s.

"Human speed" is one action (a call, an answer, a card) every ``HUMAN_ACTION_S`` = 3 s
per table; the target is 200 tables at 10x, one action every 0.3 s per table (about
3.3 actions and 4 messages a second per table, score changes included).

For each table count, a local Mosquitto (127.0.0.1) is started; the tables run in
``--procs`` worker processes, each table a real ``TablePublisher`` (its own paho client,
outbox and sender thread) fed with the events of bot games played by the engine at the
chosen pace (the mock hardware is left out: on a real tournament every table has its
own Pi); the desk (``Desk`` + ``DeskState``, as ``truco-table desk`` runs it) runs in
this process. Latency is from the event's time on the table (``ts``) to the moment the
desk applies it, in seq order. Outboxes go to /dev/shm when it exists (the tables'
own disks are not what is measured; ``--disk DIR`` puts them on a disk with fsync).

Prints one key=value line per table count, then ``max_tables_within_1s``::

    tables=200 speed=10 seconds=20 events=16013 msgs_per_s=800 p95_ms=4.1 max_ms=38.2
    within_1s=yes desk_cpu_pct=21 broker_cpu_pct=3

Run: ``.venv/bin/python bench/tournament.py [--counts 25 50 100 200] [--seconds 20]``.
"""

from __future__ import annotations

import argparse
import heapq
import logging
import multiprocessing as mp
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection
from pathlib import Path

from controller.engine import Game, HouseRules
from controller.engine.playout import random_deal
from controller.table.bots import Bot
from controller.table.service import Accepted, Finished, NewGame, ServiceEvent
from controller.tournament.broker import LocalBroker, find_mosquitto
from controller.tournament.desk import Desk, DeskState
from controller.tournament.keys import table_key
from controller.tournament.profile import tournament_profile
from controller.tournament.publisher import TablePublisher
from controller.tournament.seal import TournamentKey
from controller.transcript import write

HUMAN_ACTION_S = 3.0
KEY = TournamentKey(bytes(range(32)), "bench")
TICK = os.sysconf("SC_CLK_TCK")
TABLES_PER_PROC = 150


def game_events(rng: random.Random, rules: HouseRules) -> Iterator[ServiceEvent]:
    """What a table's service emits, game after game: bots playing through the engine."""
    while True:
        game = Game(rules)
        bots = [Bot(s, random.Random(rng.random())) for s in range(rules.players)]
        yield NewGame(rules.to_line())
        while game.winner is None:
            if not game.hand_in_progress:
                deal = random_deal(rng, rules.players)
                game.deal(deal)
                lines = [f"deal {s}: {' '.join(str(c) for c in cs)}" for s, cs in deal.items()]
                yield Accepted("\n".join(["hand", *lines]), game.score, game.hand_number)
                continue
            start = next(iter(game.turns), 0)  # a seat whose turn it is (one per pica)
            for i in range(rules.players):
                action = bots[(start + i) % rules.players].choose(game)
                if action is not None:
                    break
            else:
                raise RuntimeError("the bots are stuck")
            game.push(action)
            yield Accepted(str(action), game.score, game.hand_number)
        assert game.winner is not None
        yield Finished(write(game), game.winner, game.score)


def worker(
    tables: list[str],
    port: int,
    tournament: str,
    pace: float,
    seconds: float,
    root: str,
    fsync: bool,
    conn: Connection,
) -> None:
    """Play ``tables`` for ``seconds``; send back each table's last seq."""
    # an overloaded machine drops connections (keepalive); say so once, in the figures
    logging.getLogger("controller.tournament").setLevel(logging.ERROR)
    rules = tournament_profile(HouseRules(target=30))
    publishers = [
        TablePublisher(
            t,
            "127.0.0.1",
            port,
            outbox_dir=Path(root) / t,
            tournament=tournament,
            key=table_key(KEY, tournament, t),  # each table's own, as the desk derives it
            fsync=fsync,
        ).start()
        for t in tables
    ]
    deadline = time.monotonic() + 30
    for p in publishers:
        p.connected.wait(max(0.0, deadline - time.monotonic()))
    conn.send(sum(not p.connected.is_set() for p in publishers))  # not connected
    conn.recv()  # go
    streams = [game_events(random.Random(t), rules) for t in tables]
    start = time.monotonic()
    queue = [(start + random.random() * pace, i) for i in range(len(tables))]
    heapq.heapify(queue)
    while queue:
        when, i = heapq.heappop(queue)
        if when - start >= seconds:
            continue
        delay = when - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        event = next(streams[i])
        publishers[i].on_event(event)
        # an action takes a player `pace` s; the service's own follow-ups come at once
        if isinstance(event, Finished):
            heapq.heappush(queue, (when, i))
        else:
            heapq.heappush(queue, (when + pace, i))
    for p in publishers:
        p.flush(30)
    conn.send({p.table_id: p.outbox.last_seq for p in publishers})
    conn.recv()  # the desk has everything
    for p in publishers:
        p.close(timeout=1)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def run(count: int, speed: float, seconds: float, procs: int, disk: str | None) -> dict[str, str]:
    pace = HUMAN_ACTION_S / speed
    tournament = f"bench{count}"
    base = disk or ("/dev/shm" if os.path.isdir("/dev/shm") else None)
    root = tempfile.mkdtemp(prefix="truco-bench-", dir=base)
    ctx = mp.get_context("spawn")
    try:
        with LocalBroker() as broker:
            assert broker.process is not None
            state = DeskState(tournament, out_dir=Path(root) / "desk", key=KEY, track_latency=True)
            desk = Desk(state, broker.host, broker.port).start()
            desk.connected.wait(10)
            names = [f"m{i:03d}" for i in range(count)]
            groups = [names[k::procs] for k in range(procs)]
            pipes, workers = [], []
            for group in groups:
                mine, theirs = ctx.Pipe()
                p = ctx.Process(
                    target=worker,
                    args=(
                        group,
                        broker.port,
                        tournament,
                        pace,
                        seconds,
                        root,
                        disk is not None,
                        theirs,
                    ),
                    daemon=True,
                )
                p.start()
                pipes.append(mine)
                workers.append(p)
            unconnected = sum(pipe.recv() for pipe in pipes)
            desk_cpu0 = time.process_time()
            broker_cpu0 = cpu_seconds(broker.process.pid)
            wall0 = time.monotonic()
            for pipe in pipes:
                pipe.send("go")
            last: dict[str, int] = {}
            for pipe in pipes:
                last.update(pipe.recv())

            def caught_up(s: DeskState) -> bool:
                return all(
                    t in s.tables and s.tables[t].next_seq - 1 == seq for t, seq in last.items()
                )

            complete = desk.wait(caught_up, 60)
            wall = time.monotonic() - wall0
            desk_cpu = time.process_time() - desk_cpu0
            broker_cpu = cpu_seconds(broker.process.pid) - broker_cpu0
            for pipe in pipes:
                pipe.send("done")
            for p in workers:
                p.join(timeout=30)
            desk.stop()
            latencies = sorted(state.latencies)
            events = len(latencies)
            p95 = latencies[int(0.95 * (events - 1))] if latencies else 0.0
            worst = latencies[-1] if latencies else 0.0
            within = complete and not unconnected and worst <= 1.0
            return {
                "tables": str(count),
                "speed": f"{speed:g}",
                "seconds": f"{seconds:g}",
                "events": str(events),
                "msgs_per_s": f"{events / seconds:.0f}",
                "median_ms": f"{statistics.median(latencies) * 1000:.1f}" if latencies else "-",
                "p95_ms": f"{p95 * 1000:.1f}",
                "max_ms": f"{worst * 1000:.1f}",
                "procs": str(procs),
                "unconnected": str(unconnected),
                "complete": "yes" if complete else "no",
                "within_1s": "yes" if within else "no",
                "desk_cpu_pct": f"{100 * desk_cpu / wall:.0f}",
                "broker_cpu_pct": f"{100 * broker_cpu / wall:.0f}",
            }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--counts", type=int, nargs="+", default=[25, 50, 100, 200])
    parser.add_argument("--speed", type=float, default=10.0, help="times human speed")
    parser.add_argument("--seconds", type=float, default=20.0, help="of play per count")
    parser.add_argument(
        "--procs",
        type=int,
        default=0,
        help="worker processes for the tables (default: one per 150 tables, at least 2)",
    )
    parser.add_argument("--disk", help="outboxes in this directory, with fsync")
    args = parser.parse_args(argv)
    if find_mosquitto() is None:
        print("mosquitto not found (apt-get install mosquitto)", file=sys.stderr)
        return 2
    best = 0
    for count in args.counts:
        # paho's network loop uses select(): a process holds ~250 clients at most
        procs = args.procs or max(2, -(-count // TABLES_PER_PROC))
        figures = run(count, args.speed, args.seconds, procs, args.disk)
        print(" ".join(f"{k}={v}" for k, v in figures.items()), flush=True)
        if figures["within_1s"] == "yes":
            best = max(best, count)
    print(f"max_tables_within_1s={best} human_action_s={HUMAN_ACTION_S:g} speed={args.speed:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
