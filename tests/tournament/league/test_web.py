"""The league desk's pages, read from a :class:`LeagueDesk` fed with sealed records as
the central broker delivers them (through its own message handler, its journal on disk):
the standings page and a venue's fixture as HTML, the exports in both CSV forms, the
Host check, and the standings page once in headless Chromium (its DOM, a screenshot)."""

from __future__ import annotations

import datetime
import http.client
import ssl
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from controller.tournament.league.desk import LeagueDesk
from controller.tournament.league.fixture import fixture
from controller.tournament.league.gaps import GAP_WAIT_S, MAX_ASKS, RETRY_S
from controller.tournament.league.model import League
from controller.tournament.league.standings import league_standings
from controller.tournament.league.web import serve_league
from tests.helpers import serving

from ..desk.cdp import Page
from .helpers import game_payloads, record_payload, two_venue_league

SECRET = bytes(range(32))
LEAGUE = two_venue_league(("bar-a", "bar-b"))
MATCH = next(m for m in fixture(LEAGUE) if m.venue == "bar-a")  # decided by two chicos
OTHER = next(m for m in fixture(LEAGUE) if m.venue == "bar-b")
#: The league desk's date: every matchday of the season has come.
DUE = LEAGUE.first_date + datetime.timedelta(days=365)
#: The seq after the first two chicos' messages (each game: its events and its record).
AFTER_TWO = 1 + 2 * len(game_payloads(LEAGUE, SECRET, "bar-a", "mesa01", MATCH.id))


def _central(league: League, topic: str, venue: str) -> str:
    return f"league/{venue}/" + topic.removeprefix(f"truco/{league.name}/")


def _deliver(desk: LeagueDesk, topic: str, payload: bytes) -> None:
    msg = mqtt.MQTTMessage(topic=topic.encode())
    msg.payload = payload
    desk._on_message(desk.client, None, msg)


def fed_desk(folder: Path) -> LeagueDesk:
    """A league desk (not connected) whose handler got what the bridge would bring: two
    chicos of MATCH, bar-a sealing a match of bar-b (flagged), one message whose mac is
    wrong (rejected), and the first record again (a repeat)."""
    ca = ssl.get_default_verify_paths().cafile
    if ca is None:
        pytest.skip("no system CA file for the (unused) TLS context")
    desk = LeagueDesk(
        LEAGUE, SECRET, folder, host="127.0.0.1", port=1, ca_file=ca,
        username="league-desk", password="x", today=lambda: DUE,
    )  # fmt: skip
    desk.open()
    first = game_payloads(LEAGUE, SECRET, "bar-a", "mesa01", MATCH.id, seq=1, chico=1)
    second = game_payloads(LEAGUE, SECRET, "bar-a", "mesa01", MATCH.id, seq=1 + len(first),
                           game_number=2, chico=2)  # fmt: skip
    forged = game_payloads(LEAGUE, SECRET, "bar-a", "mesa02", OTHER.id, seq=1, game_number=3)
    for topic, data in (*first, *second, *forged, first[-1]):
        _deliver(desk, _central(LEAGUE, topic, "bar-a"), data)
    topic, data = record_payload(LEAGUE, SECRET, "bar-b", "mesa01", OTHER.id, seq=9)
    _deliver(desk, _central(LEAGUE, topic, "bar-b"), data.replace(b'"seq":9', b'"seq":8'))
    return desk


