"""The desk's broadcast and the secrecy of a hand in play, from a real table: the table
service on mock hardware, its tournament publisher (its outbox: every message it would
send to the venue's broker), and the desk hearing them. While a hand is played, no
message since its deal, and no page or answer the desk serves without the key (the
organiser's pages, the TV's listener, the broadcast), holds a card still in a
player's hand; with the key, the broadcast is the game as it was ``delay`` ago and a
hand's cards come only once that hand has ended (the table's ``cards`` message)."""

from __future__ import annotations

import json
import random
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from controller.engine import CARDS, HouseRules, Kind
from controller.render.broadcast import hidden_cards
from controller.table.mock_table import MockTable
from controller.tournament.desk import DeskState, serve_http
from controller.tournament.desk.sessions import OrganiserAccess
from controller.tournament.desk.tv import serve_tv
from controller.tournament.sim.mosquitto import LocalBroker, free_port
from controller.tournament.table.publisher import TablePublisher
from controller.tournament.venue.access import BrokerAccess
from controller.tournament.venue.broker import Venue
from controller.tournament.wire.keys import table_key
from controller.tournament.wire.seal import TournamentKey, load_key
from controller.tournament.wire.topics import decode

from ..conftest import MqttProbe, venue_table
from .browser import SCREENSHOTS, screenshot

CARD_RE = re.compile(r"(?<![0-9A-Za-z])(1[012]|[1-7])([EBOC])(?![0-9A-Za-z])")
ORGANISER_KEY = "clave-del-organizador"


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def cards_in(text: str) -> set[str]:
    return {m[0] for m in CARD_RE.finditer(text)}


def test_no_card_of_a_hand_in_play_leaves_the_table_or_the_desk(
    tmp_path: Path, key: TournamentKey
) -> None:
    own = table_key(key, "t", "mesa01")
    pub = TablePublisher("mesa01", "127.0.0.1", free_port(), outbox_dir=tmp_path / "outbox",
                         tournament="t", key=own)  # fmt: skip
    clock = [10_000.0]
    desk = DeskState("t", key=key, clock=lambda: clock[0])
    desk.broker_up()
    http = serve_http(desk, 0, access=OrganiserAccess(ORGANISER_KEY, delay=lambda s: None))
    tv = serve_tv(desk, 0, host="127.0.0.1")
    base, tv_base = (f"http://127.0.0.1:{s.server_address[1]}" for s in (http, tv))
    open_urls = [
        base + p
        for p in (
            "/",
            "/mesas",
            "/api/state",
            "/results.json",
            "/results.csv",
            "/transmision/mesa01",
            "/api/transmision/mesa01",
            "/api/transmision/mesa01?clave=otra-clave-cualquiera",
        )
    ]
    open_urls += [tv_base + p for p in ("/tv", "/api/tv", "/qr/tv.svg?mesa=mesa01")]
    keyed = f"{base}/api/transmision/mesa01?clave={ORGANISER_KEY}"
    fed = 0

    def feed() -> list[dict[str, Any]]:
        nonlocal fed
        out = []
        for entry in pub.outbox.entries(fed + 1):
            desk.handle(f"truco/t/tables/mesa01/{entry.topic}", entry.payload)
            fed = entry.seq
            out.append(decode(entry.payload) or {})
        return out

    rng = random.Random(46)
    # the two hands' cards apart: a card on a page is then of one hand only
    deck = rng.sample(CARDS, 12)
    deals = [{s: deck[6 * h + 3 * s : 6 * h + 3 * s + 3] for s in (0, 1)} for h in (0, 1)]
    checked = 0
    try:
        with MockTable(HouseRules(players=2)) as mock:
            pub.attach(mock.service)
            for hand in (1, 2):
                dealt = deals[hand - 1]
                mock.deal(dealt)
                since_deal: list[dict[str, Any]] = []
                while mock.game.hand_in_progress and mock.game.winner is None:
                    since_deal += feed()
                    clock[0] += 300  # far past the delay: only the hand's end shows its cards
                    secret = hidden_cards(mock.game)
                    assert secret
                    for message in since_deal:
                        assert not cards_in(json.dumps(message)) & secret, message
                    for url in open_urls:
                        assert not cards_in(get(url)[1]) & secret, url
                    status, body = get(keyed)
                    assert status == 200 and not cards_in(body) & secret
                    shown = json.loads(body)
                    assert shown["held_back"] and all(s["cards"] is None for s in shown["seats"])
                    checked += 1
                    legal = [a for a in mock.game.legal_list() if a.kind is not Kind.MAZO]
                    mock.act(rng.choice(legal))
                said = feed()
                [cards] = [m for m in since_deal + said if m.get("kind") == "cards"]
                assert cards["hand"] == hand
                assert cards["text"].splitlines() == [
                    f"deal {s}: {' '.join(str(c) for c in dealt[s])}" for s in (0, 1)
                ]
                if mock.game.winner is not None:
                    break
                # the hand's end 120 s ago: the broadcast of then has the cards read at the deal
                clock[0] += 0.5
                shown = json.loads(get(keyed)[1])
                assert not shown["held_back"]
                assert [c["card"] for c in shown["seats"][1]["cards"]] == [str(c) for c in dealt[1]]
        assert checked >= 4
        assert get(f"{base}/api/transmision/mesa01")[0] == 401
        assert get(f"{base}/api/transmision/mesa99?clave={ORGANISER_KEY}")[0] == 404
        assert get(f"{base}/fuentes/nada.ttf") == (404, "No existe esa página.\n")
    finally:
        for server in (http, tv):
            server.shutdown()
            server.server_close()
        pub.abort()


