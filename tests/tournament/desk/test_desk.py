"""The desk without a broker: order and duplicates, gaps, records (intact, tampered,
unsealed, another game's), results, the terminal board, the web page, a restart."""

from __future__ import annotations

import csv
import io
import itertools
import json
import os
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from controller.tournament.desk import DeskState, render_board, serve_http, sticks_text, unseal
from controller.tournament.wire.keys import table_key
from controller.tournament.wire.messages import signed
from controller.tournament.wire.seal import TournamentKey, seal
from controller.tournament.wire.topics import encode

from ..conftest import KEY

PREFIX = "truco/t/tables"
RULES = (
    "table players=2 target=15 flor=off falta=to_win mazo_envido_point=on "
    "claims=declared implicit_quiero=off"
)


def won_record() -> str:
    """A real, finished game: replay a bot game's record."""
    from controller.engine import HouseRules
    from controller.engine.rules import Claims
    from controller.table.run_mock import MockRun

    run = MockRun(HouseRules(target=15, claims=Claims.DECLARED), seed=2, human=None)
    try:
        run.play_out()
        return run.mock.service.transcript()
    finally:
        run.close()


GAME = won_record()
_STATUS_N = itertools.count(1)


def key_of(table: str) -> bytes:
    """The key the desk derives for ``table`` of tournament ``t`` from the secret."""
    return table_key(KEY, "t", table).key


def sealed_for(table: str, text: str = GAME, game: str | None = None) -> str:
    """``text`` sealed as ``table`` seals its records (v2: tournament, table, game)."""
    return seal(
        text,
        key_of(table),
        key_id=f"test-key:{table}",
        game_id=game or f"{table}-g001",
        tournament="t",
        table=table,
    )


def sign(topic: str, payload: dict[str, Any]) -> tuple[str, bytes]:
    table = topic.split("/")[3]
    return topic, signed(key_of(table), topic, payload)


def event(table: str, seq: int, kind: str = "action", **fields: Any) -> tuple[str, bytes]:
    payload = {
        "v": 1,
        "table": table,
        "seq": seq,
        "ts": 1000.0 + seq,
        "kind": kind,
        "game": f"{table}-g001",
        "hand": 1,
        "score": [0, 0],
        "text": f"0 play {seq}",
        **fields,
    }
    return sign(f"{PREFIX}/{table}/events", payload)


def record_message(
    table: str, seq: int, text: str, game: str | None = None, score: list[int] | None = None
) -> tuple[str, bytes]:
    game = game or f"{table}-g001"
    payload = {
        "v": 1,
        "table": table,
        "seq": seq,
        "ts": 2000.0,
        "kind": "record",
        "game": game,
        # the finished game's winner is the team ahead (not always team 0: the bots'
        # game of GAME is won by whichever team wins it)
        "winner": 0 if score is None or score[0] > score[1] else 1,
        "score": score,
        "record": text,
    }
    return sign(f"{PREFIX}/{table}/records/{game}", payload)


def game_messages(
    table: str, first: int, text: str = GAME, *, sealed: str | None = None, game: str | None = None
) -> list[tuple[str, bytes]]:
    """A game as its table sends it: an event for each hand and its deal, one for each
    action, the one that says it was won, then its record (``sealed``: this record
    instead of ``text`` sealed), from seq ``first`` on. The record's seq is
    ``first - 1 + len(...)``."""
    from controller.tournament.sim.told import told

    game = game or f"{table}-g001"
    events = told(text)
    out = [
        event(table, first + n, kind, game=game, text=body, **fields)
        for n, (kind, body, fields) in enumerate(events)
    ]
    score = events[-1][2]["score"]
    record = sealed if sealed is not None else sealed_for(table, text, game=game)
    out.append(record_message(table, first + len(out), record, game=game, score=score))
    return out


def play(desk: DeskState, table: str, first: int = 1, text: str = GAME, **kw: Any) -> int:
    """Send ``game_messages`` to ``desk``; the record's seq."""
    messages = game_messages(table, first, text, **kw)
    for m in messages:
        desk.handle(*m)
    return first - 1 + len(messages)


def status(table: str, state: str, seq: int = 0, **fields: Any) -> tuple[str, bytes]:
    payload = {"table": table, "state": state, "seq": seq, "n": next(_STATUS_N), **fields}
    return sign(f"{PREFIX}/{table}/status", payload)


