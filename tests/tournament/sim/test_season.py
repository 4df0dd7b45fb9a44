"""``sh scripts/league --season --small``, as CI runs it: a whole season over bridged
Mosquittos (two divisions, three regional groups, the final phases, the promotion), two
uplinks cut and a venue broker restarted, and the league's standings, ratings and
statistics compared with the simulation's own recomputation (sim/season_check.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from controller.tournament.sim.mosquitto import find_mosquitto
from controller.tournament.sim.season import run


def test_a_small_season_over_bridged_brokers_ends_with_the_recomputed_results(
    tmp_path: Path,
) -> None:
    if find_mosquitto() is None or shutil.which("openssl") is None:
        pytest.skip("mosquitto or openssl not installed (.ci/run installs both)")
    lines: list[str] = []
    pages = tmp_path / "paginas"
    assert run(lines.append, small=True, pages=pages), "\n".join(lines)
    summary = dict(word.split("=", 1) for word in lines[-1].split())
    assert summary == {
        "nothing_lost": "yes",
        "standings_equal": "yes",
        "promotion_equal": "yes",
        "ratings_equal": "yes",
        "stats_equal": "yes",
    }
    figures = dict(w.split("=", 1) for w in lines[-3].split())
    assert figures["cut"] == "2" and figures["restarts"] == "1" and figures["phases"] == "2"
    assert figures["counted"] == figures["sent"]
    assert [x for x in lines if x.startswith("group=")] and len(
        [x for x in lines if x.startswith("moves=")]
    ) == 2
    # the league desk wrote the public pages itself, from what it counted
    index = (pages / "2027" / "index.html").read_text(encoding="utf-8")
    assert "Campeón" in index and "Ascensos y descensos" in index
    moved = [x.split("=", 1)[1].split()[0] for x in lines if x.startswith("moves=")]
    assert all(f"Club {m[5:].capitalize()[:-1]} {m[-1]}" in index for m in moved), moved
