"""A table's key copied off its SD card (issue 43), against the venue's real Mosquitto:
the copy plays a game offline and publishes it as the table afterwards; the desk (with
the venue's quota, as ``truco-table desk`` runs) holds it for the organiser and counts
nothing; the real table comes back, collides, the organiser re-keys it from the page
and it carries on: its next game counts."""

from __future__ import annotations

import json
import shutil
import time
import urllib.request
from pathlib import Path

from controller.cli import main
from controller.table.service import Finished, NewGame
from controller.tournament.competition.model import MatchStatus
from controller.tournament.desk.running import DeskRun
from controller.tournament.desk.state import Quota
from controller.tournament.sim.mosquitto import LocalBroker, free_port
from controller.tournament.table.link import load_tournament_settings
from controller.tournament.table.publisher import TablePublisher
from controller.tournament.venue.broker import Venue
from controller.transcript import parse, replay
from tests.helpers import wait_until

from ..desk.test_forgeries import bot_game, statements
from .test_insider import Cup

#: The venue's human pace, scaled for a test: a hand takes at least half a second.
PACE = Quota(hand_s=0.5)


class VenueCup(Cup):
    """The insider's cup, its desk run as a venue's (the quota and its pace)."""

    def desk_run(self) -> DeskRun:
        v = self.venue
        return DeskRun(self.folder, v.tournament, key=self.secret, tables=v.tables,
                       rules=self.rules, host="127.0.0.1", port=v.local_port or v.port,
                       access=self.access, http_port=0, quota=PACE)  # fmt: skip


def play(table: TablePublisher, record: str, *, hand_s: float = 0.0) -> None:
    """``record``'s game at ``table``: each hand takes ``hand_s`` seconds."""
    game = replay(parse(record)).game
    assert game.winner is not None
    table.on_event(NewGame(record.split("\n", 1)[0]))
    for statement in statements(record):
        if hand_s and statement.text.startswith(("hand", "dealer")):
            time.sleep(hand_s)
        table.on_event(statement)
    table.on_event(Finished(record, game.winner, game.score))


def post(page: str, path: str, body: dict[str, object], session: tuple[str, str]) -> object:
    cookie, csrf = session
    request = urllib.request.Request(
        page.rstrip("/") + path, json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json", "Cookie": cookie, "X-CSRF-Token": csrf,
                 "Origin": page.rstrip("/")},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def log_in(page: str, key: str) -> tuple[str, str]:
    """The organiser's session cookie and the page's CSRF token."""
    import re

    request = urllib.request.Request(
        page.rstrip("/") + "/api/entrar", json.dumps({"clave": key}).encode(), method="POST",
        headers={"Content-Type": "application/json", "Origin": page.rstrip("/")},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=10) as answer:
        cookie = answer.headers["Set-Cookie"].split(";", 1)[0]
    with urllib.request.urlopen(
        urllib.request.Request(page, headers={"Cookie": cookie}), timeout=10
    ) as answer:
        html = answer.read().decode()
    found = re.search(r'name="csrf" content="([^"]+)"', html) or re.search(
        r'csrf["\']?\s*[:=]\s*["\']([A-Za-z0-9_\-]+)', html
    )
    assert found, "no CSRF token on the organiser's page"
    return cookie, found.group(1)


