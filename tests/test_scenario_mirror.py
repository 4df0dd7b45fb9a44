"""Every scenario, mirrored: seats shifted by one, so the teams swap, gives the mirrored JSON.

The scenarios pin each rule from one team's side; the rules know no side (team of seat
s is s % 2, play order is cyclic). Shifting every seat by one (``s -> s + 1``, which
swaps the teams), the dealer with it and the starting score swapped, must give the
expected JSON with every team swapped and every seat shifted. A rule written for one
team only (a ``0`` where ``team`` was meant) fails here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controller.transcript import parse, replay, result_json

SCENARIOS = Path(__file__).with_name("scenarios")
CASES = sorted(SCENARIOS.glob("*.truco"))


def _players(lines: list[str]) -> int:
    for raw in lines:
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        if words[0].lower() == "table":
            for w in words[1:]:
                key, _, value = w.partition("=")
                if key.lower() == "players":
                    return int(value)
        return 2
    return 2


def mirror_transcript(text: str) -> tuple[str, int]:
    """The transcript with every seat shifted by one and the score swapped.

    Returns the text and the line after which a ``dealer`` line was inserted (0: none),
    so that expected line numbers can follow.
    """
    lines = text.splitlines()
    n = _players(lines)
    out: list[str] = []
    inserted_after = 0
    dealer_given = False
    first_hand_seen = False
    for raw in lines:
        statement, hash_, comment = raw.partition("#")
        words = statement.split()
        tail = hash_ + comment
        if not words:
            out.append(raw)
            continue
        head = words[0].lower()
        if head == "score":
            new = f"score {words[2]} {words[1]}"
        elif head == "dealer":
            new = f"dealer {(int(words[1]) + 1) % n}"
            dealer_given = True
        elif head == "hand":
            if not first_hand_seen and not dealer_given:
                # the default first dealer is the last seat: shifted, it is seat 0
                out.append("dealer 0")
                inserted_after = len(out) - 1
            first_hand_seen = True
            dealer_given = False
            new = statement.rstrip()
        elif head == "deal":
            rest = " ".join(words[1:]).replace(":", " : ", 1).split()
            new = f"deal {(int(rest[0]) + 1) % n}: " + " ".join(rest[2:])
        elif head.isdigit():
            new = " ".join([str((int(head) + 1) % n), *words[1:]])
        else:
            new = statement.rstrip()
        out.append(new + (" " + tail if tail else ""))
    return "\n".join(out) + "\n", inserted_after


def mirror_result(expected: dict[str, Any], n: int, inserted_after: int) -> dict[str, Any]:
    def team(t: int) -> int:
        return 1 - t

    def seat(s: int) -> int:
        return (s + 1) % n

    def line(x: int) -> int:
        return x + 1 if inserted_after and x > inserted_after else x

    hands = []
    for h in expected["hands"]:
        new = dict(h, dealer=seat(h["dealer"]), mano=seat(h["mano"]))
        awards = []
        for a in h["awards"]:
            b = dict(a, team=team(a["team"]))
            if "pica" in a:
                b["pica"] = seat(a["pica"])
            awards.append(b)
        new["awards"] = awards
        hands.append(new)
    return {
        "score": expected["score"][::-1],
        "winner": None if expected["winner"] is None else team(expected["winner"]),
        "hands": hands,
        "rejected": [
            dict(r, seat=seat(r["seat"]), line=line(r["line"])) for r in expected["rejected"]
        ],
    }


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_mirrored_scenario(path: Path) -> None:
    text = path.read_text()
    expected = json.loads(path.with_suffix(".json").read_text())
    mirrored, inserted_after = mirror_transcript(text)
    n = _players(text.splitlines())
    got = result_json(replay(parse(mirrored)))
    assert got == mirror_result(expected, n, inserted_after)


def test_mirror_swaps_teams_and_shifts_seats() -> None:
    text = "table players=4\nscore 3 5\nhand\ndeal 3: 1E 2E 3E\n3 mazo  # x\n"
    mirrored, after = mirror_transcript(text)
    assert mirrored.splitlines() == [
        "table players=4",
        "score 5 3",
        "dealer 0",
        "hand",
        "deal 0: 1E 2E 3E",
        "0 mazo # x",
    ]
    assert after == 2
