"""Tournaments as a desk holds them mid-way, built from the competition's values, and a
desk that has heard its tables (the real ``DeskState``, fed signed messages).

The values are made here by hand, as the competition's fold makes them (results,
counted games, statuses), so the views are tested on exactly the state they show.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from pathlib import Path

from controller.tournament.competition.model import (
    Entrant,
    Format,
    FormatSpec,
    GameCounted,
    Match,
    MatchResult,
    MatchStatus,
    Pairing,
    Player,
    Stage,
    Tournament,
)
from controller.tournament.desk import DeskState

from ..conftest import KEY
from ..test_desk import event, record_message, sealed_for, status

HOSTILE = "<img src=x onerror=\"document.title='pwned'\">"
HOSTILE_CLUB = 'Club "Social" & <b>Deportivo</b>'

_FIRST = ["Ana", "Juan", "Marta", "Luis", "Sofía", "Diego", "Lucía", "Nicolás", "Inés", "Tomás"]
_LAST = ["Pérez", "Gómez", "Fernández", "López", "Díaz", "Martínez", "Sosa", "Romero", "Núñez"]
_NAMES = [
    "Los del Fondo", "La Yunta", "Ancho de Espadas", "Siete de Oro", "Los Materos",
    "Falta Envido", "El Mazo", "Quiero Retruco", "Las Bravas", "Los Tanos", "La Flor",
    "Vale Cuatro", "El Ancho Falso", "Los de Boedo", "Truco y Retruco", "La Barra del Club",
]  # fmt: skip


@dataclass(frozen=True)
class Competition:
    """What the lead's wiring gives the desk: the tournament and the audit's verdict."""

    tournament: Tournament
    audit_ok: bool = True


def entrants(n: int, *, hostile: int | None = None) -> tuple[Entrant, ...]:
    """``n`` pairs ``e01``...; entrant number ``hostile`` (1-based) has a name and a
    club that are markup."""
    out = []
    people = itertools.cycle(itertools.product(_FIRST, _LAST))
    for i in range(1, n + 1):
        name = _NAMES[(i - 1) % len(_NAMES)] + ("" if i <= len(_NAMES) else f" {i}")
        club = None if i % 3 else "Club Atlético Boedo"
        players = tuple(
            Player(f"{a} {b}", member_id=str(1000 + 2 * i + k) if i % 2 else None)
            for k, (a, b) in zip(range(2), people, strict=False)
        )
        if i == hostile:
            name, club = HOSTILE, HOSTILE_CLUB
        out.append(Entrant(f"e{i:02d}", name, players, club=club, seed=i if i <= 4 else None))
    return tuple(out)


def game(match: str, table: str, n: int, winner: int, score: tuple[int, int]) -> GameCounted:
    sha = hashlib.sha256(f"{match}/{n}".encode()).hexdigest()
    return GameCounted(match, f"{table}-g{n:03d}", table, score, winner, sha)


def played(
    mid: str,
    round_no: int,
    label: str,
    home: str,
    away: str | None,
    table: str | None,
    winners: str,
    *,
    best_of: int = 3,
    stage: Stage = Stage.KNOCKOUT,
    group: str | None = None,
) -> Match:
    """A match with the games ``winners`` says (``"010"``: home, away, home) counted;
    its status and result follow as the competition's fold sets them."""
    pairing = Pairing(home, away)
    if away is None:
        result = MatchResult(home, (0, 0), (0, 0), MatchStatus.BYE)
        return Match(mid, round_no, stage, label, pairing, best_of, None, (), result, group)
    games = tuple(
        game(mid, table or "mesa00", k + 1, int(w), (30, 18 + k) if w == "0" else (21 + k, 30))
        for k, w in enumerate(winners)
    )
    won = (winners.count("0"), winners.count("1"))
    points = (sum(g.score[0] for g in games), sum(g.score[1] for g in games))
    need = best_of // 2 + 1
    if max(won) >= need:
        winner: str | None = home if won[0] >= need else away
        state = MatchStatus.DECIDED
    else:
        winner = None
        state = MatchStatus.PLAYING if games else (
            MatchStatus.ASSIGNED if table else MatchStatus.WAITING
        )  # fmt: skip
    result = MatchResult(winner, won, points, state)
    return Match(mid, round_no, stage, label, pairing, best_of, table, games, result, group)


