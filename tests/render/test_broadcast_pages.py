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
from typing import Any

import pytest

from controller.engine import Action, Card, Game, HouseRules, Kind, Reason
from controller.engine.playout import random_deal
from controller.render.broadcast import record_log
from controller.table.broadcast import BroadcastSettings, TableBroadcast
from controller.table.mock_table import MockTable
from controller.transcript import parse, replay
from tests.tournament.desk.browser import SCREENSHOTS, dom, screenshot

KEY = "clave-de-prueba-0123456789"
NAMES = ("Los Pumas", "Las Leonas")


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def final_record(folder: Path, players: int = 4) -> str:
    """A final as a real table writes it: the table service on mock hardware with its
    state folder plays a game to 15 (with flor; six seats: pica-pica too), seeded random
    choices on its pads, and the game's record is read from the table's archive (the
    stored lines with their checks), as an organiser would take it."""
    rules = HouseRules(players=players, flor=True, target=15, pica_pica=players == 6)
    rng = random.Random(7)
    with MockTable(rules, state_dir=folder, seed=7) as mock:
        while mock.game.winner is None:
            if not mock.game.hand_in_progress:
                mock.deal(random_deal(rng, players))
                continue
            every = mock.game.legal_list()
            quiet = [a for a in every if a.kind not in (Kind.MAZO, Kind.FALTA_ENVIDO)]
            mock.act(rng.choice(quiet or every))
        assert mock.game.hand_number >= 3
    [archived] = (folder / "archive").iterdir()
    text = archived.read_text(encoding="utf-8")
    assert "#c=" in text  # the stored lines, with their checks
    return text


@pytest.fixture(params=[4])
def served(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[TableBroadcast, Clock, str, str]]:
    clock = Clock()
    broadcast = TableBroadcast(
        BroadcastSettings(KEY, delay_s=0, teaching=True, table_name="Final · Mesa 1",
                          team_names=NAMES), clock)  # fmt: skip
    record = final_record(tmp_path / "mesa", request.param)
    broadcast.log = record_log(record, table="Final · Mesa 1", names=NAMES, step_s=1)
    server = broadcast.serve(port=0, host="127.0.0.1")
    try:
        yield broadcast, clock, f"http://127.0.0.1:{server.server_address[1]}", record
    finally:
        server.shutdown()
        server.server_close()


def moment_with_best_play(broadcast: TableBroadcast, clock: Clock) -> dict[str, Any]:
    """The first moment of the replay, after a few cards, where the best-play line is on."""
    for t in range(len(broadcast.log.lines)):
        clock.now = float(t)
        shown = broadcast.view()
        played = sum(len(s["played"]) for s in shown["seats"])
        if shown["best"] and played >= 3 and shown["calls"]:
            return shown
    raise AssertionError("no moment with cards played, calls and the best play")


# -- what the test computes itself, from the record's text (not the server's frame) ----

SUIT_WORD = {"E": "espada", "B": "basto", "O": "oro", "C": "copa"}


def statements(record: str) -> list[str]:
    return [line.split("#", 1)[0].strip() for line in record.splitlines()
            if line.split("#", 1)[0].strip()]  # fmt: skip


def dealt_in(record: str, hand: int) -> dict[int, list[str]]:
    """Hand ``hand``'s ``deal`` lines, read from the record's text."""
    out: dict[int, list[str]] = {}
    seen = 0
    for line in statements(record):
        if line == "hand":
            seen += 1
        elif seen == hand and line.startswith("deal "):
            seat, cards = line[len("deal ") :].split(":")
            out[int(seat)] = cards.split()
    return out


def envido_of(cards: list[str], flor: bool) -> int:
    """The envido by the rules (docs/RULES.md): two cards of one suit are 20 plus their
    values (a figure is worth 0), else the best single card; with flor, three of one suit
    count their best single card."""
    value = {c: (int(c[:-1]) if int(c[:-1]) <= 7 else 0) for c in cards}
    suits = {c[-1] for c in cards}
    if flor and len(suits) == 1:
        return max(value.values())
    pairs = [20 + value[a] + value[b] for i, a in enumerate(cards) for b in cards[i + 1 :]
             if a[-1] == b[-1]]  # fmt: skip
    return max(pairs or value.values())


