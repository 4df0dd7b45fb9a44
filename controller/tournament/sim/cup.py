"""A whole tournament on one machine, from registration to the final standings.

``truco-table tournament-demo --format knockout --entrants 16`` (``sh scripts/tournament
--format ...``) starts the venue's broker (accounts, ACLs, TLS; :class:`.demo.DemoBroker`),
the desk with its competition (:class:`~.desk.organiser.Organiser`) and its web page,
and as many simulated tables (:class:`.demo.SimTable`: the real table service on mock
hardware, bots at every seat) as the largest round needs. The entrants are
registered at the desk, the best four seeded, the format started; from there nothing
is done by hand: the desk pairs each round, gives each match a free table, the table
shows the match and plays the chico it is told, its sealed record comes back, counts
for the match, and the next chico, match or round follows.

With ``--cut-desk`` (the default) the desk loses its power once, when about half of
the matches are decided: no goodbye to the broker, nothing flushed beyond what is on
the disk; a new desk starts on the same folder, replays its journal and its records,
and the tournament goes on. At the end the demo checks that the standings a fresh
replay of the journal gives are the live ones, that every record verifies with its
table's key, and that the audit journal is intact; it prints the final standings.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import random
import secrets
import sys
import time
from pathlib import Path
from typing import TextIO

from ...engine import HouseRules
from ..competition.model import (
    Entrant,
    Format,
    FormatSpec,
    Player,
    Register,
    Seed,
    Start,
    Tournament,
)
from ..competition.standings import standings
from ..desk.journal import AuditJournal, JournalEntry, audit, journal_key
from ..desk.running import DeskRun
from ..wire.seal import TournamentKey
from .demo import HUMAN_ACTION_S, DemoBroker, SimTable, verify_folder, write_tournament_config

__all__ = ["CupOptions", "demo_entrants", "run_cup"]

log = logging.getLogger(__name__)

_TEAMS = (
    "Los del Fondo", "La Barra del Ancho", "Los Matecitos", "El Siete Bravo",
    "Las Flores de Boedo", "Los Pardas", "Truco y Retruco", "Vale Cuatro",
    "El Mazo de Almagro", "Envido Real", "La Falta", "Los Anchos de Espadas",
    "Espadita Club", "Bastos Unidos", "Copas de Oro", "Oros del Sur",
    "Los Quiero", "La Peña de Flores", "Mataderos Social", "Los Gauchos",
    "El Fogón", "La Pulpería", "Los Paisanos", "El Boliche de Roberto",
    "La Esquina", "Los Orilleros", "La Cortada", "Los del Bajo",
    "Los Tangueros", "Sota y Caballo", "Los Siete de Oro", "La Contraflor",
)  # fmt: skip
_FIRST = ("Ana", "Beto", "Carla", "Dante", "Elsa", "Fito", "Gabi", "Hugo", "Inés", "Juanjo",
          "Lucía", "Martín", "Nora", "Óscar", "Paula", "Quique", "Rocío", "Santi", "Tere",
          "Ulises", "Vero", "Walter", "Ximena", "Yamil", "Zulema")  # fmt: skip
_LAST = ("Acosta", "Benítez", "Cabral", "Domínguez", "Echeverría", "Fernández", "Giménez",
         "Herrera", "Ibáñez", "Juárez", "López", "Muñoz", "Núñez", "Ortiz", "Peña",
         "Quiroga", "Ríos", "Sosa", "Torres", "Vázquez")  # fmt: skip


def demo_entrants(count: int, team_size: int, seed: int = 0) -> list[Entrant]:
    """``count`` made-up entrants (names from a list, then numbered), players included."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        name = _TEAMS[i] if i < len(_TEAMS) else f"Equipo {i + 1}"
        players = tuple(
            Player(f"{rng.choice(_FIRST)} {rng.choice(_LAST)}", f"S{rng.randrange(1000, 9999)}")
            for _ in range(team_size)
        )
        out.append(Entrant(f"e{i + 1:02d}", name, players, club="Club Demo"))
    return out


