"""A league matchday on this machine: three venue brokers bridged to a central one
(separate Mosquitto processes on loopback ports, configured by :func:`.bridge.add_venue`),
the league desk on the central side, and the venues' tables sending their sealed records.

``sh scripts/league`` (``python -m controller.tournament.sim.league``) plays matchday 1
of a league of six entrants at three venues (three matches, best of 3, each chico a real
bot game's record sealed with that table's key), with these faults:

- venue ``bar-b``'s uplink is cut (a TCP relay between its bridge and the central broker)
  while its match is played, and restored afterwards;
- venue ``bar-c``'s broker is stopped and started again while its uplink is cut (what it
  queued must survive on disk);
- a forged record is injected at ``bar-a``: one of its tables sends a record sealed with
  another venue's key.

It exits 0 only if the league desk's count equals what the tables played (every chico
counted once, nothing lost), the forgery was flagged and not counted, and the standings
from the desk's journal equal those computed from what was played; it prints
``key=value`` lines. What it leaves out: the tables' own outbox and resend (the records
are published by plain MQTT clients under the tables' accounts), a broker killed with
SIGKILL (Mosquitto saves its queue every ``autosave_interval`` seconds and at a clean
stop) and statuses; each game's events go before its record (:func:`game_events`), as
the league desk counts a record only with them. The matchday is the desk's today.
"""

from __future__ import annotations

import datetime
import functools
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from ..competition.model import Entrant, Player
from ..league.bridge import DESK_ACCOUNT, AddedVenue, add_venue, venue_account
from ..league.collect import Collected
from ..league.desk import LeagueDesk
from ..league.fixture import fixture
from ..league.keys import venue_table_key
from ..league.model import Chico, Club, League, LeagueMatch, LeagueRules
from ..league.standings import league_standings
from ..venue.broker import Venue
from ..wire.messages import signed
from ..wire.seal import seal
from .mosquitto import LocalBroker, free_port
from .netsim import CuttableLink, hold_port

__all__ = ["game_events", "main", "run"]

VENUES = ("bar-a", "bar-b", "bar-c")
NAME = "liga"


def _league() -> League:
    clubs = tuple(Club(v, f"Sede {v}") for v in VENUES)
    entrants = tuple(
        Entrant(f"e{i:02d}", f"Equipo {i}", (Player(f"P{i}"),), club=VENUES[(i - 1) % 3])
        for i in range(1, 7)
    )
    rules = LeagueRules.from_text(3, "players=2 target=15")
    return League(NAME, clubs, entrants, rules, datetime.date(2027, 3, 6))


@functools.cache
def bot_game(seed: int, rules: str = "players=2 target=15") -> tuple[str, int, tuple[int, int]]:
    """A real bot game's record under ``rules`` (house rules as ``key=value`` words):
    text, winner, score."""
    from ...engine import HouseRules
    from ...table.run_mock import MockRun
    from ...transcript import parse, replay

    options = dict(w.split("=") for w in rules.split())
    run = MockRun(HouseRules.from_options(options), seed=seed, human=None)
    try:
        run.play_out()
        text = run.mock.service.transcript()
    finally:
        run.close()
    game = replay(parse(text)).game
    assert game.winner is not None
    return text, game.winner, game.score


def game_events(
    table: str, key: bytes, league: str, game: str, text: str, seq: int, ts: float = 2000.0
) -> list[tuple[str, bytes]]:
    """The events ``table`` sends while it plays the game whose record is ``text``, from
    ``seq`` on, each ``(topic at the venue, payload)`` signed with its ``key``: the game
    begun, each hand with its dealer and deal (the cards dealt counted, not shown), each
    action, the game won; what the table's publisher sends, and what a desk compares a
    record with."""
    from ...transcript import parse, replay
    from ..wire.messages import Event, EventKind

    played = replay(parse(text)).game
    topic = f"truco/{league}/tables/{table}/events"
    out: list[tuple[str, bytes]] = []

    def event(kind: EventKind, body: str, **fields: Any) -> None:
        n = seq + len(out)
        message = Event(table, n, ts + n, kind, game, text=body, **fields)
        out.append((topic, signed(key, topic, message.payload())))

    rules = text.split("\n", 1)[0]
    event(EventKind.NEW_GAME, rules, rules=rules)
    lines = [raw.split("#", 1)[0].strip() for raw in text.split("\n")]
    lines = [x for x in lines if x and not x.startswith(("table", "score "))]
    hand, i = 0, 0
    while i < len(lines):
        line = lines[i]
        if line == "hand" or line.startswith("dealer "):
            hand += 1
            group = [line]
            while i + 1 < len(lines) and (
                lines[i + 1].startswith("deal ")
                or (group[-1].startswith("dealer ") and lines[i + 1] == "hand")
            ):
                i += 1
                group.append(lines[i])
            shown = [g for g in group if not g.startswith("deal ")]
            event(EventKind.DEAL, "\n".join(shown), hand=hand, dealt=len(group) - len(shown))
        else:
            event(EventKind.ACTION, line, hand=hand)
        i += 1
    assert played.winner is not None
    event(EventKind.FINISHED, f"gana el equipo {played.winner}", winner=played.winner,
          score=played.score, hand=hand)  # fmt: skip
    return out


