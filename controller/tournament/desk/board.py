"""The desk's terminal scoreboard: one line a table, the scores in matchsticks as text.

``render_board`` is what ``truco-table desk`` prints every ``--refresh`` seconds.
"""

from __future__ import annotations

import collections
from typing import Final

from ...render.matchsticks import HALF_POINTS, POINTS_PER_SQUARE, sticks_for_score
from .state import DeskState

__all__ = ["render_board", "sticks_text"]

_GLYPHS: Final = " |┌⊓□⧄"  # 0..5 sticks of one square: left, top, right, bottom, diagonal


def sticks_text(points: int, target: int) -> str:
    """The score in matchsticks, one character a square (``⧄`` is five), malas and
    buenas apart: ``⧄⧄⧄│⧄┌`` is 22 of 30; beyond the target, ``+N``."""
    counts: dict[tuple[int, int], int] = collections.Counter(
        (s.half, s.square) for s in sticks_for_score(max(points, 0), target)
    )
    halves = []
    for half in range(target // HALF_POINTS):
        squares = [counts.get((half, sq), 0) for sq in range(HALF_POINTS // POINTS_PER_SQUARE)]
        halves.append("".join(_GLYPHS[n] for n in squares))
    text = "│".join(halves)
    if points > target:
        text += f"+{points - target}"
    return text


def render_board(state: DeskState, width: int = 120) -> str:
    """The scoreboard as text (what ``truco-table desk`` prints every second)."""
    snap = state.snapshot()
    tables = snap["tables"]
    finished = len(snap["results"])
    lines = [
        f"Torneo {snap['tournament']}: {len(tables)} tables, {snap['online']} online, "
        f"{sum(1 for t in tables if t['online'] is False and t['offline_reason'] != 'stopped')} "
        "lost, "
        f"{finished} games finished, {snap['refusals_pending']} refusals for the referee, "
        f"{snap['flagged']} records flagged",
        "",
        f"{'TABLE':<10} {'STATE':<8} {'GAME':<14} {'HAND':>4}  "
        f"{'TEAM 0':<11}{'':>4}  {'TEAM 1':<11}{'':>4}  {'REF':>3}  LAST",
    ]
    for t in tables:
        if t["online"] is None:
            state_text = "?"
        elif t["online"]:
            state_text = "online"
        else:  # a clean stop is not the referee's worry; a lost table is
            state_text = "stopped" if t["offline_reason"] == "stopped" else "OFFLINE"
        s0, s1 = t["score"]
        target = t["target"] if t["target"] in (15, 30) else 30
        last = t["last"][-1].replace("\n", " ") if t["last"] else ""
        row = (
            f"{t['table']:<10} {state_text:<8} {t['game'] or '-':<14} {t['hand']:>4}  "
            f"{sticks_text(s0, target):<11}{s0:>4}  {sticks_text(s1, target):<11}{s1:>4}  "
            f"{len(t['refusals']) or '':>3}  {last}"
        )
        lines.append(row[:width])
    flagged = [r for r in snap["results"] if not r["ok"]]
    if flagged:
        lines.append("")
        lines.append("Flagged records:")
        for r in flagged:
            lines.append(f"  {r['game']}: {r['verdict']}: {r['detail']}"[:width])
    pending = [(t["table"], r) for t in tables for r in t["refusals"]]
    if pending:
        lines.append("")
        lines.append("Refusals waiting for a referee:")
        for table, r in pending[-8:]:
            lines.append(f"  {table} #{r['seq']}: {r['text']}"[:width])
    return "\n".join(lines)
