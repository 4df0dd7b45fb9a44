"""A small league to test with: clubs c1..cK, entrants e01..eNN spread over them."""

from __future__ import annotations

import datetime

from controller.tournament.competition.model import Entrant, Player
from controller.tournament.league.model import Club, League, LeagueRules


def make_league(entrants: int, clubs: int = 3, best_of: int = 3) -> League:
    club_list = tuple(Club(f"c{k}", f"Club {k}") for k in range(1, clubs + 1))
    people = tuple(
        Entrant(
            f"e{i:02d}",
            f"Equipo {i}",
            (Player(f"A{i}"), Player(f"B{i}")),
            club=club_list[(i - 1) % clubs].id,
        )
        for i in range(1, entrants + 1)
    )
    return League(
        "liga",
        club_list,
        people,
        LeagueRules.from_text(best_of, "players=4 target=30"),
        datetime.date(2027, 3, 6),
        7,
    )