def final_score(text: str) -> list[int]:
    from controller.transcript import parse, replay

    a, b = replay(parse(text)).game.score
    return [a, b]


@pytest.fixture
def desk(tmp_path: Path, key: TournamentKey) -> DeskState:
    return DeskState("t", out_dir=tmp_path / "desk", key=key, profile="tournament")


def test_events_are_applied_once_and_in_order(desk: DeskState) -> None:
    for seq in (1, 3, 2, 2, 5, 1, 4, 3):
        desk.handle(*event("mesa01", seq))
    t = desk.tables["mesa01"]
    assert t.next_seq == 6 and t.applied == 5 and not t.buffered
    assert t.duplicates == 3 and desk.duplicates == 3
    assert list(t.last)[-5:] == [f"0 play {n}" for n in range(1, 6)]


def test_a_gap_holds_later_events_and_is_asked_for(desk: DeskState) -> None:
    desk.handle(*event("mesa01", 1), now=10.0)
    desk.handle(*event("mesa01", 4), now=10.0)
    desk.handle(*event("mesa01", 5), now=10.0)
    t = desk.tables["mesa01"]
    assert t.next_seq == 2 and sorted(t.buffered) == [4, 5]
    assert desk.gaps(now=10.1) == []  # give it a moment
    assert desk.gaps(now=11.0) == [("mesa01", 2, 3)]
    assert desk.gaps(now=11.1) == []  # not asked again at once
    desk.handle(*event("mesa01", 3), now=11.2)
    desk.handle(*event("mesa01", 2), now=11.2)
    assert t.next_seq == 6 and not t.buffered


def test_a_silent_table_that_announced_more_is_asked(desk: DeskState) -> None:
    desk.handle(*event("mesa02", 1), now=10.0)
    desk.handle(*status("mesa02", "online", seq=3), now=10.0)
    assert desk.gaps(now=10.5) == []
    assert desk.gaps(now=12.5) == [("mesa02", 2, 3)]


def test_status_online_and_offline(desk: DeskState) -> None:
    desk.handle(*status("mesa01", "online"))
    assert desk.tables["mesa01"].online is True
    desk.handle(*status("mesa01", "offline", reason="lost"))
    t = desk.tables["mesa01"]
    assert t.online is False and t.offline_reason == "lost"
    assert "CAÍDA" in render_board(desk)


def test_an_intact_record_is_saved_verified_and_scored(desk: DeskState, key: TournamentKey) -> None:
    sealed = sealed_for("mesa01")
    seq = play(desk, "mesa01")
    desk.handle(*record_message("mesa01", seq, sealed, score=final_score(GAME)))  # again
    [result] = desk.results_list()
    assert result.ok, (result.verdict, result.detail, result.problems)
    assert result.verdict == "intact" and result.key_id == "test-key:mesa01"
    assert list(result.score) == final_score(GAME) and result.winner is not None
    assert desk.out_dir is not None
    saved = (desk.out_dir / "records" / "mesa01-g001.truco").read_text(encoding="utf-8")
    assert saved == sealed and unseal(saved) == GAME
    assert desk.tables["mesa01"].games == ["mesa01-g001"]


@pytest.mark.parametrize(
    ("tamper", "verdict", "detail"),
    [
        (lambda s: s.replace("\n0 ", "\n1 ", 1), "tampered", "line"),
        (lambda s: "\n".join(s.split("\n")[:3] + s.split("\n")[4:]), "tampered", "line"),
        (lambda s: unseal(s), "unsealed", "no seal"),
    ],
    ids=["a-line-changed", "a-line-removed", "seal-stripped"],
)
def test_a_tampered_record_is_flagged(
    desk: DeskState, key: TournamentKey, tamper: Any, verdict: str, detail: str
) -> None:
    sealed = sealed_for("mesa01")
    forged = tamper(sealed)
    assert forged != sealed
    desk.handle(*record_message("mesa01", 1, forged))
    [result] = desk.results_list()
    assert result.verdict == verdict and detail in result.detail
    assert not result.ok
    assert "marcados" in render_board(desk) and result.game in render_board(desk)


