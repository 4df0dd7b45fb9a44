"""The competition as a fold of its journal: ``apply(t, action)`` is the next state.

Pure: :func:`apply` returns a new :class:`~.model.Tournament` or raises a specific
:class:`~.model.CompetitionError` (the tournament is left as it was), so a desk that
restarts :func:`replay`-s its journal and is exactly where it was.

>>> from .model import Entrant, FormatSpec, Player
>>> t = replay("Copa", [
...     Register(Entrant("e01", "Los del Fondo", (Player("Ana"), Player("Beto")))),
...     Register(Entrant("e02", "Las Pardas", (Player("Caro"), Player("Dani")))),
...     Start(FormatSpec(Format.KNOCKOUT)),
...     PairRound(1),
...     AssignTable("final", "mesa01"),
...     GameCounted("final", "mesa01-g001", "mesa01", (30, 21), 0, "ab" * 32),
... ])
>>> t.finished, final_ranking(t)
(True, ['e01', 'e02'])

The rules the fold keeps (docs/TOURNAMENT.md):

- Register before Start (after it only in the swiss: the late entrant joins the next
  round with nothing won); Seed before Start; Start once, with at least 2 entrants.
- Withdraw at any time before the end: the entrant's undecided matches become
  walkovers for the opponent (the reason kept) and it is not paired again (its later
  round robin matches are walkovers from the start).
- PairRound only once the previous round is closed; by hand (with its pairings) also
  the round being played, again, while none of its matches has a game or a result.
  A round closes by itself when all its matches are decided (byes, walkovers and
  overrides included); CloseRound forces it, giving each undecided match to the side
  with more games won, then more points, and is refused (naming the match) while one is
  level.
- AssignTable only for a match not yet started; GameCounted only from the match's
  table, while it is undecided; a match is decided when a side has best_of//2+1 games.
- Walkover and OverrideResult need a reason and a winner who plays that match.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from .entrants import check_text, clean_text, is_topic_safe, name_key, seed_order, validate_entrant
from .errors import (
    AlreadyStarted,
    AlreadyWithdrawn,
    DuplicateEntrant,
    DuplicateGame,
    InvalidEntrant,
    InvalidFormat,
    InvalidPairings,
    InvalidResult,
    InvalidSeeding,
    InvalidTable,
    MatchAlreadyDecided,
    MatchNotAssignable,
    NotAtThatTable,
    NotEnoughEntrants,
    NotInThatMatch,
    NotStarted,
    PairingsFixed,
    ReasonRequired,
    RegistrationClosed,
    ResultLocked,
    RoundNotClosed,
    RoundUndecidable,
    TableBusy,
    TournamentFinished,
    UnknownEntrant,
    UnknownMatch,
    WrongRound,
)
from .model import (
    Action,
    AssignTable,
    CloseRound,
    Format,
    FormatSpec,
    GameCounted,
    Match,
    MatchResult,
    MatchStatus,
    OverrideResult,
    Pairing,
    PairRound,
    Register,
    Seed,
    SetTitle,
    Stage,
    Start,
    Tournament,
    Walkover,
    Withdraw,
)
from .pairing import (
    groups_knockout,
    knockout_first_round,
    knockout_label,
    knockout_next_round,
    round_robin_rounds,
    swiss_first_round,
    swiss_pairings,
    swiss_rounds,
)
from .standings import COUNTED, games_to_win, group_members, standings

__all__ = [
    "SETTLED",
    "apply",
    "final_ranking",
    "free_matches",
    "group_stage_rounds",
    "is_settled",
    "next_pairings",
    "pending_matches",
    "replay",
]

SETTLED = COUNTED | {MatchStatus.BYE}
_KNOCKOUT_STAGES = (Stage.KNOCKOUT, Stage.THIRD_PLACE)


def is_settled(m: Match) -> bool:
    """The match has its winner (decided, a bye, a walkover or an override)."""
    return m.result.status in SETTLED


def replay(name: str, actions: Iterable[Action]) -> Tournament:
    """The tournament after its journal's actions, in order."""
    t = Tournament(name)
    for action in actions:
        t = apply(t, action)
    return t


