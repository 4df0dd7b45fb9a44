"""The organiser's night without a trap (issue 42), at the desk's own level: results as
played (a result by hand keeps the recorded points unless others are given; a walkover
on a match being played keeps its chicos; a chico played after the match was decided
by hand is said once and its *visto* takes it off for good), an action sent twice is
done once (also after a restart), sessions that survive a restart, the snapshot that
gives the same desk as the journals, the assignments' counter above every one told."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.tournament.competition.model import (
    AssignTable,
    Entrant,
    Format,
    FormatSpec,
    MatchStatus,
    OverrideResult,
    Player,
    Register,
    Start,
    Walkover,
)
from controller.tournament.desk.organiser import Organiser
from controller.tournament.desk.running import save_snapshot
from controller.tournament.desk.sessions import SESSION_S, SESSIONS_FILE, OrganiserAccess
from controller.tournament.desk.snapshot import snapshot_key
from controller.tournament.desk.state import DeskState
from controller.tournament.wire.seal import TournamentKey

from ..conftest import KEY as TABLES_KEY
from .test_desk import play
from .test_organiser import KEY, organiser, result, started


def test_a_result_by_hand_keeps_the_recorded_points_unless_others_are_given(
    tmp_path: Path,
) -> None:
    o = started(tmp_path)
    m = o.tournament.round_matches(1)[0]
    o.count(result(o, m.id, "mesa01-g001", 0))  # 15-9
    o.count(result(o, m.id, "mesa01-g002", 1))  # 11-15
    assert o.tournament.match(m.id).result.points == (26, 24)
    home = m.pairing.home
    o.do(OverrideResult(m.id, home, (2, 1), None, "planilla firmada"))
    r = o.tournament.match(m.id).result
    assert (r.games, r.points, r.status) == ((2, 1), (26, 24), MatchStatus.OVERRIDDEN)
    o.do(OverrideResult(m.id, home, (2, 1), (30, 20), "corregido"))
    assert o.tournament.match(m.id).result.points == (30, 20)
    o.close()
    again = organiser(tmp_path)  # the journal says the same after a restart
    assert again.tournament.match(m.id).result.points == (30, 20)
    again.close()


def test_a_walkover_on_a_match_in_play_and_the_chico_played_after_it(tmp_path: Path) -> None:
    o = started(tmp_path)
    m = o.tournament.round_matches(1)[0]
    assert m.pairing.away is not None
    o.count(result(o, m.id, "mesa01-g001", 0))  # 1-0 for the home side, 15-9
    o.do(Walkover(m.id, m.pairing.away, "el local se fue"))
    r = o.tournament.match(m.id).result
    assert (r.winner, r.games, r.points) == (m.pairing.away, (1, 2), (15, 9))
    assert o.assignments["mesa01"].match != m.id  # the table's assignment withdrawn
    # the table played its chico 2 anyway: it counts for nothing, said once
    assert not o.count(result(o, m.id, "mesa01-g002", 1))
    assert not o.count(result(o, m.id, "mesa01-g002", 1))
    items = [a for a in o.attention if a.what == "after-decided"]
    assert len(items) == 1 and "no cambia el resultado" in items[0].text
    assert o.dismiss(items[0].key)  # visto
    assert not [a for a in o.attention if a.what == "after-decided"]
    o.count(result(o, m.id, "mesa01-g002", 1))  # told again (a restart replays records)
    assert not [a for a in o.attention if a.what == "after-decided"]
    o.close()
    again = organiser(tmp_path)
    again.count(result(again, m.id, "mesa01-g002", 1))
    assert not [a for a in again.attention if a.what == "after-decided"]
    again.close()


def test_an_action_sent_again_is_done_once_also_after_a_restart(tmp_path: Path) -> None:
    o = started(tmp_path)
    m = o.tournament.round_matches(1)[0]
    move = AssignTable(m.id, "mesa02")
    o.do(Walkover(o.tournament.round_matches(1)[1].id, "e02", "no vino"), request="w" * 16)
    lines = o.journal.lines
    assert o.done_before("w" * 16)
    o.do(Walkover(o.tournament.round_matches(1)[1].id, "e02", "no vino"), request="w" * 16)
    assert o.journal.lines == lines  # nothing written the second time
    o.close()
    again = organiser(tmp_path)
    assert again.done_before("w" * 16) and not again.done_before("x" * 16)
    again.do(move, request="m" * 16)
    again.do(move, request="m" * 16)
    body = (tmp_path / "journal.jsonl").read_text(encoding="utf-8")
    assert body.count('"request":"mmmmmmmmmmmmmmmm"') == 1
    again.close()


def test_the_counter_goes_above_every_assignment_told_before_a_crash(tmp_path: Path) -> None:
    o = started(tmp_path)
    told = [json.loads(x) for x in (tmp_path / "assignments.jsonl").read_text().splitlines()]
    last = max(a["n"] for a in told)
    # a crash in the middle of a write: the torn line never reached a table
    with open(tmp_path / "assignments.jsonl", "ab") as f:
        f.write(b'{"v":1,"kind":"assign","table":"mes')
    again = organiser(tmp_path)  # no publish: what it would tell is kept in assignments
    again.retell()
    assert min(a.n for a in again.assignments.values()) > last
    assert again.told["mesa01"]  # what was told before the crash, still known
    again.close()
    o.close()


def test_sessions_survive_a_restart_and_expire_as_before(tmp_path: Path) -> None:
    now = [1_000_000.0]
    access = OrganiserAccess("clave-del-organizador", store=tmp_path, clock=lambda: now[0],
                             delay=lambda s: None)  # fmt: skip
    session = access.log_in("clave-del-organizador")
    assert session is not None
    stored = (tmp_path / SESSIONS_FILE).read_text()
    assert session.cookie not in stored  # only its hash
    assert (tmp_path / SESSIONS_FILE).stat().st_mode & 0o777 == 0o600
    restarted = OrganiserAccess("clave-del-organizador", store=tmp_path,
                                clock=lambda: now[0], delay=lambda s: None)  # fmt: skip
    assert restarted.may_write(session.cookie, session.csrf, None)
    # another organiser's key does not take a file it did not sign
    other = OrganiserAccess("otra-clave-distinta", store=tmp_path, clock=lambda: now[0])
    assert other.session(session.cookie) is None
    now[0] += SESSION_S + 1
    later = OrganiserAccess("clave-del-organizador", store=tmp_path, clock=lambda: now[0])
    assert later.session(session.cookie) is None  # expired, as without a restart
    restarted.log_out(session.cookie)


def test_a_forged_sessions_file_is_ignored(tmp_path: Path) -> None:
    access = OrganiserAccess("clave-del-organizador", store=tmp_path, delay=lambda s: None)
    session = access.log_in("clave-del-organizador")
    assert session is not None
    data = json.loads((tmp_path / SESSIONS_FILE).read_text())
    data["sessions"].append({"id": "0" * 64, "csrf": "x", "used": data["sessions"][0]["used"]})
    (tmp_path / SESSIONS_FILE).write_text(json.dumps(data))
    again = OrganiserAccess("clave-del-organizador", store=tmp_path)
    assert again.session(session.cookie) is None  # the whole file: not ours


@pytest.mark.parametrize("damage", ["none", "tampered", "journal-changed"])
def test_the_snapshot_gives_the_desk_the_journals_give(tmp_path: Path, damage: str) -> None:
    key = TournamentKey(TABLES_KEY.key, "t")
    folder = tmp_path / "desk"

    def desk() -> tuple[DeskState, Organiser]:
        state = DeskState("t", out_dir=folder, key=key, profile="tournament")
        o = Organiser(folder, "t", key=key, tables=("mesa01", "mesa02"), fsync=False,
                      lock=state.lock, resume=state.resumed)  # fmt: skip
        state.competition = o
        return state, o

    state, o = desk()
    play(state, "mesa01")
    save_snapshot(state, o, snapshot_key(key.key, "t"))
    seq = play(state, "mesa02")  # after the snapshot: replayed from the journal
    want = (state.snapshot()["results"], [t["seq"] for t in state.snapshot()["tables"]])
    o.close()
    state.close()
    snap = folder / "snapshot.bin"
    if damage == "tampered":
        data = bytearray(snap.read_bytes())
        data[-5] ^= 1
        snap.write_bytes(bytes(data))
    elif damage == "journal-changed":
        events = folder / "events.jsonl"
        # the same messages, other bytes: the snapshot no longer fits, the journal rules
        changed = events.read_bytes().replace(b'{"t": ', b'{"t":  ', 1)
        assert changed != events.read_bytes()
        events.write_bytes(changed)
    state, o = desk()
    assert (state.resumed is not None) == (damage == "none")
    got = (state.snapshot()["results"], [t["seq"] for t in state.snapshot()["tables"]])
    for r in [*want[0], *got[0]]:
        r.pop("checked_at", None)
    assert got == want and seq in got[1]
    o.close()
    state.close()


def test_a_desk_stopped_leaves_a_snapshot_that_fits(tmp_path: Path) -> None:
    from controller.tournament.desk.running import DeskRun

    key = TournamentKey(TABLES_KEY.key, "t")
    folder = tmp_path / "desk"

    def run() -> DeskRun:  # no broker there: the desk keeps trying, its files are what count
        return DeskRun(folder, "t", key=key, tables=["mesa01", "mesa02"], rules=None,
                       host="127.0.0.1", port=9, http_port=None)  # fmt: skip

    first = run()
    play(first.state, "mesa01")
    first.stop()
    second = run()
    try:
        assert second.state.resumed is not None
        assert second.state.resumed.events_offset == (folder / "events.jsonl").stat().st_size
        assert second.state.duplicates == 0  # nothing folded twice
        assert [r.game for r in second.state.results_list()] == ["mesa01-g001"]
    finally:
        second.stop()


def test_the_pages_visto_takes_a_competitions_item_off(tmp_path: Path) -> None:
    import urllib.request

    from .served import served_desk

    with served_desk(tmp_path / "desk", KEY, "clave-del-organizador") as (url, o):
        o.do(Register(Entrant("e01", "Los del Fondo", (Player("Ana"),))))
        o.do(Register(Entrant("e02", "La Barra", (Player("Beto"),))))
        o.do(Start(FormatSpec(Format.KNOCKOUT, team_size=1)))
        m = o.tournament.round_matches(1)[0]
        o.count(result(o, m.id, "mesa02-g001", 0, table="mesa02"))  # the wrong table

        def notes() -> list[dict[str, str]]:
            with urllib.request.urlopen(url + "/api/tournament", timeout=60) as r:
                return [a for a in json.loads(r.read())["desk"]["attention"] if "note" in a]

        (item,) = notes()
        assert "mesa02 jugó" in item["text"]
        request = urllib.request.Request(
            url + "/api/ack", data=json.dumps({"note": item["note"]}).encode(),
            headers={"Content-Type": "application/json",
                     "Authorization": "Bearer clave-del-organizador"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=60) as r:
            assert json.loads(r.read()) == {"acknowledged": 1}
        assert notes() == []


def test_one_line_is_one_line() -> None:
    from controller.tournament.desk.wording import count_of

    assert count_of(1, "línea", "líneas") == "1 línea"
    assert count_of(0, "chico", "chicos") == "0 chicos"
    assert count_of(3, "chico", "chicos") == "3 chicos"


def test_a_sheet_with_one_bad_line_says_one_line(tmp_path: Path) -> None:
    import base64
    import urllib.error
    import urllib.request

    from .served import served_desk

    sheet = b"nombre;jugador1;jugador2\nLa Barra;Carla;Dante\n;Elsa;Fito\n"
    with served_desk(tmp_path / "desk", KEY, "clave-del-organizador") as (url, _o):
        request = urllib.request.Request(
            url + "/api/organiser/import",
            data=json.dumps({"data": base64.b64encode(sheet).decode(), "team_size": 2,
                             "commit": True}).encode(),
            headers={"Content-Type": "application/json",
                     "Authorization": "Bearer clave-del-organizador"},
        )  # fmt: skip
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=60)
        said = json.loads(refused.value.read())["error"]
    assert "1 línea con problemas" in said, said