def test_a_record_sealed_with_another_key_or_for_another_game(
    desk: DeskState, key: TournamentKey
) -> None:
    """Each table seals with its own key, and the seal binds tournament, table, game and
    match: no record sealed anywhere else is this game's intact result."""
    own = key_of("mesa01")
    forgeries = {
        "mesa01-g001": seal(GAME, bytes(32), key_id="other", game_id="mesa01-g001"),
        # another table's key (the shared-key attack of the old scheme)
        "mesa01-g002": sealed_for("mesa09", game="mesa01-g002"),
        # the right key, but sealed for another game
        "mesa01-g003": sealed_for("mesa01", game="mesa01-g009"),
        # the same key in another tournament
        "mesa01-g004": seal(
            GAME, own, key_id="x", game_id="mesa01-g004", tournament="otro", table="mesa01"
        ),
        # the table's key, an old v1 seal that names no tournament
        "mesa01-g005": seal(GAME, own, key_id="x", game_id="mesa01-g005"),
        # sealed for a match other than the one the record says
        "mesa01-g006": seal(
            GAME, own, key_id="x", game_id="mesa01-g006", tournament="t", table="mesa01",
            match="r2-m1",
        ),
    }  # fmt: skip
    for seq, (game, text) in enumerate(forgeries.items(), start=1):
        desk.handle(*record_message("mesa01", seq, text, game=game))
    results = {r.game: r for r in desk.results_list()}
    assert sorted(results) == sorted(forgeries)
    assert all(r.verdict == "tampered" and not r.ok for r in results.values())
    assert "sealed for game mesa01-g009" in results["mesa01-g003"].detail
    assert "sealed for tournament otro" in results["mesa01-g004"].detail
    assert "v1 seal" in results["mesa01-g005"].detail
    assert "sealed for match r2-m1" in results["mesa01-g006"].detail


def test_a_record_of_another_tables_game_is_rejected(desk: DeskState) -> None:
    desk.handle(*record_message("mesa01", 1, sealed_for("mesa05"), game="mesa05-g001"))
    assert not desk.results and desk.rejected == 1
    assert "another table's game" in desk.rejections[-1].reason


def test_a_second_different_record_of_a_game_is_kept_and_flagged(
    desk: DeskState, key: TournamentKey
) -> None:
    sealed = sealed_for("mesa01")
    seq = play(desk, "mesa01")
    desk.handle(*record_message("mesa01", seq + 1, sealed.replace("\n0 ", "\n1 ", 1)))
    [result] = desk.results_list()
    assert result.copies == 2 and not result.ok
    assert desk.out_dir is not None
    assert (desk.out_dir / "records" / "mesa01-g001.copy-2.truco").exists()


def test_records_not_under_the_profile_are_flagged(desk: DeskState, key: TournamentKey) -> None:
    friendly = GAME.replace("claims=declared", "claims=auto")
    sealed = sealed_for("mesa01", friendly)
    desk.handle(*record_message("mesa01", 1, sealed))
    [result] = desk.results_list()
    assert result.verdict == "intact" and any("claims=auto" in p for p in result.problems)


def test_only_the_exceptional_refusals_wait_for_the_referee(desk: DeskState) -> None:
    desk.handle(
        *event(
            "mesa01",
            1,
            "refusal",
            seat=1,
            action="1 play 7E",
            code="not_your_turn",
            text="# rechazado: 1 play 7E (not_your_turn)",
        )
    )
    desk.handle(*event("mesa01", 2, "refusal", seat=0, action=None, code="unknown_card", text="x"))
    desk.handle(*event("mesa01", 3, "refusal", seat=0, action=None, code="unknown_card", text="y"))
    t = desk.tables["mesa01"]
    assert [r.code for r in t.refusals] == ["not_your_turn", "unknown_card", "unknown_card"]
    assert t.refusal_counts == {"not_your_turn": 1, "unknown_card": 2}
    assert [a.seq for a in t.pending()] == [2, 3]  # the routine one is only counted
    board = render_board(desk)
    assert "mesa01 #2 asiento 0: Carta que no es del mazo de la mano: x" in board
    assert "rechazado: 1 play 7E" not in board.split("Para el árbitro")[1]
    assert desk.ack("mesa01", 1) == 0  # not an item of the list
    assert desk.ack("mesa01", 2) == 1 and [a.seq for a in t.pending()] == [3]
    assert desk.ack("mesa01") == 1 and not t.pending()
    assert desk.ack("mesa01") == 0 and desk.ack("mesa09") == 0
    assert len(t.refusals) == 3  # the history stays


