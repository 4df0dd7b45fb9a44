"""The league's values refuse what cannot be used, saying why in Spanish."""

from __future__ import annotations

import dataclasses
import datetime

import pytest

from controller.engine import HouseRules
from controller.tournament.competition.model import Entrant, Player
from controller.tournament.league.errors import (
    DuplicateClub,
    DuplicateLeagueEntrant,
    InvalidChico,
    InvalidClub,
    InvalidLeague,
    InvalidLeagueEntrant,
    InvalidLeagueRules,
    LeagueError,
    NotEnoughLeagueEntrants,
    UnknownClub,
)
from controller.tournament.league.model import Chico, Club, League, LeagueRules

from .helpers import make_league


def test_a_league_is_a_frozen_value() -> None:
    league = make_league(4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        league.name = "otra"  # type: ignore[misc]
    assert league.rules == LeagueRules(3, HouseRules(players=4, target=30))
    assert league.rules.to_win == 2 and league.rules.team_size == 2
    assert league.matchday_date(3) == datetime.date(2027, 3, 20)
    assert league.club("c2").name == "Club 2"
    assert league.home_club["e02"] == "c2"


@pytest.mark.parametrize(
    ("build", "error", "words"),
    [
        (lambda: Club("bar lópez", "Bar"), InvalidClub, "id de la sede"),
        (lambda: Club("bar", " "), InvalidClub, "necesita un nombre"),
        (lambda: LeagueRules(4), InvalidLeagueRules, "elegí 1, 3, 5 o 7"),
        (lambda: LeagueRules(True), InvalidLeagueRules, "elegí"),
        (lambda: LeagueRules.from_text(3, "players=5"), InvalidLeagueRules, "Reglas de la casa"),
        (lambda: LeagueRules.from_text(3, "players"), InvalidLeagueRules, "clave=valor"),
        (lambda: Chico(2, (30, 1)), InvalidChico, r"0 \(local\) o 1"),
        (lambda: Chico(0, (-1, 0)), InvalidChico, "desde 0"),
        (lambda: Chico(1, (30, 12)), InvalidChico, "menos tantos"),
    ],
)
def test_values_refuse_in_spanish(build: object, error: type[LeagueError], words: str) -> None:
    with pytest.raises(error, match=words):
        build()  # type: ignore[operator]


def _league(**changes: object) -> League:
    base = make_league(4, 2)
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_league_checks_it_whole() -> None:
    with pytest.raises(InvalidLeague, match="nombre de la liga"):
        _league(name="liga de bares")
    with pytest.raises(InvalidLeague, match="al menos una sede"):
        _league(clubs=(), entrants=())
    with pytest.raises(DuplicateClub, match="'c1'"):
        _league(clubs=(Club("c1", "A"), Club("c1", "B"), Club("c2", "C")))
    base = make_league(4, 2)
    with pytest.raises(DuplicateLeagueEntrant, match="'e01'"):
        _league(entrants=(*base.entrants, base.entrants[0]))
    with pytest.raises(UnknownClub, match="sede 'c9'"):
        _league(entrants=(*base.entrants, Entrant("e09", "Nueve", (), club="c9")))
    with pytest.raises(InvalidLeagueEntrant, match="no tiene sede"):
        _league(entrants=(*base.entrants, Entrant("e09", "Nueve", ())))
    with pytest.raises(InvalidLeagueEntrant, match="de a 2"):
        _league(entrants=(*base.entrants, Entrant("e09", "Nueve", (Player("x"),), club="c1")))
    with pytest.raises(NotEnoughLeagueEntrants, match="dos equipos"):
        _league(entrants=base.entrants[:1])
    with pytest.raises(InvalidLeague, match="1 a 366 días"):
        _league(days_between=0)
    with pytest.raises(InvalidLeague, match="un día"):
        _league(first_date="2027-03-06")
    with pytest.raises(UnknownClub, match="'c7'"):
        base.club("c7")
    with pytest.raises(InvalidLeagueEntrant, match="'e77'"):
        base.entrant("e77")


def test_every_league_error_is_a_value_error() -> None:
    # the CLI catches ValueError to print one line: every league error is one
    assert issubclass(LeagueError, ValueError)
