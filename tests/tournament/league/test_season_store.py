"""A season in the league's folder (temporadas/<año>/) and the orders that name a pair,
ask for a change and confirm it, and write the public pages with every season, run as
``truco-table league ...`` (in this process: the parser and the order as shipped)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.cli import main
from controller.tournament.league.codec import league_from_toml
from controller.tournament.league.ledger import LeagueLedger
from controller.tournament.league.model import Chico
from controller.tournament.league.season import season_league
from controller.tournament.league.season_store import load_season, season_count
from controller.tournament.league.verify import LeagueRecordCheck, RecordVerdict

SECRET = bytes(range(32))
LEAGUE = """[league]
name = "liga"
central = "127.0.0.1:8884"
best_of = 3
rules = "players=4 target=15"
first_date = 2027-03-06

[[clubs]]
id = "c1"
name = "Club Uno"
[[clubs]]
id = "c2"
name = "Club Dos"
[[clubs]]
id = "c3"
name = "Club Tres"
[[clubs]]
id = "c4"
name = "Club Cuatro"
"""


def _season_toml(number: int) -> str:
    rosters = "".join(
        f'[[rosters]]\nclub = "c{c}"\nplayers = ['
        + ", ".join(f'["c{c}-j{k}", "Jugador {k} del {c}"]' for k in range(1, 5)) + "]\n"
        for c in range(1, 5)
    )  # fmt: skip
    return f"""[season]
number = {number}
first_date = {number}-03-06

[[divisions]]
id = "primera"
name = "Primera"
final = "knockout"
final_size = 2
[[divisions.groups]]
id = "norte"
name = "Grupo Norte"
clubs = ["c1", "c2"]

[[divisions]]
id = "ascenso"
name = "Ascenso"
final = "group"
final_size = 2
final_venue = "c3"
[[divisions.groups]]
id = "sur"
name = "Grupo Sur"
clubs = ["c3", "c4"]

{rosters}"""


@pytest.fixture
def liga(tmp_path: Path) -> Path:
    root = tmp_path / "liga"
    (root / "temporadas" / "2027").mkdir(parents=True)
    (root / "league.toml").write_text(LEAGUE, encoding="utf-8")
    (root / "secret.key").write_text("# el secreto de la liga\n" + SECRET.hex() + "\n")
    (root / "temporadas" / "2027" / "temporada.toml").write_text(_season_toml(2027))
    return root


def _league(root: Path):  # type: ignore[no-untyped-def]
    return league_from_toml((root / "league.toml").read_text(), "league.toml")


def _count_chico(root: Path, match: str, number: int) -> None:
    """The season's league desk counted chico ``number`` of ``match`` (its journal)."""
    league = _league(root)
    season = load_season(root, league, 2027)
    ledger = LeagueLedger(root / "temporadas" / "2027" / "desk", season_league(season, {}),
                          SECRET, fsync=False)  # fmt: skip
    ledger.open()
    ledger.append(LeagueRecordCheck("c1", "mesa01", f"mesa01-g{number:03d}", match,
                                    RecordVerdict.COUNTED, "cuenta", Chico(0, (15, 3)),
                                    f"{number:064x}", number, number), 1.0)  # fmt: skip
    ledger.close()