def game_at(record: str, shown: dict[str, Any]) -> Game:
    """The game at the moment shown: the record's statements up to the ones shown."""
    lines = statements(record)
    kept, count = [], 0
    for line in lines:
        if not line.startswith("deal "):
            count += 1
            if count > int(shown["as_of"]) + 1:  # one statement a second from 0
                break
        kept.append(line)
    return replay(parse("\n".join(kept))).game


def brute_force(game: Game) -> int:
    """The team that wins the first hand-play's bazas with everyone playing their best,
    every card tried through the engine to the hand's end (no search of ours)."""
    play = game.plays[0]
    seat = play.turn
    team = seat & 1
    for card in game.cards_in_hand(seat) or ():
        game.push(Action(seat, Kind.PLAY, card=card))
        winner = brute_force(game) if play.live else truco_winner(game)
        game.pop()
        if winner == team:
            return team
    return 1 - team


def truco_winner(game: Game) -> int:
    [award] = [a for a in game.hands[-1].awards if a.reason is Reason.TRUCO]
    return award.team


def test_a_recorded_final_on_the_broadcast_page(
    served: tuple[TableBroadcast, Clock, str, str], tmp_path: Path
) -> None:
    broadcast, clock, base, record = served
    shown = moment_with_best_play(broadcast, clock)
    page = dom(f"{base}/transmision?clave={KEY}", tmp_path, size=(1920, 1080))
    assert 'data-overflow="no"' in page, "something is drawn out of its box"
    text = " ".join(re.sub(r"<[^>]+>", " ", page).split())
    for name in NAMES:
        assert name in text
    # the cards and the envido points, from the record's own deal lines
    dealt = dealt_in(record, shown["hand"])
    assert sorted(dealt) == [0, 1, 2, 3]
    seats = re.split(r"Asiento (\d) · ", text)[1:]
    on_page = dict(zip(map(int, seats[::2]), seats[1::2], strict=True))
    for seat, cards in dealt.items():
        words = " ".join(f"{c[:-1]} {SUIT_WORD[c[-1]]}" for c in cards)
        assert words in re.sub(r" baza \d", "", on_page[seat]), (seat, on_page[seat])
        assert f"envido {envido_of(cards, flor=True)}" in on_page[seat]
    # the best-play line: the team by brute force through the engine, the line played
    # through the engine to that team's truco award, and the page saying both
    game = game_at(record, shown)
    assert [[c["card"] for c in s["cards"]] for s in shown["seats"]] == [dealt[s] for s in range(4)]
    best = shown["best"][0]
    assert best["team"] == brute_force(game)
    for step in best["line"]:
        seat, card = step.split(":")
        game.push(Action(int(seat), Kind.PLAY, card=Card.from_str(card)))
    assert truco_winner(game) == best["team"]
    assert f"gana {NAMES[best['team']]}" in text
    line = " · ".join(f"{s.split(':')[0]} → {s.split(':')[1][:-1]} de "
                      f"{SUIT_WORD[s.split(':')[1][-1]]}" for s in best["line"])  # fmt: skip
    assert line in text
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
    served: tuple[TableBroadcast, Clock, str, str], tmp_path: Path
) -> None:
    broadcast, clock, base, _ = served
    shown = moment_with_best_play(broadcast, clock)
    assert len(shown["seats"]) == 6
    page = dom(f"{base}/transmision?clave={KEY}", tmp_path, size=(1920, 1080))
    assert 'data-overflow="no"' in page
    screenshot(f"{base}/transmision?clave={KEY}", SCREENSHOTS / "broadcast-six.png", tmp_path,
               size=(1920, 1080))  # fmt: skip
