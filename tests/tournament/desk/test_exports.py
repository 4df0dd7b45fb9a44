"""The tournament's exports: their exact columns, one row per standing / match / game
with its status or verdict, and a round trip through the csv and json modules."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from controller.tournament.competition.model import Walkover
from controller.tournament.competition.tournament import apply
from controller.tournament.desk.exports import (
    GAME_FIELDS,
    MATCH_FIELDS,
    STANDING_FIELDS,
    export_text,
    game_rows,
    match_rows,
    standing_rows,
    write_exports,
)

from .scenes import HOSTILE, heard_desk, knockout_16, swiss_round


def cells(row: dict[str, object]) -> dict[str, str]:
    """A row as the csv module reads it back."""
    return {
        k: "" if v is None else ("true" if v else "false") if isinstance(v, bool) else str(v)
        for k, v in row.items()
    }


@pytest.mark.parametrize(
    ("name", "fields", "rows"),
    [
        ("standings", STANDING_FIELDS, standing_rows),
        ("matches", MATCH_FIELDS, match_rows),
        ("games", GAME_FIELDS, game_rows),
    ],
)
def test_csv_and_json_round_trip(name: str, fields: tuple[str, ...], rows: object) -> None:
    t = knockout_16()
    expected = rows(t)  # type: ignore[operator]
    assert expected and all(tuple(r) == fields for r in expected)
    read = list(csv.DictReader(io.StringIO(export_text(f"{name}.csv", t))))
    assert tuple(read[0]) == fields
    assert read == [cells(r) for r in expected]
    data = json.loads(export_text(f"{name}.json", t))
    assert data == {"tournament": "Copa del Club 2026", "round": 2, "finished": False,
                    name: expected}  # fmt: skip


def test_the_columns() -> None:
    assert STANDING_FIELDS == (
        "rank", "entrant", "name", "club", "players", "group", "played", "won", "lost",
        "games_won", "games_lost", "points_for", "points_against", "points_diff", "buchholz",
        "status",
    )  # fmt: skip
    assert MATCH_FIELDS == (
        "match", "round", "stage", "label", "group", "table", "home", "home_name", "away",
        "away_name", "best_of", "games_home", "games_away", "points_home", "points_away",
        "games_counted", "winner", "winner_name", "status", "reason",
    )  # fmt: skip
    assert GAME_FIELDS == (
        "game", "match", "round", "label", "table", "home", "away", "score_home", "score_away",
        "winner", "winner_name", "counted", "verdict", "record_sha256",
    )  # fmt: skip


def test_each_row_has_its_status() -> None:
    before = knockout_16()
    fourth = before.match("r2-m04")  # Los de Boedo (home) - La Flor
    t = apply(before, Walkover(fourth.id, fourth.pairing.home, "La Flor no se presentó"))
    matches = {r["match"]: r for r in match_rows(t)}
    assert [matches[f"r2-m0{i}"]["status"] for i in range(1, 5)] == [
        "decided", "playing", "playing", "walkover"]  # fmt: skip
    assert matches["r2-m04"]["reason"] == "La Flor no se presentó"
    assert matches["r2-m04"]["winner_name"] == "Los de Boedo"
    assert matches["r2-m01"]["games_home"] == 2 and matches["r2-m01"]["games_away"] == 1
    assert matches["r2-m01"]["games_counted"] == 3
    standings = {r["entrant"]: r for r in standing_rows(t)}
    assert standings["e16"]["status"] == "eliminated"  # lost its octavo
    assert standings["e01"]["status"] == "active" and standings["e01"]["rank"] == 1
    assert standings["e05"]["name"] == HOSTILE  # exported as it was registered
    assert [r["rank"] for r in standing_rows(t)] == list(range(1, 17))
    swiss = {r["entrant"]: r for r in standing_rows(swiss_round(24, 4, 8))}
    assert all(isinstance(r["buchholz"], int) for r in swiss.values())


def test_games_carry_the_desks_verdicts(tmp_path: Path) -> None:
    """Counted games with their record's verdict; a record judged for a match of the
    tournament but not counted (tampered) is listed, not counted."""
    t = knockout_16()
    desk = heard_desk(tmp_path / "desk", t, tampered=("mesa05",))
    [flagged] = desk.results_list()
    flagged.match = "r2-m04"  # the record names a match of the round
    first = t.match("r1-m01").games[0]
    intact = replace(flagged, game=first.game, match="r1-m01", verdict="intact")
    rows = game_rows(t, [flagged, intact])
    counted = [r for r in rows if r["counted"]]
    assert len(counted) == sum(len(m.games) for m in t.matches) == 26
    assert [r["verdict"] for r in counted if r["game"] == first.game] == ["intact"]
    assert all(r["verdict"] == "" for r in counted if r["game"] != first.game)  # not judged
    [extra] = [r for r in rows if not r["counted"]]
    assert extra["game"] == "mesa05-g009" and extra["verdict"] == "tampered"
    assert extra["match"] == "r2-m04"
    pairing = t.match("r2-m04").pairing
    # the record's winner: the team ahead in the bots' game the record is
    assert extra["winner"] == (pairing.home if flagged.winner == 0 else pairing.away)
    assert flagged.winner == (0 if flagged.score[0] > flagged.score[1] else 1)


def test_write_exports(tmp_path: Path) -> None:
    t = swiss_round(24, 4, 8)
    paths = write_exports(t, tmp_path / "out")
    assert sorted(p.name for p in paths) == sorted(
        f"{n}.{k}" for n in ("standings", "matches", "games")
        for k in ("csv", "excel.csv", "json"))  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(p.name for p in paths)
    for p in paths:
        assert p.read_bytes() == export_text(p.name, t).encode("utf-8")
    with pytest.raises(KeyError):
        export_text("passwd", t)
    with pytest.raises(KeyError):
        export_text("standings.xml", t)
