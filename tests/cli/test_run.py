"""``truco-table run --mock --script FILE --state DIR``, restarted: a scripted game that
ended before the restart is reported, never played a second time, also when the table
had already begun the next game's record (a kill -9 right after the archive: found by
the crash trials)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.engine import Game, HouseRules
from controller.engine.playout import random_game
from controller.table.lock import LOCK_NAME, TableLock, TableLocked, holder
from controller.table.store import GameStore
from controller.transcript import write
from tests.test_spanish_output import english_words

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


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` but the lock, with its bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != LOCK_NAME
    }


def test_a_second_table_on_a_held_state_folder_says_so_in_spanish_and_touches_nothing(
    tmp_path: Path,
) -> None:
    """Issue 49: ``run --mock --state`` takes the service's lock; while another holds it
    (here this process, as the service would), it stops at once with exit status 2."""
    game = random_game(Game(RULES), random.Random(11))
    script = tmp_path / "game.truco"
    script.write_text(write(game), encoding="utf-8")
    state = tmp_path / "state"
    run(script, state)
    store = GameStore(state)
    store.restore()
    store.append(RULES.to_line())  # a game under way, as a running table has
    before = _files(state)
    argv = [sys.executable, "-m", "controller.cli", "run", "--mock", "--players", "2",
            "--target", "15", "--state", str(state), "--script", str(script)]  # fmt: skip
    with TableLock(state):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert holder(state) == os.getpid()  # still the first's
    assert (done.returncode, done.stdout) == (2, "")
    said = done.stderr.strip()
    assert said.startswith(f"truco-table run: la mesa ya está andando (proceso {os.getpid()})")
    assert str(state) in said and "\n" not in said
    assert english_words(said) == [], said
    assert _files(state) == before  # neither the record nor the archive touched
    again = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(again.stdout)["score"] == list(game.score)  # free again: it runs
    assert holder(state) is None  # and lets go when it ends


def test_the_mock_table_holds_its_state_folder_while_it_runs(tmp_path: Path) -> None:
    state = tmp_path / "state"
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "run", "--mock", "--serve", "--players", "2",
         "--state", str(state)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120  # generous: a slow machine only waits longer
        while holder(state) != proc.pid:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the mock table never took the lock"
            time.sleep(0.05)
        with pytest.raises(TableLocked) as info:
            TableLock(state).acquire()
        assert info.value.pid == proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    assert holder(state) is None
