"""league.toml: the league's clubs and entrants read from its folder, and
``truco-table league fixture`` printing the season from it."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from controller.cli import main
from controller.tournament.league.codec import league_from_toml
from controller.tournament.league.errors import (
    InvalidClub,
    InvalidLeague,
    InvalidLeagueEntrant,
    InvalidLeagueRules,
    LeagueError,
    UnknownClub,
)

LEAGUE_TOML = """\
[league]
name = "liga-bares"
central = "127.0.0.1:8884"
best_of = 3
rules = "players=4 target=30"
first_date = 2027-03-06
days_between = 7

[[clubs]]
id = "bar-lopez"
name = "Bar López"

[[clubs]]
id = "club-sur"
name = "Club del Sur"

[[entrants]]
id = "e01"
name = "Los del Fondo"
club = "bar-lopez"
players = ["Ana", "Beto"]
seed = 1

[[entrants]]
id = "e02"
name = "Las Anchas"
club = "club-sur"
players = ["Caro", "Dani"]

[[entrants]]
id = "e03"
name = "Truqueros"
club = "bar-lopez"
"""


def test_league_toml_reads_whole() -> None:
    league = league_from_toml(LEAGUE_TOML)
    assert league.name == "liga-bares" and league.rules.best_of == 3
    assert league.rules.house.players == 4 and league.first_date == datetime.date(2027, 3, 6)
    assert [c.name for c in league.clubs] == ["Bar López", "Club del Sur"]
    assert league.entrant("e01").seed == 1 and league.entrant("e03").players == ()
    assert league.entrant("e02").club == "club-sur"


@pytest.mark.parametrize(
    ("change", "error", "words"),
    [
        (("first_date = 2027-03-06", 'first_date = "2027-03-06"'), InvalidLeague, "sin comillas"),
        (("best_of = 3", "best_of = 4"), InvalidLeagueRules, "elegí 1, 3, 5 o 7"),
        (("best_of = 3", 'best_of = "3"'), InvalidLeague, "best_of va como número"),
        (('rules = "players=4 target=30"', 'rules = "players=3"'), InvalidLeagueRules, "Reglas"),
        (('name = "Bar López"', "name = 3"), InvalidClub, "sede 1: falta name"),
        (('club = "club-sur"', 'club = "club-norte"'), UnknownClub, "club-norte"),
        (('players = ["Caro", "Dani"]', 'players = "Caro"'), InvalidLeagueEntrant, "players"),
        (("seed = 1", "seed = 0"), InvalidLeagueEntrant, "seed va como número"),
        (("[league]", "[liga]"), InvalidLeague, "falta la sección [league]"),
        (("[league]", "[league"), InvalidLeague, "no es TOML válido"),
    ],
)
def test_a_bad_league_toml_says_what_in_spanish(
    change: tuple[str, str], error: type[LeagueError], words: str
) -> None:
    assert change[0] in LEAGUE_TOML
    with pytest.raises(error, match=words.replace("[", r"\[").replace("]", r"\]")):
        league_from_toml(LEAGUE_TOML.replace(change[0], change[1], 1))


def test_league_fixture_prints_the_season(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "league.toml").write_text(LEAGUE_TOML, encoding="utf-8")
    assert main(["league", "fixture", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Fecha 1 (ida), 2027-03-06"
    assert len([line for line in out if line.startswith("  f")]) == 6  # 3 entrants, twice
    assert "Fecha 6 (vuelta), 2027-04-10" in out
    assert main(["league", "fixture", "--dir", str(tmp_path), "--venue", "club-sur"]) == 0
    at_sur = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  f")]
    assert at_sur and all(line.startswith("  f") and "Las Anchas - " in line for line in at_sur)
    assert all(line.endswith("en Club del Sur") for line in at_sur)


def test_league_fixture_errors_are_one_spanish_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["league", "fixture", "--dir", str(tmp_path)]) == 2
    assert "no se puede leer" in capsys.readouterr().err
    (tmp_path / "league.toml").write_text(LEAGUE_TOML, encoding="utf-8")
    assert main(["league", "fixture", "--dir", str(tmp_path), "--venue", "bar-x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "La sede 'bar-x' no está en la liga" in err
    (tmp_path / "league.toml").write_bytes(b"\xff\xfe")
    assert main(["league", "fixture", "--dir", str(tmp_path)]) == 2
    assert "no es texto UTF-8" in capsys.readouterr().err