def test_the_desk_broadcast_waits_for_its_delay(key: TournamentKey) -> None:
    from .test_desk import event

    clock = [5_000.0]
    desk = DeskState("t", key=key, clock=lambda: clock[0])
    rules = "table players=2 target=30 flor=off claims=declared implicit_quiero=off"
    desk.handle(*event("mesa01", 1, "new-game", text="", rules=rules))
    desk.handle(*event("mesa01", 2, "deal", text="hand", dealt=2))
    clock[0] += 60
    desk.handle(*event("mesa01", 3, "action", text="0 play 3E"))
    clock[0] += 100  # the deal is 160 s old, the card 100 s
    shown = desk.broadcast("mesa01")
    assert shown is not None and shown["hand"] == 1 and shown["seats"][0]["played"] == []
    clock[0] += 30
    shown = desk.broadcast("mesa01")
    assert shown is not None and shown["seats"][0]["played"] == [{"card": "3E", "baza": 0}]
    desk.teaching = frozenset({"mesa01"})  # a teaching table: at once
    assert desk.broadcast("mesa01") is not None
    assert desk.broadcast("mesa99") is None


def test_over_the_venue_broker_the_room_sees_no_card_and_the_desk_only_ended_hands(
    venue: Venue, venue_broker: LocalBroker, tmp_path: Path
) -> None:
    """mesa01's table service and publisher (its own account and key), the venue's
    Mosquitto with its ACLs and TLS, desk1 on its account, and what the room's screen
    (``pantalla``) and another table may read there: while a hand is played nothing
    they read holds a card still in a hand, nor does any page of the desk, and the keyed
    broadcast (headless Chromium, a screenshot) shows them face down; once the hand has
    ended, desk1 has its cards."""
    from controller.tournament.desk import Desk

    secret = load_key(venue.root / "secret.key", kind="key-file")
    access = BrokerAccess("desk1", venue.password("desk1"), venue.ca_file)
    clock = [50_000.0]
    state = DeskState("copa", key=secret, tables=venue.tables, clock=lambda: clock[0])
    desk = Desk(state, "127.0.0.1", venue.port, access=access).start()
    everything = f"truco/{venue.tournament}/#"
    probes = {who: MqttProbe(venue, who, everything) for who in ("pantalla", "mesa02")}
    http = serve_http(state, 0, access=OrganiserAccess(ORGANISER_KEY, delay=lambda s: None))
    base = f"http://127.0.0.1:{http.server_address[1]}"
    rng = random.Random(7)
    dealt = {0: [CARDS[i] for i in (0, 11, 22)], 1: [CARDS[i] for i in (33, 4, 15)]}
    pub = venue_table(venue, "mesa01", tmp_path / "outbox")
    try:
        assert desk.connected.wait(120) and pub.connected.wait(120)
        with MockTable(HouseRules(players=2)) as mock:
            pub.attach(mock.service)
            mock.deal(dealt)
            stage = 0
            while mock.game.hand_in_progress and mock.game.winner is None:
                assert pub.flush(30)
                last = pub.outbox.last_seq

                def heard_all(s: DeskState, last: int = last) -> bool:
                    t = s.tables.get("mesa01")
                    return t is not None and t.next_seq > last

                assert desk.wait(heard_all, 30), (
                    last,
                    state.tables.get("mesa01") and state.tables["mesa01"].next_seq,
                    state.rejected,
                    [r.row() for r in state.rejections[-3:]],
                )
                clock[0] += 300
                secret_cards = hidden_cards(mock.game)
                for who, probe in probes.items():
                    with probe.lock:
                        heard = " ".join(p.decode("utf-8", "replace") for _, p in probe.messages)
                    assert not cards_in(heard) & secret_cards, (
                        who,
                        [(t, p[:300]) for t, p in probe.messages],
                    )
                for path in ("/", "/mesas", "/api/state", "/transmision/mesa01",
                             "/api/transmision/mesa01"):  # fmt: skip
                    assert not cards_in(get(base + path)[1]) & secret_cards, path
                keyed = f"{base}/transmision/mesa01?clave={ORGANISER_KEY}"
                assert (
                    not cards_in(get(f"{base}/api/transmision/mesa01?clave={ORGANISER_KEY}")[1])
                    & secret_cards
                )
                if stage == 1:  # a card on the table, the others face down
                    screenshot(keyed, SCREENSHOTS / "broadcast-held-back.png", tmp_path,
                               size=(1920, 1080))  # fmt: skip
                stage += 1
                legal = [a for a in mock.game.legal_list() if a.kind is not Kind.MAZO]
                mock.act(rng.choice(legal))
            assert pub.flush(30)
        deal_lines = [f"deal {s}: {' '.join(str(c) for c in dealt[s])}" for s in (0, 1)]
        assert desk.wait(lambda s: s.tables["mesa01"].heard is not None
                         and s.tables["mesa01"].heard.deals.get(1) == deal_lines, 30)  # fmt: skip
        with probes["pantalla"].lock:  # the room's screen hears the table as it plays
            assert [t for t, _ in probes["pantalla"].messages if t.endswith("/events")]
        assert stage >= 2
    finally:
        for probe in probes.values():
            probe.close()
        http.shutdown()
        http.server_close()
        desk.stop()
        pub.close()