class _Uplink:
    """A venue's internet link to the central broker: a relay (:class:`..netsim.
    CuttableLink`) that, while down, does not listen, so the bridge's attempts are refused
    as on a line with no route. (Mosquitto 2.0.11's bridge was seen to stop retrying for
    good after TLS handshakes cut short by a relay that accepts and drops: 2 runs in 12.)
    While down, the port stays bound (:func:`..netsim.hold_port`): the bridge's
    configuration names it, and a port let go was once given to another connection on a
    busy machine before the link came back (CI, 6 December 2026)."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.link = CuttableLink("127.0.0.1", port)
        self.port = self.link.port
        self.cuts = 0
        self.held: socket.socket | None = None

    @property
    def down(self) -> bool:
        return self.held is not None

    def cut(self) -> None:
        self.link.cut()
        self.link.close()
        self.held = hold_port(self.port)
        self.cuts += 1

    def restore(self) -> None:
        assert self.held is not None, "restore() of an uplink that is up"
        self.link = CuttableLink("127.0.0.1", self.target, server=self.held)
        self.held = None

    def close(self) -> None:
        if self.held is not None:
            self.held.close()
        else:
            self.link.close()


class _Table:
    """A venue's table: its account at its venue broker, its records sealed with its key."""

    def __init__(self, league: League, secret: bytes, added: AddedVenue, table: str) -> None:
        self.league, self.venue, self.table = league, added.venue, table
        self.key = venue_table_key(secret, league.name, added.venue, table)
        where = Venue(added.venue_dir, league.name, added.tables, added.desks, added.port, ())
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"{added.venue}-{table}")
        self.client.username_pw_set(table, where.password(table))
        self.client.tls_set(ca_certs=str(where.ca_file))
        self.client.reconnect_delay_set(1, 1)
        self.client.connect("127.0.0.1", added.port, 10)
        self.client.loop_start()
        self.games = 0
        self.seq = 0  # the last seq sent (events and records, as a table's outbox)

    def send(self, match: str, chico: int, text: str, winner: int, score: tuple[int, int],
             key: bytes | None = None) -> None:  # fmt: skip
        """The game as the table plays it: its events, then its sealed record (the league
        desk counts a record only with its game's events)."""
        self.games += 1
        game = f"{self.table}-g{self.games:03d}"
        for topic, data in game_events(self.table, self.key, NAME, game, text, self.seq + 1):
            self._publish(topic, data, retain=False)
            self.seq += 1
        self.seq += 1
        sealed = seal(
            text, key or self.key, key_id=f"{NAME}:{self.table}", game_id=game,
            tournament=NAME, table=self.table, match=match,
        )  # fmt: skip
        topic = f"truco/{NAME}/tables/{self.table}/records/{game}"
        payload = {
            "v": 1, "table": self.table, "seq": self.seq, "ts": 1000.0 + self.seq,
            "kind": "record", "game": game, "winner": winner, "score": list(score),
            "hand": 1, "sealed": True, "key_id": f"{NAME}:{self.table}", "error": None,
            "record": sealed, "match": match, "chico": chico,
        }  # fmt: skip
        self._publish(topic, signed(self.key, topic, payload), retain=True)

    def _publish(self, topic: str, data: bytes, *, retain: bool) -> None:
        deadline = time.monotonic() + 20
        while not self.client.is_connected():  # after its broker's restart
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.venue}/{self.table}: no broker")
            time.sleep(0.05)
        info = self.client.publish(topic, data, qos=1, retain=retain)
        info.wait_for_publish(20)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _wait(what: str, done: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _plan(
    match: LeagueMatch, to_win: int, seeds: list[int]
) -> list[tuple[str, int, tuple[int, int]]]:
    """The chicos of ``match``: bot games taken in turn until one side has ``to_win``."""
    chicos: list[tuple[str, int, tuple[int, int]]] = []
    won = [0, 0]
    while max(won) < to_win:
        game = bot_game(seeds.pop(0))
        chicos.append(game)
        won[game[1]] += 1
    return chicos


def run(out: Callable[[str], None] = print) -> bool:
    """The whole matchday with its faults; True when every check holds."""
    league = _league()
    parent = Path(tempfile.mkdtemp(prefix="truco-league-sim-"))
    parent.chmod(0o711)  # run as root, Mosquitto drops to its own user: let it through
    root = parent / "liga"
    started: list[LocalBroker] = []
    links: dict[str, _Uplink] = {}
    tables: list[_Table] = []
    desk: LeagueDesk | None = None
    try:
        central_port = free_port()
        added = {
            v: add_venue(
                root,
                v,
                ["mesa01", "mesa02"],
                ["desk"],
                league=NAME,
                central=f"127.0.0.1:{central_port}",
                port=free_port(),
                restart_timeout=(1, 1),
            )
            for v in VENUES
        }
        secret = bytes.fromhex(
            next(s for s in (root / "secret.key").read_text().split("\n") if s and s[0] != "#")
        )
        central = LocalBroker(
            central_port, workdir=parent / "central", config=added["bar-a"].central_conf
        )
        central.start()
        started.append(central)
        brokers: dict[str, LocalBroker] = {}
        for v, a in added.items():
            links[v] = _Uplink(central_port)
            conf = a.venue_conf.read_text(encoding="utf-8").replace(
                f"address 127.0.0.1:{central_port}\n", f"address 127.0.0.1:{links[v].port}\n"
            )  # each venue's uplink through its own relay, so that one can be cut
            a.venue_conf.write_text(conf, encoding="utf-8")
            brokers[v] = LocalBroker(a.port, workdir=parent / v, config=a.venue_conf)
            brokers[v].start()
            started.append(brokers[v])
        log = central.log
        _wait(
            "the bridges",
            lambda: all(
                f"as {venue_account(v)} " in log.read_text(errors="replace") for v in VENUES
            ),
        )
        desk = LeagueDesk(
            league, secret, parent / "league-desk", host="127.0.0.1", port=central_port,
            ca_file=added["bar-a"].central_ca, username=DESK_ACCOUNT,
            password=added["bar-a"].desk_password(), today=lambda: league.first_date,
        )  # fmt: skip
        desk.start()
        _wait("the league desk", desk.subscribed.is_set)
        for v in VENUES:
            for t in ("mesa01", "mesa02"):
                tables.append(_Table(league, secret, added[v], t))
        table_of = {(t.venue, t.table): t for t in tables}

        day = [m for m in fixture(league) if m.matchday == 1]
        seeds = list(range(1, 40))
        played: dict[str, list[Chico]] = {}
        sent = 0
        links["bar-b"].cut()  # bar-b's internet goes down for its match
        links["bar-c"].cut()
        for m in day:
            table = table_of[(m.venue, "mesa01")]
            chicos = _plan(m, league.rules.to_win, seeds)
            for n, (text, winner, score) in enumerate(chicos, start=1):
                table.send(m.id, n, text, winner, score)
                sent += 1
                played.setdefault(m.id, []).append(Chico(winner, score))
                if m.venue == "bar-c" and n == 1:
                    brokers["bar-c"].stop()  # its broker restarts mid-match, uplink down
                    brokers["bar-c"].start()
        # the forgery: a bar-a table sends a record sealed with a bar-b table's key
        forged_key = venue_table_key(secret, NAME, "bar-b", "mesa02")
        at_a = next(m for m in day if m.venue == "bar-a")
        text, winner, score = bot_game(seeds.pop(0))
        table_of[("bar-a", "mesa02")].send(at_a.id, 3, text, winner, score, key=forged_key)
        time.sleep(0.5)  # the links stay down a while
        links["bar-b"].restore()
        links["bar-c"].restore()
        deadline = time.monotonic() + 15  # then what has not come is counted as lost
        while time.monotonic() < deadline:
            so_far = desk.snapshot()
            if len(so_far.counted) + len(so_far.flags) >= sent + 1:
                break
            time.sleep(0.05)
        time.sleep(0.5)  # anything more (a record counted twice) would come now
        count: Collected = desk.snapshot()

        truth = {k: tuple(v) for k, v in played.items()}
        expected = league_standings(league, truth)
        got = league_standings(league, count.played)
        forged = [f for f in count.flags if f.check.table == "mesa02" and f.check.venue == "bar-a"]
        checks = {
            "nothing_lost": count.played == truth,
            "counted_once": len(count.counted) == sent,
            "forgery_flagged": len(forged) == 1 and len(count.flags) == 1,
            "standings_equal": got == expected,
        }
        out(f"venues={len(VENUES)} matches={len(day)} records_sent={sent + 1} forged=1")
        out(
            f"counted={len(count.counted)} flagged={len(count.flags)} repeats={count.repeats} "
            f"cuts={links['bar-b'].cuts + links['bar-c'].cuts} venue_restarts=1"
        )
        for f in count.flags:
            out(f"flag={f.check.venue}/{f.check.table}/{f.check.game} reason={f.reason!r}")
        for s in got:
            out(
                f"rank={s.rank} entrant={s.entrant} won={s.won} chicos={s.games_won}-{s.games_lost}"
            )
        out(" ".join(f"{k}={'yes' if v else 'no'}" for k, v in checks.items()))
        return all(checks.values())
    except RuntimeError:
        for b in started:
            out(
                f"log {b.dir.name}: "
                + b.log.read_text(errors="replace")[-1500:].replace("\n", " | ")
            )
        raise
    finally:
        if desk is not None:
            desk.stop()
        for each in tables:
            each.close()
        for link in links.values():
            link.close()
        for b in reversed(started):
            b.close()
        shutil.rmtree(parent, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        ok = run()
    except (RuntimeError, OSError) as e:
        print(f"league sim: {e}", file=sys.stderr)
        return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