def test_a_copied_key_plays_offline_is_held_and_a_rekey_lets_the_table_go_on(
    venue: Venue, armed_broker: LocalBroker, tmp_path: Path
) -> None:
    cup = VenueCup(venue, tmp_path)
    desk, match, rules = cup.desk, cup.match, cup.rules
    state = desk.state
    real_dir = tmp_path / "mesa01"
    try:
        # a power cut at mesa01: its SD card is read (the folder, its key, its outbox)
        cup.table.abort()
        thief_dir = tmp_path / "copy"
        shutil.copytree(real_dir, thief_dir)
        settings = cup.settings
        assert settings.key is not None
        # the copy plays a game offline, against no broker at all: each hand as at a
        # real table (the clock it signs with moves 20 s a hand)
        played = [time.time() - 900.0]

        def clock() -> float:
            played[0] += 2.0
            return played[0]

        copy = TablePublisher("mesa01", "127.0.0.1", free_port(), outbox_dir=thief_dir,
                              tournament=venue.tournament, key=settings.key,
                              access=settings.access, keepalive=1, clock=clock).start()  # fmt: skip
        fake = bot_game(rules, seed=11)
        play(copy, fake)
        assert copy.pending() > 0  # nothing left the copy
        copy.abort()
        # then it connects as the table: the whole game reaches the desk at once
        copy = TablePublisher("mesa01", "127.0.0.1", venue.port, outbox_dir=thief_dir,
                              tournament=venue.tournament, key=settings.key,
                              access=settings.access, keepalive=1).start()  # fmt: skip
        assert copy.flush(120)
        assert wait_until(lambda: any(r.table == "mesa01" for r in state.results_list()), 120)
        [held] = [r for r in state.results_list() if r.table == "mesa01"]
        assert held.verdict == "intact" and not held.problems  # sealed right, announced
        assert held.held is not None and "after they were played" in held.held
        assert not held.ok
        organiser = desk.organiser
        assert organiser.tournament.match(match.id).result.status is MatchStatus.ASSIGNED
        assert [g for m in organiser.tournament.matches for g in m.games] == []
        item = next(a for a in organiser.attention if a.what == "held")
        assert item.game == held.game and "retenida, no se cuenta sola" in item.text
        assert "después de jugarse" in item.text and "cargá el resultado a mano" in item.text
        copy.abort()

        # the real table comes back and begins the match: its first event collides with
        # the copy's
        real = TablePublisher("mesa01", "127.0.0.1", venue.port, outbox_dir=real_dir,
                              tournament=venue.tournament, key=settings.key,
                              access=settings.access, keepalive=1).start()  # fmt: skip
        begun = bot_game(rules, seed=12)
        real.on_event(NewGame(begun.split("\n", 1)[0]))
        real.on_event(statements(begun)[0])
        assert real.flush(120)
        assert wait_until(lambda: any(a.what == "key-conflict" for a in organiser.attention), 120)
        first = organiser.attention[0]
        assert first.what == "key-conflict" and first.table == "mesa01"
        assert "Ninguna partida contada desde ese número" in first.text  # the copy's was held
        real.close(timeout=1)

        # the organiser re-keys mesa01 from the page; someone at the table types the code
        page = desk.page
        assert page is not None
        answer = post(page, "/api/organiser/rekey", {"table": "mesa01"},
                      log_in(page, desk.organiser_key))  # fmt: skip
        assert isinstance(answer, dict) and answer["table"] == "mesa01"
        code = str(answer["code"])
        config = venue.table_dir("mesa01") / "tournament.toml"
        assert main(["rekey", "--config", str(config), code]) == 0
        assert "Clave nueva dada" in organiser.attention[0].text
        renewed = load_tournament_settings(config)
        assert renewed is not None and renewed.key is not None
        assert renewed.key.key != settings.key.key
        # the copy, still on the old key, is refused; the real table carries on
        copy = TablePublisher("mesa01", "127.0.0.1", venue.port, outbox_dir=thief_dir,
                              tournament=venue.tournament, key=settings.key,
                              access=settings.access, keepalive=1).start()  # fmt: skip
        rejected = state.rejected
        play(copy, bot_game(rules, seed=13))
        copy.flush(120)
        assert wait_until(lambda: state.rejected > rejected, 120)
        copy.abort()
        real = TablePublisher("mesa01", "127.0.0.1", venue.port, outbox_dir=real_dir,
                              tournament=venue.tournament, key=renewed.key,
                              access=renewed.access, keepalive=1).start()  # fmt: skip
        record = bot_game(rules, seed=14)
        play(real, record, hand_s=0.6)  # at the venue's pace
        assert real.flush(120)
        assert wait_until(
            lambda: (
                organiser.tournament.match(match.id).result.status
                not in (MatchStatus.ASSIGNED, MatchStatus.PLAYING)
            ),
            120,
        ), (organiser.attention, state.tables["mesa01"].summary())
        counted = [g.game for m in organiser.tournament.matches for g in m.games]
        assert len(counted) == 1 and state.results[counted[0]].ok
        real.close(timeout=1)

        # a restart keeps the new key: the desk reads its journal and agrees
        desk.power_cut()
        desk = cup.desk = cup.desk_run()
        assert [g.game for m in desk.organiser.tournament.matches for g in m.games] == counted
        assert desk.state.tables["mesa01"].rekeys == 1
        assert not desk.state.results[held.game].ok
    finally:
        cup.close()
