"""A season's league desk as the organiser runs it, over real Mosquittos (the central
broker and one venue's, bridged as ``league add-venue`` writes them) with a real table
(its publisher, its mock seats read back from the panels' pixels):

the organiser logs in on ``/organizador`` (the key, a session, the CSRF token), names
each club's pair, assigns the venue's table; the table's seats show the match and each
side's pair; the table plays chico 1, the league desk counts it and tells the table
chico 2 with the confirmed change; every refusal comes back in Spanish; assignments
forged by another venue, by the venue's own account at the central broker or signed
with another table's key never change what the table shows; ``/`` shows the standings
per division and group; the pages in headless Chromium.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from controller.engine import HouseRules
from controller.table.run_mock import MockRun
from controller.tournament.desk.sessions import OrganiserAccess
from controller.tournament.league.bridge import AddedVenue, add_venue
from controller.tournament.league.desk import LeagueDesk, desk_from_folder
from controller.tournament.league.keys import venue_table_key
from controller.tournament.league.season import season_matches
from controller.tournament.league.web import serve_league
from controller.tournament.sim.mosquitto import LocalBroker, free_port
from controller.tournament.table.link import load_tournament_settings
from controller.tournament.table.publisher import TablePublisher
from controller.tournament.venue.broker import Venue
from controller.tournament.wire.messages import Assignment, signed_assignment
from controller.tournament.wire.topics import tournament_prefix
from tests.helpers import serving, wait_until

from ...table.panel_text import PanelDisplay
from ..desk.browser import SCREENSHOTS
from ..desk.cdp import Page
from .helpers import Client, broker_folder, running_brokers

LEAGUE = "liga"
KEY = "clave-del-organizador"
FIRST = datetime.date.today() - datetime.timedelta(days=1)  # matchday 1 has come
CLUBS = {"bar-a": "Bar Alvear", "bar-b": "Club Boedo", "bar-c": "Café Caseros",
         "bar-d": "Club Dorrego"}  # fmt: skip
PLAYERS = {
    "bar-a": [("ana-lopez", "Ana López"), ("beto-diaz", "Beto Díaz"), ("carla-paz", "Carla Paz")],
    "bar-b": [("dani-ruiz", "Dani Ruiz"), ("eva-sosa", "Eva Sosa"), ("fede-gil", "Fede Gil")],
    "bar-c": [("gabi-roca", "Gabi Roca"), ("hugo-vera", "Hugo Vera")],
    "bar-d": [("ines-mora", "Inés Mora"), ("juan-rey", "Juan Rey")],
}


def _season_toml() -> str:
    rosters = "".join(
        f'[[rosters]]\nclub = "{c}"\nplayers = ['
        + ", ".join(f'["{i}", "{n}"]' for i, n in ps) + "]\n"
        for c, ps in PLAYERS.items()
    )  # fmt: skip
    return f"""[season]
number = 2027
first_date = {FIRST.isoformat()}
roster_size = 3

[[divisions]]
id = "primera"
name = "Primera"
final_size = 2
[[divisions.groups]]
id = "norte"
name = "Grupo Norte"
clubs = ["bar-a", "bar-b"]

[[divisions]]
id = "ascenso"
name = "Ascenso"
final_size = 2
[[divisions.groups]]
id = "sur"
name = "Grupo Sur"
clubs = ["bar-c", "bar-d"]

