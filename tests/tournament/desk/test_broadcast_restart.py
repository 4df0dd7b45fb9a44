"""A table, then the desk, restarted in the middle of a game: the desk's broadcast and its
TV go on with the game in play (the cards of the hands that ended, who is mano, the
score) from what each keeps on disk (the table's record and outbox, the desk's journal),
instead of waiting for the next game. Real restarts: the table service on mock hardware
with its state folder, its tournament publisher with its outbox, and the desk with its
journal, each closed and started again on the same folders."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from controller.engine import CARDS, Card, HouseRules, Kind
from controller.table.mock_table import MockTable
from controller.tournament.desk import DeskState
from controller.tournament.sim.mosquitto import free_port
from controller.tournament.table.publisher import TablePublisher
from controller.tournament.wire.keys import table_key
from controller.tournament.wire.seal import TournamentKey
from controller.tournament.wire.topics import decode

RULES = HouseRules(players=2, target=30)


class Venue:
    """One table and the desk, each restartable on its own folders; the desk hears the
    table's outbox (every message the table would send to the broker), stepped by hand."""

    def __init__(self, tmp: Path, key: TournamentKey) -> None:
        self.tmp, self.key = tmp, key
        self.clock = [10_000.0]
        self.fed = 0
        self.mock: MockTable | None = None
        self.pub: TablePublisher | None = None
        self.desk = self._desk()
        self.start_table()

    def _desk(self) -> DeskState:
        desk = DeskState("t", key=self.key, out_dir=self.tmp / "desk", clock=lambda: self.clock[0])
        desk.broker_up()
        return desk

    def start_table(self) -> None:
        self.mock = MockTable(RULES, state_dir=self.tmp / "table").__enter__()
        self.pub = TablePublisher("mesa01", "127.0.0.1", free_port(),
                                  outbox_dir=self.tmp / "outbox", tournament="t",
                                  key=table_key(self.key, "t", "mesa01"))  # fmt: skip
        self.pub.attach(self.mock.service)

    def stop_table(self) -> None:
        assert self.mock is not None and self.pub is not None
        self.pub.abort()
        self.mock.__exit__(None, None, None)

    def restart_desk(self) -> None:
        self.desk.close()
        self.desk = self._desk()

    def feed(self) -> list[dict[str, Any]]:
        """What the table sent since the last feed, heard by the desk (a second each)."""
        assert self.pub is not None
        out = []
        for entry in self.pub.outbox.entries(self.fed + 1):
            self.clock[0] += 1
            self.desk.handle(f"truco/t/tables/mesa01/{entry.topic}", entry.payload)
            self.fed = entry.seq
            out.append(decode(entry.payload) or {})
        return out

    def act(self, rng: random.Random) -> None:
        assert self.mock is not None
        every = self.mock.game.legal_list()  # (no falta envido: the game goes on)
        quiet = [a for a in every if a.kind not in (Kind.MAZO, Kind.FALTA_ENVIDO)]
        self.mock.act(rng.choice(quiet or every))
        self.feed()

    def shown(self, at: float) -> dict[str, Any]:
        """The desk's broadcast at ``at`` (its delay, 120 s, applied by the desk)."""
        self.clock[0], now = at, self.clock[0]
        try:
            out = self.desk.broadcast("mesa01")
        finally:
            self.clock[0] = now
        assert out is not None
        return out

    def tv(self) -> dict[str, Any]:
        [table] = self.desk.tv()["tables"]
        return dict(table)


def cards_of(view: dict[str, Any]) -> list[list[str] | None]:
    return [None if s["cards"] is None else [c["card"] for c in s["cards"]] for s in view["seats"]]


