"""``sh scripts/league``'s matchday, as CI runs it: three bridged venues on real
Mosquittos, one uplink cut, one venue broker restarted, one forged record."""

from __future__ import annotations

import shutil

import pytest

from controller.tournament.sim.league import run
from controller.tournament.sim.mosquitto import find_mosquitto


def test_a_league_matchday_with_its_faults_ends_with_the_exact_standings() -> None:
    if find_mosquitto() is None or shutil.which("openssl") is None:
        pytest.skip("mosquitto or openssl not installed (.ci/run installs both)")
    lines: list[str] = []
    assert run(lines.append), "\n".join(lines)
    summary = dict(word.split("=", 1) for word in lines[-1].split())
    assert summary == {
        "nothing_lost": "yes",
        "counted_once": "yes",
        "forgery_flagged": "yes",
        "standings_equal": "yes",
    }
    assert lines[0] == "venues=3 matches=3 records_sent=" + lines[0].split("records_sent=")[1]
    flags = [line for line in lines if line.startswith("flag=bar-a/mesa02/")]
    assert len(flags) == 1 and "sellado con otra clave" in flags[0]
    assert len([line for line in lines if line.startswith("rank=")]) == 6