{rosters}"""


@dataclass
class Run:
    root: Path
    a: AddedVenue
    central: LocalBroker
    venue: LocalBroker


@pytest.fixture
def run() -> Iterator[Run]:
    parent = broker_folder("truco-season-")
    root = parent / "liga"
    central_port = free_port()
    a = add_venue(root, "bar-a", ["mesa01", "mesa02"], ["desk"], league=LEAGUE,
                  central=f"127.0.0.1:{central_port}", port=free_port(),
                  restart_timeout=(1, 1))  # fmt: skip
    for v in ("bar-b", "bar-c", "bar-d"):
        add_venue(root, v, ["mesa01"], ["desk"], port=free_port(), restart_timeout=(1, 1))
    clubs = "".join(f'[[clubs]]\nid = "{c}"\nname = "{n}"\n' for c, n in CLUBS.items())
    with open(root / "league.toml", "a", encoding="utf-8") as f:
        f.write(f'best_of = 3\nrules = "players=4 target=15"\nfirst_date = {FIRST}\n{clubs}')
    (root / "temporadas" / "2027").mkdir(parents=True)
    (root / "temporadas" / "2027" / "temporada.toml").write_text(_season_toml(), encoding="utf-8")
    with running_brokers(parent, a) as (central, venue):
        yield Run(root, a, central, venue)


def _forger(run: Run, account: str, password: str) -> mqtt.Client:
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"forger-{time.time_ns()}")
    c.username_pw_set(account, password)
    c.tls_set(ca_certs=str(run.a.central_ca))
    c.connect("127.0.0.1", run.a.central[1], 10)
    c.loop_start()
    assert wait_until(c.is_connected), account
    return c


def test_the_organiser_names_pairs_and_the_venue_table_shows_them_chico_by_chico(
    run: Run, tmp_path: Path
) -> None:
    desk: LeagueDesk = desk_from_folder(run.root, season=2027)
    desk.client.reconnect_delay_set(1, 1)
    office = desk.office
    assert office is not None
    season = office.season()
    match = next(m for m in season_matches(season, {}) if m.venue == "bar-a")
    away = match.away
    venue = Venue(run.a.venue_dir, LEAGUE, run.a.tables, run.a.desks, run.a.port,
                  ("127.0.0.1",))  # fmt: skip
    settings = load_tournament_settings(venue.table_dir("mesa01") / "tournament.toml")
    assert settings is not None
    table_run = MockRun(HouseRules(players=4, target=15), seed=3, human=None,
                        state_dir=tmp_path / "table")  # fmt: skip
    service = table_run.mock.service
    panels = [PanelDisplay() for _ in service.displays]
    service.displays = list(panels)
    table = TablePublisher(
        "mesa01", "127.0.0.1", run.a.port, outbox_dir=tmp_path / "table" / "outbox",
        tournament=LEAGUE, key=settings.key, access=settings.access, keepalive=1,
        reconnect_delay=(1, 1),
    )  # fmt: skip
    table.attach(service)
    forgers: list[mqtt.Client] = []

    def cards() -> list[tuple[str, ...]]:
        table_run.mock.pump(0.05)
        service.redraw(force=True)
        return [p.card() for p in panels]

    def shows(home: str, other: str, chico: int) -> bool:
        now = cards()
        return all(
            c[5] == (home if s % 2 == 0 else other) and c[6] == f"CHICO {chico} DE 3"
            for s, c in enumerate(now)
        )

    server = serve_league(desk, 0, access=OrganiserAccess(KEY, store=desk.folder))
    with serving(server):
        web = Client(server.server_address[1])
        try:
            desk.start()
            assert desk.subscribed.wait(120)
            table.start()
            # nobody but the organiser writes
            status, answer = web.post("/api/liga", {"action": "pair"})
            assert status == 401 and "Solo el organizador" in answer["error"]
            assert "clave del organizador" in web.get("/organizador")[1]  # the login form
            assert web.post("/api/entrar", {"clave": "otra-clave"})[0] == 403
            status, answer = web.post("/api/entrar", {"clave": KEY})
            assert status == 200 and web.cookie
            web.csrf = answer["csrf"]
            pair = {"action": "pair", "match": match.id, "club": "bar-a"}
            assert web.post("/api/liga", pair | {"players": ["ana-lopez", "beto-diaz"]},
                            csrf="otra")[0] == 401  # fmt: skip
            # refusals, in Spanish
            status, answer = web.post("/api/liga", pair | {"players": ["ana-lopez", "dani-ruiz"]})
            assert status == 409
            assert answer["error"] == (f"'dani-ruiz' no está en la lista de buena fe de bar-a: "
                                       f"no puede jugar {match.id}")  # fmt: skip
            where = {"action": "assign", "match": match.id}
            status, answer = web.post("/api/liga", where | {"venue": "bar-a", "table": "mesa09"})
            assert (status, answer["error"]) == (409, "La sede bar-a no tiene una mesa 'mesa09'")
            status, answer = web.post("/api/liga", where | {"venue": away, "table": "mesa01"})
            assert (status, answer["error"]) == (
                409, f"{match.id} se juega en Bar Alvear, no en la sede {away}")  # fmt: skip
            # the pairs and the table
            ok = web.post("/api/liga", pair | {"players": ["ana-lopez", "beto-diaz"]})
            assert ok == (200, {"ok": f"bar-a nombró su pareja para {match.id}"})
            theirs = [p for p, _ in PLAYERS[away][:2]]
            assert web.post("/api/liga", pair | {"club": away, "players": theirs})[0] == 200
            assert web.post("/api/liga", where | {"venue": "bar-a", "table": "mesa01"}) == (
                200, {"ok": f"La mesa mesa01 de Bar Alvear juega {match.id}"})  # fmt: skip
            names = [n.upper() for _, n in PLAYERS[away][:2]]
            away_pair = f"{names[0]} Y {names[1]}"
            assert wait_until(lambda: shows("ANA LÓPEZ Y BETO DÍAZ", away_pair, 1)), cards()
            assert all(c[0] == "PRIMERA, FECHA 1" for c in cards())
            # a change from chico 2, asked and confirmed from the page
            sub = {"match": match.id, "club": "bar-a", "from_chico": 2}
            status, answer = web.post("/api/liga", sub | {"action": "sub", "out": "beto-diaz",
                                                          "into": "fede-gil"})  # fmt: skip
            assert (status, answer["error"]) == (409, "'fede-gil' no está en la lista de buena "
                                                 "fe de bar-a")  # fmt: skip
            assert web.post("/api/liga", sub | {"action": "sub", "out": "beto-diaz",
                                                "into": "carla-paz"})[0] == 200  # fmt: skip
            assert web.post("/api/liga", sub | {"action": "confirm"})[0] == 200
            # forgeries: another venue's account and the venue's own at the central
            # broker (the ACL drops both), and the venue's desk at its own broker with
            # another venue's table key (the table refuses it)
            b_pass = (run.root / "venues" / "bar-b" / "bridge.pass").read_text().strip()
            secret = desk.secret
            for venue_id, account, password in (
                ("bar-b", "venue-bar-b", b_pass),
                ("bar-a", "venue-bar-a", run.a.bridge_password()),
            ):
                forged = Assignment("mesa01", 2**62, match.id, "Falsa", "X", "Y", 1, 3,
                                    (("FALSO UNO", "FALSO DOS"), ("X", "Y")))  # fmt: skip
                key = venue_table_key(secret, LEAGUE, venue_id, "mesa01")
                _, data = signed_assignment(key, tournament_prefix(LEAGUE), forged)
                c = _forger(run, account, password)
                forgers.append(c)
                c.publish("league/bar-a/tables/mesa01/assign", data, qos=1,
                          retain=True).wait_for_publish(10)  # fmt: skip
            venue_desk = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="desk")
            venue_desk.username_pw_set("desk", venue.password("desk"))
            venue_desk.tls_set(ca_certs=str(venue.ca_file))
            venue_desk.connect("127.0.0.1", run.a.port, 10)
            venue_desk.loop_start()
            forgers.append(venue_desk)
            assert wait_until(venue_desk.is_connected)
            other_key = venue_table_key(secret, LEAGUE, "bar-b", "mesa01")
            topic, data = signed_assignment(other_key, tournament_prefix(LEAGUE), forged)
            venue_desk.publish(topic, data, qos=1, retain=True).wait_for_publish(10)
            assert wait_until(lambda: table.refused_assignments == 1)
            # chico 1 played at the real table: counted, then chico 2 with the change
            table_run.play_out()
            assert wait_until(lambda: len(desk.snapshot().played.get(match.id, ())) == 1,
                              timeout=120), desk.snapshot()  # fmt: skip
            # between chicos: the result, then what comes next once the desk says it
            assert wait_until(lambda: all(c[2] == "PRÓXIMO: CHICO 2 DE 3" for c in cards()))
            service.new_game()
            assert wait_until(lambda: shows("ANA LÓPEZ Y CARLA PAZ", away_pair, 2)), cards()
            told = office.told[("bar-a", "mesa01")]
            assert table.matches.assignment == told and told.chico == 2
            assert table.refused_assignments == 1  # the two at the central never came
            status, answer = web.post("/api/liga", pair | {"players": ["ana-lopez", "carla-paz"]})
            assert status == 409 and answer["error"].startswith(f"{match.id} ya empezó")
            # chico 2 dealt at the table (not counted yet): no change for it any more
            table_run.deal()
            assert wait_until(lambda: desk.playing("bar-a", "mesa01"))
            late = sub | {"action": "sub", "out": "ana-lopez", "into": "beto-diaz"}
            assert web.post("/api/liga", late) == (409, {"error": (
                f"El chico 2 de {match.id} se está jugando en la mesa mesa01: el cambio va "
                "para un chico que no empezó")})  # fmt: skip
            assert web.post("/api/liga", late | {"from_chico": 3})[0] == 200
            # the pages
            status, page = web.get("/")
            assert status == 200
            for g in ("grupo-primera-norte", "grupo-ascenso-sur"):
                assert f'id="{g}"' in page
            assert page.index("Grupo Norte") < page.index("Ascenso") < page.index("Grupo Sur")
            _in_chromium(server.server_address[1], tmp_path, match.id)
        finally:
            for c in forgers:
                c.disconnect()
                c.loop_stop()
            table.close()
            table_run.close()
            desk.stop()


def _in_chromium(port: int, tmp_path: Path, started: str) -> None:
    with Page(tmp_path / "chromium", size=(1200, 900)) as page:
        page.goto(f"http://127.0.0.1:{port}/organizador")
        page.wait("document.getElementById('login') !== null")
        page.fill("clave", KEY)
        page.js("document.querySelector('#login button').click()")
        page.wait("document.querySelector('table.matches') !== null")
        # refusals from the page: a pair for a match begun, the same player twice
        cell = f'document.querySelector(\'tr[data-match="{started}"] td[data-club]'
        page.js(f"{cell} button').click()")
        page.wait("document.getElementById('why').innerText.includes('ya empezó')")
        assert page.text("why") == (f"{started} ya empezó: la mesa mesa01 está jugando un "
                                    "chico; entre chicos, se pide un cambio")  # fmt: skip
        cell = f'document.querySelector(\'tr[data-match]:not([data-match="{started}"]) td'
        page.js(f"for (const s of {cell}[data-club]').querySelectorAll('select')) "
                f"s.selectedIndex = 0; {cell}[data-club] button').click()")  # fmt: skip
        page.wait("document.getElementById('why').innerText.includes('distintos')")
        assert page.text("why").endswith("nombra 2 jugadores distintos")
        shot = page.screenshot(SCREENSHOTS / "league-organiser.png", full=True)
        assert shot.stat().st_size > 5_000
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait("document.querySelectorAll('table.standings').length === 2")
        heads = page.js("[...document.querySelectorAll('section.division h3')]"
                        ".map(e => e.innerText)")  # fmt: skip
        assert heads == ["Grupo Norte", "Fase final", "Grupo Sur", "Fase final"]
        shot = page.screenshot(SCREENSHOTS / "league-season-desk.png", full=True)
        assert shot.stat().st_size > 5_000


def test_the_season_desk_command_names_the_organisers_page_and_its_key(run: Run) -> None:
    """``truco-table league desk --season`` as the organiser runs it: it says where the
    organiser's page and its key are; that key opens the page; SIGTERM stops it."""
    import signal

    from .test_desk_command import Command

    port = free_port()
    desk = Command("--dir", str(run.root), "--season", "2027", "--http-port", str(port))
    try:
        key_file = run.root / "temporadas" / "2027" / "desk" / "organiser.key"
        assert desk.line("parejas, cambios y mesas:") == (
            f"parejas, cambios y mesas: http://127.0.0.1:{port}/organizador (la clave del "
            f"organizador está en {key_file})\n"
        )
        assert key_file.stat().st_mode & 0o077 == 0  # the organiser's only
        web = Client(port)
        assert web.post("/api/entrar", {"clave": "no-es-esta"})[0] == 403
        status, answer = web.post("/api/entrar", {"clave": key_file.read_text().strip()})
        assert status == 200
        status, page = web.get("/organizador")
        assert status == 200 and f'data-csrf="{answer["csrf"]}"' in page
        assert desk.stop(signal.SIGTERM) == 0
    finally:
        desk.kill()
