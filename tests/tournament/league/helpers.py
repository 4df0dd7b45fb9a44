"""A small league to test with: clubs c1..cK, entrants e01..eNN spread over them."""

from __future__ import annotations

import contextlib
import datetime
import functools
import http.client
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.tournament.competition.model import Entrant, Player
from controller.tournament.league.bridge import AddedVenue
from controller.tournament.league.model import Club, League, LeagueRules
from controller.tournament.sim.mosquitto import LocalBroker, find_mosquitto


def make_league(entrants: int, clubs: int = 3, best_of: int = 3) -> League:
    club_list = tuple(Club(f"c{k}", f"Club {k}") for k in range(1, clubs + 1))
    people = tuple(
        Entrant(
            f"e{i:02d}",
            f"Equipo {i}",
            (Player(f"A{i}"), Player(f"B{i}")),
            club=club_list[(i - 1) % clubs].id,
        )
        for i in range(1, entrants + 1)
    )
    return League(
        "liga",
        club_list,
        people,
        LeagueRules.from_text(best_of, "players=4 target=30"),
        datetime.date(2027, 3, 6),
        7,
    )


@functools.cache
def bot_game() -> str:
    """A real, finished game (players=2 target=15): a bot game's record, made once."""
    from controller.engine import HouseRules
    from controller.table.run_mock import MockRun

    run = MockRun(HouseRules(target=15), seed=3, human=None)
    try:
        run.play_out()
        return run.mock.service.transcript()
    finally:
        run.close()


def two_venue_league(
    clubs: tuple[str, str] = ("c1", "c2"), first_date: datetime.date = datetime.date(2027, 3, 6)
) -> League:
    """Four single players at two venues (e01, e03 at the first), best of 3, target 15."""
    return League(
        "liga",
        tuple(Club(c, f"Sede {c}") for c in clubs),
        tuple(
            Entrant(f"e0{i}", f"Equipo {i}", (Player(f"P{i}"),), club=clubs[0 if i % 2 else 1])
            for i in range(1, 5)
        ),
        LeagueRules.from_text(3, "players=2 target=15"),
        first_date,
    )


def record_payload(
    league: League,
    secret: bytes,
    venue: str,
    table: str,
    match: str | None,
    *,
    seq: int = 7,
    game_number: int = 1,
    chico: int = 1,
) -> tuple[str, bytes]:
    """``(topic at the venue, payload)`` of ``table``'s sealed record of the bot game, as
    the table publishes it (its mac over the venue's topic)."""
    from controller.tournament.league.keys import venue_table_key
    from controller.tournament.wire.messages import signed
    from controller.tournament.wire.seal import seal
    from controller.transcript import parse, replay

    key = venue_table_key(secret, league.name, venue, table)
    game = f"{table}-g{game_number:03d}"
    text = bot_game()
    played = replay(parse(text)).game
    sealed = seal(
        text, key, key_id=f"{league.name}:{table}", game_id=game,
        tournament=league.name, table=table, match=match,
    )  # fmt: skip
    topic = f"truco/{league.name}/tables/{table}/records/{game}"
    payload = {
        "v": 1, "table": table, "seq": seq, "ts": 2000.0, "kind": "record", "game": game,
        "winner": played.winner, "score": list(played.score), "hand": played.hand_number,
        "sealed": True, "key_id": f"{league.name}:{table}", "error": None, "record": sealed,
        "match": match, "chico": chico,
    }  # fmt: skip
    return topic, signed(key, topic, payload)


def game_payloads(
    league: League,
    secret: bytes,
    venue: str,
    table: str,
    match: str | None,
    *,
    seq: int = 1,
    game_number: int = 1,
    chico: int = 1,
) -> list[tuple[str, bytes]]:
    """The bot game as ``table`` plays it at ``venue``: its events from ``seq`` on
    (:func:`~controller.tournament.sim.league.game_events`), then its sealed record
    (:func:`record_payload`). The league desk counts a record only with its events."""
    from controller.tournament.league.keys import venue_table_key
    from controller.tournament.sim.league import game_events

    key = venue_table_key(secret, league.name, venue, table)
    game = f"{table}-g{game_number:03d}"
    out = game_events(table, key, league.name, game, bot_game(), seq)
    record = record_payload(league, secret, venue, table, match, seq=seq + len(out),
                            game_number=game_number, chico=chico)  # fmt: skip
    return [*out, record]


class Client:
    """The organiser's browser as HTTP: a session cookie and its CSRF token."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookie = ""
        self.csrf = ""

    def post(self, path: str, body: dict[str, Any], *, csrf: str | None = None) -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {"Host": f"127.0.0.1:{self.port}", "Content-Type": "application/json",
                   "Origin": f"http://127.0.0.1:{self.port}",
                   "X-CSRF-Token": self.csrf if csrf is None else csrf}  # fmt: skip
        if self.cookie:
            headers["Cookie"] = self.cookie
        conn.request("POST", path, body=json.dumps(body).encode(), headers=headers)
        r = conn.getresponse()
        data = r.read()
        cookie = r.getheader("Set-Cookie")
        conn.close()
        if cookie:
            self.cookie = cookie.split(";", 1)[0]
        return r.status, json.loads(data) if data.startswith(b"{") else data.decode()

    def get(self, path: str) -> tuple[int, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {"Host": f"127.0.0.1:{self.port}"}
        if self.cookie:
            headers["Cookie"] = self.cookie
        conn.request("GET", path, headers=headers)
        r = conn.getresponse()
        text = r.read().decode("utf-8")
        conn.close()
        return r.status, text


def broker_folder(prefix: str) -> Path:
    """A temporary folder for a league's brokers (skips the test without mosquitto or
    openssl): Mosquitto's own user (run as root it drops to it) must get through."""
    if find_mosquitto() is None:
        pytest.skip("mosquitto not installed (apt-get install mosquitto; .ci/run does)")
    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed (apt-get install openssl; .ci/run does)")
    parent = Path(tempfile.mkdtemp(prefix=prefix))
    parent.chmod(0o711)
    return parent


@contextlib.contextmanager
def running_brokers(parent: Path, added: AddedVenue) -> Iterator[tuple[LocalBroker, LocalBroker]]:
    """The central broker and ``added``'s venue broker, running; ``parent`` goes at the end."""
    central = LocalBroker(
        added.central[1], workdir=parent / "run-central", config=added.central_conf
    )
    venue = LocalBroker(added.port, workdir=parent / "run-a", config=added.venue_conf)
    try:
        central.start()
        venue.start()
        yield central, venue
    finally:
        venue.close()
        central.close()
        shutil.rmtree(parent, ignore_errors=True)