def test_a_table_then_the_desk_restarted_mid_game(tmp_path: Path, key: TournamentKey) -> None:
    rng = random.Random(4646)
    deck = rng.sample(CARDS, 18)
    deals: list[dict[int, list[Card]]] = [
        {s: deck[6 * h + 3 * s : 6 * h + 3 * s + 3] for s in (0, 1)} for h in range(3)
    ]
    v = Venue(tmp_path, key)
    try:
        assert v.mock is not None
        # hand 1, played to its end; a quiet while (the broadcast of then is hand 1 over)
        v.mock.deal(deals[0])
        v.feed()
        while v.mock.game.hand_in_progress:
            v.act(rng)
        assert v.mock.game.winner is None
        ended_1 = v.clock[0]
        score_1 = list(v.mock.game.score)
        v.clock[0] += 1_000
        # hand 2: dealt, one card played, and the table restarts
        v.mock.deal(deals[1])
        v.feed()
        v.act(rng)
        mano_2, score_2 = v.mock.game.mano, list(v.mock.game.score)
        v.stop_table()
        v.clock[0] += 30
        v.start_table()
        assert v.mock.game.hand_number == 2 and v.mock.game.hand_in_progress  # the record's
        [state] = [m for m in v.feed() if m.get("kind") == "state"]
        assert state["hand"] == 2
        tv = v.tv()  # at once: the TV has no delay
        assert (tv["hand"], tv["mano"], tv["score"], tv["hand_over"]) == (2, mano_2, score_2, False)
        # the broadcast of 120 s after hand 1's end: that hand with its cards, not a new game
        then = v.shown(ended_1 + 121)
        assert (then["started"], then["hand"], then["hand_over"]) == (True, 1, True)
        assert then["score"] == score_1
        assert cards_of(then) == [[str(c) for c in deals[0][s]] for s in (0, 1)]
        # hand 2 goes on after the restart; its cards are said once it ends
        said: list[dict[str, Any]] = []
        while v.mock.game.hand_in_progress and v.mock.game.winner is None:
            assert v.shown(v.clock[0] + 300)["held_back"]
            start = v.fed
            v.act(rng)
            said += [decode(e.payload) or {} for e in v.pub.outbox.entries(start + 1)]
        [cards] = [m for m in said if m.get("kind") == "cards"]
        assert cards["hand"] == 2
        after = v.shown(v.clock[0] + 121)
        assert (after["hand"], after["hand_over"], after["held_back"]) == (2, True, False)
        assert cards_of(after) == [[str(c) for c in deals[1][s]] for s in (0, 1)]
        assert after["score"] == list(v.mock.game.score)
        # hand 3 dealt, and now the desk restarts: its journal gives it the game back
        v.clock[0] += 1_000
        v.mock.deal(deals[2])
        v.feed()
        v.act(rng)
        moments = (ended_1 + 121, after["as_of"] + 121, v.clock[0] + 200)
        before = [v.shown(at) for at in moments], v.tv()
        v.restart_desk()
        assert ([v.shown(at) for at in moments], v.tv() | {"online": before[1]["online"]}) == before
        assert v.tv()["mano"] == v.mock.game.mano and v.tv()["hand"] == 3
        # and hears the rest of the hand as if it had not stopped
        while v.mock.game.hand_in_progress and v.mock.game.winner is None:
            v.act(rng)
        last = v.shown(v.clock[0] + 121)
        assert last["hand"] == 3 and not last["held_back"]
        assert cards_of(last) == [[str(c) for c in deals[2][s]] for s in (0, 1)]
        assert json.dumps(last["score"]) == json.dumps(list(v.mock.game.score))
    finally:
        v.stop_table()
        v.desk.close()


def test_a_table_restarted_before_a_hands_first_action_reads_its_deal_again(
    tmp_path: Path, key: TournamentKey
) -> None:
    """The table drops a hand dealt but not played when it restarts, and reads its deal
    again: the desk follows the second reading (the same hand's number), not two hands."""
    rng = random.Random(46)
    deck = rng.sample(CARDS, 18)
    one, first, second = ({s: deck[6 * h + 3 * s : 6 * h + 3 * s + 3] for s in (0, 1)}
                          for h in range(3))  # fmt: skip
    v = Venue(tmp_path, key)
    try:
        assert v.mock is not None
        v.mock.deal(one)
        v.feed()
        while v.mock.game.hand_in_progress:
            v.act(rng)
        v.mock.deal(first)
        v.feed()
        v.stop_table()
        v.start_table()
        assert v.mock.game.hand_number == 1  # hand 2's deal dropped: read again
        v.feed()
        v.mock.deal(second)
        v.feed()
        assert v.tv()["hand"] == 2 and v.tv()["mano"] == v.mock.game.mano
        while v.mock.game.hand_in_progress and v.mock.game.winner is None:
            v.act(rng)
        shown = v.shown(v.clock[0] + 121)
        assert shown["hand"] == 2 and shown["score"] == list(v.mock.game.score)
        assert cards_of(shown) == [[str(c) for c in second[s]] for s in (0, 1)]
    finally:
        v.stop_table()
        v.desk.close()