def knockout_16() -> Tournament:
    """16 pairs, best of 3, the octavos played, the cuartos at the tables: r2-m01
    decided, r2-m02 at mesa02 (offline), r2-m03 at mesa03 (a referee call), r2-m04 at
    mesa04 just started. Entrant 5 has a hostile name."""
    es = entrants(16, hostile=5)
    octavos = []
    winners = []
    for i in range(8):
        home, away = es[i].id, es[15 - i].id
        w = "00" if i % 3 else "011" if i % 2 else "010"
        m = played(f"r1-m{i + 1:02d}", 1, "Octavos de final", home, away,
                   f"mesa{i + 1:02d}", w)  # fmt: skip
        octavos.append(m)
        assert m.result.winner is not None
        winners.append(m.result.winner)
    cuartos = [
        played("r2-m01", 2, "Cuartos de final", winners[0], winners[1], "mesa01", "010"),
        played("r2-m02", 2, "Cuartos de final", winners[2], winners[3], "mesa02", "0"),
        played("r2-m03", 2, "Cuartos de final", winners[4], winners[5], "mesa03", "01"),
        played("r2-m04", 2, "Cuartos de final", winners[6], winners[7], "mesa04", ""),
    ]
    return Tournament(
        "Copa del Club 2026",
        FormatSpec(Format.KNOCKOUT, best_of=3),
        es,
        matches=(*octavos, *cuartos),
        round=2,
        closed=frozenset({1}),
    )


def swiss_round(n: int = 44, round_no: int = 3, tables: int = 20) -> Tournament:
    """``n`` pairs in a Swiss tournament (one chico a match), rounds before
    ``round_no`` played; this round's first ``tables`` matches at tables (some decided,
    some playing), the rest waiting for one."""
    es = entrants(n, hostile=7)
    ids = [e.id for e in es]
    matches = []
    for r in range(1, round_no):
        order = ids[r:] + ids[:r]
        for k in range(n // 2):
            home, away = order[2 * k], order[2 * k + 1]
            matches.append(played(f"r{r}-m{k + 1:02d}", r, f"Ronda {r}", home, away,
                                  f"mesa{k % tables + 1:02d}", "0" if (k + r) % 3 else "1",
                                  best_of=1, stage=Stage.ROUND))  # fmt: skip
    order = ids[round_no:] + ids[:round_no]
    for k in range(n // 2):
        home, away = order[2 * k], order[2 * k + 1]
        table = f"mesa{k + 1:02d}" if k < tables else None
        w = "0" if k % 4 == 0 else "1" if k % 4 == 1 else ""
        matches.append(played(f"r{round_no}-m{k + 1:02d}", round_no, f"Ronda {round_no}", home,
                              away, table, w if table else "", best_of=1,
                              stage=Stage.ROUND))  # fmt: skip
    return Tournament(
        "Abierto de Truco de Boedo",
        FormatSpec(Format.SWISS, best_of=1, rounds=5),
        es,
        matches=tuple(matches),
        round=round_no,
        closed=frozenset(range(1, round_no)),
    )


def table_ids(n: int) -> list[str]:
    return [f"mesa{i:02d}" for i in range(1, n + 1)]


def heard_desk(
    folder: Path,
    t: Tournament,
    tables: int = 20,
    *,
    offline: tuple[str, ...] = (),
    silent: tuple[str, ...] = (),
    calls: dict[str, str] | None = None,
    tampered: tuple[str, ...] = (),
    audit_ok: bool = True,
) -> DeskState:
    """A desk of ``tables`` tables that heard them all (but ``silent``): each table at
    a match in play shows a live score; ``offline`` ones then lost the network; each
    of ``calls`` asks for the referee (a refusal with that text); each of ``tampered``
    sent a record that does not verify."""
    clock = [1_000_000.0]
    desk = DeskState("t", out_dir=folder, key=KEY, tables=table_ids(tables),
                     clock=lambda: clock[0])  # fmt: skip
    desk.broker_up()
    playing = {m.table: m for m in t.round_matches(t.round) if m.table}
    for k, table in enumerate(table_ids(tables)):
        if table in silent:
            continue
        desk.handle(*status(table, "online"))
        seq = 1
        m = playing.get(table)
        live: dict[str, object] = {"score": [0, 0], "hand": 1}
        if m is not None and m.result.status in (MatchStatus.ASSIGNED, MatchStatus.PLAYING):
            live = {"game": f"{table}-g{m.chico:03d}", "score": [3 + k % 20, 11 + k % 17],
                    "hand": 4 + k % 5}  # fmt: skip
            desk.handle(*event(table, seq, "deal", **live))
            seq += 1
        if calls and table in calls:
            desk.handle(*event(table, seq, "refusal", seat=2, code="not_your_turn",
                               text=calls[table], **live))  # fmt: skip
            seq += 1
        if table in tampered:
            desk.handle(*record_message(table, seq, sealed_for("mesa99", game=f"{table}-g009"),
                                        game=f"{table}-g009"))  # fmt: skip
            seq += 1
    for table in offline:
        desk.handle(*status(table, "offline", reason="lost"))
    setattr(desk, "competition", Competition(t, audit_ok))  # noqa: B010 (the lead's wiring)
    return desk
