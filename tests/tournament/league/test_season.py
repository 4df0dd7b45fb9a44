"""A season as clubs run one (issue 47): lists of players, pairs and substitutions,
regional groups and the final phase, promotion, ratings, statistics and the public
pages (in headless Chromium). The season over real brokers: tests/tournament/sim/
test_season.py."""

from __future__ import annotations

import dataclasses
import datetime
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.tournament.league.model import Chico, Club, LeagueRules
from controller.tournament.league.ratings import RatedChico, rate
from controller.tournament.league.rosters import (
    InvalidLineup,
    InvalidRoster,
    Lineup,
    Roster,
    RosterPlayer,
    Substitution,
    side_players,
)
from controller.tournament.league.season import (
    Division,
    FinalFormat,
    Group,
    Season,
    SeasonError,
    division_order,
    final_matches,
    group_matches,
    movements,
    next_season,
    qualifiers,
    season_league,
    season_matches,
)
from controller.tournament.league.season_web import SeasonRecord, site_pages, write_site
from controller.tournament.league.standings import match_result
from controller.tournament.league.stats import chico_stats
from controller.tournament.sim.season import pair_game
from controller.tournament.sim.season_check import pl_update, stats_of

from ..desk.browser import SCREENSHOTS, dom, screenshot

RULES = LeagueRules.from_text(3, "players=4 target=15 flor=on")


def _season(n_groups: int = 3, per: int = 3, **kw: object) -> Season:
    clubs = tuple(Club(f"c{g}{i}", f"Club {g}{i}") for g in range(n_groups) for i in range(per))
    groups = tuple(Group(f"g{g}", f"Grupo {g + 1}", tuple(f"c{g}{i}" for i in range(per)))
                   for g in range(n_groups))  # fmt: skip
    primera = Division("primera", "Primera", groups[:-1], final_size=4)
    ascenso = Division("ascenso", "Ascenso", groups[-1:], final_size=2, final=FinalFormat.GROUP,
                       final_venue=groups[-1].clubs[0])  # fmt: skip
    rosters = tuple(Roster(c.id, tuple(RosterPlayer(f"{c.id}-j{k}", f"Jugador {k} {c.name}")
                                       for k in range(1, 5))) for c in clubs)  # fmt: skip
    kw.setdefault("rosters", rosters)
    return Season("liga", 2027, clubs, (primera, ascenso), RULES, datetime.date(2027, 3, 6),
                  **kw)  # type: ignore[arg-type]


def _decide(season: Season, pick: dict[str, int] | None = None,
            start: dict[str, tuple[Chico, ...]] | None = None) -> dict[str, tuple[Chico, ...]]:
    """Every match decided, phase after phase (after ``start``): the home side wins 2-0
    unless ``pick``."""
    played: dict[str, tuple[Chico, ...]] = dict(start or {})
    while True:
        todo = [m for m in season_matches(season, played)
                if match_result(season.rules, m, played.get(m.id, ())).winner is None]  # fmt: skip
        if not todo:
            return played
        for m in todo:
            w = (pick or {}).get(m.id, 0)
            played[m.id] = (Chico(w, (15, 7) if w == 0 else (7, 15)),) * 2


def test_a_player_is_on_one_list_and_a_list_has_its_size() -> None:
    s = _season()
    two = dataclasses.replace(s.rosters[1], players=(*s.rosters[1].players[:3],
                                                       s.rosters[0].players[0]))  # fmt: skip
    with pytest.raises(InvalidRoster, match="ya está en la lista de c00"):
        _season(rosters=(s.rosters[0], two))
    with pytest.raises(InvalidRoster, match="van de 2 a 3"):
        _season(roster_size=3)
    assert _season(roster_size=6).roster_size == 6


