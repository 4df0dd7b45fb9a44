"""Tournaments as a desk holds them mid-way, made by the competition's own fold
(register, start, pair, assign, count the tables' games), and a desk that has heard its
tables (the real ``DeskState``, fed signed messages)."""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from pathlib import Path

from controller.tournament.competition.model import (
    Action,
    AssignTable,
    Entrant,
    Format,
    FormatSpec,
    GameCounted,
    Match,
    MatchStatus,
    PairRound,
    Player,
    Register,
    Start,
    Tournament,
)
from controller.tournament.competition.tournament import apply, group_stage_rounds
from controller.tournament.desk import DeskState

from ..conftest import KEY
from .test_desk import event, record_message, sealed_for, status

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


class Run:
    """A tournament driven through the competition's own fold, as the desk drives it."""

    def __init__(self, name: str, spec: FormatSpec, people: tuple[Entrant, ...]) -> None:
        self.t = Tournament(name)
        for e in people:
            self.do(Register(e))
        self.do(Start(spec))
        self.games: dict[str, int] = {}

    def do(self, action: Action) -> Tournament:
        self.t = apply(self.t, action)
        return self.t

    def pair(self) -> tuple[Match, ...]:
        self.do(PairRound(self.t.round + 1))
        return self.t.round_matches(self.t.round)

    def play(self, match: str, table: str, winners: str) -> None:
        """Seat ``match`` at ``table`` and count the games ``winners`` says (``"01"``:
        home won the first chico, away the second), as the tables' records prove them."""
        self.do(AssignTable(match, table))
        for w in winners:
            n = self.games[table] = self.games.get(table, 0) + 1
            k = len(self.games)
            score = (30, 9 + (n * 7 + k) % 20) if w == "0" else (8 + (n * 5 + k) % 21, 30)
            sha = hashlib.sha256(f"{table}/{n}".encode()).hexdigest()
            self.do(GameCounted(match, f"{table}-g{n:03d}", table, score, int(w), sha))


def _result(k: int, best_of: int) -> str:
    """A varied, decisive result for the ``k``-th match."""
    if best_of == 1:
        return "0" if k % 3 else "1"
    return ("00", "011", "11", "100", "010")[k % 5]


def knockout_16() -> Tournament:
    """16 pairs, best of 3, the octavos played, the cuartos at the tables: r2-m01
    decided, r2-m02 at mesa02 (1-0), r2-m03 at mesa03 (1-1), r2-m04 at mesa04 (0-0).
    Entrant 5 has a hostile name."""
    run = Run("Copa del Club 2026", FormatSpec(Format.KNOCKOUT, best_of=3), entrants(16, hostile=5))
    for k, m in enumerate(run.pair()):
        run.play(m.id, f"mesa{k + 1:02d}", _result(k, 3))
    cuartos = run.pair()
    for m, table, winners in zip(cuartos, ("mesa01", "mesa02", "mesa03", "mesa04"),
                                 ("010", "0", "01", ""), strict=True):  # fmt: skip
        run.play(m.id, table, winners)
    return run.t


def swiss_round(
    n: int = 44, round_no: int = 3, tables: int = 20, hostile: int | None = 7
) -> Tournament:
    """``n`` pairs in a Swiss tournament of 5 rounds (one chico a match), the rounds
    before ``round_no`` played; in this one the first ``tables`` matches are at tables
    (a quarter decided each way, half being played), the rest wait for one."""
    run = Run("Abierto de Truco de Boedo", FormatSpec(Format.SWISS, best_of=1, rounds=5),
              entrants(n, hostile=hostile))  # fmt: skip
    for _ in range(1, round_no):
        for k, m in enumerate(run.pair()):
            if m.result.status is MatchStatus.WAITING:
                run.play(m.id, f"mesa{k % tables + 1:02d}", _result(k, 1))
    for k, m in enumerate(run.pair()[:tables]):
        run.play(m.id, f"mesa{k + 1:02d}", ("0", "1", "", "")[k % 4])
    return run.t


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
    foreign: dict[str, str] | None = None,
    tampered: tuple[str, ...] = (),
    audit_ok: bool = True,
) -> DeskState:
    """A desk of ``tables`` tables that heard them all (but ``silent``): each table at
    a match in play shows a live score; ``offline`` ones then lost the network; each
    of ``calls`` asks for the referee (a referee call from the pad of seat 2, with that
    text); each of ``foreign`` refused a card from outside the deck (with that text);
    each of ``tampered`` sent a record that does not verify."""
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
            desk.handle(*event(table, seq, "referee-call", seat=2, text=calls[table], **live))
            seq += 1
        if foreign and table in foreign:
            desk.handle(*event(table, seq, "refusal", seat=1, code="unknown_card",
                               text=foreign[table], **live))  # fmt: skip
            seq += 1
        if table in tampered:
            desk.handle(*record_message(table, seq, sealed_for("mesa99", game=f"{table}-g009"),
                                        game=f"{table}-g009"))  # fmt: skip
            seq += 1
    for table in offline:
        desk.handle(*status(table, "offline", reason="lost"))
    setattr(desk, "competition", Competition(t, audit_ok))  # noqa: B010 (the lead's wiring)
    return desk


def groups_16() -> Tournament:
    """16 pairs in 4 groups of 4 (one chico a match, 2 of each go through): the
    groups played, the knockout's cuartos paired, two of them played."""
    run = Run("Liga de Invierno", FormatSpec(Format.GROUPS, best_of=1, groups=4, advance=2),
              entrants(16, hostile=3))  # fmt: skip
    while run.t.round < group_stage_rounds(run.t):  # the groups, every match played
        for k, m in enumerate(run.pair()):
            run.play(m.id, f"mesa{k + 1:02d}", _result(k + run.t.round, 1))
    for k, m in enumerate(run.pair()[:2]):  # the knockout's first two matches
        run.play(m.id, f"mesa{k + 1:02d}", _result(k, 1))
    return run.t


def knockout_finished(n: int = 8) -> Tournament:
    """``n`` pairs in a knockout (one chico a match, a third-place match) played to the
    end: the final and the third-place match decided."""
    run = Run("Copa Relámpago", FormatSpec(Format.KNOCKOUT, best_of=1), entrants(n))
    while not run.t.finished:
        for k, m in enumerate(run.pair()):
            if m.result.status is MatchStatus.WAITING:
                run.play(m.id, f"mesa{k + 1:02d}", _result(k + run.t.round, 1))
    return run.t