def apply(t: Tournament, action: Action) -> Tournament:
    """The tournament after ``action``; refusals raise (``t`` is unchanged: it is a
    value)."""
    match action:
        case Register():
            after = _register(t, action)
        case Withdraw():
            after = _withdraw(t, action)
        case Seed():
            after = _seed(t, action)
        case Start():
            after = _start(t, action)
        case PairRound():
            after = _pair_round(t, action)
        case AssignTable():
            after = _assign(t, action)
        case GameCounted():
            after = _game(t, action)
        case CloseRound():
            after = _close(t, action)
        case Walkover():
            after = _walkover(t, action)
        case OverrideResult():
            after = _override(t, action)
        case SetTitle():
            after = _set_title(t, action)
        case _:  # pragma: no cover - the Action union is closed
            raise TypeError(f"not an action: {action!r}")
    return _settle(after)


def next_pairings(t: Tournament) -> tuple[Pairing, ...]:
    """What ``PairRound(t.round + 1)`` would pair (refused as it would be)."""
    _check_can_pair(t, t.round + 1)
    return tuple(p.pairing for p in _plan(t, t.round + 1))


def pending_matches(t: Tournament) -> tuple[Match, ...]:
    """The matches still to decide (waiting, at a table, or being played)."""
    return tuple(m for m in _current_round(t) if not is_settled(m))


def free_matches(t: Tournament) -> tuple[Match, ...]:
    """The matches waiting for a table."""
    return tuple(
        m for m in _current_round(t) if m.result.status is MatchStatus.WAITING and m.table is None
    )


def _current_round(t: Tournament) -> list[Match]:
    """The matches of the round being played: the last ones made. Every match still to
    decide is among them (an earlier round is closed, so all of its matches are)."""
    found: list[Match] = []
    for m in reversed(t.matches):
        if m.round != t.round:
            break
        found.append(m)
    return found[::-1]


def group_stage_rounds(t: Tournament) -> int:
    """How many rounds the group stage lasts (its largest group's fixture)."""
    if t.spec is None or t.spec.format is not Format.GROUPS:
        return 0
    return max(
        (len(round_robin_rounds(g, t.spec.legs)) for g in group_members(t).values()), default=0
    )


def final_ranking(t: Tournament) -> list[str]:
    """Entrant ids, the champion first (provisional until ``t.finished``).

    Round robin and swiss: the standings. Knockout: the final's winner, its loser, the
    third-place match's winner, its loser, then the others by the round they reached
    (later first), the standings breaking ties. Groups: the knockout's entrants as in a
    knockout, then the others by their place in their group, the standings breaking
    ties. Withdrawn entrants last, always.
    """
    table = standings(t)
    rank = {s.entrant: s.rank for s in table}
    if t.spec is None or t.spec.format in (Format.ROUND_ROBIN, Format.SWISS):
        return [s.entrant for s in table]
    withdrawn = _withdrawn(t)
    knockout = [m for m in t.matches if m.stage in _KNOCKOUT_STAGES]
    in_knockout = {e for m in knockout for e in _sides(m)}
    place: dict[str, int] = {}
    for letter in group_members(t):
        for s in standings(t, letter):
            place[s.entrant] = s.rank

    def key(entrant: str) -> tuple[int, ...]:
        if t.spec is not None and t.spec.format is Format.GROUPS and entrant not in in_knockout:
            return (entrant in withdrawn, 1, 0, place.get(entrant, 0), rank[entrant])
        tier, reached = 4, 0
        for m in knockout:
            if entrant not in _sides(m):
                continue
            reached = max(reached, m.round)
            if m.id in ("final", "third"):
                base = 0 if m.id == "final" else 2
                tier = min(tier, base + (m.result.winner != entrant or not is_settled(m)))
        return (entrant in withdrawn, 0, tier, -reached, rank[entrant])

    return sorted(rank, key=key)


# ---------------------------------------------------------------------------- registration


def _withdrawn(t: Tournament) -> dict[str, str]:
    return dict(t.withdrawn)


