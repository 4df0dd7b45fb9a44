"""Whole tournaments on this machine (``sh scripts/tournament --format ...``): the
venue's real Mosquitto (accounts, ACLs, TLS), the desk with its competition, simulated
tables (the real service on mock hardware, bots at the seats) playing what the desk
assigns, and a power cut of the desk half-way.

The final standings are checked against ones computed here, independently of the
desk's code: every record the desk collected is verified with its table's key (the
seal names its match), replayed for its winner and score, and summed per entrant with
the pairings the desk published (who was home, who away). Nothing of the desk's
standings, counting or journal is used for that."""

from __future__ import annotations

import io
import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from controller.tournament.competition.model import Format
from controller.tournament.desk.records import unseal
from controller.tournament.sim.cup import CupOptions, run_cup
from controller.tournament.wire.keys import derive_table_key, load_private_key
from controller.tournament.wire.seal import verify
from controller.transcript import parse, replay

pytestmark = pytest.mark.skipif(
    shutil.which("mosquitto") is None and not Path("/usr/sbin/mosquitto").exists(),
    reason="needs the mosquitto binary (Debian: apt-get install mosquitto)",
)


def independent_totals(folder: Path, tournament: str) -> dict[str, dict[str, int]]:
    """Per entrant: matches played/won/lost, games won/lost, points for/against, from
    the sealed records alone (and who was home/away in each match)."""
    secret = load_private_key(folder / "tournament.toml", kind="config")
    pairings = {
        m["match"]: (m["home"], m["away"])
        for m in json.loads((folder / "desk" / "matches.json").read_text())["matches"]
    }
    games: dict[str, list[tuple[int, tuple[int, int]]]] = defaultdict(list)
    for path in sorted((folder / "desk" / "records").glob("*.truco")):
        assert ".copy-" not in path.name, f"the desk got two records of one game: {path}"
        table = path.name.rsplit("-g", 1)[0]
        text = path.read_text(encoding="utf-8")
        v = verify(text, derive_table_key(secret.key, tournament, table))
        assert v.ok, f"{path.name}: {v.reason}"
        assert v.tournament == tournament and v.table == table
        assert v.match is not None and v.match in pairings, f"{path.name}: match {v.match}"
        g = replay(parse(unseal(text))).game
        assert g.winner is not None, f"{path.name} was not won"
        games[v.match].append((g.winner, g.score))
    totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for match, played in games.items():
        home, away = pairings[match]
        won = [sum(1 for w, _ in played if w == side) for side in (0, 1)]
        for side, entrant in ((0, home), (1, away)):
            s = totals[entrant]
            s["played"] += 1
            s["won" if won[side] > won[1 - side] else "lost"] += 1
            s["games_won"] += won[side]
            s["games_lost"] += won[1 - side]
            s["points_for"] += sum(score[side] for _, score in played)
            s["points_against"] += sum(score[1 - side] for _, score in played)
    return totals


def run(tmp_path: Path, **kw: Any) -> tuple[str, list[dict[str, Any]]]:
    out = io.StringIO()
    opts = CupOptions(out=tmp_path, http_port=0, quiet=True, timeout=600, **kw)
    status = run_cup(opts, out)
    text = out.getvalue()
    assert status == 0, text
    standings = json.loads((tmp_path / "desk" / "standings.json").read_text())["standings"]
    return text, standings


def check(tmp_path: Path, standings: list[dict[str, Any]], entrants: int) -> None:
    totals = independent_totals(tmp_path, "copa")
    assert sorted(row["entrant"] for row in standings) == [f"e{i:02d}" for i in
                                                            range(1, entrants + 1)]  # fmt: skip
    keys = ("played", "won", "lost", "games_won", "games_lost", "points_for", "points_against")
    for row in standings:
        mine = totals.get(row["entrant"], {})
        assert {k: row[k] for k in keys} == {k: mine.get(k, 0) for k in keys}, row["entrant"]
    assert [row["rank"] for row in standings] == list(range(1, entrants + 1))


def test_a_knockout_of_eight_best_of_three_with_a_power_cut_at_the_desk(tmp_path: Path) -> None:
    text, standings = run(tmp_path, format=Format.KNOCKOUT, entrants=8, best_of=3)
    assert "corte de luz en la mesa de control" in text
    assert "la mesa de control siguió desde su diario" in text
    check(tmp_path, standings, 8)
    matches = json.loads((tmp_path / "desk" / "matches.json").read_text())["matches"]
    final = next(m for m in matches if m["match"] == "final")
    assert standings[0]["entrant"] == final["winner"]  # the champion heads the standings
    assert {m["label"] for m in matches} == {"Cuartos de final", "Semifinal", "Final",
                                             "Tercer puesto"}  # fmt: skip


def test_a_round_robin_of_six(tmp_path: Path) -> None:
    _, standings = run(tmp_path, format=Format.ROUND_ROBIN, entrants=6)
    check(tmp_path, standings, 6)
    assert all(row["played"] == 5 for row in standings)
    won = [row["won"] for row in standings]
    assert won == sorted(won, reverse=True)  # matches won decide first


def test_swiss_rounds_of_eight(tmp_path: Path) -> None:
    _, standings = run(tmp_path, format=Format.SWISS, entrants=8, rounds=3)
    check(tmp_path, standings, 8)
    matches = json.loads((tmp_path / "desk" / "matches.json").read_text())["matches"]
    pairs = [frozenset((m["home"], m["away"])) for m in matches]
    assert len(pairs) == len(set(pairs)) == 12  # no pairing repeated


def test_groups_then_a_knockout(tmp_path: Path) -> None:
    _, standings = run(tmp_path, format=Format.GROUPS, entrants=8, groups=2, advance=2)
    check(tmp_path, standings, 8)
