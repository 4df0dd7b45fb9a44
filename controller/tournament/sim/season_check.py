"""The season simulation's own arithmetic: standings, the final phase, promotion,
ratings and statistics recomputed from what the tables played, written apart from the
league's code (:mod:`..league.season`, :mod:`..league.ratings`, :mod:`..league.stats`)
so that ``sh scripts/league --season`` compares two computations, not one twice.

- standings: 1 per match won, then chicos difference, tantos difference, tantos for,
  then matches won among exactly the tied, then the clubs' order;
- ratings: the Plackett-Luce update of Weng and Lin (2011, algorithm 4) for two teams,
  with the model's defaults (mu 25, sigma 25/3, beta 25/6, kappa 0.0001, tau 25/300),
  written out here from the paper's formulas;
- statistics: by walking each record's lines hand by hand, with the engine only
  telling whether an action was taken and what each hand awarded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...engine.results import Reason
from ...transcript import ActionStmt, parse, replay

__all__ = ["Line", "order_group", "pl_update", "stats_of"]


@dataclass
class Line:
    club: str
    won: int = 0
    chicos_for: int = 0
    chicos_against: int = 0
    tantos_for: int = 0
    tantos_against: int = 0


def order_group(
    clubs: Sequence[str], results: Sequence[tuple[str, str, Sequence[tuple[int, int, int]]]]
) -> list[Line]:
    """``clubs`` (in the season's order) ranked by ``results``: (home, away, chicos as
    (winner, home tantos, away tantos)), only decided matches given."""
    lines = {c: Line(c) for c in clubs}
    beat: list[tuple[str, str]] = []
    for home, away, chicos in results:
        h, a = lines[home], lines[away]
        wins = [0, 0]
        for winner, th, ta in chicos:
            wins[winner] += 1
            h.tantos_for += th
            h.tantos_against += ta
            a.tantos_for += ta
            a.tantos_against += th
        h.chicos_for += wins[0]
        h.chicos_against += wins[1]
        a.chicos_for += wins[1]
        a.chicos_against += wins[0]
        winner_club = home if wins[0] > wins[1] else away
        lines[winner_club].won += 1
        beat.append((winner_club, away if winner_club == home else home))

    def main(c: str) -> tuple[int, int, int, int]:
        x = lines[c]
        return (-x.won, -(x.chicos_for - x.chicos_against),
                -(x.tantos_for - x.tantos_against), -x.tantos_for)  # fmt: skip

    out: list[Line] = []
    for key in sorted({main(c) for c in clubs}):
        tied = [c for c in clubs if main(c) == key]
        tied.sort(key=lambda c: (-sum(1 for w, lo in beat if w == c and lo in tied),
                                 list(clubs).index(c)))  # fmt: skip
        out.extend(lines[c] for c in tied)
    return out


MU, SIGMA, BETA, KAPPA, TAU = 25.0, 25.0 / 3.0, 25.0 / 6.0, 0.0001, 25.0 / 300.0


def pl_update(
    ratings: dict[str, tuple[float, float]], winners: Sequence[str], losers: Sequence[str]
) -> None:
    """One two-team Plackett-Luce update in place (a player not yet rated: the defaults)."""
    def get(p: str) -> tuple[float, float]:
        mu, sigma = ratings.get(p, (MU, SIGMA))
        return mu, math.sqrt(sigma * sigma + TAU * TAU)

    w = [get(p) for p in winners]
    lo = [get(p) for p in losers]
    mu_w, s2_w = sum(m for m, _ in w), sum(s * s for _, s in w)
    mu_l, s2_l = sum(m for m, _ in lo), sum(s * s for _, s in lo)
    c = math.sqrt(s2_w + s2_l + 2 * BETA * BETA)
    ew, el = math.exp(mu_w / c), math.exp(mu_l / c)
    p_w = ew / (ew + el)  # the winners' chance to rank first
    p_l = el / (ew + el)
    omega_w = (1 - p_w) * s2_w / c
    delta_w = p_w * (1 - p_w) * s2_w / c**2 * (math.sqrt(s2_w) / c)
    omega_l = -p_l * s2_l / c
    delta_l = p_l * (1 - p_l) * s2_l / c**2 * (math.sqrt(s2_l) / c)
    for team, ps, s2, omega, delta in ((w, winners, s2_w, omega_w, delta_w),
                                       (lo, losers, s2_l, omega_l, delta_l)):  # fmt: skip
        for (mu, sigma), p in zip(team, ps, strict=True):
            share = sigma * sigma / s2
            ratings[p] = (mu + share * omega,
                          sigma * math.sqrt(max(1 - share * delta, KAPPA)))  # fmt: skip


CALL_LEVEL = {"truco": 1, "retruco": 2, "vale-cuatro": 3}


def stats_of(text: str, seats: Mapping[int, str]) -> dict[str, dict[str, int]]:
    """One record's counts per player, from its lines: the hands split at ``hand``, each
    action line counted for its seat when the engine took it."""
    taken: set[int] = set()
    levels: dict[int, int] = {}  # line: the accepted truco level after it

    def note(game: object, st: ActionStmt, code: object) -> None:
        if code is None:
            taken.add(st.line)
            if getattr(game, "hand_in_progress", False):
                levels[st.line] = game.truco_level  # type: ignore[attr-defined]

    game = replay(parse(text), on_action=note).game
    # the hands' action lines, by walking the text
    hands: list[list[tuple[int, int, str]]] = []
    for n, raw in enumerate(text.split("\n"), start=1):
        line = raw.split("#", 1)[0].strip()
        if line == "hand" or line.startswith("dealer "):
            if line == "hand":
                hands.append([])
            continue
        words = line.split()
        if len(words) >= 2 and words[0].isdigit() and hands and n in taken:
            hands[-1].append((n, int(words[0]), words[1]))
    hands = hands[: len(game.hands)]
    out: dict[str, dict[str, int]] = {}
    for seat, player in seats.items():
        team = seat % 2
        s = out.setdefault(player, {k: 0 for k in (
            "chicos", "hands", "points", "envidos_won", "envidos_lost", "envido_points_won",
            "envido_points_lost", "truco_calls", "truco_accepted", "truco_won", "flores",
            "mazos")})  # fmt: skip
        s["chicos"] += 1
        for result, actions in zip(game.hands, hands, strict=True):
            s["hands"] += 1
            mine = [a for a in result.awards if a.team == team]
            s["points"] += sum(a.points for a in mine)
            for a in result.awards:
                if a.reason is Reason.ENVIDO:
                    key = "won" if a.team == team else "lost"
                    s[f"envidos_{key}"] += 1
                    s[f"envido_points_{key}"] += a.points
            top = max((levels.get(n, 0) for n, _, _ in actions), default=0)
            took_truco = any(a.reason in (Reason.TRUCO, Reason.MAZO) for a in mine)
            for _, who, word in actions:
                if who != seat:
                    continue
                if word in CALL_LEVEL:
                    s["truco_calls"] += 1
                    s["truco_accepted"] += top >= CALL_LEVEL[word]
                    s["truco_won"] += took_truco
                s["flores"] += word == "flor"
                s["mazos"] += word == "mazo"
    return out