def test_pairs_and_a_confirmed_substitution_say_who_played_each_chico() -> None:
    s = _season()
    m = group_matches(s)[0]
    ups = (Lineup(m.id, m.home, (f"{m.home}-j1", f"{m.home}-j2")),
           Lineup(m.id, m.away, (f"{m.away}-j3", f"{m.away}-j4")))  # fmt: skip
    subs = (Substitution(m.id, m.home, 2, f"{m.home}-j2", f"{m.home}-j4", confirmed=True),
            Substitution(m.id, m.away, 3, f"{m.away}-j3", f"{m.away}-j1"))  # fmt: skip
    s = _season(lineups=ups, substitutions=subs)
    assert s.players(m, 1) == ((f"{m.home}-j1", f"{m.home}-j2"), (f"{m.away}-j3", f"{m.away}-j4"))
    assert s.players(m, 2) == ((f"{m.home}-j1", f"{m.home}-j4"), (f"{m.away}-j3", f"{m.away}-j4"))
    # the away change was never confirmed by the organiser: it does not count
    assert s.players(m, 3)[1] == (f"{m.away}-j3", f"{m.away}-j4")  # type: ignore[index]
    with pytest.raises(InvalidLineup, match="no está en la lista de buena fe"):
        _season(lineups=(Lineup(m.id, m.home, (f"{m.home}-j1", f"{m.away}-j1")),))
    with pytest.raises(InvalidLineup, match="entre chicos"):
        _season(lineups=ups[:1], substitutions=(dataclasses.replace(subs[0], from_chico=1),))
    assert side_players(None, (), 1) is None


def test_groups_play_two_legs_at_home_and_the_final_phase_follows() -> None:
    s = _season()
    g = group_matches(s)
    assert len(g) == 3 * 6 and all(m.venue == m.home for m in g)
    pairs = [(m.home, m.away) for m in g if m.id.startswith("primera-g0-")]
    assert sorted(pairs) == sorted((b, a) for a, b in pairs)  # ida y vuelta
    assert qualifiers(s, s.divisions[0], {}) is None and final_matches(s, s.divisions[0], {}) == ()
    # c00 and c10 win everything at home and away; then the seeds are the group order
    pick = {m.id: (0 if m.home in ("c00", "c10") else 1 if m.away in ("c00", "c10") else 0)
            for m in g}  # fmt: skip
    played = _decide(s, pick)
    seeds = qualifiers(s, s.divisions[0], played)
    assert seeds is not None and set(seeds[:2]) == {"c00", "c10"}
    semis = [m for m in final_matches(s, s.divisions[0], played) if "-r1-" in m.id]
    assert {(m.home, m.away) for m in semis} == {(seeds[0], seeds[3]), (seeds[1], seeds[2])}
    assert all(m.venue == m.home for m in semis)
    finals = final_matches(s, s.divisions[1], played)
    assert finals and all(m.venue == "c20" for m in finals)
    order = division_order(s, s.divisions[0], played)
    assert order is not None and order[0] == seeds[0] and len(order) == 6
    moved = movements(s, played)
    assert moved is not None and [(m.from_division, m.to_division) for m in moved] == [
        ("primera", "ascenso"), ("ascenso", "primera")]  # fmt: skip
    nxt = next_season(s, played, number=2028, first_date=datetime.date(2028, 3, 4))
    assert moved[0].club in nxt.divisions[1].clubs and moved[1].club in nxt.divisions[0].clubs
    league = season_league(s, played)
    assert len(league.schedule) == len(season_matches(s, played))


def test_a_season_that_does_not_hold_says_what_to_fix() -> None:
    s = _season()
    bad = dataclasses.replace(s.divisions[0], final_size=3)
    with pytest.raises(SeasonError, match="2, 4 u 8"):
        dataclasses.replace(s, divisions=(bad, s.divisions[1]), _rosters={})
    twice = dataclasses.replace(s.divisions[1], groups=(s.divisions[0].groups[0],))
    with pytest.raises(SeasonError, match="va en un solo grupo"):
        dataclasses.replace(s, divisions=(s.divisions[0], twice), _rosters={})


def test_ratings_are_openskill_plackett_luce_as_the_paper_writes_it() -> None:
    chicos = [RatedChico("m", 1, ("a", "b"), ("c", "d"), 0),
              RatedChico("m", 2, ("a", "c"), ("b", "d"), 1),
              RatedChico("n", 1, ("a", "b"), ("c", "e"), 1)]  # fmt: skip
    mine: dict[str, tuple[float, float]] = {}
    for c in chicos:
        win, lose = (c.home, c.away) if c.winner == 0 else (c.away, c.home)
        pl_update(mine, win, lose)
    got = rate(chicos)
    assert set(got) == set(mine)
    for p, (mu, sigma) in mine.items():
        assert got[p].mu == pytest.approx(mu, abs=1e-12)
        assert got[p].sigma == pytest.approx(sigma, abs=1e-12)
    assert got["e"].chicos == 1 and got["e"].won == 1 and got["a"].won == 1
    assert got["e"].shown > rate(chicos[:1])["c"].shown
    # carried over: a second season starts where the first ended
    again = rate(chicos[:1], got)
    assert again["a"].chicos == 4


