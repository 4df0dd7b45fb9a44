"""The table's own broadcast (``controller.table.broadcast``): the delay and the
secrecy are the server's. A real table (the service on mock hardware) plays with its
cards read at the deal; during play every page and answer the table serves without the
key is read and holds no card of the hand in play; with the key, the broadcast is the
game as it was ``delay_s`` ago, and the cards of a hand come only once it has ended."""

from __future__ import annotations

import json
import os
import random
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.engine import Action, Card, HouseRules, Kind
from controller.render.broadcast import DelayError, check_delay, hidden_cards
from controller.table.broadcast import BroadcastSettings, TableBroadcast
from controller.table.config import ConfigError, load_config
from controller.table.mock_table import MockTable
from controller.tournament.sim.mosquitto import free_port
from tests.helpers import wait_until

from .test_daemon import running_table

KEY = "clave-de-prueba-0123456789"
CARD_RE = re.compile(r"(?<![0-9A-Za-z])(1[012]|[1-7])([EBOC])(?![0-9A-Za-z])")


def cards(text: str) -> list[Card]:
    return [Card.from_str(c) for c in text.split()]


DEAL = {0: cards("7C 6C 3E"), 1: cards("2O 1B 4B")}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def get(port: int, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def strings(data: Any) -> Iterator[str]:
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for k, v in data.items():
            yield str(k)
            yield from strings(v)
    elif isinstance(data, list):
        for v in data:
            yield from strings(v)


def cards_in(data: Any) -> set[str]:
    return {m[0] for s in strings(data) for m in CARD_RE.finditer(s)}


@pytest.fixture
def table() -> Iterator[tuple[MockTable, TableBroadcast, Clock, int]]:
    clock = Clock()
    settings = BroadcastSettings(KEY, delay_s=120, table_name="Mesa 3",
                                 team_names=("Los Pumas", "Las Leonas"))  # fmt: skip
    with MockTable(HouseRules(players=2)) as mock:
        broadcast = TableBroadcast(settings, clock)
        broadcast.attach(mock.service)
        server = broadcast.serve(port=0, host="127.0.0.1")
        try:
            yield mock, broadcast, clock, server.server_address[1]
        finally:
            server.shutdown()
            server.server_close()


OPEN = ("/", "/tv", "/api/tv", "/qr/tv.svg?mesa=Mesa%203", "/transmision",
        "/api/transmision", f"/api/transmision?clave={KEY[:-1]}", "/fuentes/nada.ttf",
        "/no-existe")  # fmt: skip


def test_nothing_served_without_the_key_holds_a_card_of_the_hand_in_play(
    table: tuple[MockTable, TableBroadcast, Clock, int],
) -> None:
    mock, _, clock, port = table
    before = {path: get(port, path) for path in OPEN}
    rng = random.Random(46)
    mock.deal(DEAL)
    checked = 0
    while mock.game.hand_in_progress and mock.game.winner is None:
        secret = hidden_cards(mock.game)
        assert secret  # the hand is in play: some cards are still in the players' hands
        for path in OPEN:
            status, body = get(port, path)
            if path.startswith("/api/"):
                if status == 200:
                    assert not cards_in(json.loads(body)) & secret, path
            else:  # the pages are the same whatever is played: they carry no game
                assert (status, body) == before[path], path
            checked += 1
        # with the key, the delay past: the hand is still in play, its cards wait
        with_key = json.loads(get(port, f"/api/transmision?clave={KEY}")[1])
        assert not cards_in(with_key) & secret
        legal = [a for a in mock.game.legal_list() if a.kind is not Kind.MAZO]
        mock.act(rng.choice(legal))
        clock.now += 200  # past the delay: only the hand's end may show its cards
    assert checked >= 4 * len(OPEN)
    assert get(port, "/transmision")[0] == 401
    assert get(port, "/api/transmision")[0] == 401


def test_the_broadcast_is_delayed_and_the_cards_wait_for_the_hands_end(
    table: tuple[MockTable, TableBroadcast, Clock, int],
) -> None:
    mock, _, clock, port = table
    api = f"/api/transmision?clave={KEY}"
    mock.deal(DEAL)
    dealt_at = clock.now
    clock.now += 60
    mock.act(Action.from_str("0 play 3E"))
    status, body = get(port, api)
    shown = json.loads(body)
    assert status == 200 and shown["delay_s"] == 120
    assert shown["as_of"] is None  # nothing is 120 s old yet
    clock.now = dealt_at + 121  # the deal is old enough, the card played is not
    shown = json.loads(get(port, api)[1])
    assert shown["hand"] == 1 and shown["seats"][0]["played"] == []
    assert shown["held_back"] and all(s["cards"] is None for s in shown["seats"])
    assert shown["best"] is None and not cards_in(shown)
    clock.now += 60  # the 3E, played 120 s ago: public, on the table
    shown = json.loads(get(port, api)[1])
    assert shown["seats"][0]["played"] == [{"card": "3E", "baza": 0}]
    assert cards_in(shown) == {"3E"}
    for line in ("1 play 2O", "0 play 7C", "1 play 1B", "1 play 4B", "0 play 6C"):
        clock.now += 5
        mock.act(Action.from_str(line))
    assert not mock.game.hand_in_progress
    ended = clock.now
    shown = json.loads(get(port, api)[1])  # as of 120 s ago: the hand then in play
    assert not shown["hand_over"] and shown["seats"][0]["cards"] is not None
    assert [c["card"] for c in shown["seats"][1]["cards"]] == ["2O", "1B", "4B"]
    assert shown["seats"][0]["envido"] == 33 and shown["seats"][1]["envido"] == 25
    assert shown["best"] and shown["best"][0]["team"] in (0, 1)
    clock.now = ended + 121
    shown = json.loads(get(port, api)[1])
    assert shown["hand_over"] and shown["score"] == list(mock.game.score)


def test_a_teaching_table_shows_the_cards_at_once() -> None:
    clock = Clock()
    settings = BroadcastSettings(KEY, delay_s=0, teaching=True)
    with MockTable(HouseRules(players=2)) as mock:
        broadcast = TableBroadcast(settings, clock)
        broadcast.attach(mock.service)
        mock.deal(DEAL)
        shown = broadcast.view()
        assert [c["card"] for c in shown["seats"][0]["cards"]] == ["7C", "6C", "3E"]
        assert shown["best"][0]["line"]


@pytest.mark.parametrize("delay", [0, 5, 9.9])
def test_a_short_delay_is_only_for_a_teaching_table(delay: float) -> None:
    with pytest.raises(DelayError, match="enseñar"):
        BroadcastSettings(KEY, delay_s=delay)
    assert check_delay(delay, teaching=True) == delay


def test_a_short_key_is_refused() -> None:
    with pytest.raises(ValueError, match="16 caracteres"):
        BroadcastSettings("corta")


def test_the_running_table_serves_its_broadcast(tmp_path: Path) -> None:
    """``truco-table run --config`` with a ``[broadcast]`` section (a teaching table: no
    delay) serves the page and its answer with the key, nothing of the game without."""
    port = free_port()
    (tmp_path / "broadcast.key").write_text(KEY + "\n")
    extra = (
        f'[broadcast]\nport = {port}\nkey_file = "broadcast.key"\nteaching = true\n'
        'delay_s = 0\ntable_name = "Mesa 3"\nteam_names = ["Los Pumas", "Las Leonas"]\n'
    )
    with running_table(tmp_path, extra) as table:
        assert wait_until(lambda: get(port, "/tv")[0] == 200, 60)
        table.deal()

        def dealt() -> Any:  # the table tells its listeners just after its record has it
            status, body = get(port, f"/api/transmision?clave={KEY}")
            assert status == 200
            shown = json.loads(body)
            return shown if shown.get("seats") and shown["seats"][1]["cards"] else None

        assert wait_until(dealt, 60)
        shown = dealt()
        assert shown["names"] == ["Los Pumas", "Las Leonas"]
        assert [c["card"] for c in shown["seats"][1]["cards"]] == ["2O", "1B", "4B"]
        assert get(port, "/api/transmision")[0] == 401
        status, page = get(port, f"/transmision?clave={KEY}&fondo=transparente")
        assert status == 200 and b"background:transparent" in page
        tv = json.loads(get(port, "/api/tv")[1])
        assert tv["tables"][0]["table"] == "Mesa 3" and not cards_in(tv)


def config_with(tmp_path: Path, broadcast: str, more: str = "") -> Path:
    config = tmp_path / "table.toml"
    config.write_text(
        f'[table]\nplayers = 2\nstate_dir = "{tmp_path / "state"}"\n'
        '[topology]\nkind = "nodes"\n[nodes]\nby_id_dir = "/dev/serial/by-id"\n'
        + "".join(f'[[nodes.seat]]\nseat = {i}\nserial = "e66141{i:010x}"\n' for i in range(2))
        + broadcast
        + more
    )
    return config


def test_the_broadcast_section_is_checked(tmp_path: Path) -> None:
    (tmp_path / "broadcast.key").write_text(KEY)
    good = load_config(config_with(tmp_path, '[broadcast]\nkey_file = "broadcast.key"\n'))
    assert good.broadcast is not None
    assert (good.broadcast.key, good.broadcast.delay_s, good.broadcast.teaching) == (
        KEY,
        120,
        False,
    )
    refused = {
        '[broadcast]\nkey_file = "broadcast.key"\ndelay_s = 0\n': "broadcast.delay_s",
        "[broadcast]\nport = 8081\n": "broadcast.key_file",
        '[broadcast]\nkey = "corta"\n': "16 caracteres",
        '[broadcast]\nkey_file = "broadcast.key"\nteam_names = ["solo uno"]\n': "team_names",
        '[broadcast]\nkey_file = "no-esta.key"\n': "no se puede leer",
    }
    for text, why in refused.items():
        with pytest.raises(ConfigError, match=why):
            load_config(config_with(tmp_path, text))
    tournament = '[tournament]\nname = "t"\ntable_id = "mesa01"\nbroker = "127.0.0.1:1883"\n'
    with pytest.raises(ConfigError, match="en un torneo la transmisión la sirve"):
        load_config(config_with(tmp_path, '[broadcast]\nkey_file = "broadcast.key"\n', tournament))


def test_a_table_restarted_mid_game_broadcasts_the_game_from_its_record(tmp_path: Path) -> None:
    """Stopped in the middle of hand 2 and started again on its state folder (100 s
    later, by the record's time): the broadcast is the game its record kept (who is mano,
    the score, the card played) once the delay has passed since the record was
    written, not a new game, and not sooner; the TV has it at once."""
    rng = random.Random(7)
    second = {0: cards("1E 5C 12O"), 1: cards("3O 7B 10C")}
    settings = BroadcastSettings(KEY, delay_s=120)
    with MockTable(HouseRules(players=2), state_dir=tmp_path) as mock:
        mock.deal(DEAL)
        while mock.game.hand_in_progress:
            every = mock.game.legal_list()
            quiet = [a for a in every if a.kind not in (Kind.MAZO, Kind.FALTA_ENVIDO)]
            mock.act(rng.choice(quiet or every))
        mock.deal(second)
        mock.act(rng.choice([a for a in mock.game.legal_list() if a.kind is Kind.PLAY]))
        mano, score = mock.game.mano, list(mock.game.score)
    record = tmp_path / "current.truco"
    written = record.stat().st_mtime - 100
    os.utime(record, (written, written))  # the table was off for 100 s
    clock = Clock()
    with MockTable(HouseRules(players=2), state_dir=tmp_path) as mock:
        assert mock.game.hand_number == 2 and mock.game.hand_in_progress  # from the record
        broadcast = TableBroadcast(settings, clock)
        broadcast.attach(mock.service)
        [tv] = broadcast.tv()["tables"]
        assert (tv["hand"], tv["mano"], tv["score"]) == (2, mano, score)
        clock.now += 19  # 119 s since the record was written: not yet
        assert not broadcast.view()["started"]
        clock.now += 2
        shown = broadcast.view()
        assert (shown["started"], shown["hand"], shown["score"]) == (True, 2, score)
        assert shown["held_back"] and all(s["cards"] is None for s in shown["seats"])
        assert [p["card"] for s in shown["seats"] for p in s["played"]]  # the card played
        # the hand goes on and ends: its cards, read back from the record, are shown
        while mock.game.hand_in_progress and mock.game.winner is None:
            every = mock.game.legal_list()
            mock.act(rng.choice([a for a in every if a.kind is not Kind.MAZO] or every))
        clock.now += 121
        shown = broadcast.view()
        assert shown["hand"] == 2 and not shown["held_back"]
        assert [[c["card"] for c in s["cards"]] for s in shown["seats"]] == [
            [str(c) for c in second[s]] for s in (0, 1)
        ]
