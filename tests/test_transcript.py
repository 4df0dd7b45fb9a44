"""The game record: every scenario replays to its expected JSON; malformed files name the line.

Scenario transcripts (``scenarios/*.truco``) are the main tests of the rules: each has its
hand-computed expected ``replay --json`` output beside it (``*.json``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from controller.engine import Action, Card, Game, HouseRules
from controller.transcript import (
    TranscriptError,
    dumps_result,
    parse,
    replay,
    result_json,
    write,
)

SCENARIOS = Path(__file__).with_name("scenarios")
CASES = sorted(SCENARIOS.glob("*.truco"))
MALFORMED = sorted((SCENARIOS / "malformed").glob("*.truco"))


def test_there_are_scenarios() -> None:
    assert len(CASES) >= 70 and len(MALFORMED) >= 11


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_scenario(path: Path) -> None:
    expected = json.loads(path.with_suffix(".json").read_text())
    got = result_json(replay(parse(path.read_text())))
    assert got == expected


#: The contract's own examples, copied unchanged: their comments say "refused" in words.
CONTRACT_EXAMPLES = {"four-players", "worked-hand-1", "worked-hand-2"}


def _header_expectation(
    text: str,
) -> tuple[list[int], list[tuple[int, str, int]], list[tuple[int, str]]]:
    """The score, awards (team, reason, points) and refusals (line, code) a contract
    example's header comment states in words (``# Expected: score [3, 0]; team 0
    awarded envido 2 and truco 1; rejected: line 14 not_your_turn, ...``)."""
    header = " ".join(line[1:].strip() for line in text.splitlines() if line.startswith("#"))
    said = header.split("Expected:", 1)[1]
    score = [int(n) for n in re.findall(r"score \[(\d+), (\d+)\]", said)[0]]
    team, awarded = re.findall(r"team (\d) awarded ([^;]+);", said)[0]
    awards = [
        (int(team), reason, int(points))
        for reason, points in re.findall(r"(envido|truco|flor|mazo) (\d+)", awarded)
    ]
    rejected = [(int(n), code) for n, code in re.findall(r"line (\d+) (\w+)", said)]
    assert rejected or "nothing rejected" in said
    return score, awards, rejected


@pytest.mark.parametrize("name", sorted(CONTRACT_EXAMPLES))
def test_the_contract_examples_replay_to_their_headers(name: str) -> None:
    """The three examples shipped with the rules contract (copied unchanged) replay to
    what their own header comments say, not only to the JSON beside them."""
    text = (SCENARIOS / f"{name}.truco").read_text()
    score, awards, rejected = _header_expectation(text)
    got = json.loads(dumps_result(result_json(replay(parse(text)))))  # the JSON replay prints
    assert got["score"] == score
    assert [(a["team"], a["reason"], a["points"]) for h in got["hands"] for a in h["awards"]] == (
        awards
    )
    assert [(r["line"], r["code"]) for r in got["rejected"]] == rejected


def _commented_refusals(text: str) -> list[tuple[int, str]]:
    """(line, code) of every statement whose comment starts with ``rejected CODE``."""
    out = []
    for number, raw in enumerate(text.splitlines(), start=1):
        statement, _, comment = raw.partition("#")
        words = comment.split()
        if statement.strip() and len(words) >= 2 and words[0] == "rejected":
            out.append((number, words[1].rstrip(":,")))
    return out


@pytest.mark.parametrize(
    "path",
    [p for p in CASES if p.stem not in CONTRACT_EXAMPLES],
    ids=[p.stem for p in CASES if p.stem not in CONTRACT_EXAMPLES],
)
def test_scenario_comments_name_every_refusal(path: Path) -> None:
    """The ``# rejected CODE`` comments and the expected JSON agree line for line."""
    expected = json.loads(path.with_suffix(".json").read_text())
    rejected = [(r["line"], r["code"]) for r in expected["rejected"]]
    assert _commented_refusals(path.read_text()) == rejected


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_scenario_written_back_replays_the_same(path: Path) -> None:
    """Writing out a replayed game and reading it back gives the same game."""
    first = replay(parse(path.read_text())).game
    text = write(first)
    again = replay(parse(text))
    assert not again.rejected
    assert again.game.state_key() == first.state_key()
    assert again.game.hands == first.hands


@pytest.mark.parametrize("path", MALFORMED, ids=[p.stem for p in MALFORMED])
def test_malformed_names_the_line(path: Path) -> None:
    line = int(path.with_suffix(".line").read_text())
    with pytest.raises(TranscriptError) as info:
        replay(parse(path.read_text()))
    assert info.value.line == line
    assert f"line {line}:" in str(info.value)


class TestReading:
    def test_defaults_without_table_line(self) -> None:
        result = replay(parse("hand\n0 mazo\n"))
        assert result.game.rules == HouseRules()
        assert result_json(result)["score"] == [0, 2]

    def test_case_insensitive_and_comments(self) -> None:
        text = (
            "TABLE Players=2 FLOR=On  # comment\n\nHAND\nDeal 0 : 7e 6E 5e\n"
            "DEAL 1: 1b 2b 3o\n0 FLOR\n"
        )
        result = replay(parse(text))
        assert result.game.rules.flor
        assert result_json(result)["score"] == [3, 0]

    def test_action_before_first_hand_is_hand_over(self) -> None:
        result = replay(parse("table players=2\n0 truco\nhand\n"))
        assert [(r.line, r.code.value) for r in result.rejected] == [(2, "hand_over")]

    def test_hand_after_game_won_is_ignored(self) -> None:
        text = "score 0 29\nhand\n0 mazo\nhand\ndeal 0: 1E 2E 3E\n0 truco\n"
        result = replay(parse(text))
        assert result.game.winner == 1
        assert len(result.game.hands) == 1
        assert [r.code.value for r in result.rejected] == ["game_over"]

    def test_dealer_line_applies_to_next_hand(self) -> None:
        text = "table players=4\ndealer 1\nhand\n2 mazo\nhand\n3 mazo\ndealer 0\nhand\n"
        hands = replay(parse(text)).game.hands
        assert [(h.dealer, h.mano) for h in hands] == [(1, 2), (2, 3), (0, 1)]


class TestWriting:
    def test_written_transcript(self) -> None:
        game = Game(HouseRules(players=2), score=(3, 4), dealer=0)
        game.deal(
            {
                0: [Card.from_str(c) for c in ("7C", "6C", "3E")],
                1: [Card.from_str(c) for c in ("2O", "1B", "4B")],
            }
        )
        game.push(Action.from_str("1 envido"))
        text = write(game)
        assert text.splitlines() == [
            "table players=2 target=30 flor=off falta=to_win mazo_envido_point=on "
            "claims=auto implicit_quiero=off pica_pica=off",
            "score 3 4",
            "dealer 0",
            "hand",
            "deal 0: 7C 6C 3E",
            "deal 1: 2O 1B 4B",
            "1 envido",
        ]

    def test_json_layout_is_valid_json(self) -> None:
        result = replay(parse((SCENARIOS / "four-players.truco").read_text()))
        obj = result_json(result)
        assert json.loads(dumps_result(obj)) == obj
