"""How long the organiser's desk takes to be back after a ``kill -9`` on a long night
(issue 42): a Swiss of 128 pairs, 7 rounds, best of 3, every game played to the end.

The night's folder is made first, in this process, as the desk makes it: a
``DeskState`` and its ``Organiser`` on a folder, fed every table's messages as the table
signs them (the events of each hand and action of a real bot game, the game won, its
sealed record bound to its match), so ``events.jsonl``, ``journal.jsonl`` and
``records/`` are what such a night leaves. Then the desk runs as the venue runs it
(``truco-table desk --competition --config`` as a process, as ``venue-night`` starts
it, with a local Mosquitto) and is timed from its start until its page serves the whole
tournament again:

- ``cold_s``: the first start on the folder, no snapshot (every journal replayed);
- ``restart_s``: after a ``kill -9`` once its snapshot was written (the worst of
  ``--kills`` kills); ``connected_s``: until it is back on the broker too.

What it leaves out: the tables themselves (nobody publishes during the restart), a real
disk's cold cache (the files were just written), the Pi's slower cores.

Prints key=value lines::

    pairs=128 rounds=7 best_of=3 games=... events=... journal_lines=... events_mb=...
    cold_s=... restart_s=... restart_median_s=... connected_s=... snapshot_mb=...
    load=...

Run: ``.venv/bin/python bench/desk_restart.py [--pairs 128] [--rounds 7] [--kills 3]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from controller.engine import HouseRules
from controller.engine.rules import Claims
from controller.table.run_mock import MockRun
from controller.tournament.competition.model import (
    Entrant,
    Format,
    FormatSpec,
    Player,
    Register,
    Start,
)
from controller.tournament.desk.organiser import Organiser
from controller.tournament.desk.records import GameResult
from controller.tournament.desk.state import DeskState
from controller.tournament.sim.mosquitto import LocalBroker, free_port
from controller.tournament.sim.told import told
from controller.tournament.wire.keys import derive_table_key
from controller.tournament.wire.messages import signed
from controller.tournament.wire.seal import TournamentKey, seal
from controller.tournament.wire.topics import tournament_prefix
from controller.transcript import parse, replay

KEY = TournamentKey(bytes(range(32)), "bench")
NAME = "copa"
ROOT = Path(__file__).resolve().parents[1]


def bot_games(count: int) -> list[str]:
    """``count`` real games (bots at every seat), as their tables record them."""
    out = []
    for seed in range(1, count + 1):
        run = MockRun(HouseRules(target=15, claims=Claims.DECLARED), seed=seed, human=None)
        try:
            run.play_out()
            out.append(run.mock.service.transcript())
        finally:
            run.close()
    return out


class Table:
    """One table's signed messages, as it sends them."""

    def __init__(self, table: str) -> None:
        self.table = table
        self.key = derive_table_key(KEY.key, NAME, table)
        self.seq = 0
        self.games = 0
        self.prefix = f"{tournament_prefix(NAME)}/{table}"

    def _send(self, topic: str, payload: dict[str, Any]) -> tuple[str, bytes]:
        return topic, signed(self.key, topic, payload)

    def game(self, text: str, match: str, chico: int, now: float) -> list[tuple[str, bytes]]:
        self.games += 1
        game = f"{self.table}-g{self.games:03d}"
        played = replay(parse(text)).game
        out: list[tuple[str, bytes]] = []
        for kind, body, fields in told(text):
            self.seq += 1
            out.append(self._send(f"{self.prefix}/events", {
                "v": 1, "table": self.table, "seq": self.seq, "ts": now, "kind": kind,
                "game": game, "hand": 1, "score": [0, 0], "text": body, **fields}))  # fmt: skip
        score = list(played.score)
        record = seal(text, self.key, key_id=f"{NAME}:{self.table}", game_id=game,
                      tournament=NAME, table=self.table, match=match)  # fmt: skip
        self.seq += 1
        out.append(self._send(f"{self.prefix}/records/{game}", {
            "v": 1, "table": self.table, "seq": self.seq, "ts": now, "kind": "record",
            "game": game, "winner": played.winner, "score": score, "record": record,
            "match": match, "chico": chico}))  # fmt: skip
        return out