def _entrant(t: Tournament, entrant_id: str) -> None:
    if not any(e.id == entrant_id for e in t.entrants):
        raise UnknownEntrant(f"No hay ningún equipo inscripto con el id {entrant_id!r}")


def _name(t: Tournament, entrant_id: str | None) -> str:
    if entrant_id is None:
        return "libre"
    for e in t.entrants:
        if e.id == entrant_id:
            return e.name
    return entrant_id


def _register(t: Tournament, a: Register) -> Tournament:
    if t.finished:
        raise TournamentFinished("El torneo ya terminó: no se anotan más equipos")
    if t.spec is not None and t.spec.format is not Format.SWISS:
        raise RegistrationClosed(
            f"El torneo ya empezó: no se puede anotar a {a.entrant.name} "
            "(solo el suizo acepta inscripciones tardías)"
        )
    entrant = validate_entrant(a.entrant, t.spec.team_size if t.spec else None)
    for e in t.entrants:
        if e.id == entrant.id:
            raise DuplicateEntrant(f"Ya hay un equipo con el id {e.id} ({e.name})")
        if name_key(e.name) == name_key(entrant.name):
            raise DuplicateEntrant(f"Ya hay un equipo que se llama {e.name!r}")
        if entrant.seed is not None and e.seed == entrant.seed:
            raise InvalidSeeding(f"{e.name} ya es la cabeza de serie {e.seed}")
    return replace(t, entrants=(*t.entrants, entrant))


#: The longest display name (a projector's title line).
MAX_TITLE = 80


def _set_title(t: Tournament, a: SetTitle) -> Tournament:
    title = clean_text(a.title, "El nombre del torneo")
    if len(title) > MAX_TITLE:
        raise InvalidEntrant(
            f"El nombre del torneo tiene {len(title)} letras: que sean {MAX_TITLE} como mucho"
        )
    return replace(t, title=title)


def _withdraw(t: Tournament, a: Withdraw) -> Tournament:
    _entrant(t, a.entrant)
    if t.finished:
        raise TournamentFinished("El torneo ya terminó: nadie se puede retirar")
    if a.entrant in _withdrawn(t):
        raise AlreadyWithdrawn(f"{_name(t, a.entrant)} ya se retiró")
    if not a.reason.strip():
        raise ReasonRequired(f"Falta el motivo del retiro de {_name(t, a.entrant)}")
    check_text(a.reason, "El motivo")
    after = replace(t, withdrawn=(*t.withdrawn, (a.entrant, a.reason)))
    matches = tuple(
        _walked_over(m, _other(m, a.entrant), a.reason)
        if not is_settled(m) and a.entrant in _sides(m) and _other(m, a.entrant) is not None
        else m
        for m in t.matches
    )
    return replace(after, matches=matches)


def _seed(t: Tournament, a: Seed) -> Tournament:
    if t.spec is not None:
        raise AlreadyStarted("El torneo ya empezó: las cabezas de serie no se cambian")
    for entrant_id in a.order:
        _entrant(t, entrant_id)
    if len(set(a.order)) != len(a.order):
        raise InvalidSeeding("Un equipo figura dos veces entre las cabezas de serie")
    seeds = {e: n for n, e in enumerate(a.order, start=1)}
    return replace(t, entrants=tuple(replace(e, seed=seeds.get(e.id)) for e in t.entrants))


def _start(t: Tournament, a: Start) -> Tournament:
    if t.spec is not None:
        raise AlreadyStarted("El torneo ya empezó")
    withdrawn = _withdrawn(t)
    active = [e for e in t.entrants if e.id not in withdrawn]
    if len(active) < 2:
        raise NotEnoughEntrants(f"Para empezar hacen falta al menos 2 equipos (hay {len(active)})")
    spec = resolve_spec(a.spec, len(active))
    for e in active:
        validate_entrant(e, spec.team_size)
    return replace(t, spec=spec, order=tuple(e.id for e in seed_order(active)))