@dataclasses.dataclass
class CupOptions:
    format: Format = Format.KNOCKOUT
    entrants: int = 16
    best_of: int = 1
    target: int = 15
    team_size: int = 1
    legs: int = 1
    rounds: int | None = None
    groups: int | None = None
    advance: int = 2
    third_place: bool = True
    tables: int | None = None  # default: enough for the largest round
    speed: float = 1000.0
    seed: int = 0
    cut_desk: bool = True
    out: Path | None = None
    http_port: int = 8080
    tournament: str = "copa"
    timeout: float = 1800.0
    quiet: bool = False

    def spec(self) -> FormatSpec:
        return FormatSpec(
            self.format, best_of=self.best_of, team_size=self.team_size, legs=self.legs,
            rounds=self.rounds, groups=self.groups, advance=self.advance,
            third_place=self.third_place,
        )  # fmt: skip


def tables_needed(opts: CupOptions) -> int:
    if opts.tables is not None:
        return opts.tables
    return max(1, opts.entrants // 2 + (1 if opts.format is Format.KNOCKOUT else 0))


def run_cup(opts: CupOptions, out: TextIO = sys.stdout) -> int:
    """The whole tournament (see the module docstring); returns the exit status."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    folder = opts.out or Path(f"tournament-{stamp}")
    folder.mkdir(parents=True, exist_ok=True)
    key = TournamentKey(secrets.token_bytes(32), f"{opts.tournament}-{stamp}")
    table_ids = [f"mesa{i + 1:02d}" for i in range(tables_needed(opts))]
    rules = HouseRules(players=2 * opts.team_size, target=opts.target)
    venue = DemoBroker.start(folder, opts.tournament, table_ids, key, None, out)
    key = venue.key
    write_tournament_config(
        folder / "tournament.toml", opts.tournament, key, f"{venue.host}:{venue.port}"
    )
    desk: DeskRun | None = None
    sims: list[SimTable] = []
    try:
        desk = DeskRun(folder / "desk", opts.tournament, key=key, tables=table_ids, rules=rules,
                       host=venue.host, port=venue.port, access=venue.access("desk"),
                       http_port=opts.http_port)  # fmt: skip
        out.write(f"mesa de control: {desk.page} (diario, registros y exportaciones en "
                  f"{folder / 'desk'})\n")  # fmt: skip
        entrants = demo_entrants(opts.entrants, opts.team_size, opts.seed)
        for e in entrants:
            desk.organiser.do(Register(e))
        desk.organiser.do(Seed(tuple(e.id for e in entrants[: min(4, len(entrants))])))
        desk.organiser.do(Start(opts.spec()))
        pace = HUMAN_ACTION_S / opts.speed
        for i, table in enumerate(table_ids):
            sims.append(
                SimTable(
                    table, state_dir=folder / "tables" / table, rules=rules,
                    broker=(venue.host, venue.port), tournament=opts.tournament, key=key,
                    seed=opts.seed * 10_000 + i, pace=pace, access=venue.access(table),
                    assigned=True,
                ).start()
            )  # fmt: skip
        cut_done = not opts.cut_desk
        deadline = time.monotonic() + opts.timeout
        last_line = 0.0
        while time.monotonic() < deadline:
            t = desk.organiser.tournament
            if t.finished:
                break
            failed = [s for s in sims if s.error is not None]
            if failed:
                out.write(f"una mesa falló: {failed[0].table_id}: {failed[0].error!r}\n")
                return 1
            decided = _decided(t)
            if not cut_done and decided >= max(1, _expected_matches(opts) // 2):
                cut_done = True
                out.write(f"corte de luz en la mesa de control ({decided} partidos decididos); "
                          "arranca de nuevo\n")  # fmt: skip
                desk.power_cut()
                desk = DeskRun(folder / "desk", opts.tournament, key=key, tables=table_ids,
                               rules=rules, host=venue.host, port=venue.port,
                               access=venue.access("desk"), http_port=opts.http_port)  # fmt: skip
                out.write("la mesa de control siguió desde su diario: "
                          f"{desk.organiser.journal.lines} líneas\n")  # fmt: skip
            if time.monotonic() - last_line >= 5 and not opts.quiet:
                last_line = time.monotonic()
                out.write(f"ronda {t.round}: {decided} partidos decididos\n")
                out.flush()
            time.sleep(0.2)
        t = desk.organiser.tournament
        problems = check_cup(desk, opts.tournament, key)
        if not t.finished:
            problems.append(f"el torneo no terminó en {opts.timeout:.0f} s")
        write_standings(t, out)
        desk.state.export()
        if problems:
            out.write("PROBLEMAS:\n" + "".join(f"  {p}\n" for p in problems))
            return 1
        out.write("las posiciones salen iguales del diario; todos los registros se verifican; "
                  "el registro de auditoría está intacto\n")  # fmt: skip
        return 0
    finally:
        for s in sims:
            s.stop(timeout=1)
        if desk is not None:
            desk.stop()
        venue.stop()


def _decided(t: Tournament) -> int:
    return sum(1 for m in t.matches if m.result.winner is not None)


def _expected_matches(opts: CupOptions) -> int:
    n = opts.entrants
    if opts.format is Format.KNOCKOUT:
        return n - 1 + (1 if opts.third_place and n >= 4 else 0)
    if opts.format is Format.ROUND_ROBIN:
        return n * (n - 1) // 2 * opts.legs
    if opts.format is Format.SWISS:
        return (opts.rounds or math.ceil(math.log2(max(2, n)))) * (n // 2)
    return n  # groups: a rough half-way mark is enough


def check_cup(desk: DeskRun, tournament: str, key: TournamentKey) -> list[str]:
    """What is wrong with the finished tournament at ``desk`` (empty: nothing)."""
    from ..competition.codec import action_from_json
    from ..competition.tournament import replay

    problems: list[str] = []
    verdict = audit(desk.folder / "journal.jsonl", tournament, journal_key(key.key, tournament))
    if not verdict.ok:
        problems.append(f"the audit journal: line {verdict.first_bad_line}: {verdict.reason}")
    entries = desk.organiser.journal.lines
    live = desk.organiser.tournament
    replayed = replay(
        tournament,
        [action_from_json(e.body["action"]) for e in _entries(desk, tournament, key)],
    )
    if replayed != live or entries == 0:
        problems.append("replaying the journal does not give the live tournament")
    if standings(replayed) != standings(live):
        problems.append("the standings replayed differ from the live ones")
    intact, bad = verify_folder(desk.folder / "records", key, tournament)
    problems += bad
    counted = sum(len(m.games) for m in live.matches)
    if intact < counted:
        problems.append(f"{counted} games counted but only {intact} records verify")
    return problems


def _entries(desk: DeskRun, tournament: str, key: TournamentKey) -> list[JournalEntry]:
    j = AuditJournal(desk.folder, tournament, journal_key(key.key, tournament))
    try:
        return list(j.open())
    finally:
        j.close()


_STATUS = {"champion": "campeón", "eliminated": "eliminado", "withdrawn": "retirado"}


def write_standings(t: Tournament, out: TextIO) -> None:
    """The final standings, as the organiser reads them at the end (a knockout's in
    the order of its bracket: the champion, the finalist, third, fourth, ...)."""
    from ..desk.exports import standing_rows

    out.write(f"\nPosiciones finales ({t.spec.format.value if t.spec else '?'}):\n")
    out.write("  #  equipo                      PJ  PG  PP  chicos  tantos\n")
    for row in standing_rows(t):
        status = _STATUS.get(str(row["status"]), "")
        out.write(
            f"  {row['rank']:<2} {str(row['name'])[:26]:<26} {row['played']:>3} {row['won']:>3}"
            f" {row['lost']:>3}  {row['games_won']:>2}-{row['games_lost']:<2}"
            f"  {row['points_for']:>3}-{row['points_against']:<3} {status}\n"
        )