def test_statistics_from_a_record_equal_the_line_by_line_count() -> None:
    seats = {0: "a", 1: "b", 2: "c", 3: "d"}
    total = {"flores": 0, "truco_calls": 0, "mazos": 0, "envidos_won": 0}
    for seed in (101, 102, 103):
        text = pair_game(seed)[0]
        got = chico_stats(text, seats)
        mine = stats_of(text, seats)
        for p in seats.values():
            row = got[p].as_dict()
            skip = ("player", "points_per_hand")
            assert {k: v for k, v in row.items() if k not in skip} == mine[p]
            for k in total:
                total[k] += mine[p][k]
    assert all(v > 0 for v in total.values()), total  # each figure seen at least once


def _record(season: Season) -> SeasonRecord:
    lineups = []
    for m in group_matches(season):
        lineups += [Lineup(m.id, m.home, (f"{m.home}-j1", f"{m.home}-j2")),
                    Lineup(m.id, m.away, (f"{m.away}-j3", f"{m.away}-j4"))]  # fmt: skip
    season = dataclasses.replace(season, lineups=tuple(lineups), _rosters={})
    seed = iter(range(200, 400))
    texts: dict[tuple[str, int], str] = {}
    played: dict[str, tuple[Chico, ...]] = {}
    for m in group_matches(season):
        chicos: list[Chico] = []
        while max((sum(c.winner == k for c in chicos) for k in (0, 1)), default=0) < 2:
            text, w, score = pair_game(next(seed))
            texts[(m.id, len(chicos) + 1)] = text
            chicos.append(Chico(w, score))
        played[m.id] = tuple(chicos)
    return SeasonRecord(season, played, texts)


def test_the_public_pages_show_standings_fixture_bracket_and_players(tmp_path: Path) -> None:
    first = _record(_season(n_groups=3, per=2))  # the groups played with real records
    m1 = group_matches(first.season)[0]
    change = Substitution(m1.id, m1.home, 2, f"{m1.home}-j2", f"{m1.home}-j4", confirmed=True)
    first = dataclasses.replace(first, season=dataclasses.replace(
        first.season, substitutions=(change,), _rosters={}))  # fmt: skip
    record = dataclasses.replace(first, played=_decide(first.season, start=dict(first.played)))
    second = _record(dataclasses.replace(_season(n_groups=3, per=2), number=2028, _rosters={}))
    files = site_pages([record, second])
    assert "Temporada 2027" in files["index.html"] and "Temporada 2028" in files["index.html"]
    players = json.loads(files["2027/jugadores.json"])
    assert len(players) == 24 and {"puntaje", "envidos_won", "truco_calls"} <= set(players[0])
    write_site(tmp_path / "site", [record, second])
    base = (tmp_path / "site" / "2027").as_uri()
    page = dom(base + "/index.html", tmp_path)
    for words in ("Primera", "Grupo 1", "Fase final", "Final", "Campeón", "Ascensos y descensos",
                  "Grupo final en Club 20"):  # fmt: skip
        assert words in page, words
    fixture = dom(base + "/fixture.html", tmp_path)
    assert "Jugador 1 Club 00, Jugador 2 Club 00" in fixture  # the pair named, by name
    assert "pareja sin nombrar" in fixture  # the final phase's pairs were never named here
    home = first.season.club(m1.home).name
    assert f"desde el chico 2: Jugador 4 {home} por Jugador 2 {home}" in fixture
    who = dom(base + "/jugador-c00-j1.html", tmp_path)
    assert "Trucos cantados" in who and "Tantos por mano" in who
    rated = json.loads(files["2027/jugadores.json"])
    row = next(r for r in rated if r["jugador"] == "c00-j1")
    assert f"chicos ganados de {row['chicos']}." in who  # the same chicos rated and counted
    screenshot(base + "/index.html", SCREENSHOTS / "league-season.png", tmp_path, size=(1100, 1400))
    screenshot(base + "/jugadores.html", SCREENSHOTS / "league-players.png", tmp_path,
               size=(1100, 900))  # fmt: skip
    screenshot(base + "/jugador-c00-j1.html", SCREENSHOTS / "league-player.png", tmp_path,
               size=(800, 700))  # fmt: skip


