"""Every forgery of issue 17, against a real Mosquitto with the venue's configuration.

Six genuine tables (their settings, keys and accounts read from the files
``truco-table venue-broker`` provisioned) and two desks side by side, on the venue
broker: TLS, accounts, ACLs. The broker's ACLs keep every account to its own topics
(tests/tournament/venue/test_broker.py); to show that the desk does not rely on them, the
forger here holds an account allowed to write anywhere under the tournament (as a
stolen admin password or a mistaken ACL would give). While the genuine tables stand
still, each forgery is published; the desks must report it and change no score, status
or result. Then the tables play on and every genuine game is collected and verified.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from controller.engine import Claims, HouseRules
from controller.table.run_mock import MockRun
from controller.table.service import Accepted, Finished, NewGame, Refused
from controller.tournament.desk import Desk, DeskState, render_board
from controller.tournament.sim.mosquitto import LocalBroker
from controller.tournament.sim.netsim import CuttableLink
from controller.tournament.table.link import load_tournament_settings
from controller.tournament.table.publisher import TablePublisher
from controller.tournament.venue.access import BrokerAccess
from controller.tournament.venue.broker import Venue
from controller.tournament.wire.keys import derive_table_key, table_key
from controller.tournament.wire.messages import resend_topic, signed
from controller.tournament.wire.seal import load_key, seal
from controller.transcript import parse, replay
from tests.helpers import wait_until


def final_score(text: str) -> tuple[int, int]:
    return replay(parse(text)).game.score


TOURNAMENT_RULES = HouseRules(players=2, target=15, claims=Claims.DECLARED)
GENUINE = ("mesa01", "mesa02", "mesa03", "mesa04", "mesa05", "mesa06")


def statements(text: str) -> list[Accepted]:
    """A record's statements as its table's service reports them while the game is
    played: a hand with its dealer and deal in one, then each action."""
    out: list[Accepted] = []
    hand = 0
    for raw in text.split("\n"):
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith(("table", "score ")):
            continue
        joins = line.startswith("deal ") or (
            line == "hand" and out and out[-1].text.startswith("dealer ")
        )
        if line == "hand":
            hand += 1
        if joins and out:
            out[-1] = Accepted(out[-1].text + "\n" + line, (0, 0), hand)
        else:
            out.append(Accepted(line, (0, 0), hand))
    return out


def bot_game(rules: HouseRules, seed: int) -> str:
    run = MockRun(rules, seed=seed, human=None)
    try:
        run.play_out()
        return run.mock.service.transcript()
    finally:
        run.close()


@pytest.fixture(scope="module")
def games() -> dict[str, str]:
    """A real, finished record for each table; mesa06's under other house rules."""
    out = {t: bot_game(TOURNAMENT_RULES, seed=n) for n, t in enumerate(GENUINE[:5])}
    out["mesa06"] = bot_game(HouseRules(players=2, target=30, claims=Claims.DECLARED), seed=9)
    return out


class Client:
    """A plain MQTT client of the venue broker (the forger, or a probe)."""

    def __init__(self, venue: Venue, user: str, password: str, subscribe: str | None = None):
        self.messages: list[tuple[str, bytes, bool]] = []
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"{user}-{time.time_ns()}")
        BrokerAccess(user, password, venue.ca_file).apply(self.client)
        self.client.on_message = lambda c, u, m: self.messages.append(
            (m.topic, bytes(m.payload), bool(m.retain))
        )
        self.client.connect("127.0.0.1", venue.port, 10)
        self.client.loop_start()
        if subscribe is not None:
            self.client.subscribe(subscribe, qos=1)
        time.sleep(0.3)

    def publish(self, topic: str, payload: bytes, *, retain: bool = False) -> None:
        self.client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(5)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def what_counts(state: DeskState) -> dict[str, Any]:
    """Everything a forgery must not change: each table's status, game, hand, score,
    seq and games; each result's verdict, score and winner; which tables there are."""
    with state.lock:
        return {
            "tables": {
                t.table: (
                    t.online,
                    t.offline_reason,
                    t.game,
                    t.hand,
                    t.score,
                    t.next_seq,
                    len(t.refusals),
                    len(t.attention),
                    tuple(t.games),
                    t.known_seq,
                )
                for t in state.tables.values()
            },
            "results": {
                r.game: (r.verdict, r.score, r.winner, r.ok, r.copies)
                for r in state.results.values()
            },
        }