def resolve_spec(spec: FormatSpec, entrants: int) -> FormatSpec:
    """The format with its defaults filled in for ``entrants`` (swiss rounds, the number
    of groups), or :class:`InvalidFormat` saying what does not work."""
    if spec.best_of < 1 or spec.best_of % 2 == 0:
        raise InvalidFormat(
            f"Un partido se juega al mejor de 1, 3, 5, ... chicos (impar), no de {spec.best_of}"
        )
    if not 1 <= spec.team_size <= 3:
        raise InvalidFormat(f"Los equipos son de 1, 2 o 3 jugadores, no de {spec.team_size}")
    if spec.legs not in (1, 2):
        raise InvalidFormat(f"La liga es a 1 o 2 ruedas (ida y vuelta), no a {spec.legs}")
    if spec.format is Format.SWISS:
        most = entrants if entrants % 2 else entrants - 1
        rounds = spec.rounds if spec.rounds is not None else swiss_rounds(entrants)
        if not 1 <= rounds <= most:
            raise InvalidFormat(
                f"Con {entrants} equipos el suizo puede tener de 1 a {most} rondas sin "
                f"repetir cruces, no {rounds}"
            )
        return replace(spec, rounds=rounds)
    if spec.format is Format.GROUPS:
        groups = spec.groups if spec.groups is not None else max(1, entrants // 4)
        if not 1 <= groups <= entrants // 2:
            raise InvalidFormat(
                f"Con {entrants} equipos se arman de 1 a {entrants // 2} grupos "
                f"(de al menos 2), no {groups}"
            )
        smallest = entrants // groups
        if not 1 <= spec.advance <= smallest:
            raise InvalidFormat(
                f"De grupos de {smallest} equipos pasan de 1 a {smallest}, no {spec.advance}"
            )
        if groups * spec.advance < 2:
            raise InvalidFormat("A la eliminación tienen que pasar al menos 2 equipos")
        return replace(spec, groups=groups)
    return spec


# ---------------------------------------------------------------------------- rounds


@dataclass(frozen=True)
class _Planned:
    id: str
    stage: Stage
    label: str
    pairing: Pairing
    group: str | None = None


def _check_can_pair(t: Tournament, round_no: int) -> FormatSpec:
    if t.spec is None:
        raise NotStarted("El torneo todavía no empezó")
    if t.finished:
        raise TournamentFinished("El torneo ya terminó: no hay más rondas")
    if round_no != t.round + 1:
        raise WrongRound(f"La ronda que sigue es la {t.round + 1}, no la {round_no}")
    if t.round and t.round not in t.closed:
        waiting = ", ".join(m.id for m in pending_matches(t))
        raise RoundNotClosed(
            f"La ronda {t.round} todavía no terminó: faltan {waiting} (o cerrala a mano)"
        )
    return t.spec


def _pair_round(t: Tournament, a: PairRound) -> Tournament:
    if a.pairings is not None and t.spec is not None and a.round == t.round != 0:
        t = _unpaired(t, a.round)  # pairing the round again, by hand
    _check_can_pair(t, a.round)
    plan = _plan(t, a.round) if a.pairings is None else _organiser_plan(t, a.round, a.pairings)
    withdrawn = _withdrawn(t)
    assert t.spec is not None
    made = tuple(_new_match(p, a.round, t.spec.best_of, withdrawn) for p in plan)
    return replace(t, matches=t.matches + made, round=a.round)


def _unpaired(t: Tournament, round_no: int) -> Tournament:
    """The tournament as before ``round_no`` was paired, for the organiser to pair it
    again by hand: only while none of its matches has a game or a result (a bye aside)."""
    if round_no in t.closed:
        raise PairingsFixed(f"La ronda {round_no} ya está cerrada: sus cruces no se rehacen")
    open_states = (MatchStatus.WAITING, MatchStatus.ASSIGNED, MatchStatus.BYE)
    started = [
        m.id for m in t.round_matches(round_no) if m.games or m.result.status not in open_states
    ]
    if started:
        raise PairingsFixed(
            f"La ronda {round_no} ya tiene resultados ({', '.join(started)}): sus cruces se "
            "rehacen solo antes de que se juegue o se defina un partido"
        )
    kept = tuple(m for m in t.matches if m.round != round_no)
    return replace(t, matches=kept, round=round_no - 1)


def _new_match(p: _Planned, round_no: int, best_of: int, withdrawn: dict[str, str]) -> Match:
    m = Match(p.id, round_no, p.stage, p.label, p.pairing, best_of, group=p.group)
    home, away = p.pairing.home, p.pairing.away
    if away is None:
        return replace(m, result=MatchResult(home, (0, 0), (0, 0), MatchStatus.BYE))
    if home in withdrawn and away in withdrawn:
        return _walked_over(m, home, "Se retiraron los dos equipos")
    if home in withdrawn:
        return _walked_over(m, away, withdrawn[home])
    if away in withdrawn:
        return _walked_over(m, home, withdrawn[away])
    return m


def _plan(t: Tournament, round_no: int) -> list[_Planned]:
    spec = t.spec
    assert spec is not None
    withdrawn = _withdrawn(t)
    if spec.format is Format.KNOCKOUT:
        if round_no == 1:
            return _knockout(
                t, round_no, knockout_first_round([e for e in t.order if e not in withdrawn])
            )
        return _knockout_next(t, round_no)
    if spec.format is Format.ROUND_ROBIN:
        fixture = round_robin_rounds(t.order, spec.legs)
        return [
            _Planned(f"r{round_no}-m{n:02d}", Stage.ROUND, f"Fecha {round_no}", p)
            for n, p in enumerate(fixture[round_no - 1], start=1)
        ]
    if spec.format is Format.SWISS:
        return _swiss(t, round_no, _swiss_pairings(t, round_no))
    group_rounds = group_stage_rounds(t)
    if round_no <= group_rounds:
        planned: list[_Planned] = []
        for letter, members in group_members(t).items():
            fixture = round_robin_rounds(members, spec.legs)
            if round_no <= len(fixture):
                planned += [
                    _Planned(
                        f"g{letter}-r{round_no}-m{n}",
                        Stage.GROUP,
                        f"Grupo {letter}, fecha {round_no}",
                        p,
                        letter,
                    )
                    for n, p in enumerate(fixture[round_no - 1], start=1)
                ]
        return planned
    if round_no == group_rounds + 1:
        return _knockout(t, round_no, groups_knockout(_qualifiers(t)))
    return _knockout_next(t, round_no)


def _qualifiers(t: Tournament) -> list[list[str]]:
    assert t.spec is not None
    withdrawn = _withdrawn(t)
    return [
        [s.entrant for s in standings(t, letter) if s.entrant not in withdrawn][: t.spec.advance]
        for letter in group_members(t)
    ]


def _knockout(
    t: Tournament, round_no: int, pairings: Sequence[Pairing], third: Sequence[str] = ()
) -> list[_Planned]:
    if not pairings:
        raise NotEnoughEntrants("No queda ningún equipo para seguir la eliminación")
    if len(pairings) == 1:
        planned = [_Planned("final", Stage.KNOCKOUT, "Final", pairings[0])]
        if len(third) == 2:
            planned.append(
                _Planned("third", Stage.THIRD_PLACE, "Tercer puesto", Pairing(third[0], third[1]))
            )
        return planned
    label = knockout_label(len(pairings))
    return [
        _Planned(f"r{round_no}-m{n:02d}", Stage.KNOCKOUT, label, p)
        for n, p in enumerate(pairings, start=1)
    ]


def _knockout_next(t: Tournament, round_no: int) -> list[_Planned]:
    assert t.spec is not None
    previous = [m for m in t.round_matches(round_no - 1) if m.stage is Stage.KNOCKOUT]
    winners = [m.result.winner for m in previous if m.result.winner is not None]
    pairings = knockout_next_round(winners)
    third: list[str] = []
    if len(previous) == 2 and t.spec.third_place:
        third = [loser for m in previous if (loser := _other(m, m.result.winner)) is not None]
    return _knockout(t, round_no, pairings, third)


def _swiss_pairings(t: Tournament, round_no: int) -> list[Pairing]:
    withdrawn = _withdrawn(t)
    active = [e for e in t.entrants if e.id not in withdrawn]
    if round_no == 1:
        return swiss_first_round([e.id for e in seed_order(active)])
    table = [s for s in standings(t) if s.entrant not in withdrawn]
    ranked = [s.entrant for s in table]
    scores = {s.entrant: s.won for s in table}
    met: set[frozenset[str]] = set()
    byes: dict[str, int] = {}
    homes: dict[str, int] = {}
    aways: dict[str, int] = {}
    for m in t.matches:
        if m.pairing.away is None:
            byes[m.pairing.home] = byes.get(m.pairing.home, 0) + 1
        else:
            met.add(frozenset((m.pairing.home, m.pairing.away)))
            homes[m.pairing.home] = homes.get(m.pairing.home, 0) + 1
            aways[m.pairing.away] = aways.get(m.pairing.away, 0) + 1
    return swiss_pairings(ranked, met, byes, homes, round_no, scores=scores, aways=aways)


def _swiss(t: Tournament, round_no: int, pairings: Sequence[Pairing]) -> list[_Planned]:
    return [
        _Planned(f"r{round_no}-m{n:02d}", Stage.ROUND, f"Ronda {round_no}", p)
        for n, p in enumerate(pairings, start=1)
    ]


def _organiser_plan(t: Tournament, round_no: int, pairings: Sequence[Pairing]) -> list[_Planned]:
    spec = t.spec
    assert spec is not None
    first_knockout = (spec.format is Format.KNOCKOUT and round_no == 1) or (
        spec.format is Format.GROUPS and round_no == group_stage_rounds(t) + 1
    )
    if spec.format is not Format.SWISS and not first_knockout:
        raise PairingsFixed(
            f"Los cruces de la ronda {round_no} los fija el formato: "
            "solo se arman a mano las rondas del suizo y el primer cruce de la eliminación"
        )
    named = [e for p in pairings for e in (p.home, p.away) if e is not None]
    for entrant_id in named:
        _entrant(t, entrant_id)
    if len(set(named)) != len(named):
        raise InvalidPairings("Un equipo figura en dos cruces de la misma ronda")
    withdrawn = _withdrawn(t)
    if spec.format is Format.SWISS:  # not the desk's pairing: it may be the one impossible
        due = {e.id for e in t.entrants if e.id not in withdrawn}
    else:
        due = {e for p in _plan(t, round_no) for e in _sides(p.pairing)}
    if set(named) != due:
        missing = ", ".join(_name(t, e) for e in sorted(due - set(named)))
        extra = ", ".join(_name(t, e) for e in sorted(set(named) - due))
        raise InvalidPairings(
            "Los cruces no son los de esta ronda"
            + (f": faltan {missing}" if missing else "")
            + (f"; sobran {extra}" if extra else "")
        )
    if spec.format is Format.SWISS:
        if sum(p.away is None for p in pairings) > 1:
            raise InvalidPairings("En el suizo queda libre un solo equipo por ronda")
        return _swiss(t, round_no, pairings)
    count = len(pairings)
    if count & (count - 1):
        raise InvalidPairings(
            f"Un cuadro de eliminación tiene 1, 2, 4, 8, ... cruces, no {count} "
            "(completalo con equipos libres)"
        )
    return _knockout(t, round_no, pairings)


def _is_last_round(t: Tournament, round_no: int) -> bool:
    spec = t.spec
    if spec is None or round_no == 0:
        return False
    if spec.format is Format.ROUND_ROBIN:
        entrants = len(t.order) + len(t.order) % 2
        return round_no >= (entrants - 1) * spec.legs
    if spec.format is Format.SWISS:
        return round_no >= (spec.rounds or 1)
    return any(m.id == "final" for m in t.round_matches(round_no))


def _settle(t: Tournament) -> Tournament:
    """Close the round when its last match is decided; finish after the last round."""
    if t.spec is None or t.round == 0:
        return t
    if t.round not in t.closed and all(is_settled(m) for m in _current_round(t)):
        t = replace(t, closed=t.closed | {t.round})
    if t.round in t.closed and not t.finished and _is_last_round(t, t.round):
        t = replace(t, finished=True)
    return t


def _close(t: Tournament, a: CloseRound) -> Tournament:
    if t.spec is None:
        raise NotStarted("El torneo todavía no empezó")
    if a.round < 1 or a.round != t.round or a.round in t.closed:
        raise WrongRound(
            f"La ronda {a.round} no está en juego (se juega la {t.round}"
            + (", ya cerrada)" if t.round in t.closed else ")")
        )
    reason = check_text(a.reason, "El motivo").strip() or "ronda cerrada por el organizador"
    settled: dict[str, Match] = {}
    level: list[str] = []
    for m in t.round_matches(a.round):
        if is_settled(m):
            continue
        side = _ahead(m.result.games) if m.result.games[0] != m.result.games[1] else None
        if side is None:
            side = _ahead(m.result.points)
        if side is None:
            level.append(f"{m.id} ({_name(t, m.pairing.home)} – {_name(t, m.pairing.away)})")
            continue
        winner = (m.pairing.home, m.pairing.away)[side]
        settled[m.id] = replace(
            m, result=replace(m.result, winner=winner, status=MatchStatus.DECIDED, reason=reason)
        )
    if level:
        raise RoundUndecidable(
            f"No se puede cerrar la ronda {a.round}: {', '.join(level)} "
            f"{'está empatado' if len(level) == 1 else 'están empatados'}; "
            "dale un walkover o cargá el resultado a mano"
        )
    matches = tuple(settled.get(m.id, m) for m in t.matches)
    return replace(t, matches=matches, closed=t.closed | {a.round})


def _ahead(pair: tuple[int, int]) -> int | None:
    if pair[0] == pair[1]:
        return None
    return 0 if pair[0] > pair[1] else 1


# ---------------------------------------------------------------------------- matches


def _sides(m: Match | Pairing) -> tuple[str, ...]:
    p = m.pairing if isinstance(m, Match) else m
    return (p.home,) if p.away is None else (p.home, p.away)


def _other(m: Match, entrant: str | None) -> str | None:
    if entrant == m.pairing.home:
        return m.pairing.away
    if entrant == m.pairing.away:
        return m.pairing.home
    return None


def _walked_over(m: Match, winner: str | None, reason: str) -> Match:
    """The match to ``winner`` without playing the rest of it: the chicos already
    played stay as they were played (each side keeps the ones it won, and its points),
    and the winner is given the chicos it still needed (in play at 1-1 of 3: 2-1)."""
    need = games_to_win(m.best_of)
    played = m.result.games if m.result.status is MatchStatus.PLAYING else (0, 0)
    points = m.result.points if m.result.status is MatchStatus.PLAYING else (0, 0)
    side = 0 if winner == m.pairing.home else 1
    games = (max(need, played[0]), played[1]) if side == 0 else (played[0], max(need, played[1]))
    return replace(m, result=MatchResult(winner, games, points, MatchStatus.WALKOVER, reason))


def _find(t: Tournament, match_id: str) -> Match:
    if t.spec is None:
        raise NotStarted("El torneo todavía no empezó")
    for m in reversed(t.matches):  # the current round's are the last
        if m.id == match_id:
            return m
    raise UnknownMatch(f"No hay ningún partido {match_id!r}")


def _put(t: Tournament, match: Match) -> Tournament:
    for i in range(len(t.matches) - 1, -1, -1):
        if t.matches[i].id == match.id:
            return replace(t, matches=(*t.matches[:i], match, *t.matches[i + 1 :]))
    raise UnknownMatch(f"No hay ningún partido {match.id!r}")  # pragma: no cover


def _describe(t: Tournament, m: Match) -> str:
    return f"{m.id} ({_name(t, m.pairing.home)} – {_name(t, m.pairing.away)})"


def _assign(t: Tournament, a: AssignTable) -> Tournament:
    m = _find(t, a.match)
    if not is_topic_safe(a.table):
        raise InvalidTable(
            f"El nombre de mesa {a.table!r} no sirve: solo letras, números, '.', '_' y '-'"
        )
    if is_settled(m):
        raise MatchAlreadyDecided(f"El partido {_describe(t, m)} ya está definido")
    if m.result.status is MatchStatus.PLAYING:
        raise MatchNotAssignable(f"El partido {_describe(t, m)} ya se está jugando en la {m.table}")
    for other in pending_matches(t):
        if other.id != m.id and other.table == a.table:
            raise TableBusy(
                f"La {a.table} todavía tiene el partido {_describe(t, other)} sin terminar"
            )
    return _put(
        t,
        replace(m, table=a.table, result=replace(m.result, status=MatchStatus.ASSIGNED)),
    )


def _game(t: Tournament, a: GameCounted) -> Tournament:
    m = _find(t, a.match)
    if is_settled(m):
        raise MatchAlreadyDecided(
            f"El partido {_describe(t, m)} ya está definido: el chico {a.game} no cuenta"
        )
    if m.table is None:
        raise NotAtThatTable(f"El partido {_describe(t, m)} no tiene mesa asignada")
    if m.table != a.table:
        raise NotAtThatTable(
            f"El partido {_describe(t, m)} se juega en la {m.table}, no en la {a.table}"
        )
    # the record's seal binds its match: the same record can only come back for this one
    if any(g.game == a.game for g in m.games):
        raise DuplicateGame(f"El chico {a.game} ya se contó en {m.id}")
    if a.winner not in (0, 1) or min(a.score) < 0:
        raise InvalidResult(f"El chico {a.game} trae un resultado imposible")
    games = (m.result.games[0] + (a.winner == 0), m.result.games[1] + (a.winner == 1))
    points = (m.result.points[0] + a.score[0], m.result.points[1] + a.score[1])
    need = games_to_win(m.best_of)
    if max(games) >= need:
        winner = m.pairing.home if games[0] >= need else m.pairing.away
        result = MatchResult(winner, games, points, MatchStatus.DECIDED)
    else:
        result = MatchResult(None, games, points, MatchStatus.PLAYING)
    return _put(t, replace(m, games=(*m.games, a), result=result))


def _check_winner(t: Tournament, m: Match, winner: str, reason: str, what: str) -> None:
    _entrant(t, winner)
    if not reason.strip():
        raise ReasonRequired(f"Falta el motivo del {what} en {m.id}")
    check_text(reason, "El motivo")
    if winner not in _sides(m):
        raise NotInThatMatch(f"{_name(t, winner)} no juega el partido {_describe(t, m)}")


def _walkover(t: Tournament, a: Walkover) -> Tournament:
    m = _find(t, a.match)
    if is_settled(m):
        raise MatchAlreadyDecided(
            f"El partido {_describe(t, m)} ya está definido (para cambiarlo, cargá el resultado)"
        )
    _check_winner(t, m, a.winner, a.reason, "walkover")
    return _put(t, _walked_over(m, a.winner, a.reason))


def _override(t: Tournament, a: OverrideResult) -> Tournament:
    m = _find(t, a.match)
    if m.pairing.away is None:
        raise InvalidResult(f"{m.id}: {_name(t, m.pairing.home)} quedó libre, no hay resultado")
    _check_winner(t, m, a.winner, a.reason, "resultado cargado")
    side = 0 if a.winner == m.pairing.home else 1
    points = a.points if a.points is not None else m.result.points  # the recorded ones stay
    if min(a.games) < 0 or min(points) < 0 or a.games[side] <= a.games[1 - side]:
        raise InvalidResult(
            f"{m.id}: el ganador tiene que tener más chicos que el otro "
            f"(y nada negativo): {a.games[0]}-{a.games[1]}"
        )
    if m.stage in _KNOCKOUT_STAGES and t.round > m.round:
        raise ResultLocked(
            f"{m.id}: la ronda siguiente ya está armada con el ganador; no se puede cambiar"
        )
    if m.stage is Stage.GROUP and t.round > group_stage_rounds(t):
        raise ResultLocked(
            f"{m.id}: la eliminación ya está armada con las posiciones de los grupos"
        )
    result = MatchResult(a.winner, a.games, points, MatchStatus.OVERRIDDEN, a.reason)
    return _put(t, replace(m, result=result))