def test_the_match_card_names_the_pair_each_seat_plays_with() -> None:
    """The table's assignment for a season's match carries the pairs' names (after a
    confirmed change), and each seat's match card shows its own side's pair."""
    from controller.render.pixelfont import FONT_TEXT
    from controller.render.screen import MatchCard, match_lines
    from controller.tournament.league.assign import league_assignment

    s = _season()
    m = group_matches(s)[0]
    ups = (Lineup(m.id, m.home, (f"{m.home}-j1", f"{m.home}-j2")),
           Lineup(m.id, m.away, (f"{m.away}-j3", f"{m.away}-j4")))  # fmt: skip
    sub = Substitution(m.id, m.home, 2, f"{m.home}-j2", f"{m.home}-j4", confirmed=True)
    s = _season(lineups=ups, substitutions=(sub,))
    first = league_assignment(s, {}, m.id, "mesa01", 7)
    h, a = s.club(m.home).name, s.club(m.away).name
    assert (first.match, first.chico, first.best_of, first.n) == (m.id, 1, 3, 7)
    assert (first.label, first.home, first.away) == ("Primera, fecha 1", h, a)
    assert first.players == ((f"Jugador 1 {h}", f"Jugador 2 {h}"),
                             (f"Jugador 3 {a}", f"Jugador 4 {a}"))  # fmt: skip
    second = league_assignment(s, {m.id: (Chico(0, (15, 3)),)}, m.id, "mesa01", 8)
    assert second.chico == 2 and second.players[0] == (f"Jugador 1 {h}", f"Jugador 4 {h}")
    card = MatchCard(second.label, second.home, second.away, second.chico, second.best_of,
                     (("Ana López", "Beto Díaz"), ("Carla Pérez", "Dani Ruiz")))  # fmt: skip
    home = [line.text for line in match_lines(card, 0)]
    away = [line.text for line in match_lines(card, 1)]
    assert home[5] == "ANA LÓPEZ Y BETO DÍAZ" and away[5] == "CARLA PÉREZ Y DANI RUIZ"
    assert home[0] == "PRIMERA, FECHA 1" and home[6] == "CHICO 2 DE 3"
    long = MatchCard(second.label, second.home, second.away, 2, 3, second.players)
    for text in [line.text for t in (0, 1) for line in match_lines(long, t)]:
        assert all(FONT_TEXT.supports(c) for c in text if not c.isspace()), text
    # too long for the panel: their last names (the roster's "Jugador 1 Club 01": "01")
    assert match_lines(long, 0)[5].text == f"{h.split()[-1]} Y {h.split()[-1]}"


@settings(max_examples=40, deadline=None)
@given(
    per=st.integers(2, 4),
    seed=st.integers(0, 10_000),
    final=st.sampled_from([FinalFormat.KNOCKOUT, FinalFormat.GROUP]),
)
def test_any_season_ends_with_every_club_placed_once_and_the_divisions_kept(
    per: int, seed: int, final: FinalFormat
) -> None:
    """Whatever the results: each division's order is its clubs once each, the final
    phase plays the qualifiers, and after promotion every division keeps its size."""
    import random

    s = _season(per=per)
    d2 = dataclasses.replace(s.divisions[1], final=final, final_size=2)
    s = dataclasses.replace(s, divisions=(s.divisions[0], d2), _rosters={})
    rnd = random.Random(seed)
    played: dict[str, tuple[Chico, ...]] = {}
    while True:
        todo = [m for m in season_matches(s, played) if m.id not in played]
        if not todo:
            break
        for m in todo:
            chicos: list[Chico] = []
            while max((sum(c.winner == k for c in chicos) for k in (0, 1)), default=0) < 2:
                w = rnd.randint(0, 1)
                chicos.append(Chico(w, (15, rnd.randint(0, 14)) if w == 0
                                    else (rnd.randint(0, 14), 15)))  # fmt: skip
            played[m.id] = tuple(chicos)
    for d in s.divisions:
        order = division_order(s, d, played)
        assert order is not None and sorted(order) == sorted(d.clubs)
        seeds = qualifiers(s, d, played)
        assert seeds is not None and len(seeds) == d.final_size == len(set(seeds))
        finals = final_matches(s, d, played)
        assert {c for m in finals for c in (m.home, m.away)} == set(seeds)
        assert set(order[: d.final_size]) == set(seeds)
    nxt = next_season(s, played, number=2028, first_date=datetime.date(2028, 3, 4))
    assert [len(d.clubs) for d in nxt.divisions] == [len(d.clubs) for d in s.divisions]
    moved = movements(s, played)
    assert moved is not None and len(moved) == 2 * s.movement