def test_every_forgery_is_rejected_and_the_genuine_games_are_collected(
    venue: Venue, armed_broker: LocalBroker, games: dict[str, str], tmp_path: Path
) -> None:
    secret = load_key(venue.desk_dir("desk1") / "secret.key", kind="key-file")
    base = f"truco/{venue.tournament}/tables"
    desks: list[Desk] = []
    for name in ("desk1", "desk2"):
        folder = venue.desk_dir(name)
        state = DeskState(
            venue.tournament,
            out_dir=tmp_path / name,
            key=secret,
            profile="tournament",
            tables=venue.tables,
            rules=TOURNAMENT_RULES,
        )
        access = BrokerAccess(name, venue.password(name), folder / "ca.crt")
        desks.append(Desk(state, "127.0.0.1", venue.port, access=access, reverify_s=0.5).start())
    assert all(d.connected.wait(120) for d in desks)
    states = [d.state for d in desks]

    def every(predicate: Callable[[DeskState], bool], timeout: float = 10.0) -> bool:
        """``predicate`` holds at both desks (within ``timeout`` s)."""
        return wait_until(lambda: all(predicate(s) for s in states), timeout)

    # mesa04 reaches the broker through a link the test can cut (its last will is
    # captured, to be replayed later)
    link = CuttableLink("127.0.0.1", venue.port)
    tables: dict[str, TablePublisher] = {}
    for table in GENUINE:
        settings = load_tournament_settings(venue.table_dir(table) / "tournament.toml")
        assert settings is not None and settings.key is not None
        port = link.port if table == "mesa04" else venue.port
        tables[table] = TablePublisher(
            table,
            "127.0.0.1",
            port,
            outbox_dir=tmp_path / "tables" / table,
            tournament=settings.name,
            key=settings.key,
            access=settings.access,
            keepalive=1,
        ).start()
    intruder = Client(venue, "intruder", "intruder-password", subscribe=f"{base}/#")
    try:
        assert all(t.connected.wait(120) for t in tables.values())
        # phase A: each table starts its game and plays a little
        for table, pub in tables.items():
            pub.on_event(NewGame(games[table].split("\n", 1)[0]))
            for statement in statements(games[table])[:4]:
                pub.on_event(statement)
        # a genuine text with escape sequences: applied, but never printed raw
        tables["mesa01"].on_event(Refused(0, "0 mazo \x1b[2J\x1b[H FAKE BOARD", "not_your_turn"))
        assert all(t.flush(10) for t in tables.values())
        assert every(lambda s: "FAKE BOARD" in render_board(s, width=200))
        assert not any("\x1b" in render_board(s, width=200) for s in states)
        assert every(lambda s: all(
            t in s.tables and bool(s.tables[t].online) and not s.tables[t].buffered
            and s.tables[t].next_seq == tables[t].outbox.last_seq + 1
            for t in GENUINE
        ))  # fmt: skip
        old_event = next(
            p for t, p, _ in intruder.messages if t == f"{base}/mesa01/events"
        )  # a genuine message, to be replayed later
        link.cut()  # mesa04's last will says offline...
        assert wait_until(lambda: states[0].tables["mesa04"].online is False)

        def wills() -> list[bytes]:
            return [
                p
                for t, p, _ in list(intruder.messages)
                if t == f"{base}/mesa04/status" and json.loads(p)["state"] == "offline"
            ]

        assert wait_until(lambda: bool(wills()))
        old_will = wills()[-1]
        link.restore()  # ...and it comes back online
        assert every(lambda s: bool(s.tables["mesa04"].online), 15)
        assert tables["mesa04"].flush(10)
        time.sleep(0.5)

        def forge(what: str, topic: str, payload: bytes, *, retain: bool = False,
                  reason: str, duplicate: bool = False) -> None:  # fmt: skip
            """Publish one forgery; every desk reports it and changes nothing."""
            before = [what_counts(s) for s in states]
            counts = [(s.rejected, s.duplicates) for s in states]
            intruder.publish(topic, payload, retain=retain)
            if duplicate:
                assert every(lambda s: s.duplicates > counts[states.index(s)][1]), what
            else:
                assert every(lambda s: s.rejected > counts[states.index(s)][0]), what
                for state in states:
                    assert reason in state.rejections[-1].reason, (what, state.rejections[-1])
            time.sleep(0.2)
            assert [what_counts(s) for s in states] == before, what

        def event(table: str, seq: int, **fields: Any) -> dict[str, Any]:
            return {"v": 1, "table": table, "seq": seq, "ts": time.time(), "kind": "score",
                    "game": f"{table}-g001", "hand": 1, "score": [14, 0], "text": "14-0",
                    **fields}  # fmt: skip

        next5 = states[0].tables["mesa05"].next_seq
        # 1. an event a few seqs ahead, 14-0 at mesa05: no mac, then another table's mac
        topic = f"{base}/mesa05/events"
        forge("event ahead, unsigned", topic, json.dumps(event("mesa05", next5 + 2)).encode(),
              reason="carries no mac")  # fmt: skip
        mesa02_key = derive_table_key(secret.key, venue.tournament, "mesa02")
        forge("event ahead, mesa02's key", topic,
              signed(mesa02_key, topic, event("mesa05", next5 + 2)),
              reason="does not match")  # fmt: skip
        # 2. a record of mesa05's game before the real one: 0-0, unsealed / sealed with
        #    the secret itself (the old shared key)
        forged_text = games["mesa05"].split("\n", 1)[0] + "\n"
        rtopic = f"{base}/mesa05/records/mesa05-g001"
        record = {"v": 1, "table": "mesa05", "seq": next5, "ts": time.time(), "kind": "record",
                  "game": "mesa05-g001", "winner": 0, "score": [0, 0], "sealed": True,
                  "record": seal(forged_text, secret.key, key_id="x", game_id="mesa05-g001",
                                 tournament=venue.tournament, table="mesa05")}  # fmt: skip
        forge("record first", rtopic, json.dumps(record).encode(), retain=True,
              reason="carries no mac")  # fmt: skip
        forge("record first, secret's mac", rtopic, signed(secret.key, rtopic, record),
              retain=True, reason="does not match")  # fmt: skip
        # 3. a retained "offline" status for a playing table
        stopic = f"{base}/mesa03/status"
        offline = {"v": 1, "table": "mesa03", "state": "offline", "reason": "lost", "seq": 0,
                   "ts": time.time(), "n": 10**9}  # fmt: skip
        forge("offline status", stopic, json.dumps(offline).encode(), retain=True,
              reason="carries no mac")  # fmt: skip
        # 4. a phantom table
        for kind, payload in (
            ("status", {"state": "online", "n": 1}),
            ("events", event("mesa99", 1)),
        ):
            ptopic = f"{base}/mesa99/{kind}"
            forge(f"phantom {kind}", ptopic, signed(bytes(32), ptopic, payload),
                  reason="not a table of this tournament")  # fmt: skip
        # 5. a very high seq: unsigned, and signed with mesa02's own (stolen) key
        htopic = f"{base}/mesa02/events"
        forge("huge seq", htopic, json.dumps(event("mesa02", 10**9)).encode(),
              reason="carries no mac")  # fmt: skip
        forge("huge seq, right key", htopic, signed(mesa02_key, htopic, event("mesa02", 10**9)),
              reason="outside the window")  # fmt: skip
        # 6. a forged resend request: the table serves none of it
        published = len(intruder.messages)
        intruder.publish(resend_topic(venue.tournament, "desk1", "mesa01"),
                         json.dumps({"from": 1, "to": 10_000, "n": 10**18}).encode())  # fmt: skip
        time.sleep(1.0)
        resent = [t for t, _, _ in intruder.messages[published:] if t.startswith(f"{base}/mesa01")]
        assert resent == [] and tables["mesa01"].refused_resends == 1
        # 7. another table's game: mesa02 (its own account and key) sends mesa05's game
        other = table_key(secret, venue.tournament, "mesa02")
        sealed = seal(games["mesa05"], other.key, key_id=other.key_id, game_id="mesa05-g001",
                      tournament=venue.tournament, table="mesa02")  # fmt: skip
        otopic = f"{base}/mesa02/records/mesa05-g001"
        mesa02_next = states[0].tables["mesa02"].next_seq
        cross = record | {"table": "mesa02", "seq": mesa02_next, "record": sealed,
                          "score": list(final_score(games["mesa05"]))}  # fmt: skip
        forge("another table's game", otopic, signed(mesa02_key, otopic, cross),
              reason="another table's game")  # fmt: skip
        # 8. escape sequences in a forged text
        forge("escapes", topic,
              json.dumps(event("mesa05", next5, text="\x1b[2J\x1b[H\x1b[31mFAKE")).encode(),
              reason="carries no mac")  # fmt: skip
        # 9. a record sealed in another tournament (its own key there)
        elsewhere = derive_table_key(secret.key, "otro-torneo", "mesa05")
        foreign = record | {"record": seal(games["mesa05"], elsewhere, key_id="y",
                                           game_id="mesa05-g001", tournament="otro-torneo",
                                           table="mesa05")}  # fmt: skip
        forge("another tournament", rtopic, signed(elsewhere, rtopic, foreign), retain=True,
              reason="does not match")  # fmt: skip
        # 10. replays of genuine messages: mesa04's old last will, mesa01's first event
        forge("old will replayed", f"{base}/mesa04/status", old_will, retain=True,
              reason="replayed status")  # fmt: skip
        forge("old event replayed", f"{base}/mesa01/events", old_event, duplicate=True,
              reason="")  # fmt: skip

        # phase B: the tables finish their games; every genuine record is collected
        for table, pub in tables.items():
            text = games[table]
            game = replay(parse(text)).game
            assert game.winner is not None
            for statement in statements(text)[4:]:
                pub.on_event(statement)
            pub.on_event(Finished(text, game.winner, game.score))
        assert all(t.flush(10) for t in tables.values())
        assert every(lambda s: len(s.results) == len(GENUINE), 15)
        for state in states:
            results = {r.game: r for r in state.results_list()}
            assert sorted(results) == [f"{t}-g001" for t in GENUINE]
            for table in GENUINE:
                r = results[f"{table}-g001"]
                assert r.verdict == "intact", (r.game, r.detail)
                assert r.copies == 1 and r.score == final_score(games[table])
                assert r.ok == (table != "mesa06"), (r.game, r.problems)
            mesa06 = results["mesa06-g001"]
            assert not mesa06.ok and any("target=30" in p for p in mesa06.problems)
            assert state.tables["mesa06"].rules_problems  # flagged live, too
            assert state.tables["mesa03"].online and state.tables["mesa04"].online
            assert "mesa99" not in state.tables
            assert all(s.tables[t].duplicates <= 1 for s in states for t in GENUINE)
            board = render_board(state, width=200)
            assert "\x1b" not in board, [line for line in board.splitlines() if "\x1b" in line]
            assert "Mensajes rechazados" in board
            snap = state.snapshot()
            assert snap["rejected"] == 13 and all(t["last_seen"] for t in snap["tables"])
        # two desks side by side: each kept its own session, neither kicked the other
        assert [d.connections for d in desks] == [1, 1]
        assert what_counts(states[0]) == what_counts(states[1])

        # a record edited on disk is shown tampered at the next check (every 0.5 s)
        path = tmp_path / "desk2" / "records" / "mesa01-g001.truco"
        path.write_text(path.read_text().replace("\n0 ", "\n1 ", 1))
        assert wait_until(lambda: states[1].results["mesa01-g001"].verdict == "tampered", 5)
        assert "ALTERADO" in render_board(states[1], width=200)
        # the export is rewritten after the verdict changes (the state first, then the file)
        csv_path = tmp_path / "desk2" / "results.csv"
        assert wait_until(lambda: "tampered" in csv_path.read_text(), 5)
        rows = csv_path.read_text()
        assert "mesa01-g001" in rows and "tampered" in rows

        # the broker goes: both desks say so, and since when; no table shows online
        armed_broker.stop()
        assert every(lambda s: s.broker_connected is False)
        for state in states:
            snap = state.snapshot()
            assert snap["broker"]["since"] is not None and snap["online"] == 0
            assert "SIN BROKER desde" in render_board(state)
    finally:
        intruder.close()
        for pub in tables.values():
            with contextlib.suppress(Exception):
                pub.close(timeout=0.5)
        for desk in desks:
            desk.stop()
        link.close()
