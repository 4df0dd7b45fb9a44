"""``bench/bots.py`` as a developer runs it: its key=value lines, and a checker that does
find the certainly wrong decisions it lists (a checker that finds nothing proves
nothing)."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path
from types import ModuleType

from controller.engine import Action, Game, HouseRules, Kind
from controller.table.bots import Bot
from tests.bench.runs import key_values, run_bench
from tests.helpers import cards

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_bots", ROOT / "bench" / "bots.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _bench()


def test_it_prints_key_value_lines_per_player_count() -> None:
    done = run_bench("bench/bots.py", "--games", "4", "--players", "2,4")
    assert done.returncode == 0, done.stderr
    lines = key_values(done.stdout)
    counts = [line for line in lines if "win_rate" in line and "players" in line]
    assert [line["players"] for line in counts] == ["2", "4"]
    for line in counts:
        assert {"games", "wins", "ms_p99", "ms_max", "absurd", "over_5ms"} <= set(line)
        assert line["games"] == "4" and 0 <= float(line["win_rate"]) <= 1


def test_the_checker_finds_a_falta_accepted_against_points_seen_higher() -> None:
    game = Game(HouseRules(players=2), score=(12, 6))
    mine = cards("7C 10C 4O")
    game.deal({0: cards("7E 6E 1B"), 1: mine})
    game.push_str("0 show 7E 6E")
    game.push_str("0 falta-envido")
    checker = bench.Checker()
    bot = Bot(1, random.Random(1))
    checker.check(game, bot, tuple(mine), Kind.QUIERO)
    assert checker.found["falta_accepted_against_higher"] == 1
    checker.check(game, bot, tuple(mine), Kind.NO_QUIERO)
    assert sum(checker.found.values()) == 1


def test_the_checker_finds_a_mazo_with_the_hand_won() -> None:
    """Seat 0 won the first baza and holds the 1E: the next baza is its, the hand too."""
    game = Game(HouseRules(players=2))
    mine = cards("1E 7O 4C")
    game.deal({0: mine, 1: cards("5B 6B 12C")})
    game.push_str("0 play 7O")
    game.push_str("1 play 5B")
    checker = bench.Checker()
    bot = Bot(0, random.Random(1))
    checker.check(game, bot, tuple(mine), Kind.MAZO)
    assert checker.found["mazo_with_hand_won"] == 1
    assert bot.choose(game, tuple(mine)) != Action(0, Kind.MAZO)


def test_the_checker_finds_a_falta_called_without_chance() -> None:
    game = Game(HouseRules(players=2))
    mine = cards("4C 5O 6E")
    game.deal({0: cards("7E 6B 1B"), 1: mine})
    game.push_str("0 show 7E")  # 7 points seen: seat 1's 6 cannot win
    game.push_str("0 play 7E")
    checker = bench.Checker()
    checker.check(game, Bot(1, random.Random(1)), tuple(mine), Kind.FALTA_ENVIDO)
    assert checker.found["falta_called_without_chance"] == 1
