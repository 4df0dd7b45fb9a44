"""Engine throughput: seeded random legal games, uniform over the legal actions, on the
pure-Python engine and, where it was built (``scripts/compile``), the compiled one.

Prints one line per build, player count and policy, as key=value pairs::

    build=pure players=2 mazo=on hands_per_s=... actions_per_s=... us_per_legal=...
    build=compiled players=2 mazo=on hands_per_s=... actions_per_s=... us_per_legal=...
    speedup players=2 mazo=on actions=... legal=...

``mazo=on`` picks uniformly among all legal actions; ``mazo=off`` leaves going to the
mazo out of the policy (hands then run longer). ``us_per_legal`` is the cost of listing
the legal actions of a fresh position (the position's cache dropped before each listing).
Rates are per second of CPU time (not of elapsed time: on a shared machine that measures
the neighbours); each build runs in its own process, one player count at a time,
``ROUNDS`` times, alternating with the other build at that count (the two measured
seconds apart, not a whole run apart), and the best round is kept. Left out: start-up
and import, anything outside the engine (the table, screens, the record).

Run: ``.venv/bin/python bench/engine.py [seconds]``; ``--build NAME [seconds [players]]``
measures only the build this process imports (what each child process does).
"""

from __future__ import annotations

import importlib.machinery
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from controller.engine import CARDS, Game, HouseRules, Kind
from controller.engine import game as game_module

ROOT = Path(__file__).resolve().parent.parent
COMPILED = ROOT / "build" / "compiled"
ROUNDS = 5  # rounds per build and player count, alternating; the best kept
PLAYERS = (2, 4, 6)
LISTINGS = 16  # fresh listings timed together at each position


DEALS = 1024  # deals drawn ahead, played in turn
CHOICES = 1 << 16  # uniform draws in [0, 1) ahead, used in turn (one per action)


def play(players: int, mazo: bool, seconds: float, seed: int = 1) -> tuple[int, int, float]:
    """Whole hands, uniform over the legal actions. The deals and the draws that pick
    the actions come from a seeded generator ahead of the clock: ``random.sample`` of
    18 cards costs more than a six-seat hand's deal in the compiled engine, and the
    harness's Python is the same in both builds (it would only dilute the ratio)."""
    rng = random.Random(seed)
    rules = HouseRules(players=players)
    n3 = 3 * players
    deals = []
    for _ in range(DEALS):
        cards = rng.sample(CARDS, n3)
        deals.append({s: cards[3 * s : 3 * s + 3] for s in range(players)})
    draws = [rng.random() for _ in range(CHOICES)]
    hands = actions = 0
    clock = time.process_time
    start = clock()
    deadline = start + seconds
    game = Game(rules)
    mazo_kind = Kind.MAZO
    while True:
        if game.winner is not None:
            game = Game(rules)
        game.deal(deals[hands % DEALS])
        while game.hand_in_progress and game.winner is None:
            legal = game.legal_list()
            if not mazo:
                legal = [a for a in legal if a.kind is not mazo_kind]
            game.push(legal[int(draws[actions % CHOICES] * len(legal))])
            actions += 1
        hands += 1
        if hands % 64 == 0 and clock() > deadline:
            break
    return hands, actions, clock() - start


def legal_cost(players: int, positions: int = 4000, seed: int = 2) -> float:
    """Microseconds to list the legal actions of a position reached by random play
    (listed afresh: the cache of the position is dropped before each listing)."""
    rng = random.Random(seed)
    rules = HouseRules(players=players)
    game = Game(rules)
    total = 0.0
    timed = 0
    clock = time.process_time
    while timed < positions:
        if game.winner is not None:
            game = Game(rules)
        cards = rng.sample(CARDS, 3 * players)
        game.deal({s: cards[3 * s : 3 * s + 3] for s in range(players)})
        while game.hand_in_progress and game.winner is None:
            t = clock()
            for _ in range(LISTINGS):
                game._legal = None  # time a fresh listing
                legal = game.legal_list()
            total += clock() - t
            timed += 1
            game.push(legal[rng.randrange(len(legal))])
    return total / (timed * LISTINGS) * 1e6


def this_build() -> str:
    path = str(game_module.__file__)
    return "compiled" if path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)) else "pure"


def measure(build: str, seconds: float, players_list: tuple[int, ...]) -> None:
    if this_build() != build:
        sys.exit(f"bench/engine.py: asked for build={build}, imported {game_module.__file__}")
    for players in players_list:
        us = legal_cost(players)
        for mazo in (True, False):
            hands, actions, elapsed = play(players, mazo, seconds)
            print(
                f"build={build} players={players} mazo={'on' if mazo else 'off'} "
                f"hands_per_s={hands / elapsed:.0f} actions_per_s={actions / elapsed:.0f} "
                f"us_per_legal={us:.2f}",
                flush=True,
            )


def child(build: str, seconds: float, players: int) -> dict[str, dict[str, float]]:
    """Runs one build at one player count in its own process; its lines keyed by players
    and policy."""
    env = dict(os.environ)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p) != COMPILED]
    if build == "compiled":
        paths.insert(0, str(COMPILED))
    env["PYTHONPATH"] = os.pathsep.join(paths)
    out = subprocess.run(
        [sys.executable, __file__, "--build", build, str(seconds), str(players)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    lines: dict[str, dict[str, float]] = {}
    for line in out.splitlines():
        pairs = dict(item.split("=", 1) for item in line.split())
        key = f"players={pairs['players']} mazo={pairs['mazo']}"
        lines[key] = {k: float(v) for k, v in pairs.items() if k.endswith(("_s", "legal"))}
    return lines


def best(rounds: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for result in rounds:
        for key, values in result.items():
            kept = out.setdefault(key, dict(values))
            for name, value in values.items():
                better = min if name == "us_per_legal" else max
                kept[name] = better(kept[name], value)
    return out


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--build"]:
        counts = (int(args[3]),) if len(args) > 3 else PLAYERS
        measure(args[1], float(args[2]) if len(args) > 2 else 3.0, counts)
        return
    seconds = float(args[0]) if args else 1.5
    builds = ["pure"] + (["compiled"] if COMPILED.is_dir() else [])
    results: dict[str, list[dict[str, dict[str, float]]]] = {b: [] for b in builds}
    for players in PLAYERS:
        for _ in range(ROUNDS):
            for build in builds:
                results[build].append(child(build, seconds, players))
    kept = {build: best(rounds) for build, rounds in results.items()}
    for build in builds:
        for key, values in kept[build].items():
            print(
                f"build={build} {key} hands_per_s={values['hands_per_s']:.0f} "
                f"actions_per_s={values['actions_per_s']:.0f} "
                f"us_per_legal={values['us_per_legal']:.2f}"
            )
    if "compiled" in kept:
        for key, pure in kept["pure"].items():
            fast = kept["compiled"][key]
            print(
                f"speedup {key} actions={fast['actions_per_s'] / pure['actions_per_s']:.2f} "
                f"legal={pure['us_per_legal'] / fast['us_per_legal']:.2f}"
            )
    else:
        print("build=compiled not built (sh scripts/compile)")


if __name__ == "__main__":
    main()
