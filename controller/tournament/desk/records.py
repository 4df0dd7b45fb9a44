"""The desk's records: each game's result judged from its record, and the records on
disk checked against what was collected.

:class:`RecordJudge` gives a record's verdict: ``intact`` only with a v2 seal of the
table's own key for this tournament, table, game and match (``tampered``, ``unsealed``,
``unreadable`` otherwise; ``unchecked`` at a desk without the secret), and the result
replayed from the record itself, with its problems (not won, another score than the
table reported, outside the profile, other house rules than the tournament's).
:func:`check_at_rest` compares the files in ``records/`` with what was collected.
"""

from __future__ import annotations

import datetime
import hashlib
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ...engine import HouseRules
from ...transcript import TranscriptError, parse, replay
from ..table.profile import profile_problems, tournament_profile
from ..wire.messages import Record
from ..wire.seal import NO_MATCH, TAG_MARK, NotSealedError, SealError, verify

__all__ = [
    "RESULT_FIELDS",
    "Copy",
    "GameResult",
    "RecordJudge",
    "check_at_rest",
    "rules_problems",
    "unseal",
]

log = logging.getLogger(__name__)

RESULT_FIELDS: Final = (
    "tournament",
    "table",
    "game",
    "winner",
    "score_0",
    "score_1",
    "hands",
    "verdict",
    "detail",
    "key_id",
    "rules",
    "record",
    "finished_at",
    "checked_at",
    "copies",
)
_TAG_RE: Final = re.compile(re.escape(TAG_MARK) + r"[0-9a-f]{64}$")


def unseal(sealed: str) -> str:
    """The record without its tags and seal line (what the table archived)."""
    out = []
    for line in sealed.replace("\r\n", "\n").split("\n"):
        if line.startswith("#~seal "):
            continue
        out.append(_TAG_RE.sub("", line))
    text = "\n".join(out)
    return text if text.endswith("\n") else text + "\n"


def rules_problems(played: HouseRules, wanted: HouseRules) -> list[str]:
    """How ``played`` differs from the tournament's house rules ``wanted`` (under the
    tournament profile): one ``key=played (the tournament's: value)`` each. Both are
    read under the profile: what it imposes is ``profile_problems``'s to report, and a
    ``pica_pica=on`` at a table that is not of six changes nothing that was played."""
    have = tournament_profile(played).to_options()
    want = tournament_profile(wanted).to_options()
    return [
        f"{k}={have[k]} (the tournament plays {k}={want[k]})"
        for k in want
        if have.get(k) != want[k] and k not in ("claims", "implicit_quiero")
    ]


@dataclass
class Copy:
    """One file of a game's record as collected: the first, or a conflicting one."""

    record: str  # file name under records/
    sha256: str
    verdict: str
    detail: str
    score: tuple[int, int] | None
    winner: int | None

    def row(self) -> dict[str, Any]:
        return {
            "record": self.record,
            "sha256": self.sha256,
            "verdict": self.verdict,
            "detail": self.detail,
            "score": list(self.score) if self.score is not None else None,
            "winner": self.winner,
        }


@dataclass
class GameResult:
    tournament: str
    table: str
    game: str
    winner: int | None
    score: tuple[int, int]
    hands: int
    verdict: str  # intact | tampered | unsealed | unchecked | unreadable
    detail: str
    key_id: str | None
    rules: str
    record: str  # file name under records/
    finished_at: float
    problems: list[str] = field(default_factory=list)
    copies: int = 1  # the same game received with a different record: flagged
    match: str = NO_MATCH
    sha256: str = ""  # of the record as collected (the file is checked against it)
    other_copies: list[Copy] = field(default_factory=list)
    checked_at: float | None = None  # last time the file on disk was checked
    at_rest: str | None = None  # what the last check found wrong (None: nothing)
    #: Why the desk did not see the game as it was played (:mod:`.liveness`): it is
    #: held for the organiser and does not count by itself (None: it was seen).
    held: str | None = None
    seq: int = 0  # the record's seq in its table's stream

    def row(self) -> dict[str, Any]:
        return {
            "tournament": self.tournament,
            "table": self.table,
            "game": self.game,
            "winner": self.winner,
            "score_0": self.score[0],
            "score_1": self.score[1],
            "hands": self.hands,
            "verdict": self.verdict,
            "detail": "; ".join([self.detail, *self.problems, *filter(None, [self.held])]),
            "key_id": self.key_id,
            "rules": self.rules,
            "record": self.record,
            "finished_at": _iso(self.finished_at),
            "checked_at": _iso(self.checked_at) if self.checked_at is not None else "",
            "copies": " ".join(
                f"{c.record}:{c.verdict}"
                + (f":{c.score[0]}-{c.score[1]}" if c.score is not None else "")
                for c in self.other_copies
            ),
        }

    def full(self) -> dict[str, Any]:
        """The row, ``ok``, and every conflicting copy with its own verdict (JSON)."""
        return self.row() | {
            "ok": self.ok,
            "match": self.match,
            "sha256": self.sha256,
            "copies": [c.row() for c in self.other_copies],
            "held": self.held,
        }

    @property
    def ok(self) -> bool:
        return self.verdict == "intact" and not self.problems and self.copies == 1 and not self.held


