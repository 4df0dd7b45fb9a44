"""The bar's TV served by the desk (``controller.tournament.desk.tv``): six tables heard
over their signed messages, on one 1920x1080 screen in headless Chromium (score, mano, a
hand's end, a flor or a falta envido called), a QR code per table, and no card anywhere
in what the TV's listener serves. Screenshot to docs/screenshots/ with
TRUCO_REGEN_SCREENSHOTS=1."""

from __future__ import annotations

import contextlib
import json
import random
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.engine import HouseRules, Kind
from controller.engine.playout import random_deal
from controller.table.mock_table import MockTable
from controller.tournament.desk import Desk, DeskState
from controller.tournament.desk.tv import serve_tv
from controller.tournament.sim.mosquitto import LocalBroker
from controller.tournament.venue.access import BrokerAccess
from controller.tournament.venue.broker import Venue
from controller.tournament.wire.seal import load_key
from tests.helpers import wait_until

from ..conftest import KEY, venue_table
from .browser import SCREENSHOTS, dom, screenshot
from .cdp import Page
from .test_desk import event, status

CARD_RE = re.compile(r"(?<![0-9A-Za-z])(1[012]|[1-7])([EBOC])(?![0-9A-Za-z])")
RULES = "table players={} target=30 flor=on claims=declared implicit_quiero=off"

#: table -> (players, its statements as the table told them, one event each)
TABLES: dict[str, tuple[int, list[str]]] = {
    "mesa01": (2, ["hand", "0 play 3E", "1 play 2O"]),
    "mesa02": (4, ["hand", "0 flor"]),
    "mesa03": (2, ["hand", "0 falta-envido"]),
    "mesa04": (2, ["hand", "0 play 7C", "1 truco", "0 no-quiero"]),
    "mesa05": (6, ["dealer 2\nhand", "3 play 1E", "4 play 4B"]),
    "mesa06": (2, []),
}


def heard() -> DeskState:
    clock = [5000.0]
    desk = DeskState("t", key=KEY, profile="tournament", clock=lambda: clock[0])
    desk.broker_up()
    for table, (players, lines) in TABLES.items():
        desk.handle(*status(table, "online"))
        if not lines:
            continue
        seq = 1
        desk.handle(*event(table, seq, "new-game", text="", rules=RULES.format(players)))
        for line in lines:
            seq += 1
            kind = "deal" if "hand" in line else "action"
            desk.handle(*event(table, seq, kind, text=line, hand=1,
                               score=[1, 0] if table == "mesa04" and "no-quiero" in line
                               else [0, 0]))  # fmt: skip
    return desk


@pytest.fixture
def tv() -> Iterator[tuple[DeskState, str]]:
    desk = heard()
    server = serve_tv(desk, 0, host="127.0.0.1")
    try:
        yield desk, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_the_tv_says_each_tables_state_and_never_a_card(tv: tuple[DeskState, str]) -> None:
    _, base = tv
    shown = {t["table"]: t for t in json.loads(get(base + "/api/tv")[1])["tables"]}
    assert sorted(shown) == sorted(TABLES)
    assert shown["mesa01"]["mano"] == 0 and not shown["mesa01"]["hand_over"]
    assert shown["mesa02"]["flor"] and not shown["mesa02"]["falta_envido"]
    assert shown["mesa03"]["falta_envido"]
    assert shown["mesa04"]["hand_over"] and shown["mesa04"]["score"] == [1, 0]
    assert shown["mesa05"]["mano"] == 3 and shown["mesa05"]["players"] == 6
    assert not shown["mesa06"]["started"]
    for path in ("/", "/tv", "/api/tv", "/qr/tv.svg?mesa=mesa01", "/tv?mesa=mesa03",
                 "/api/state", "/records/x.truco", "/transmision"):  # fmt: skip
        status, body = get(base + path)
        text = body.decode("utf-8", "replace")
        if path.startswith("/api/") and status == 200:
            assert not CARD_RE.search(json.dumps(json.loads(body))), path
        assert status in (200, 404), path
        if path in ("/api/state", "/records/x.truco", "/transmision"):
            assert status == 404  # the TV's listener serves the TV only
        assert "3E" not in text and "1E" not in text and "7C" not in text, path
    status, svg = get(base + "/qr/tv.svg?mesa=mesa01")
    assert status == 200 and svg.startswith(b"<svg") and b"<path" in svg
    assert b'xmlns="http://www.w3.org/2000/svg"' in svg  # an <img> draws it only then