def test_pairs_and_changes_are_named_before_they_are_played(
    liga: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--dir", str(liga), "--season", "2027", "--match", "primera-norte-f01-m01"]
    assert main(["league", "season-pair", *d, "--club", "c1", "--players", "c1-j1,c1-j2"]) == 0
    assert "c1 juega primera-norte-f01-m01 con c1-j1, c1-j2" in capsys.readouterr().out
    assert main(["league", "season-pair", *d, "--club", "c2", "--players", "c1-j3,c2-j2"]) == 2
    assert "no está en la lista de buena fe de c2" in capsys.readouterr().err
    assert main(["league", "season-pair", *d, "--club", "c3", "--players", "c3-j1,c3-j2"]) == 2
    assert "c3 no juega primera-norte-f01-m01" in capsys.readouterr().err
    assert main(["league", "season-pair", *d, "--club", "c2", "--players", "c2-j1,c2-j2"]) == 0
    _count_chico(liga, "primera-norte-f01-m01", 1)
    assert main(["league", "season-pair", *d, "--club", "c2", "--players", "c2-j3,c2-j4"]) == 2
    assert "ya empezó" in capsys.readouterr().err
    change = [*d, "--club", "c2", "--out", "c2-j2", "--into", "c2-j4"]
    assert main(["league", "season-sub", *change, "--from-chico", "1"]) == 2
    assert "ya se jugó" in capsys.readouterr().err
    assert main(["league", "season-sub", *change, "--from-chico", "2"]) == 0
    assert "cuenta cuando el organizador lo confirme" in capsys.readouterr().out
    league = _league(liga)
    season = load_season(liga, league, 2027)
    m = next(x for x in season_league(season, {}).schedule if x.id == "primera-norte-f01-m01")
    assert season.players(m, 2) == (("c1-j1", "c1-j2"), ("c2-j1", "c2-j2"))  # not confirmed
    confirm = [*d, "--club", "c2", "--from-chico", "2"]
    assert main(["league", "season-confirm", *confirm]) == 0
    season = load_season(liga, league, 2027)
    assert season.players(m, 2) == (("c1-j1", "c1-j2"), ("c2-j1", "c2-j4"))
    assert season.players(m, 1) == (("c1-j1", "c1-j2"), ("c2-j1", "c2-j2"))
    assert season_count(liga, league, season, SECRET).played == {
        "primera-norte-f01-m01": (Chico(0, (15, 3)),)
    }


def test_the_pages_keep_every_season(liga: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    (liga / "temporadas" / "2028").mkdir()
    (liga / "temporadas" / "2028" / "temporada.toml").write_text(_season_toml(2028))
    out = tmp_path / "site"
    assert main(["league", "season-pages", "--dir", str(liga), "--out", str(out)]) == 0
    assert "abrí" in capsys.readouterr().out
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "Temporada 2027" in index and "Temporada 2028" in index
    assert "Grupo Norte" in (out / "2028" / "index.html").read_text(encoding="utf-8")
    assert (out / "2027" / "jugador-c4-j4.html").is_file()


def test_a_season_file_that_does_not_hold_is_refused_in_spanish(
    liga: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = liga / "temporadas" / "2027" / "temporada.toml"
    path.write_text(_season_toml(2027).replace('clubs = ["c3", "c4"]', 'clubs = ["c3", "c1"]'))
    args = ["--dir", str(liga), "--season", "2027", "--match", "x", "--club", "c1"]
    assert main(["league", "season-pair", *args, "--players", "a,b"]) == 2
    err = capsys.readouterr().err
    assert "va en un solo grupo" in err and "Traceback" not in err
    assert main(["league", "season-pages", "--dir", str(liga / "nada"), "--out", "x"]) == 2
    assert "carpeta de una liga" in capsys.readouterr().err
    path.write_text(_season_toml(2027).replace('final = "group"', 'final = "copa"'))
    assert main(["league", "season-pair", *args, "--players", "a,b"]) == 2
    assert 'final va "knockout" (eliminación) o "group"' in capsys.readouterr().err
    path.write_text(_season_toml(2027))
    (path.parent / "parejas.jsonl").write_text('{"kind": "pair", "match": "x"}\n')
    assert main(["league", "season-pair", *args, "--players", "a,b"]) == 2
    err = capsys.readouterr().err
    assert "parejas.jsonl: una línea que no se puede leer" in err and "Traceback" not in err


def test_the_next_season_has_the_promotion_once_the_season_is_over(
    liga: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["league", "season-next", "--dir", str(liga), "--season", "2027",
            "--first-date", "2028-03-04"]  # fmt: skip
    assert main(args) == 2
    assert "todavía no terminó" in capsys.readouterr().err
    league = _league(liga)
    season = load_season(liga, league, 2027)
    ledger = LeagueLedger(liga / "temporadas" / "2027" / "desk", season_league(season, {}),
                          SECRET, fsync=False)  # fmt: skip
    ledger.open()
    played: dict[str, tuple[Chico, ...]] = {}
    n = 0
    while True:  # the home side wins every match 2-0, phase after phase
        todo = [m for m in season_league(season, played).schedule if m.id not in played]
        if not todo:
            break
        ledger.league = season_league(season, played)
        for m in todo:
            for k in (1, 2):
                n += 1
                check = LeagueRecordCheck(m.venue, "mesa01", f"mesa01-g{n:03d}", m.id,
                                          RecordVerdict.COUNTED, "cuenta", Chico(0, (15, 3)),
                                          f"{n:064x}", k, n)  # fmt: skip
                ledger.append(check, 1.0)
            played[m.id] = (Chico(0, (15, 3)),) * 2
    ledger.close()
    assert dict(season_count(liga, league, season, SECRET).played) == played
    assert "primera-final-r1-m01" in played and "ascenso-final-f01-m01" in played
    assert main(args) == 0
    assert "temporada 2028 escrita" in capsys.readouterr().out
    nxt = load_season(liga, league, 2028)
    primera, ascenso = (set(d.clubs) for d in nxt.divisions)
    # Primera's final: c1 (seed 1, home) beat c2; Ascenso's final group: c3 won at home
    assert primera == {"c1", "c3"} and ascenso == {"c2", "c4"}
    assert nxt.roster_of["c3"].players == season.roster_of["c3"].players
    assert main(args) == 2
    assert "no se pisa" in capsys.readouterr().err


def _guide_lines() -> list[str]:
    """The season orders the organisers' league guide prints, in its order."""
    text = (Path(__file__).resolve().parents[3] / "docs/organizadores/liga.md").read_text()
    return [line for line in text.splitlines()
            if line.startswith("truco-table league season-")]  # fmt: skip


def test_the_guides_season_orders_run_as_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each ``truco-table league season-...`` line of docs/organizadores/liga.md, run as
    printed (``liga/`` and ``paginas/`` in a temporary folder; the command's own parser
    and order, in this process), on a league whose clubs and lists are the guide's;
    ``season-next`` once every match was counted."""
    import shlex

    root = tmp_path / "liga"
    (root / "temporadas" / "2027").mkdir(parents=True)
    league = LEAGUE.replace('"c1"', '"bar-lopez"').replace('"c2"', '"club-sur"')
    (root / "league.toml").write_text(league, encoding="utf-8")
    (root / "secret.key").write_text(SECRET.hex() + "\n")
    season = _season_toml(2027).replace('"c1"', '"bar-lopez"').replace('"c2"', '"club-sur"')
    season = season.replace('["c1-j1", "Jugador 1 del 1"], ["c1-j2", "Jugador 2 del 1"], '
                            '["c1-j3", "Jugador 3 del 1"]',
                            '["ana-lopez", "Ana López"], ["beto-diaz", "Beto Díaz"], '
                            '["carla-paz", "Carla Paz"]')  # fmt: skip
    (root / "temporadas" / "2027" / "temporada.toml").write_text(season, encoding="utf-8")
    lines = _guide_lines()
    assert [shlex.split(x)[2] for x in lines] == [
        "season-pair", "season-sub", "season-confirm", "season-pages", "season-next"]  # fmt: skip
    for line in lines:
        if "season-next" in line:  # the season played out first: home wins, phase by phase
            lg = _league(root)
            s = load_season(root, lg, 2027)
            ledger = LeagueLedger(root / "temporadas" / "2027" / "desk",
                                  season_league(s, {}), SECRET, fsync=False)  # fmt: skip
            ledger.open()
            played: dict[str, tuple[Chico, ...]] = {}
            n = 0
            while todo := [m for m in season_league(s, played).schedule if m.id not in played]:
                ledger.league = season_league(s, played)
                for m in todo:
                    for k in (1, 2):
                        n += 1
                        ledger.append(LeagueRecordCheck(
                            m.venue, "mesa01", f"g{n}", m.id, RecordVerdict.COUNTED, "cuenta",
                            Chico(0, (15, 3)), f"{n:064x}", k, n), 1.0)  # fmt: skip
                    played[m.id] = (Chico(0, (15, 3)),) * 2
            ledger.close()
        monkeypatch.chdir(tmp_path)
        assert main(shlex.split(line)[1:]) == 0, (line, capsys.readouterr().err)
    s = load_season(root, _league(root), 2027)
    from controller.tournament.league.rosters import side_players

    named = s.lineup("primera-norte-f01-m01", "bar-lopez")
    assert named is not None and named.players == ("ana-lopez", "beto-diaz")
    assert side_players(named, s.substitutions, 1) == ("ana-lopez", "beto-diaz")
    assert side_players(named, s.substitutions, 2) == ("ana-lopez", "carla-paz")  # confirmed
    assert (tmp_path / "paginas" / "2027" / "index.html").is_file()
    assert (root / "temporadas" / "2028" / "temporada.toml").is_file()


def test_the_office_tells_each_table_what_changed_and_frees_it_when_decided(liga: Path) -> None:
    """The organiser's page's orders (:class:`SeasonOffice`): a table told its match once
    (a change of pair tells it again, with a higher counter), a match moved frees the
    table it was on, a decided match frees its table, and a restarted office goes on
    from ``asignaciones.json``."""
    from controller.tournament.league.season_desk import SeasonOffice
    from controller.tournament.league.season_store import SeasonStoreError
    from controller.tournament.wire.messages import Assignment

    for club in ("c1", "c2"):
        (liga / "venues" / club / "tables" / "mesa01").mkdir(parents=True)
    (liga / "venues" / "c1" / "tables" / "mesa02").mkdir()
    played: dict[str, tuple[Chico, ...]] = {}
    sent: list[tuple[str, Assignment]] = []

    def office() -> SeasonOffice:
        return SeasonOffice(liga, _league(liga), SECRET, 2027, played=lambda: played,
                            publish=lambda v, a: sent.append((v, a)))  # fmt: skip

    o = office()
    m = "primera-norte-f01-m01"  # c1 at home
    with pytest.raises(SeasonStoreError, match="se juega en Club Uno, no en la sede c2"):
        o.act({"action": "assign", "match": m, "venue": "c2", "table": "mesa01"})
    assert o.act({"action": "assign", "match": m, "venue": "c1", "table": "mesa01"}) == (
        f"La mesa mesa01 de Club Uno juega {m}")  # fmt: skip
    [(venue, first)] = sent
    assert (venue, first.table, first.match) == ("c1", "mesa01", m)
    assert (first.chico, first.players) == (1, ((), ()))
    assert o.refresh() == []  # nothing changed: nothing sent
    o.act({"action": "pair", "match": m, "club": "c1", "players": ["c1-j1", "c1-j2"]})
    o.act({"action": "pair", "match": m, "club": "c2", "players": ["c2-j1", "c2-j2"]})
    told = sent[-1][1]
    assert told.players == (("Jugador 1 del 1", "Jugador 2 del 1"),
                            ("Jugador 1 del 2", "Jugador 2 del 2"))  # fmt: skip
    assert told.n > first.n
    sent.clear()
    o.act({"action": "assign", "match": m, "venue": "c1", "table": "mesa02"})  # moved
    assert sorted((a.table, a.match) for _, a in sent) == [("mesa01", None), ("mesa02", m)]
    again = office()  # a restart: the same table, told again above the last counter
    sent.clear()
    again.refresh()
    [(_, a)] = sent
    assert (a.table, a.match) == ("mesa02", m) and a.n > told.n
    played[m] = (Chico(0, (15, 3)), Chico(0, (15, 9)))  # decided 2-0: the table is free
    sent.clear()
    again.refresh()
    assert [(a.table, a.match) for _, a in sent] == [("mesa02", None)]
    assert again.tables == {}
    with pytest.raises(SeasonStoreError, match="ya terminó"):
        again.act({"action": "assign", "match": m, "venue": "c1", "table": "mesa01"})
    with pytest.raises(SeasonStoreError, match="No hay una orden 'borrar'"):
        again.act({"action": "borrar", "match": m, "club": "c1", "from_chico": 2})


def test_the_league_desks_standings_go_by_division_group_and_final_phase(liga: Path) -> None:
    """``/`` of a season's league desk: each group's own table, in its division, then the
    final phase: the knockout's matches once the groups end, a final group's table."""
    from controller.tournament.league.collect import Collected
    from controller.tournament.league.season import group_matches
    from controller.tournament.league.season_pages import season_standings

    season = load_season(liga, _league(liga), 2027)
    played = {m.id: (Chico(0, (15, 3)), Chico(0, (15, 9))) for m in group_matches(season)}
    html = season_standings(season_league(season, played), season, Collected(played, (), (), 0))
    order = [html.index(x) for x in ("Primera", "Grupo Norte", "Fase final", "Ascenso",
                                     "Grupo Sur")]  # fmt: skip
    assert order == sorted(order)
    assert html.count('class="grid standings"') == 3  # two groups and Ascenso's final group
    final = html[html.index("Fase final") : html.index("Ascenso")]
    assert "primera-final-" in final and "Final" in final  # the knockout's one match
