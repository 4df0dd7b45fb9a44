"""Playing a tournament to its end through the fold, as the desk would: pair, assign a
table, count the tables' games (random results from a seeded ``random.Random``), now and
then a walkover, a match left half played and closed by the organiser, a withdrawal or
(swiss) a late entry. Every action goes to the journal the tests replay."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from controller.tournament.competition.entrants import new_entrant_id
from controller.tournament.competition.model import (
    Action,
    AssignTable,
    CloseRound,
    Entrant,
    Format,
    FormatSpec,
    GameCounted,
    PairRound,
    Player,
    Register,
    Start,
    Tournament,
    Walkover,
    Withdraw,
)
from controller.tournament.competition.tournament import apply, pending_matches

SHA = "0" * 64


def entrant(number: int, team_size: int = 2, seed: int | None = None) -> Entrant:
    players = tuple(Player(f"Jugador {number}.{i}") for i in range(1, team_size + 1))
    return Entrant(f"e{number:02d}", f"Equipo {number}", players, seed=seed)


@dataclass
class Journal:
    t: Tournament
    actions: list[Action] = field(default_factory=list)

    def do(self, action: Action) -> Tournament:
        self.t = apply(self.t, action)
        self.actions.append(action)
        return self.t


def started(n: int, spec: FormatSpec, name: str = "Copa") -> Journal:
    j = Journal(Tournament(name))
    for number in range(1, n + 1):
        j.do(Register(entrant(number, spec.team_size)))
    j.do(Start(spec))
    return j


def play_round(j: Journal, rng: random.Random, mishaps: bool = False) -> None:
    """Pair the next round (unless one is still open) and play its matches out."""
    if j.t.round == 0 or j.t.round in j.t.closed:
        j.do(PairRound(j.t.round + 1))
    for number, m in enumerate(pending_matches(j.t), start=1):
        if j.t.match(m.id).result.winner is not None:
            continue  # walked over meanwhile
        roll = rng.random() if mishaps else 1.0
        if roll < 0.05:
            assert m.pairing.away is not None
            given = rng.choice((m.pairing.home, m.pairing.away))
            j.do(Walkover(m.id, given, "no se presentó"))
            continue
        table = f"mesa{number:02d}"
        j.do(AssignTable(m.id, table))
        games = 1 if roll < 0.12 and m.best_of > 1 else m.best_of
        for g in range(games):
            if j.t.match(m.id).result.winner is not None:
                break
            winner = rng.randrange(2)
            loser_points = rng.randrange(30)
            score = (30, loser_points) if winner == 0 else (loser_points, 30)
            j.do(GameCounted(m.id, f"{table}-{m.id}-g{g + 1:03d}", table, score, winner, SHA))
    if mishaps and rng.random() < 0.1:
        withdrawn = {w for w, _ in j.t.withdrawn}
        active = [e.id for e in j.t.entrants if e.id not in withdrawn]
        spec = j.t.spec
        # the swiss pairing is sure to exist while rounds <= active/2 (Dirac's theorem on
        # the graph of who has not met): withdraw only where it stays so
        keep = (
            2 * spec.rounds
            if spec is not None and spec.format is Format.SWISS and spec.rounds
            else 2
        )
        if len(active) > keep and not j.t.finished:
            j.do(Withdraw(rng.choice(active), "se fue a su casa"))
    if (
        mishaps
        and j.t.spec is not None
        and j.t.spec.format is Format.SWISS
        and rng.random() < 0.15
        and not j.t.finished
    ):
        number = len(j.t.entrants) + 1
        j.do(
            Register(
                Entrant(
                    new_entrant_id(e.id for e in j.t.entrants),
                    f"Tardío {number}",
                    tuple(Player(f"T{number}.{i}") for i in range(j.t.spec.team_size)),
                )
            )
        )
    if j.t.round not in j.t.closed:
        j.do(CloseRound(j.t.round, "se hizo tarde"))


def play_to_end(j: Journal, rng: random.Random, mishaps: bool = False, limit: int = 200) -> None:
    while not j.t.finished:
        assert limit > 0, "the tournament never ends"
        limit -= 1
        play_round(j, rng, mishaps)
