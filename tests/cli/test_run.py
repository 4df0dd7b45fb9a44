"""``truco-table run --mock --script FILE --state DIR``, restarted: a scripted game that
ended before the restart is reported, never played a second time, also when the table
had already begun the next game's record (a kill -9 right after the archive: found by
the crash trials)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from controller.engine import Game, HouseRules
from controller.engine.playout import random_game
from controller.table.store import GameStore
from controller.transcript import write

RULES = HouseRules(players=2, target=15)


def run(script: Path, state: Path) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-m", "controller.cli", "run", "--mock", "--players", "2",
         "--target", "15", "--state", str(state), "--script", str(script)],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    result: dict[str, object] = json.loads(out.stdout)
    return result


def test_a_game_that_ended_before_the_restart_is_not_played_again(tmp_path: Path) -> None:
    game = random_game(Game(RULES), random.Random(7))
    script = tmp_path / "game.truco"
    script.write_text(write(game), encoding="utf-8")
    state = tmp_path / "state"
    first = run(script, state)
    assert first["score"] == list(game.score)
    store = GameStore(state)
    [archived] = store.archived()
    store.restore()
    store.append(RULES.to_line())  # the next game's record begun, then the power went
    assert store.path.exists()
    again = run(script, state)
    assert again["score"] == first["score"]
    assert GameStore(state).archived() == [archived]  # one game, archived once


def test_another_game_in_the_archive_does_not_stop_a_new_script(tmp_path: Path) -> None:
    state = tmp_path / "state"
    scripts = []
    for seed in (1, 2):
        game = random_game(Game(RULES), random.Random(seed))
        scripts.append(tmp_path / f"game{seed}.truco")
        scripts[-1].write_text(write(game), encoding="utf-8")
    run(scripts[0], state)
    store = GameStore(state)
    store.restore()
    store.append(RULES.to_line())
    second = run(scripts[1], state)  # a different game: played, not taken for the first
    assert len(GameStore(state).archived()) == 2
    assert second["score"] == list(random_game(Game(RULES), random.Random(2)).score)


def test_a_game_finished_but_not_archived_before_the_restart_is_archived_once(
    tmp_path: Path,
) -> None:
    """The cut came after the game's last line reached the disk, before its archive: the
    restart archives it, reports it, and does not play the script again."""
    game = random_game(Game(RULES), random.Random(7))
    script = tmp_path / "game.truco"
    text = write(game)
    script.write_text(text, encoding="utf-8")
    state = tmp_path / "state"
    store = GameStore(state)
    store.restore()
    store.rewrite(text.splitlines())  # the whole game on disk, not archived yet
    assert store.archived() == []
    again = run(script, state)
    assert again["score"] == list(game.score)
    assert len(GameStore(state).archived()) == 1


def test_a_declared_number_no_pad_can_enter_is_refused_as_replay_refuses_it(
    tmp_path: Path,
) -> None:
    """``0 declare 39`` (beyond every telling's range) in a script: no pad can enter it, so
    the table gives the engine's refusal (``bad_declaration``, as ``replay`` does) and
    goes on (the mock table deals its own cards, so the other lines may be refused
    too); it used to end the run as an internal error (exit 70, found by the fuzz)."""
    script = tmp_path / "game.truco"
    script.write_text(
        "table players=2 flor=on\nhand\n0 flor\n1 flor\n0 declare 39\n0 declare 33\n",
        encoding="utf-8",
    )
    out = subprocess.run(
        [sys.executable, "-m", "controller.cli", "run", "--mock", "--ui", "lines",
         "--players", "2", "--flor", "on", "--state", str(tmp_path / "state"),
         "--script", str(script)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    rejected = json.loads(out.stdout)["rejected"]
    assert {"line": 5, "seat": 0, "action": "declare 39", "code": "bad_declaration"} in rejected