def test_six_tables_on_the_tv_in_a_browser(tv: tuple[DeskState, str], tmp_path: Path) -> None:
    _, base = tv
    page = dom(base + "/tv", tmp_path, size=(1920, 1080))
    text = " ".join(re.sub(r"<[^>]+>", " ", page).split())
    for table in TABLES:
        assert table in text
    assert "¡flor!" in text and "¡falta envido!" in text and "terminó la mano" in text
    assert "es mano el asiento 3" in text and "todavía no empezó" in text
    assert len(re.findall(r'alt="QR de mesa0[1-6]"', page)) == 6
    screenshot(base + "/tv", SCREENSHOTS / "tv.png", tmp_path, size=(1920, 1080))


PAGE_TABLES = """JSON.stringify([...document.querySelectorAll('#tables .t')].map(d => ({
  table: d.querySelector('h2').textContent,
  score: [...d.querySelectorAll('.p')].map(p => Number(p.textContent)),
  state: d.querySelector('.state').textContent.replace(/\\s+/g, ' ').trim()})))"""


def test_six_real_tables_live_on_the_tv_over_the_venue_broker(
    venue: Venue, venue_broker: LocalBroker, tmp_path: Path
) -> None:
    """Six table services on mock hardware, each with its publisher on its own account of
    the venue's Mosquitto (ACLs, TLS), and desk1 hearing them: the TV page, open once in
    headless Chromium, follows the six games as they are played (each table's score,
    hand and mano, as its own game has them), and never shows a card."""
    secret = load_key(venue.root / "secret.key", kind="key-file")
    state = DeskState(venue.tournament, key=secret, tables=venue.tables)
    access = BrokerAccess("desk1", venue.password("desk1"), venue.ca_file)
    desk = Desk(state, "127.0.0.1", venue.port, access=access).start()
    server = serve_tv(state, 0, host="127.0.0.1")
    tables = sorted(venue.tables)
    assert len(tables) == 6
    rng = random.Random(46)
    with contextlib.ExitStack() as stack:
        stack.callback(desk.stop)
        stack.callback(server.server_close)
        stack.callback(server.shutdown)
        pubs = {}
        for name in tables:
            pubs[name] = venue_table(venue, name, tmp_path / name)
            stack.callback(pubs[name].close)
        mocks = {name: stack.enter_context(MockTable(HouseRules(players=2))) for name in tables}
        for name in tables:
            pubs[name].attach(mocks[name].service)
        page = stack.enter_context(Page(tmp_path / "browser", size=(1920, 1080)))
        assert desk.connected.wait(120)
        assert all(p.connected.wait(120) for p in pubs.values())
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/tv")

        def play_on(mock: MockTable) -> None:
            """The hand in play to its end, the next one dealt and a card played."""
            while mock.game.hand_in_progress:
                every = mock.game.legal_list()  # (no falta envido: the game goes on)
                quiet = [a for a in every if a.kind not in (Kind.MAZO, Kind.FALTA_ENVIDO)]
                mock.act(rng.choice(quiet or every))
            mock.deal(random_deal(rng, 2))
            mock.act(rng.choice([a for a in mock.game.legal_list() if a.kind is Kind.PLAY]))

        def on_page() -> list[dict[str, Any]]:
            shown: list[dict[str, Any]] = json.loads(page.js(PAGE_TABLES))
            return shown

        def expected() -> list[dict[str, Any]]:
            return [{"table": name, "score": list(m.game.score),
                     "state": f"mano {m.game.hand_number} · es mano el asiento {m.game.mano}"}
                    for name, m in mocks.items()]  # fmt: skip

        for mock in mocks.values():
            mock.deal(random_deal(rng, 2))
        seen = []
        for stage in range(2):
            for mock in mocks.values():
                play_on(mock)
            assert all(p.flush(30) for p in pubs.values())
            want = expected()

            def caught_up(want: list[dict[str, Any]] = want) -> bool:
                return on_page() == want

            assert wait_until(caught_up), (on_page(), want)
            seen.append(want)
            text = page.js("document.body.innerText")
            api = get(f"http://127.0.0.1:{server.server_address[1]}/api/tv")[1].decode()
            assert not CARD_RE.search(text) and not CARD_RE.search(api), (text, api)
            if stage == 1:
                page.screenshot(SCREENSHOTS / "tv-live.png")
        # the same page, never reloaded, followed every table's game: each scored again
        for before, after in zip(*seen, strict=True):
            assert sum(after["score"]) > sum(before["score"]), (before, after)
            assert after["state"] != before["state"]