def make_night(folder: Path, pairs: int, rounds: int, best_of: int) -> dict[str, Any]:
    """The folder a desk leaves after the whole night (see the module docstring)."""
    roster = [f"mesa{n:02d}" for n in range(1, pairs // 2 + 1)]
    state = DeskState(NAME, out_dir=folder, key=KEY, tables=roster)
    o = Organiser(folder, NAME, key=KEY, tables=roster, lock=state.lock, fsync=False)
    state.competition = o

    def count(result: GameResult) -> None:
        o.count(result)

    state.on_finished.append(count)
    for i in range(1, pairs + 1):
        o.do(Register(Entrant(f"e{i:03d}", f"Pareja {i:03d}", (Player(f"Ana {i}"),
                                                                Player(f"Beto {i}")))))  # fmt: skip
    o.do(Start(FormatSpec(Format.SWISS, best_of=best_of, rounds=rounds, team_size=2)))
    games = bot_games(6)
    tables = {t: Table(t) for t in roster}
    messages = 0
    k = 0
    now = time.time() - 4 * 3600.0
    for _ in range(100_000):
        busy = [(t, a) for t, a in sorted(o.assignments.items()) if a.match is not None]
        if not busy or o.tournament.finished:
            break
        for table, a in busy:
            assert a.match is not None
            current = o.assignments.get(table)
            if current is None or (current.match, current.chico) != (a.match, a.chico):
                continue
            k += 1
            now += 0.5
            for topic, payload in tables[table].game(games[k % len(games)], a.match,
                                                     a.chico, now):  # fmt: skip
                state.handle(topic, payload, now)
                messages += 1
    t = o.tournament
    lines = o.journal.lines
    o.close()
    state.close()
    return {"games": k, "events": messages, "journal_lines": lines, "finished": t.finished,
            "matches": len(t.matches), "tables": roster}  # fmt: skip


def _back(url: str, matches: int) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(url + "api/tournament", timeout=5) as r:
            data = json.loads(r.read())
    except (OSError, ValueError):
        return None
    return data if len(data.get("matches", ())) == matches else None


def start_desk(config: Path, folder: Path, port: int, matches: int) -> tuple[Any, float, float]:
    """The desk as a process; (it, seconds until its page serves the night, until it is
    on the broker too)."""
    start = time.monotonic()
    desk = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "desk", "--config", str(config),
         "--competition", "--out", str(folder), "--http-port", str(port), "--quiet",
         "--refresh", "3600"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=open(folder / "bench-desk.log", "ab"),  # noqa: SIM115
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    page: float | None = None
    while True:
        if desk.poll() is not None:
            raise RuntimeError(f"the desk exited ({desk.returncode}): see bench-desk.log")
        data = _back(url, matches)
        if data is not None and page is None:
            page = time.monotonic() - start
        if data is not None:
            with urllib.request.urlopen(url + "api/state", timeout=5) as r:
                if json.loads(r.read())["broker"]["connected"] and page is not None:
                    return desk, page, time.monotonic() - start
        if time.monotonic() - start > 600:
            raise RuntimeError("the desk did not come back in 10 minutes")
        time.sleep(0.02)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--pairs", type=int, default=128)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--best-of", type=int, default=3)
    p.add_argument("--kills", type=int, default=3)
    p.add_argument("--keep", metavar="DIR", help="make the night in DIR (kept; reused if there)")
    args = p.parse_args()
    logging.disable(logging.CRITICAL)
    with tempfile.TemporaryDirectory(prefix="truco-restart-") as tmp, LocalBroker() as broker:
        base = Path(args.keep) if args.keep else Path(tmp)
        folder = base / "desk"
        made = time.monotonic()
        if (base / "night.json").exists():
            night = json.loads((base / "night.json").read_text())
        else:
            night = make_night(folder, args.pairs, args.rounds, args.best_of)
            (base / "night.json").write_text(json.dumps(night))
        (folder / "snapshot.bin").unlink(missing_ok=True)
        made = time.monotonic() - made
        roster = ", ".join(f'"{t}"' for t in night["tables"])
        config = Path(tmp) / "tournament.toml"
        config.write_text(f'[tournament]\nname = "{NAME}"\nbroker = "127.0.0.1:{broker.port}"\n'
                          f'key = "{KEY.key.hex()}"\nkey_id = "{KEY.key_id}"\n'
                          f"tables = [{roster}]\n", encoding="utf-8")  # fmt: skip
        config.chmod(0o600)
        events_mb = (folder / "events.jsonl").stat().st_size / 1e6
        print(f"pairs={args.pairs} rounds={args.rounds} best_of={args.best_of} "
              f"games={night['games']} events={night['events']} "
              f"journal_lines={night['journal_lines']} matches={night['matches']} "
              f"finished={night['finished']} events_mb={events_mb:.1f} made_s={made:.0f}",
              flush=True)  # fmt: skip
        port = free_port()
        snapshot = folder / "snapshot.bin"
        desk, cold, _ = start_desk(config, folder, port, night["matches"])
        restarts: list[float] = []
        connected: list[float] = []
        for _ in range(args.kills):
            deadline = time.monotonic() + 120
            while not snapshot.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            desk.send_signal(signal.SIGKILL)
            desk.wait()
            desk, page, on = start_desk(config, folder, port, night["matches"])
            restarts.append(page)
            connected.append(on)
        desk.send_signal(signal.SIGTERM)
        desk.wait(60)
        size = snapshot.stat().st_size / 1e6 if snapshot.exists() else 0.0
        print(f"cold_s={cold:.2f} restart_s={max(restarts):.2f} "
              f"restart_median_s={statistics.median(restarts):.2f} "
              f"connected_s={max(connected):.2f} snapshot_mb={size:.1f} "
              f"load={os.getloadavg()[0]:.2f}", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
