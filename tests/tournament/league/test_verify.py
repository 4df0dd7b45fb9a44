"""The league desk's check of a sealed record: the venue's derived table key, the match
assigned to that venue, the league's house rules; each refusal in Spanish."""

from __future__ import annotations

import dataclasses
import datetime

import pytest

from controller.tournament.competition.model import Entrant, Player
from controller.tournament.league.fixture import fixture
from controller.tournament.league.keys import venue_table_key
from controller.tournament.league.model import Chico, Club, League, LeagueMatch, LeagueRules
from controller.tournament.league.standings import league_standings
from controller.tournament.league.verify import (
    RecordVerdict,
    check_league_record,
    split_league_topic,
)
from controller.tournament.wire.messages import Record
from controller.tournament.wire.seal import seal
from controller.transcript import parse, replay

from .helpers import bot_game

SECRET = bytes(range(32))
LEAGUE = League(
    "liga",
    (Club("c1", "Bar Uno"), Club("c2", "Club Dos")),
    tuple(
        Entrant(f"e0{i}", f"Equipo {i}", (Player(f"P{i}"),), club="c1" if i % 2 else "c2")
        for i in range(1, 5)
    ),
    LeagueRules.from_text(3, "players=2 target=15"),
    datetime.date(2027, 3, 6),
)


GAME = bot_game()
PLAYED = replay(parse(GAME)).game


def _at(venue: str) -> LeagueMatch:
    return next(m for m in fixture(LEAGUE) if m.venue == venue)


def _record(
    match: str | None,
    *,
    venue: str = "c1",
    table: str = "mesa01",
    text: str = GAME,
    secret: bytes = SECRET,
    score: tuple[int, int] | None = None,
) -> Record:
    sealed = seal(
        text,
        venue_table_key(secret, "liga", venue, table),
        key_id=f"liga:{table}",
        game_id=f"{table}-g001",
        tournament="liga",
        table=table,
        match=match,
    )
    return Record(
        table, 7, 2000.0, f"{table}-g001", PLAYED.winner, score, 5, True, f"liga:{table}",
        None, sealed, match, 1,
    )  # fmt: skip


def test_a_record_of_the_venues_own_match_counts_as_its_chico() -> None:
    m = _at("c1")
    check = check_league_record(LEAGUE, SECRET, "c1", "mesa01", _record(m.id, score=PLAYED.score))
    assert check.verdict is RecordVerdict.COUNTED and check.counted
    assert PLAYED.winner is not None
    assert check.chico == Chico(PLAYED.winner, PLAYED.score)
    assert check.reason == f"Cuenta para {m.id} (Fecha {m.matchday} (ida))"
    assert (check.venue, check.table, check.game, check.match) == (
        "c1",
        "mesa01",
        "mesa01-g001",
        m.id,
    )
    assert len(check.record_sha256) == 64
    # what it counts is what the standings count
    table = league_standings(LEAGUE, {m.id: (check.chico, check.chico)})
    winner = m.home if PLAYED.winner == 0 else m.away
    assert table[0].entrant == winner and table[0].won == 1


@pytest.mark.parametrize(
    ("make", "verdict", "words"),
    [
        # sealed by c2's mesa01 (same table name, another venue's key), sent under c1
        (lambda m: _record(m, venue="c2"), RecordVerdict.FORGED, "con otra clave"),
        (
            lambda m: _record(m, secret=bytes(32)),
            RecordVerdict.FORGED,
            "El sello no es el de mesa01",
        ),
        (lambda m: _record(m, table="mesa02"), RecordVerdict.FORGED, "con otra clave"),
        (lambda m: _record(None), RecordVerdict.NOT_A_MATCH, "ningún partido"),
        (lambda m: _record("f99-m01"), RecordVerdict.NOT_A_MATCH, "f99-m01 no está en el fixture"),
        (lambda m: _record(_at("c2").id), RecordVerdict.WRONG_VENUE, "se juega en la sede c2"),
        (lambda m: _record(m, score=(0, 0)), RecordVerdict.PROBLEMS, "la mesa informó 0-0"),
    ],
)
def test_a_record_that_does_not_count_says_why(
    make: object, verdict: RecordVerdict, words: str
) -> None:
    record = make(_at("c1").id)  # type: ignore[operator]
    check = check_league_record(LEAGUE, SECRET, "c1", "mesa01", record)
    assert check.verdict is verdict and not check.counted and check.chico is None
    assert words in check.reason, check.reason


def test_a_changed_line_and_no_seal() -> None:
    m = _at("c1").id
    good = _record(m)
    lines = good.record.split("\n")
    at = next(i for i, line in enumerate(lines) if line[:1].isdigit())
    lines[at] = "1" + lines[at][1:] if lines[at][0] == "0" else "0" + lines[at][1:]
    changed = dataclasses.replace(good, record="\n".join(lines))
    check = check_league_record(LEAGUE, SECRET, "c1", "mesa01", changed)
    assert check.verdict is RecordVerdict.FORGED and f"línea {at + 1}" in check.reason
    plain = dataclasses.replace(good, record=GAME, sealed=False)
    assert (
        check_league_record(LEAGUE, SECRET, "c1", "mesa01", plain).verdict is RecordVerdict.UNSEALED
    )


def test_other_house_rules_and_an_unknown_venue() -> None:
    m = _at("c1").id
    thirty = dataclasses.replace(LEAGUE, rules=LeagueRules.from_text(3, "players=2 target=30"))
    check = check_league_record(thirty, SECRET, "c1", "mesa01", _record(m))
    assert check.verdict is RecordVerdict.PROBLEMS and "otras reglas: target=15" in check.reason
    check = check_league_record(LEAGUE, SECRET, "c9", "mesa01", _record(m, venue="c9"))
    assert check.verdict is RecordVerdict.UNKNOWN_VENUE and "'c9'" in check.reason


def test_split_league_topic() -> None:
    assert split_league_topic("league/c1/tables/mesa01/records/mesa01-g001") == (
        "c1",
        "mesa01",
        "mesa01-g001",
    )
    for topic in (
        "league/c1/tables/mesa01/events",
        "truco/liga/tables/mesa01/records/g",
        "league//tables/mesa01/records/g",
        "league/c1/tables/mesa01/records/g/x",
    ):
        assert split_league_topic(topic) is None