def test_exports(desk: DeskState, key: TournamentKey, tmp_path: Path) -> None:
    for table in ("mesa02", "mesa01"):
        desk.handle(*event(table, 1, "new-game", text=RULES, rules=RULES))
        play(desk, table, 2)
    assert desk.out_dir is not None
    assert desk.export_due  # the second record came within a second of the first
    desk.export()
    rows = list(csv.DictReader(io.StringIO((desk.out_dir / "results.csv").read_text())))
    assert [r["game"] for r in rows] == ["mesa01-g001", "mesa02-g001"]
    assert rows[0]["verdict"] == "intact" and rows[0]["record"] == "mesa01-g001.truco"
    assert [int(rows[0]["score_0"]), int(rows[0]["score_1"])] == final_score(GAME)
    data = json.loads((desk.out_dir / "results.json").read_text())
    assert data["tournament"] == "t" and len(data["games"]) == 2
    assert {t["table"] for t in data["tables"]} == {"mesa01", "mesa02"}
    paths = desk.export(tmp_path / "elsewhere")
    assert paths is not None and all(p.exists() for p in paths)


def test_two_exports_at_once_both_complete_and_the_files_are_whole(
    desk: DeskState, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The desk's own thread and its owner (a cup's end, ``close``) may export at once:
    they write the same files through the same ``.tmp``. The first export is held at
    its first ``os.replace`` while the second starts; both must complete."""
    desk.handle(*event("mesa01", 1, "new-game", text=RULES, rules=RULES))
    play(desk, "mesa01", 2)
    real = os.replace
    held = threading.Event()
    worker: list[threading.Thread] = []

    def replace(src: Any, dst: Any) -> None:
        if worker and threading.current_thread() is worker[0] and not held.is_set():
            held.set()  # the other export starts now, while this one waits
            time.sleep(0.3)
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    errors: list[BaseException] = []

    def export() -> None:
        try:
            desk.export()
        except BaseException as error:
            errors.append(error)

    worker.append(threading.Thread(target=export))
    worker[0].start()
    assert held.wait(120)
    desk.export()
    worker[0].join(5)
    assert errors == []
    assert desk.out_dir is not None
    rows = list(csv.DictReader(io.StringIO((desk.out_dir / "results.csv").read_text())))
    assert [r["game"] for r in rows] == ["mesa01-g001"]
    assert json.loads((desk.out_dir / "results.json").read_text())["tournament"] == "t"


def test_the_exports_are_rewritten_at_most_once_a_second(
    desk: DeskState, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from controller.tournament.table import outbox

    clock = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    writes: list[str] = []

    def spied(path: Path, data: bytes, **kw: Any) -> None:
        writes.append(Path(path).name)
        outbox.atomic_write(path, data, **kw)

    monkeypatch.setattr("controller.tournament.desk.state.atomic_write", spied)
    seq = 1
    for n in range(5):  # five records within a second: one rewrite now, one put off
        seq = play(desk, "mesa01", seq, game=f"mesa01-g00{n + 1}") + 1
    assert writes.count("results.csv") == 1 and desk.export_due
    desk.flush_exports()
    assert writes.count("results.csv") == 1  # not yet
    clock[0] += 1.0
    desk.flush_exports()
    assert writes.count("results.csv") == 2 and not desk.export_due
    assert desk.out_dir is not None
    rows = list(csv.DictReader(io.StringIO((desk.out_dir / "results.csv").read_text())))
    assert len(rows) == 5


def test_a_restarted_desk_resumes(tmp_path: Path, key: TournamentKey) -> None:
    first = DeskState("t", out_dir=tmp_path / "d", key=key)
    for seq in (1, 2, 4):
        first.handle(*event("mesa01", seq))
    sealed = sealed_for("mesa01")
    first.handle(*record_message("mesa01", 5, sealed))
    first.close()
    second = DeskState("t", out_dir=tmp_path / "d", key=key)
    t = second.tables["mesa01"]
    assert t.next_seq == 3 and sorted(t.buffered) == [4, 5]
    assert second.results_list() == []  # a record is judged in its place in the stream
    second.handle(*event("mesa01", 3))
    assert t.next_seq == 6
    [result] = second.results_list()  # these events are no game: it counts for nothing
    assert result.game == "mesa01-g001" and not result.ok
    second.close()


def test_malformed_messages_are_ignored(desk: DeskState) -> None:
    desk.handle(f"{PREFIX}/mesa01/events", b"not json")
    desk.handle(f"{PREFIX}/mesa01/events", b'{"kind": "action"}')  # no seq
    desk.handle(f"{PREFIX}/<script>/events", encode({"seq": 1}))
    desk.handle("truco/other/tables/mesa01/events", encode({"seq": 1}))
    desk.handle(*record_message("mesa01", 1, "x", game="../../etc/passwd"))
    assert list(desk.tables) in ([], ["mesa01"])
    assert not desk.results and desk.received <= 1


def test_sticks_text() -> None:
    assert sticks_text(0, 30) == "   │   "
    assert sticks_text(1, 30) == "|  │   "
    assert sticks_text(17, 30) == "⧄⧄⧄│┌  "
    assert sticks_text(22, 30) == "⧄⧄⧄│⧄┌ "
    assert sticks_text(9, 15) == "⧄□ "
    assert sticks_text(33, 30) == "⧄⧄⧄│⧄⧄⧄+3"


def test_the_web_page_on_the_loopback(desk: DeskState, key: TournamentKey) -> None:
    sealed = sealed_for("mesa01")
    desk.handle(*status("mesa01", "online"))
    desk.handle(*event("mesa01", 1, "refusal", seat=1, code="card_not_in_hand", text="r"))
    desk.handle(*record_message("mesa01", 2, sealed, score=final_score(GAME)))
    server = serve_http(desk, 0)
    host, port = server.server_address[:2]
    assert host == "127.0.0.1"
    base = f"http://127.0.0.1:{port}"

    def get(path: str) -> tuple[str, bytes]:
        with urllib.request.urlopen(base + path, timeout=60) as r:
            return r.headers["Content-Type"], r.read()

    try:
        kind, page = get("/")
        assert kind.startswith("text/html") and b"/api/state" in page
        kind, body = get("/api/state")
        state = json.loads(body)
        assert state["tables"][0]["table"] == "mesa01" and state["tables"][0]["online"]
        assert state["attention_pending"] == 1 and len(state["results"]) == 1
        assert get("/results.csv")[1].startswith(b"tournament,table,game")
        assert json.loads(get("/results.json")[1])["games"][0]["game"] == "mesa01-g001"
        assert get("/records/mesa01-g001.truco")[1].decode() == sealed
        kind, png = get("/sticks/17-30.png")
        assert kind == "image/png" and png.startswith(b"\x89PNG")
        with pytest.raises(urllib.error.HTTPError):
            get("/records/..%2Fevents.jsonl")
        # acknowledging a refusal takes JSON (a cross-site form cannot send it)
        form = urllib.request.Request(base + "/api/ack", data=b"table=mesa01", method="POST")
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(form, timeout=60)
        ack = urllib.request.Request(
            base + "/api/ack",
            data=json.dumps({"table": "mesa01", "seq": 1}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(ack, timeout=60) as r:
            assert json.loads(r.read()) == {"acknowledged": 1}
        assert not desk.tables["mesa01"].pending()
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(ValueError):
        serve_http(desk, 0, host="0.0.0.0")


# ---------------------------------------------------------------------------- trust


def test_unauthenticated_messages_are_rejected_and_listed(desk: DeskState) -> None:
    topic = f"{PREFIX}/mesa01/events"
    body = {"v": 1, "table": "mesa01", "seq": 1, "kind": "score", "game": "mesa01-g001",
            "score": [14, 0], "text": "14-0"}  # fmt: skip
    desk.handle(topic, encode(body))  # no mac
    desk.handle(topic, signed(bytes(32), topic, body))  # another key's mac
    desk.handle(topic, signed(key_of("mesa02"), topic, body))  # another table's key
    assert "mesa01" not in desk.tables and desk.rejected == 3
    assert desk.rejections[0].reason == "events from mesa01 carries no mac"
    assert "the mac does not match its key" in desk.rejections[-1].reason
    board = render_board(desk)
    assert "Mensajes rechazados" in board and "3 mensajes rechazados" in board
    assert desk.snapshot()["rejections"][0]["table"] == "mesa01"


def test_a_table_outside_the_roster_is_rejected(tmp_path: Path, key: TournamentKey) -> None:
    desk = DeskState("t", key=key, tables=["mesa01", "mesa02"])
    desk.handle(*event("mesa09", 1))
    desk.handle(*status("mesa09", "online"))
    assert "mesa09" not in desk.tables and desk.rejected == 2
    assert "not a table of this tournament" in desk.rejections[-1].reason
    assert [t["table"] for t in desk.snapshot()["tables"]] == ["mesa01", "mesa02"]


def test_a_replayed_status_is_rejected(desk: DeskState) -> None:
    online = status("mesa01", "online")
    lost = status("mesa01", "offline", reason="lost")
    back = status("mesa01", "online")
    for message in (online, lost, back):
        desk.handle(*message)
    assert desk.tables["mesa01"].online is True
    desk.handle(*lost)  # the old last will, replayed
    assert desk.tables["mesa01"].online is True
    assert "replayed status" in desk.rejections[-1].reason


def test_a_seq_outside_the_window_is_rejected_and_never_asked_for(desk: DeskState) -> None:
    from controller.tournament.desk.state import WINDOW

    desk.handle(*event("mesa01", 1), now=10.0)
    desk.handle(*event("mesa01", 2 + WINDOW), now=10.0)
    t = desk.tables["mesa01"]
    assert not t.buffered and "outside the window" in desk.rejections[-1].reason
    desk.handle(*status("mesa01", "online", seq=10**9), now=10.0)
    assert t.known_seq <= 1 + WINDOW  # a status cannot stretch the window either
    gaps = desk.gaps(now=20.0)
    assert all(last - first < 500 for _, first, last in gaps)


def test_held_back_tables_and_last_seen(tmp_path: Path, key: TournamentKey) -> None:
    clock = [100.0]
    desk = DeskState("t", key=key, tables=["mesa01", "mesa02"], clock=lambda: clock[0])
    desk.broker_up()
    desk.handle(*event("mesa01", 1))
    desk.handle(*event("mesa01", 3))
    clock[0] = 112.0
    snap = desk.snapshot()
    one, two = snap["tables"]
    assert one["held_back"] == 1 and one["waiting_for"] == 2 and one["held_since"] == 100.0
    assert one["last_seen"] == 100.0 and one["silent_s"] == 12.0
    assert two["last_seen"] is None and snap["held_back"] == ["mesa01"]
    board = render_board(desk)
    assert "RETENIDA" in board and "esperando el #2" in board and "nunca" in board
    assert "12s" in board


def test_the_broker_lost_is_shown_and_since_when(key: TournamentKey) -> None:
    clock = [1000.0]
    desk = DeskState("t", key=key, clock=lambda: clock[0])
    assert "todavía sin conexión con el broker" in render_board(desk)
    desk.broker_up()
    desk.handle(*status("mesa01", "online"))
    clock[0] = 1010.0
    desk.broker_down()
    clock[0] = 1040.0
    snap = desk.snapshot()
    assert snap["broker"] == {"connected": False, "since": 1010.0, "for_s": 30.0}
    assert snap["online"] == 0
    board = render_board(desk)
    assert "SIN BROKER desde" in board and "(hace 30s)" in board
    assert " en línea " not in board.split("\n", 3)[-1]  # no row says online


def test_network_texts_lose_their_control_characters(desk: DeskState) -> None:
    nasty = "\x1b[2J\x1b[H\x9b31m\u202eFAKE\x07 0 play 1E\r"
    desk.handle(*event("mesa01", 1, text=nasty))
    desk.handle(*event("mesa01", 2, "refusal", seat=0, code="x\x1b]0;t\x07", text=nasty))
    board = render_board(desk, width=300)
    assert not any(c in board for c in "\x1b\x9b\x07\r\u202e")
    assert "FAKE 0 play 1E" in board


def test_records_under_other_house_rules_are_flagged(tmp_path: Path, key: TournamentKey) -> None:
    from controller.engine import HouseRules

    desk = DeskState("t", key=key, rules=HouseRules(players=2, target=15))
    four = GAME.replace("players=2", "players=4", 1)
    desk.handle(*event("mesa02", 1, "new-game", rules=four.split("\n", 1)[0]))
    assert any("players=4" in p for p in desk.tables["mesa02"].rules_problems)
    assert "OTRAS REGLAS" in render_board(desk, width=300)
    play(desk, "mesa01")
    play(desk, "mesa03", text=GAME.replace("target=15", "target=30", 1))
    ok, other = desk.results_list()
    assert ok.ok and not other.ok
    assert any("other house rules: target=30" in p for p in other.problems)


def test_records_at_rest_are_checked_at_start_and_on_demand(
    tmp_path: Path, key: TournamentKey
) -> None:
    first = DeskState("t", out_dir=tmp_path / "d", key=key)
    play(first, "mesa01")
    play(first, "mesa02")
    assert all(r.ok for r in first.results_list())
    path = tmp_path / "d" / "records" / "mesa01-g001.truco"
    path.write_text(path.read_text().replace("\n0 ", "\n1 ", 1))  # edited on disk
    assert first.reverify() == ["mesa01-g001"]
    assert first.results["mesa01-g001"].verdict == "tampered"
    first.close()
    second = DeskState("t", out_dir=tmp_path / "d", key=key)  # a restart checks at once
    r1, r2 = second.results_list()
    assert r1.verdict == "tampered" and "changed on disk" in r1.detail and r2.ok
    assert path.read_text() != sealed_for("mesa01")  # the desk never rewrites the evidence
    rows = list(csv.DictReader(io.StringIO((tmp_path / "d" / "results.csv").read_text())))
    assert [r["verdict"] for r in rows] == ["tampered", "intact"]
    (tmp_path / "d" / "records" / "mesa02-g001.truco").unlink()
    assert second.reverify() == ["mesa02-g001"]
    assert "gone" in second.results["mesa02-g001"].detail
    second.close()


def test_exports_carry_every_verdict_and_every_conflicting_copy(
    desk: DeskState, key: TournamentKey
) -> None:
    genuine = sealed_for("mesa01")
    seq = play(desk, "mesa01")
    desk.handle(*record_message("mesa01", seq + 1, genuine.replace("\n0 ", "\n1 ", 1)))
    assert desk.out_dir is not None
    desk.export()  # (rewritten at most once a second)
    data = json.loads((desk.out_dir / "results.json").read_text())
    [game] = data["games"]
    assert game["verdict"] == "intact" and not game["ok"] and game["sha256"]
    [copy] = game["copies"]
    assert copy["record"] == "mesa01-g001.copy-2.truco" and copy["verdict"] == "tampered"
    rows = list(csv.DictReader(io.StringIO((desk.out_dir / "results.csv").read_text())))
    assert rows[0]["copies"].startswith("mesa01-g001.copy-2.truco:tampered")


def test_a_table_that_restarted_mid_game_loses_events_not_its_result(
    tmp_path: Path, key: TournamentKey
) -> None:
    """A power cut lost one of the table's actions before its outbox had it; back up,
    the table says ``state`` under that seq and plays on: the record has the action,
    the events do not, and it still counts. An event the record does not have does
    not."""
    messages = game_messages("mesa01", 1)
    lost = next(i for i, (_, p) in enumerate(messages) if json.loads(p)["kind"] == "action")
    restart = event("mesa01", lost + 1, "state", text="", rules=RULES)
    desk = DeskState("t", out_dir=tmp_path / "a", key=key)
    for m in [*messages[:lost], restart, *messages[lost + 1 :]]:
        desk.handle(*m)
    [result] = desk.results_list()
    assert result.ok, result.problems
    other = DeskState("t", out_dir=tmp_path / "b", key=key)
    made_up = event("mesa01", lost + 2, "action", text="1 play 4E")
    for m in [*messages[:lost], restart, made_up, *messages[lost + 2 :]]:
        other.handle(*m)
    [flagged] = other.results_list()
    assert not flagged.ok
    assert any("which the record does not have" in p for p in flagged.problems)
    desk.close()
    other.close()
