"""The competition's fold: how long a desk takes to replay a whole tournament's journal.

For each format with 32 entrants (knockout; round robin, one leg; swiss, 5 rounds;
groups, 8 of 4 with 2 through), a journal is made by playing the tournament to its end
through ``apply`` (best of 3, random games from ``--seed``): register, start, pair each
round, assign every match a table, count each game. Then, measured: replaying the journal
(``replay``), writing it as JSON lines and reading it back (``dumps_action`` /
``loads_action``), and the slowest single ``PairRound`` (the swiss pairs from the
standings by weighted matching, networkx's blossom). Best of ``--repeat`` runs.

Prints one key=value line per format::

    format=round-robin entrants=32 actions=... matches=... replay_ms=... per_action_us=...
    codec_ms=... pair_round_ms_max=...

Run: ``.venv/bin/python bench/competition.py [--entrants 32] [--seed 1] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from functools import partial

from controller.tournament.competition.codec import dumps_action, loads_action
from controller.tournament.competition.model import (
    Action,
    AssignTable,
    Entrant,
    Format,
    FormatSpec,
    GameCounted,
    PairRound,
    Player,
    Register,
    Start,
    Tournament,
)
from controller.tournament.competition.tournament import apply, pending_matches, replay


def journal(spec: FormatSpec, entrants: int, rng: random.Random) -> list[Action]:
    actions: list[Action] = [
        Register(Entrant(f"e{i:02d}", f"Equipo {i}", (Player(f"A{i}"), Player(f"B{i}"))))
        for i in range(1, entrants + 1)
    ]
    actions.append(Start(spec))
    t = replay("bench", actions)
    while not t.finished:
        step: list[Action] = [PairRound(t.round + 1)]
        t = apply(t, step[0])
        for n, m in enumerate(pending_matches(t), start=1):
            table = f"mesa{n:02d}"
            step.append(AssignTable(m.id, table))
            t = apply(t, step[-1])
            g = 0
            while t.match(m.id).result.winner is None:
                g += 1
                winner = rng.randrange(2)
                score = (30, rng.randrange(30)) if winner == 0 else (rng.randrange(30), 30)
                step.append(GameCounted(m.id, f"{table}-{m.id}-{g}", table, score, winner, ""))
                t = apply(t, step[-1])
        actions += step
    return actions


def round_trip(actions: list[Action]) -> list[Action]:
    return [loads_action(dumps_action(a)) for a in actions]


def best_ms(run: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def slowest_pairing(actions: list[Action]) -> float:
    t, slowest = Tournament("bench"), 0.0
    for a in actions:
        start = time.perf_counter()
        t = apply(t, a)
        if isinstance(a, PairRound):
            slowest = max(slowest, time.perf_counter() - start)
    return slowest * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=32)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    n = args.entrants
    specs = [
        FormatSpec(Format.KNOCKOUT, best_of=3),
        FormatSpec(Format.ROUND_ROBIN, best_of=3),
        FormatSpec(Format.SWISS, best_of=3),
        FormatSpec(Format.GROUPS, best_of=3, groups=max(1, n // 4)),
    ]
    for spec in specs:
        actions = journal(spec, n, random.Random(args.seed))
        t = replay("bench", actions)
        replay_ms = best_ms(partial(replay, "bench", actions), args.repeat)
        codec_ms = best_ms(partial(round_trip, actions), args.repeat)
        figures = {
            "format": spec.format.value,
            "entrants": n,
            "actions": len(actions),
            "matches": len(t.matches),
            "replay_ms": f"{replay_ms:.1f}",
            "per_action_us": f"{replay_ms * 1000 / len(actions):.0f}",
            "codec_ms": f"{codec_ms:.1f}",
            "pair_round_ms_max": f"{slowest_pairing(actions):.2f}",
        }
        print(" ".join(f"{k}={v}" for k, v in figures.items()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