def _iso(ts: float) -> str:
    return (
        datetime.datetime.fromtimestamp(ts, datetime.UTC)
        .isoformat(timespec="seconds")
        .replace("+00:00", "Z")
    )


@dataclass(frozen=True)
class RecordJudge:
    """Judges the records of ``tournament`` (``key_for``: a table's key, ``None`` outside
    the roster; ``has_secret``: the desk can check seals at all)."""

    tournament: str
    key_for: Callable[[str], bytes | None]
    has_secret: bool
    profile: str | None = None
    rules: HouseRules | None = None

    def seal_verdict(self, table: str, r: Record) -> tuple[str, str, str | None]:
        """(verdict, detail, key id) of a record's seal, with the table's key."""
        key = self.key_for(table)
        if key is None:
            if not self.has_secret:
                return "unchecked", "no tournament key at the desk", None
            return "tampered", f"{table} is not a table of this tournament", None
        try:
            v = verify(r.record, key)
        except NotSealedError:
            return "unsealed", "the record carries no seal", None
        except SealError as e:
            return "unreadable", str(e), None
        if not v.ok:
            return "tampered", f"line {v.first_bad_line}: {v.reason}", None
        if v.tournament is None:
            return "tampered", "an old v1 seal: it does not name the tournament and table", None
        bound = {"tournament": self.tournament, "table": table, "game": r.game,
                 "match": r.match or NO_MATCH}  # fmt: skip
        found = {"tournament": v.tournament, "table": v.table, "game": v.game_id,
                 "match": v.match}  # fmt: skip
        for what, wanted in bound.items():
            if found[what] != wanted:
                return "tampered", f"sealed for {what} {found[what]}, sent as {wanted}", None
        return "intact", f"{v.lines} lines", v.key_id

    def judge(self, table: str, r: Record, name: str, now: float) -> GameResult:
        """The game's result from its record: the seal's verdict, the record replayed
        (winner, score, hands, rules) and every problem found."""
        text = r.record
        verdict, detail, key_id = self.seal_verdict(table, r)
        plain = text
        sealed = any(line.startswith("#~seal ") for line in text.splitlines())
        if sealed:
            plain = unseal(text)
        problems: list[str] = []
        winner: int | None = None
        score: tuple[int, int] = (0, 0)
        hands = 0
        rules = ""
        try:
            replayed = replay(parse(plain)).game
        except TranscriptError as e:
            problems.append(f"the record does not replay (line {e.line}: {e.message})")
            if verdict == "intact":
                verdict = "unreadable"
        else:
            winner, score, hands = replayed.winner, replayed.score, replayed.hand_number
            rules = replayed.rules.to_line()
            if winner is None:
                problems.append("the record ends before the game was won")
            reported = r.score
            if reported is not None and reported != score:
                problems.append(f"the table reported {reported[0]}-{reported[1]}")
            if self.profile == "tournament":
                problems.extend(profile_problems(replayed.rules))
            if self.rules is not None:
                problems.extend(
                    f"other house rules: {p}" for p in rules_problems(replayed.rules, self.rules)
                )
        return GameResult(
            self.tournament,
            table,
            r.game,
            winner,
            score,
            hands,
            verdict,
            detail,
            key_id,
            rules,
            name,
            r.ts or now,
            problems,
            match=r.match or NO_MATCH,
        )


def check_at_rest(folder: Path, results: Iterable[GameResult], now: float) -> list[str]:
    """Check every collected record file in ``folder`` (``records/``) against the SHA-256
    of what was collected: a file changed or gone makes its game (or its copy)
    *tampered*; a file identical to what was collected keeps the verdict it had. Returns
    the games found tampered now."""
    found: list[str] = []
    for result in results:
        files: list[tuple[str, str, Copy | None]] = [(result.record, result.sha256, None)]
        files += [(c.record, c.sha256, c) for c in result.other_copies]
        problems = []
        for name, digest, copy in files:
            try:
                data = (folder / name).read_bytes()
            except OSError:
                problems.append(f"{name} is gone from the records folder")
            else:
                if hashlib.sha256(data).hexdigest() == digest:
                    continue
                problems.append(f"{name} changed on disk after it was collected")
            if copy is not None:
                copy.verdict = "tampered"
        result.checked_at = now
        at_rest = "; ".join(problems) or None
        if at_rest is not None and result.at_rest != at_rest:
            log.error("desk: record %s: %s", result.game, at_rest)
            found.append(result.game)
            result.verdict = "tampered"
            result.detail = f"at rest: {at_rest}"
        result.at_rest = at_rest
    return found
