"""The broadcast's pages in headless Chromium: a recorded final (four seats, seeded bot
play) replayed on the broadcast page at 1920x1080 with no scrollbar and nothing out of
its box, the cards, envido points and best-play line the server computed; the
transparent option; the bar's TV page with six tables and their QR codes.
Screenshots go to docs/screenshots/ with TRUCO_REGEN_SCREENSHOTS=1."""

from __future__ import annotations

import json
import random
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.engine import Game, HouseRules
from controller.engine.playout import random_game, uniform_without_mazo
from controller.render.broadcast import record_log
from controller.table.broadcast import BroadcastSettings, TableBroadcast
from controller.transcript import write
from tests.tournament.desk.browser import SCREENSHOTS, dom, screenshot

KEY = "clave-de-prueba-0123456789"
NAMES = ("Los Pumas", "Las Leonas")


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def final_record(players: int = 4) -> str:
    """A game to 30 (with flor; six seats: pica-pica too), played by seeded random
    bots, as its record."""
    rules = HouseRules(players=players, flor=True, pica_pica=players == 6)
    rng = random.Random(7)
    while True:  # a game of several hands (a random falta envido may end one at once)
        game = random_game(Game(rules), rng, policy=uniform_without_mazo)
        if game.hand_number >= 4:
            return write(game)


@pytest.fixture(params=[4])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[TableBroadcast, Clock, str]]:
    clock = Clock()
    broadcast = TableBroadcast(
        BroadcastSettings(KEY, delay_s=0, teaching=True, table_name="Final · Mesa 1",
                          team_names=NAMES), clock)  # fmt: skip
    broadcast.log = record_log(
        final_record(request.param), table="Final · Mesa 1", names=NAMES, step_s=1
    )
    server = broadcast.serve(port=0, host="127.0.0.1")
    try:
        yield broadcast, clock, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def moment_with_best_play(broadcast: TableBroadcast, clock: Clock) -> dict[str, object]:
    """The first moment of the replay, after a few cards, where the best-play line is on."""
    for t in range(len(broadcast.log.lines)):
        clock.now = float(t)
        shown = broadcast.view()
        played = sum(len(s["played"]) for s in shown["seats"])
        if shown["best"] and played >= 3 and shown["calls"]:
            return shown
    raise AssertionError("no moment with cards played, calls and the best play")


def test_a_recorded_final_on_the_broadcast_page(
    served: tuple[TableBroadcast, Clock, str], tmp_path: Path
) -> None:
    broadcast, clock, base = served
    shown = moment_with_best_play(broadcast, clock)
    page = dom(f"{base}/transmision?clave={KEY}", tmp_path, size=(1920, 1080))
    assert 'data-overflow="no"' in page, "something is drawn out of its box"
    text = re.sub(r"<[^>]+>", " ", page)
    for name in NAMES:
        assert name in text
    best = shown["best"][0]  # type: ignore[index]
    assert f"gana {best['name']}" in " ".join(text.split())
    assert shown["score"] == [0, 0] or "sticks" in page
    for seat in shown["seats"]:  # type: ignore[attr-defined]
        assert f"envido {seat['envido']}" in text
    screenshot(f"{base}/transmision?clave={KEY}", SCREENSHOTS / "broadcast.png", tmp_path,
               size=(1920, 1080))  # fmt: skip
    with urllib.request.urlopen(f"{base}/api/transmision?clave={KEY}") as r:
        assert json.loads(r.read())["seats"] == shown["seats"]
    # the browser source's overlay: no background (the stream's picture shows through)
    url = f"{base}/transmision?clave={KEY}&fondo=transparente"
    with urllib.request.urlopen(url) as r:
        assert "background:transparent" in r.read().decode()
    screenshot(url, SCREENSHOTS / "broadcast-transparent.png", tmp_path, size=(1920, 1080))


@pytest.mark.parametrize("served", [6], indirect=True)
def test_six_seats_fit_the_broadcast_page(
    served: tuple[TableBroadcast, Clock, str], tmp_path: Path
) -> None:
    broadcast, clock, base = served
    shown = moment_with_best_play(broadcast, clock)
    assert len(shown["seats"]) == 6  # type: ignore[arg-type]
    page = dom(f"{base}/transmision?clave={KEY}", tmp_path, size=(1920, 1080))
    assert 'data-overflow="no"' in page
    screenshot(f"{base}/transmision?clave={KEY}", SCREENSHOTS / "broadcast-six.png", tmp_path,
               size=(1920, 1080))  # fmt: skip
