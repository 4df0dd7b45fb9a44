"""The league desk's count: each chico once, in the tables' order; the rest flagged."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.tournament.league.collect import collect
from controller.tournament.league.fixture import fixture
from controller.tournament.league.model import Chico
from controller.tournament.league.standings import league_standings
from controller.tournament.league.verify import LeagueRecordCheck, RecordVerdict

from .helpers import make_league

LEAGUE = make_league(4, 2)
MATCH = fixture(LEAGUE)[0]  # f01-m01 at c1
HOME, AWAY = Chico(0, (30, 12)), Chico(1, (25, 30))


def _check(
    game: str,
    number: int | None,
    chico: Chico = HOME,
    *,
    sha: str | None = None,
    verdict: RecordVerdict = RecordVerdict.COUNTED,
    match: str = MATCH.id,
) -> LeagueRecordCheck:
    return LeagueRecordCheck(
        MATCH.venue, "mesa01", game, match, verdict, "motivo",
        chico if verdict is RecordVerdict.COUNTED else None,
        sha or game.rjust(64, "0"), number,
    )  # fmt: skip


def test_chicos_count_once_in_the_tables_order() -> None:
    c1, c2, c3 = _check("g1", 1, HOME), _check("g2", 2, AWAY), _check("g3", 3, HOME)
    got = collect(LEAGUE, [c3, c1, c1, c2, c3])  # out of order, two redelivered
    assert got.played == {MATCH.id: (HOME, AWAY, HOME)}
    assert got.repeats == 2 and got.flags == ()
    assert [c.game for c in got.counted] == ["g3", "g1", "g2"]
    assert league_standings(LEAGUE, got.played)[0].entrant == MATCH.home


def test_what_does_not_count_is_flagged() -> None:
    forged = _check("g9", 1, verdict=RecordVerdict.FORGED)
    other_copy = _check("g1", 1, sha="f" * 64)
    same_chico = _check("g5", 1, AWAY)
    past = _check("g3", 3, AWAY)
    got = collect(LEAGUE, [_check("g1", 1), forged, other_copy, same_chico, _check("g2", 2), past])
    assert got.played == {MATCH.id: (HOME, HOME)}
    reasons = [(f.check.game, f.reason) for f in got.flags]
    assert reasons == [
        ("g9", "motivo"),
        ("g1", "Llegó otro registro distinto de g1 (c1)"),
        ("g5", f"El chico 1 de {MATCH.id} ya contó con g1 (mesa mesa01): g5 no cuenta"),
        ("g3", f"{MATCH.id} ya estaba definido: el chico 3 sobra"),
    ]
    assert [c.game for c in got.counted] == ["g1", "g2"]


def test_one_record_is_one_row_however_often_it_comes() -> None:
    """Issue 43: two conflicting publishes, delivered again and again (retained copies,
    redeliveries, a restart), were five rows; each record is one."""
    first, other = _check("g1", 1), _check("g1", 1, sha="f" * 64)
    flagged = _check("g7", 1, verdict=RecordVerdict.NOT_DUE)
    got = collect(LEAGUE, [first, other, other, flagged, first, other, flagged])
    assert [(f.check.game, f.check.record_sha256[:1]) for f in got.flags] == [
        ("g1", "f"),
        ("g7", "0"),
    ]
    assert got.repeats == 4 and [c.game for c in got.counted] == ["g1"]


def test_a_key_conflict_names_the_games_counted_from_its_seq() -> None:
    from dataclasses import replace

    early, late = replace(_check("g1", 1), seq=5), replace(_check("g2", 2, AWAY), seq=40)
    got = collect(LEAGUE, [early, late], [(MATCH.venue, "mesa01", 12), (MATCH.venue, "mesa01", 30)])
    [conflict] = got.conflicts  # one item per table: its first collision
    assert (conflict.seq, conflict.games) == (12, (f"g2 ({MATCH.id})",))
    assert "alguien más tiene la clave de la mesa" in conflict.text


def test_a_record_without_its_chico_number_is_the_next() -> None:
    got = collect(LEAGUE, [_check("g1", None, AWAY), _check("g2", None, HOME)])
    assert got.played == {MATCH.id: (AWAY, HOME)}


@settings(max_examples=40, deadline=None)
@given(st.permutations(range(6)), st.lists(st.integers(0, 5), max_size=6))
def test_any_arrival_order_and_repeats_give_the_same_count(
    order: list[int], again: list[int]
) -> None:
    season = fixture(LEAGUE)
    records = [
        LeagueRecordCheck(
            m.venue,
            "mesa01",
            f"{m.id}-g{n}",
            m.id,
            RecordVerdict.COUNTED,
            "",
            HOME if n == 1 else AWAY,
            f"{m.id}-{n}".rjust(64, "0"),
            n,
        )
        for m in season[:3]
        for n in (1, 2)
    ]
    arrived = [records[i] for i in order] + [records[i] for i in again]
    got = collect(LEAGUE, arrived)
    assert got.played == {m.id: (HOME, AWAY) for m in season[:3]}
    assert got.repeats == len(again) and got.flags == ()
