"""The organiser's views: how long the desk takes to build each one.

For each size, a Swiss tournament (best of 3, 5 rounds) is played through the
competition's fold up to round 3, half of whose matches are decided and the rest at the
tables (random games from ``--seed``); the desk's snapshot of the tables is made up
to match (every table online, a live score, one referee call; building the desk's own
snapshot, ``DeskState.snapshot``, is not measured here). Then, measured (best of
``--repeat`` runs, each the mean of ``--calls`` calls): ``/api/tournament`` (the
tournament, its standings and the desk page's content, to JSON: what the desk page
fetches every 2 s), the projector, the printed standings and score sheets, and the
six exports.

Prints one key=value line per size::

    entrants=64 matches=96 api_ms=... projector_ms=... standings_ms=... sheets_ms=...
    exports_ms=...

Run: ``.venv/bin/python bench/views.py [--entrants 32 64 128] [--seed 1] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from typing import Any

from controller.tournament.competition.model import (
    AssignTable,
    Entrant,
    Format,
    FormatSpec,
    GameCounted,
    MatchStatus,
    PairRound,
    Player,
    Register,
    Start,
    Tournament,
)
from controller.tournament.competition.tournament import apply
from controller.tournament.desk.exports import EXPORTS, export_text
from controller.tournament.desk.pages import (
    projector_page,
    sheets_page,
    standings_page,
    tournament_api,
)


def tournament(entrants: int, rng: random.Random) -> Tournament:
    t = Tournament("bench")
    for i in range(1, entrants + 1):
        players = (Player(f"Jugador {i}.1"), Player(f"Jugador {i}.2"))
        t = apply(t, Register(Entrant(f"e{i:03d}", f"Equipo {i}", players)))
    t = apply(t, Start(FormatSpec(Format.SWISS, best_of=3, rounds=5)))
    game = 0
    for round_no in (1, 2, 3):
        t = apply(t, PairRound(round_no))
        matches = [m for m in t.round_matches(round_no) if m.result.status is MatchStatus.WAITING]
        for k, m in enumerate(matches):
            table = f"mesa{k + 1:03d}"
            t = apply(t, AssignTable(m.id, table))
            if round_no == 3 and k % 2:
                continue  # being played
            while t.match(m.id).result.winner is None:
                game += 1
                winner = rng.randrange(2)
                score = (30, rng.randrange(30)) if winner == 0 else (rng.randrange(30), 30)
                t = apply(t, GameCounted(m.id, f"{table}-g{game:05d}", table, score, winner,
                                         "0" * 64))  # fmt: skip
    return t


def snapshot(t: Tournament) -> dict[str, Any]:
    tables = sorted({m.table for m in t.matches if m.table})
    rows: list[dict[str, Any]] = [
        {"table": x, "online": True, "game": f"{x}-g900", "score": [12, 17], "hand": 6,
         "attention": [], "rules_problems": []}
        for x in tables
    ]  # fmt: skip
    rows[0]["attention"] = [{"seq": 9, "seat": 2, "concern": "called", "words": "Llamado"}]
    return {"broker": {"connected": True}, "tables": rows, "results": []}


def timed(call: Callable[[], object], calls: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, nargs="+", default=[32, 64, 128])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--calls", type=int, default=10)
    args = parser.parse_args()
    for n in args.entrants:
        print(measure(n, args.seed, args.calls, args.repeat), flush=True)


def measure(n: int, seed: int, calls: int, repeat: int) -> str:
    """One size's key=value line."""
    t = tournament(n, random.Random(seed))
    snap = snapshot(t)
    figures: dict[str, Callable[[], object]] = {
        "api_ms": lambda: json.dumps(tournament_api(t, snap, True)),
        "projector_ms": lambda: projector_page(t),
        "standings_ms": lambda: standings_page(t),
        "sheets_ms": lambda: sheets_page(t),
        "exports_ms": lambda: [
            export_text(f"{name}.{kind}", t) for name in EXPORTS for kind in ("csv", "json")
        ],
    }
    line = f"entrants={n} matches={len(t.matches)}"
    for key, call in figures.items():
        line += f" {key}={timed(call, calls, repeat):.1f}"
    return line


if __name__ == "__main__":
    main()