class _Tables(HTMLParser):
    """Every ``<table>``'s rows as cell texts, keyed by its id or first class."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.links: list[str] = []
        self._rows: list[list[str]] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            key = a.get("id") or (a.get("class") or "").split(" ")[-1]
            self._rows = self.tables.setdefault(key, [])
        elif tag == "tr" and self._rows is not None:
            self._rows.append([])
        elif tag in ("td", "th") and self._rows is not None:
            self._cell = []
        elif tag == "a" and a.get("href"):
            self.links.append(str(a["href"]))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._rows:
            self._rows[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._rows = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _get(port: int, path: str, host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", path, headers={"Host": host or f"127.0.0.1:{port}"})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[LeagueDesk, int]]:
    desk = fed_desk(tmp_path / "desk")
    try:
        with serving(serve_league(desk, 0)) as port:
            yield desk, port
    finally:
        desk.ledger.close()


def test_the_standings_page_shows_the_verified_count(served: tuple[LeagueDesk, int]) -> None:
    desk, port = served
    status, headers, body = _get(port, "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    page = _Tables()
    page.feed(body.decode("utf-8"))
    rows = page.tables["standings"][1:]
    expected = league_standings(LEAGUE, {MATCH.id: desk.snapshot().played[MATCH.id]})
    names = {e.id: e.name for e in LEAGUE.entrants}
    assert [r[1] for r in rows] == [f"{names[s.entrant]} (Sede {LEAGUE.entrant(s.entrant).club})"
                                    for s in expected]  # fmt: skip
    leader = rows[0]
    assert leader[2:7] == ["1", "1", "0", "2", "0"]  # one match played, won 2-0 in chicos
    assert sum(int(r[2]) for r in rows) == 2  # only MATCH counted, for both sides
    flags = page.tables["flags"][1:]
    assert len(flags) == 1 and flags[0][:4] == ["bar-a", "mesa02", "mesa02-g003", OTHER.id]
    assert "se juega en la sede bar-b" in flags[0][4]
    rejected = page.tables["rejected"][1:]
    assert len(rejected) == 1 and rejected[0][0] == "bar-b"
    assert "holes" not in page.tables  # every table's messages came, in order
    assert "/sede/bar-a" in page.links and "/export/standings.excel.csv" in page.links
    assert "2 registros contados · 1 sin contar · 1 repetidos" in body.decode()
    assert "Todavía sin conexión con el broker central" in body.decode()  # never connected
    desk.online = False  # as paho's on_disconnect leaves it
    lost = _get(port, "/")[2].decode()
    assert 'id="link"' in lost and "SIN CONEXIÓN CON EL BROKER CENTRAL" in lost
    desk.online = True
    assert 'id="link"' not in _get(port, "/")[2].decode()


def test_the_standings_page_shows_the_holes_asked_for_and_given_up(
    served: tuple[LeagueDesk, int],
) -> None:
    desk, port = served
    t0 = time.time()
    with desk.lock:  # as the central broker would bring them: mesa05 1, 2, 5; mesa06 1, 9
        for table, seq in (("mesa05", 1), ("mesa05", 2), ("mesa05", 5), ("mesa06", 1),
                           ("mesa06", 9)):  # fmt: skip
            desk.watch.heard("bar-a", table, seq, t0)
        for k in range(MAX_ASKS + 1):  # asked for every RETRY_S, never given: given up
            desk.watch.holes(t0 + GAP_WAIT_S + k * RETRY_S)
        desk.watch.heard("bar-a", "mesa05", 9, t0)  # a new hole, not yet asked for
    page = _Tables()
    page.feed(_get(port, "/")[2].decode("utf-8"))
    assert page.tables["holes"][1:] == [
        ["bar-a", "mesa05", "6 a 8", "pedidos de nuevo a la mesa"],
        ["bar-a", "mesa05", "3 a 4", "perdidos: la mesa no los dio"],
        ["bar-a", "mesa06", "2 a 8", "perdidos: la mesa no los dio"],
    ]


def test_a_venue_page_lists_its_matches_by_matchday_with_results(
    served: tuple[LeagueDesk, int],
) -> None:
    _, port = served
    status, _, body = _get(port, "/sede/bar-a")
    assert status == 200
    text = body.decode("utf-8")
    hosted = [m for m in fixture(LEAGUE) if m.venue == "bar-a"]
    page = _Tables()
    page.feed(text)
    rows = [r for r in page.tables["fixture"] if r and r[0] != "Partido"]
    assert [r[0] for r in rows] == [m.id for m in hosted]
    played = next(r for r in rows if r[0] == MATCH.id)
    assert played[3] in ("2-0", "0-2") and played[5] == "terminado"
    assert all(r[5] == "por empezar" and r[3] == "" for r in rows if r[0] != MATCH.id)
    for m in hosted:
        assert f"{m.label}, {m.date.strftime('%d/%m/%Y')}" in text
    assert OTHER.id not in text  # bar-b's match is on bar-b's page
    assert _get(port, "/sede/bar-z")[0] == 404


def test_the_exports_in_both_forms_and_the_games(served: tuple[LeagueDesk, int]) -> None:
    _, port = served
    status, headers, plain = _get(port, "/export/standings.csv")
    assert status == 200 and headers["content-type"].startswith("text/csv")
    lines = plain.decode("utf-8").split("\n")
    assert lines[0].startswith("rank,entrant,name,club,")
    assert lines[1].split(",")[3] in ("bar-a", "bar-b") and "\r" not in plain.decode()
    excel = _get(port, "/export/standings.excel.csv")[2].decode("utf-8")
    assert excel.startswith("\ufeffpuesto;id;equipo;") and excel.endswith("\r\n")
    matches = _get(port, "/export/matches.csv")[2].decode("utf-8").splitlines()
    assert len(matches) == 1 + len(fixture(LEAGUE))
    row = next(r for r in matches if r.startswith(MATCH.id + ","))
    assert ",decided," in row and ",2," in row  # two games counted
    assert _get(port, "/export/matches.excel.csv")[2].startswith("\ufeffpartido;".encode())
    games = _get(port, "/export/games.csv")[2].decode("utf-8").splitlines()
    assert games[0].startswith("game,match,round,label,venue,table,")
    assert [g.split(",")[0] for g in games[1:]] == ["mesa01-g001", "mesa01-g002", "mesa02-g003"]
    assert _get(port, "/export/passwd")[0] == 404


def test_another_host_gets_nothing_and_nothing_is_written(
    served: tuple[LeagueDesk, int],
) -> None:
    _, port = served
    assert _get(port, "/", host=f"evil.example:{port}")[0] == 421
    assert _get(port, "/export/standings.csv", host="evil.example")[0] == 421
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("POST", "/", body=b"{}", headers={"Host": f"127.0.0.1:{port}"})
    assert conn.getresponse().status == 405
    conn.close()


def test_the_standings_page_in_chromium(served: tuple[LeagueDesk, int], tmp_path: Path) -> None:
    desk, port = served
    desk.online = True  # the page as the organiser sees it with the broker connected
    with Page(tmp_path / "chromium", size=(1100, 760)) as page:
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait("document.querySelectorAll('table.standings tbody tr').length === 4")
        cells = page.js(
            "[...document.querySelectorAll('table.standings tbody tr')]"
            ".map(r => [...r.cells].map(c => c.innerText))"
        )
        assert [c[0] for c in cells] == ["1", "2", "3", "4"]
        assert sum(int(c[2]) for c in cells) == 2
        assert "se juega en la sede bar-b" in page.text("flags")
        shot = page.screenshot(tmp_path / "league-standings.png", full=True)
    assert shot.stat().st_size > 5_000


def test_a_seasons_desk_serves_its_public_pages_and_nothing_around_them(
    served: tuple[LeagueDesk, int], tmp_path: Path
) -> None:
    """A league desk running a season (``--season``) links and serves the seasons'
    public pages (its ``pages_dir``), read-only; a path out of that folder is a 404."""
    desk, port = served
    status, _, body = _get(port, "/temporadas/index.html")
    assert status == 404  # this desk runs no season
    assert b'id="seasons"' not in _get(port, "/")[2]
    pages = tmp_path / "paginas"
    (pages / "2027").mkdir(parents=True)
    (pages / "index.html").write_text("<h1>Temporadas</h1>", encoding="utf-8")
    (pages / "2027" / "jugadores.json").write_text("[]", encoding="utf-8")
    (tmp_path / "secreto.html").write_text("no", encoding="utf-8")
    desk.pages_dir = pages
    assert b'href="/temporadas/index.html"' in _get(port, "/")[2]
    status, headers, body = _get(port, "/temporadas/index.html")
    assert status == 200 and body == b"<h1>Temporadas</h1>"
    assert headers["content-type"].startswith("text/html")
    status, headers, _ = _get(port, "/temporadas/2027/jugadores.json")
    assert status == 200 and headers["content-type"] == "application/json"
    for outside in ("/temporadas/../secreto.html", "/temporadas/%2e%2e/secreto.html",
                    "/temporadas/2027/../../secreto.html", "/temporadas/nada.html"):  # fmt: skip
        assert _get(port, outside)[0] == 404, outside
