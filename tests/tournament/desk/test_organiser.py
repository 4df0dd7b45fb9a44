"""The desk's competition: results come only from intact records of the match's own
table; the desk pairs rounds and hands out tables by itself; every table is told
(numbered so a replay is older); a restart (or a power cut) replays the journal."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.tournament.competition.model import (
    CompetitionError,
    Entrant,
    Format,
    FormatSpec,
    MatchStatus,
    Player,
    Register,
    Start,
    Walkover,
)
from controller.tournament.desk.journal import JournalTampered
from controller.tournament.desk.organiser import Organiser
from controller.tournament.desk.records import GameResult
from controller.tournament.wire.messages import Assignment
from controller.tournament.wire.seal import TournamentKey

KEY = TournamentKey(b"k" * 32, "copa-test")
TABLES = ("mesa01", "mesa02")


def entrants(n: int) -> list[Entrant]:
    return [Entrant(f"e{i:02d}", f"Equipo {i}", (Player(f"J{i}"),)) for i in range(1, n + 1)]


def organiser(folder: Path, told: list[Assignment] | None = None) -> Organiser:
    return Organiser(folder, "copa", key=KEY, tables=TABLES,
                     publish=told.append if told is not None else None,
                     fsync=False, clock=lambda: 1000.0)  # fmt: skip


def started(folder: Path, n: int = 4, told: list[Assignment] | None = None) -> Organiser:
    o = organiser(folder, told)
    for e in entrants(n):
        o.do(Register(e))
    o.do(Start(FormatSpec(Format.KNOCKOUT, best_of=3, team_size=1)))
    return o


def result(o: Organiser, match: str, game: str, winner: int, *, table: str | None = None,
           verdict: str = "intact", problems: list[str] | None = None) -> GameResult:  # fmt: skip
    table = table or next((m.table for m in o.tournament.matches if m.id == match), None)
    score = (15, 9) if winner == 0 else (11, 15)
    return GameResult(
        "copa", table or "mesa01", game, winner, score, 12, verdict, "", "k",
        "players=2 target=15", f"{game}.truco", 1000.0, problems or [], match=match,
        sha256="ab" * 32,
    )  # fmt: skip


def test_start_pairs_round_one_and_gives_out_the_tables(tmp_path: Path) -> None:
    told: list[Assignment] = []
    o = started(tmp_path, told=told)
    t = o.tournament
    r1 = t.round_matches(1)
    assert t.round == 1 and len(r1) == 2
    assert [m.table for m in r1] == ["mesa01", "mesa02"]
    assert {a.table: a.match for a in told} == {"mesa01": r1[0].id, "mesa02": r1[1].id}
    a = o.assignments["mesa01"]
    home = t.entrant(r1[0].pairing.home)
    assert (a.home, a.chico, a.best_of, a.label) == (home.name, 1, 3, r1[0].label)
    assert a.players[0] == (home.players[0].name,)


def test_only_intact_records_of_the_matchs_own_table_count(tmp_path: Path) -> None:
    o = started(tmp_path)
    m = o.tournament.round_matches(1)[0]
    assert not o.count(result(o, m.id, "mesa01-g001", 0, verdict="tampered"))
    assert not o.count(result(o, m.id, "mesa01-g001", 0, problems=["the record ends before"]))
    assert not o.count(result(o, m.id, "mesa02-g001", 0, table="mesa02"))
    assert not o.count(result(o, "r9-m9", "mesa01-g001", 0))
    assert o.tournament.match(m.id).games == ()
    assert [a.what for a in o.attention] == [
        "record-not-counted", "record-not-counted", "wrong-table", "record-unknown-match",
    ]  # fmt: skip
    assert o.count(result(o, m.id, "mesa01-g001", 0))
    assert not o.count(result(o, m.id, "mesa01-g001", 0))  # the same game again: once
    assert len(o.tournament.match(m.id).games) == 1


def test_results_flow_into_the_next_chico_match_and_round(tmp_path: Path) -> None:
    told: list[Assignment] = []
    o = started(tmp_path, told=told)
    first, second = o.tournament.round_matches(1)
    o.count(result(o, first.id, "mesa01-g001", 0))
    assert o.assignments["mesa01"].chico == 2
    n_before = o.assignments["mesa01"].n
    o.count(result(o, first.id, "mesa01-g002", 0))
    assert o.tournament.match(first.id).result.status is MatchStatus.DECIDED
    assert o.assignments["mesa01"].match is None  # free until the round closes
    assert o.assignments["mesa01"].n > n_before
    o.count(result(o, second.id, "mesa02-g001", 1))
    o.count(result(o, second.id, "mesa02-g002", 0))
    o.count(result(o, second.id, "mesa02-g003", 1))
    t = o.tournament
    assert t.round == 2  # paired by itself: the final and the third place
    assert {m.table for m in t.round_matches(2)} == set(TABLES)
    assert all(o.assignments[table].match is not None for table in TABLES)
    extra = result(o, first.id, "mesa01-g003", 0)
    assert not o.count(extra)  # a game after the match was decided: flagged
    assert o.attention[-1].what == "extra-game"


def test_a_refused_action_writes_nothing(tmp_path: Path) -> None:
    o = started(tmp_path)
    lines = o.journal.lines
    with pytest.raises(CompetitionError):
        o.do(Walkover("r1-m01", "e99", "no vino"))
    with pytest.raises(CompetitionError):
        o.do(Register(entrants(5)[4]))  # registration is closed in a knockout
    assert o.journal.lines == lines


def test_a_restart_replays_the_journal_and_tells_the_tables_again(tmp_path: Path) -> None:
    o = started(tmp_path)
    m = o.tournament.round_matches(1)[0]
    o.count(result(o, m.id, "mesa01-g001", 0))
    before, told_n = o.tournament, o.assignments["mesa01"].n
    # a power cut: nothing closed
    told: list[Assignment] = []
    again = organiser(tmp_path, told)
    assert again.tournament == before
    again.retell()
    assert {a.table for a in told} == set(TABLES)
    mine = next(a for a in told if a.table == "mesa01")
    assert mine.match == m.id and mine.chico == 2 and mine.n >= told_n


def test_a_changed_journal_stops_the_desk(tmp_path: Path) -> None:
    o = started(tmp_path)
    o.close()
    path = tmp_path / "journal.jsonl"
    path.write_text(path.read_text(encoding="utf-8").replace("Equipo 2", "Equipo 9"),
                    encoding="utf-8")  # fmt: skip
    with pytest.raises(JournalTampered):
        organiser(tmp_path)


def test_a_long_name_is_shortened_to_what_a_table_takes(tmp_path: Path) -> None:
    from controller.tournament.wire.keys import derive_table_key
    from controller.tournament.wire.messages import signed_assignment

    o = organiser(tmp_path)
    long = (
        "Asociación Civil y Deportiva de los Amigos del Truco de la Esquina de Boedo y Alrededores"
    )
    o.do(Register(Entrant("e01", long, (Player("Ana " * 30),))))
    o.do(Register(Entrant("e02", "Los del Fondo", (Player("Beto"),))))
    o.do(Start(FormatSpec(Format.KNOCKOUT, team_size=1)))
    a = o.assignments["mesa01"]
    assert len(a.home) <= 64 and a.home.startswith("Asociación Civil") and a.home.endswith("…")
    signed_assignment(derive_table_key(KEY.key, "copa", "mesa01"), "truco/copa", a)  # no raise


def test_an_edit_while_the_desk_runs_shows(tmp_path: Path) -> None:
    clock = [1000.0]
    o = Organiser(tmp_path, "copa", key=KEY, tables=TABLES, fsync=False, clock=lambda: clock[0])
    for e in entrants(4):
        o.do(Register(e))
    clock[0] += 11
    assert o.audit_ok
    path = tmp_path / "journal.jsonl"
    path.write_text(path.read_text(encoding="utf-8").replace("Equipo 2", "Equipo 7"),
                    encoding="utf-8")  # fmt: skip
    assert o.audit_ok  # not looked at again yet
    clock[0] += 11
    assert not o.audit_ok
