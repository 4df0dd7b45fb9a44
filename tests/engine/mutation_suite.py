"""The killer suite of the mutation check (``tests/engine/mutation.py``): fast, in-process,
stops at the first failure. Exit status 0 when everything passes."""

from __future__ import annotations

import json
import random
from pathlib import Path

from controller.engine import HouseRules
from controller.engine.rules import Claims, Falta
from controller.transcript import parse, replay, result_json

from ..test_scenario_mirror import _players, mirror_result, mirror_transcript
from .test_one_path import random_positions
from .test_perft import POSITIONS, divide
from .test_properties import check_transcript_round_trip, play_checked

SCENARIOS = Path(__file__).parent.parent / "scenarios"


def _scenarios() -> None:
    for path in sorted(SCENARIOS.glob("*.truco")):
        text = path.read_text()
        expected = json.loads(path.with_suffix(".json").read_text())
        assert result_json(replay(parse(text))) == expected, path.name
        mirrored, after = mirror_transcript(text)
        got = result_json(replay(parse(mirrored)))
        assert got == mirror_result(expected, _players(text.splitlines()), after), path.name


def _perft() -> None:
    for position in POSITIONS:
        got = divide(position.game())
        assert got == position.divide, position.id


def _games(count: int = 120, seed: int = 14) -> None:
    rng = random.Random(seed)
    for _ in range(count):
        rules = _rules(rng)
        known = rng.random() < 0.7
        game = play_checked(rules, rng.randrange(2**32), known=known, max_actions=600)
        check_transcript_round_trip(game)


def _rules(rng: random.Random) -> HouseRules:
    return HouseRules(
        players=rng.choice((2, 4, 6)),
        target=rng.choice((15, 30)),
        flor=rng.random() < 0.6,
        falta=rng.choice(list(Falta)),
        mazo_envido_point=rng.random() < 0.5,
        claims=rng.choice(list(Claims)),
        implicit_quiero=rng.random() < 0.3,
        pica_pica=rng.random() < 0.5,
    )


def _one_path(games: int = 120, seed: int = 14) -> None:
    """The legal list is exactly the actions refused with ``None`` (test_one_path.py), at
    25 positions of each of ``games`` seeded games: a listing that drifts from the
    refusals is caught even where no scenario lists the legal actions."""
    rng = random.Random(seed)
    for _ in range(games):
        random_positions(_rules(rng), rng, 25)


def _unit_tests() -> None:
    """The façade's own tests (seats beyond the table, the picas' API, per-seat views)
    and the rules the mutation check found unpinned (test_mutants_survivors.py)."""
    import pytest

    here = Path(__file__).parent
    args = ["-q", "-x", "-p", "no:cacheprovider", "--no-header"]
    tests = [
        str(here / "test_game.py"),
        str(here / "test_mutants_survivors.py"),
        str(here.parent / "table" / "test_pica_pica.py"),
    ]
    assert pytest.main([*args, *tests]) == 0


def run() -> int:
    try:
        _scenarios()
        _unit_tests()
        _games()
        _one_path()
        _perft()
    except Exception as e:  # any failure kills the mutant
        print(f"killed: {type(e).__name__}: {e}"[:300])
        return 1
    return 0
