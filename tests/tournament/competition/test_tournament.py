"""The fold's rules, one by one: what it does and what it refuses (with which error and
which words for the organiser)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from controller.tournament.competition import errors
from controller.tournament.competition.model import (
    AssignTable,
    CloseRound,
    CompetitionError,
    Entrant,
    Format,
    FormatSpec,
    GameCounted,
    MatchStatus,
    OverrideResult,
    Pairing,
    PairRound,
    Player,
    Register,
    Seed,
    Stage,
    Start,
    Tournament,
    Walkover,
    Withdraw,
)
from controller.tournament.competition.tournament import (
    apply,
    final_ranking,
    free_matches,
    next_pairings,
    pending_matches,
    replay,
)

from .playout import SHA, Journal, entrant, play_round, play_to_end, started


def game(t: Tournament, match: str, winner: int, table: str = "mesa01", n: int = 1) -> Tournament:
    score = (30, 12) if winner == 0 else (12, 30)
    return apply(t, GameCounted(match, f"{table}-{match}-g{n:03d}", table, score, winner, SHA))


def registered(n: int) -> Tournament:
    return replay("Copa", [Register(entrant(i)) for i in range(1, n + 1)])


# ---------------------------------------------------------------------------- registration


def test_register_refuses_duplicates_and_bad_entrants() -> None:
    t = registered(2)
    with pytest.raises(errors.DuplicateEntrant, match="id e01"):
        apply(t, Register(replace(entrant(1), name="Otro")))
    with pytest.raises(errors.DuplicateEntrant, match="se llama"):
        apply(t, Register(replace(entrant(3), name="  equipo   1 ")))
    with pytest.raises(errors.InvalidEntrant, match="falta el nombre del equipo"):
        apply(t, Register(replace(entrant(3), name=" ")))
    with pytest.raises(errors.InvalidEntrant, match="de 1 a 3 jugadores"):
        apply(t, Register(replace(entrant(3), players=())))
    with pytest.raises(errors.InvalidEntrant, match="no sirve"):
        apply(t, Register(replace(entrant(3), id="e 3")))


def test_start_needs_two_entrants_and_the_right_team_size() -> None:
    with pytest.raises(errors.NotEnoughEntrants, match="al menos 2"):
        apply(registered(1), Start(FormatSpec(Format.KNOCKOUT)))
    with pytest.raises(errors.InvalidEntrant, match="cada equipo tiene 3"):
        apply(registered(2), Start(FormatSpec(Format.KNOCKOUT, team_size=3)))
    t = apply(registered(2), Start(FormatSpec(Format.KNOCKOUT)))
    with pytest.raises(errors.AlreadyStarted):
        apply(t, Start(FormatSpec(Format.KNOCKOUT)))
    with pytest.raises(errors.AlreadyStarted):
        apply(t, Seed(("e02",)))


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        (FormatSpec(Format.KNOCKOUT, best_of=2), "impar"),
        (FormatSpec(Format.ROUND_ROBIN, legs=3), "1 o 2 ruedas"),
        (FormatSpec(Format.SWISS, rounds=4), "de 1 a 3 rondas"),
        (FormatSpec(Format.GROUPS, groups=3), "de 1 a 2 grupos"),
        (FormatSpec(Format.GROUPS, groups=2, advance=3), "pasan de 1 a 2"),
    ],
)
def test_start_refuses_a_format_that_does_not_work(spec: FormatSpec, words: str) -> None:
    with pytest.raises(errors.InvalidFormat, match=words):
        apply(registered(4), Start(spec))


def test_start_fills_in_the_defaults() -> None:
    t = apply(registered(9), Start(FormatSpec(Format.SWISS)))
    assert t.spec is not None and t.spec.rounds == 4
    t = apply(registered(9), Start(FormatSpec(Format.GROUPS)))
    assert t.spec is not None and t.spec.groups == 2


def test_late_entries_only_in_the_swiss() -> None:
    t = apply(registered(4), Start(FormatSpec(Format.KNOCKOUT)))
    with pytest.raises(errors.RegistrationClosed, match="solo el suizo"):
        apply(t, Register(entrant(5)))
    j = started(4, FormatSpec(Format.SWISS, rounds=3))
    play_round(j, random.Random(1))
    j.do(Register(entrant(5)))
    assert "e05" in {e for p in next_pairings(j.t) for e in (p.home, p.away)}


def test_seeding_orders_the_bracket() -> None:
    t = apply(registered(4), Seed(("e04", "e03")))
    assert [e.seed for e in t.entrants] == [None, None, 2, 1]
    with pytest.raises(errors.InvalidSeeding, match="dos veces"):
        apply(t, Seed(("e01", "e01")))
    with pytest.raises(errors.UnknownEntrant):
        apply(t, Seed(("e09",)))
    t = apply(apply(t, Start(FormatSpec(Format.KNOCKOUT))), PairRound(1))
    assert [m.pairing for m in t.matches] == [Pairing("e04", "e02"), Pairing("e03", "e01")]


# ---------------------------------------------------------------------------- rounds


def test_pair_round_only_after_the_previous_closes() -> None:
    j = started(4, FormatSpec(Format.KNOCKOUT))
    with pytest.raises(errors.WrongRound, match="la 1, no la 2"):
        j.do(PairRound(2))
    j.do(PairRound(1))
    with pytest.raises(errors.RoundNotClosed, match="faltan r1-m01, r1-m02"):
        j.do(PairRound(2))
    with pytest.raises(errors.RoundNotClosed):
        next_pairings(j.t)


def test_a_knockout_of_four_with_its_third_place() -> None:
    j = started(4, FormatSpec(Format.KNOCKOUT, best_of=3))
    t = j.do(PairRound(1))
    assert [(m.id, m.label) for m in t.matches] == [
        ("r1-m01", "Semifinal"), ("r1-m02", "Semifinal")
    ]  # fmt: skip
    t = apply(t, AssignTable("r1-m01", "mesa01"))
    t = apply(t, AssignTable("r1-m02", "mesa02"))
    assert free_matches(t) == ()
    t = game(game(t, "r1-m01", 1, n=1), "r1-m01", 1, n=2)  # e04 beats e01 2-0
    assert t.match("r1-m01").result.winner == "e04"
    t = game(t, "r1-m02", 0, "mesa02", 1)
    assert t.match("r1-m02").result.status is MatchStatus.PLAYING
    assert 1 not in t.closed
    t = game(t, "r1-m02", 0, "mesa02", 2)
    assert 1 in t.closed  # closed by itself
    assert next_pairings(t) == (Pairing("e04", "e02"), Pairing("e01", "e03"))
    t = apply(t, PairRound(2))
    assert [(m.id, m.stage, m.label) for m in t.round_matches(2)] == [
        ("final", Stage.KNOCKOUT, "Final"),
        ("third", Stage.THIRD_PLACE, "Tercer puesto"),
    ]
    t = apply(t, Walkover("third", "e03", "e01 no volvió del almuerzo"))
    t = apply(t, AssignTable("final", "mesa01"))
    t = game(game(t, "final", 1, n=3), "final", 1, n=4)
    assert t.finished
    assert final_ranking(t) == ["e02", "e04", "e03", "e01"]
    with pytest.raises(errors.TournamentFinished):
        apply(t, PairRound(3))


def test_games_only_from_the_match_table_until_decided() -> None:
    t = apply(apply(registered(2), Start(FormatSpec(Format.KNOCKOUT, best_of=3))), PairRound(1))
    with pytest.raises(errors.NotAtThatTable, match="no tiene mesa"):
        game(t, "final", 0)
    t = apply(t, AssignTable("final", "mesa01"))
    with pytest.raises(errors.NotAtThatTable, match="se juega en la mesa01, no en la mesa02"):
        game(t, "final", 0, "mesa02")
    with pytest.raises(errors.UnknownMatch):
        game(t, "r9-m01", 0)
    t = game(t, "final", 0)
    with pytest.raises(errors.DuplicateGame):
        game(t, "final", 0)
    with pytest.raises(errors.MatchNotAssignable, match="ya se está jugando"):
        apply(t, AssignTable("final", "mesa02"))
    t = game(t, "final", 0, n=2)
    with pytest.raises(errors.MatchAlreadyDecided):
        game(t, "final", 1, n=3)
    with pytest.raises(errors.MatchAlreadyDecided):
        apply(t, Walkover("final", "e02", "tarde"))


def test_a_table_holds_one_match_at_a_time() -> None:
    t = apply(apply(registered(4), Start(FormatSpec(Format.KNOCKOUT))), PairRound(1))
    t = apply(t, AssignTable("r1-m01", "mesa01"))
    with pytest.raises(errors.TableBusy, match="mesa01"):
        apply(t, AssignTable("r1-m02", "mesa01"))
    with pytest.raises(errors.InvalidTable):
        apply(t, AssignTable("r1-m02", "mesa/1"))
    t = apply(t, AssignTable("r1-m01", "mesa03"))  # moved before its first game
    assert t.match("r1-m01").table == "mesa03"
    assert [m.id for m in free_matches(t)] == ["r1-m02"]


def test_walkover_and_override_need_a_reason_and_a_player_of_the_match() -> None:
    t = apply(apply(registered(4), Start(FormatSpec(Format.KNOCKOUT, best_of=3))), PairRound(1))
    with pytest.raises(errors.ReasonRequired):
        apply(t, Walkover("r1-m01", "e01", " "))
    with pytest.raises(errors.NotInThatMatch, match="no juega"):
        apply(t, Walkover("r1-m01", "e02", "no vino"))
    with pytest.raises(errors.UnknownEntrant):
        apply(t, Walkover("r1-m01", "e99", "no vino"))
    t = apply(t, Walkover("r1-m01", "e04", "no vino"))
    r = t.match("r1-m01").result
    assert (r.winner, r.games, r.points, r.status, r.reason) == (
        "e04", (0, 2), (0, 0), MatchStatus.WALKOVER, "no vino"
    )  # fmt: skip
    with pytest.raises(errors.InvalidResult, match="más chicos"):
        apply(t, OverrideResult("r1-m02", "e02", (1, 2), (40, 50), "planilla"))
    t = apply(t, OverrideResult("r1-m02", "e03", (1, 2), (50, 40), "planilla"))
    assert t.match("r1-m02").result.status is MatchStatus.OVERRIDDEN
    t = apply(t, OverrideResult("r1-m01", "e01", (2, 0), (60, 20), "se presentó a tiempo"))
    assert t.match("r1-m01").result.winner == "e01"
    t = apply(t, PairRound(2))
    with pytest.raises(errors.ResultLocked):
        apply(t, OverrideResult("r1-m01", "e04", (0, 2), (0, 0), "otra vez"))


def test_close_round_settles_by_games_then_points_or_says_which_match() -> None:
    j = started(4, FormatSpec(Format.ROUND_ROBIN, best_of=3))
    with pytest.raises(errors.WrongRound):
        j.do(CloseRound(0))
    t = j.do(PairRound(1))
    t = apply(t, AssignTable("r1-m01", "mesa01"))
    t = apply(t, AssignTable("r1-m02", "mesa02"))
    t = game(t, "r1-m01", 1)
    with pytest.raises(errors.RoundUndecidable, match=r"r1-m02 \(Equipo 2 – Equipo 3\) está"):
        apply(t, CloseRound(1))
    with pytest.raises(errors.WrongRound):
        apply(t, CloseRound(2))
    t = apply(t, GameCounted("r1-m02", "g1", "mesa02", (30, 28), 0, SHA))
    t = apply(t, GameCounted("r1-m02", "g2", "mesa02", (25, 30), 1, SHA))
    t = apply(t, CloseRound(1, "se cortó la luz"))
    assert 1 in t.closed
    first, second = t.match("r1-m01").result, t.match("r1-m02").result
    assert (first.winner, first.status) == (t.match("r1-m01").pairing.away, MatchStatus.DECIDED)
    # 1-1 in games: the points decide, 55 to 58
    assert (second.games, second.points) == ((1, 1), (55, 58))
    assert (second.winner, second.reason) == (t.match("r1-m02").pairing.away, "se cortó la luz")


def test_withdrawal_walks_over_the_undecided_matches() -> None:
    j = started(4, FormatSpec(Format.ROUND_ROBIN))
    j.do(PairRound(1))
    m = j.t.matches[0]
    with pytest.raises(errors.ReasonRequired):
        j.do(Withdraw(m.pairing.home, ""))
    t = j.do(Withdraw(m.pairing.home, "se lesionó"))
    r = t.match(m.id).result
    assert (r.winner, r.status, r.reason) == (m.pairing.away, MatchStatus.WALKOVER, "se lesionó")
    with pytest.raises(errors.AlreadyWithdrawn):
        j.do(Withdraw(m.pairing.home, "otra vez"))
    play_to_end(j, random.Random(3))
    later = [x for x in j.t.matches if m.pairing.home in (x.pairing.home, x.pairing.away)]
    assert all(x.result.status is MatchStatus.WALKOVER for x in later)
    assert final_ranking(j.t)[-1] == m.pairing.home


def test_organiser_pairings_where_the_format_leaves_them_open() -> None:
    j = started(4, FormatSpec(Format.KNOCKOUT))
    with pytest.raises(errors.InvalidPairings, match="faltan Equipo 4"):
        j.do(PairRound(1, (Pairing("e01", "e02"), Pairing("e03", None))))
    with pytest.raises(errors.InvalidPairings, match="dos cruces"):
        j.do(PairRound(1, (Pairing("e01", "e02"), Pairing("e02", "e04"))))
    with pytest.raises(errors.InvalidPairings, match="1, 2, 4, 8"):
        j.do(PairRound(1, (Pairing("e01", "e02"), Pairing("e03", None), Pairing("e04", None))))
    t = j.do(PairRound(1, (Pairing("e01", "e02"), Pairing("e03", "e04"))))
    assert [m.pairing for m in t.matches] == [Pairing("e01", "e02"), Pairing("e03", "e04")]
    j = started(4, FormatSpec(Format.ROUND_ROBIN))
    with pytest.raises(errors.PairingsFixed):
        j.do(PairRound(1, (Pairing("e01", "e02"), Pairing("e03", "e04"))))


def test_every_refusal_is_a_competition_error_with_a_message() -> None:
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, CompetitionError)
        assert cls.__doc__


def test_a_refused_action_leaves_the_journal_replayable() -> None:
    j = Journal(Tournament("Copa"))
    j.do(Register(entrant(1)))
    with pytest.raises(errors.NotEnoughEntrants):
        j.do(Start(FormatSpec(Format.KNOCKOUT)))
    j.do(Register(Entrant("e02", "Los Pibes", (Player("Ana"), Player("Luz")))))
    j.do(Start(FormatSpec(Format.KNOCKOUT)))
    assert replay("Copa", j.actions) == j.t
    assert pending_matches(j.t) == ()


def test_a_knockout_with_everyone_gone_says_so() -> None:
    t = apply(registered(2), Start(FormatSpec(Format.KNOCKOUT)))
    t = apply(apply(t, Withdraw("e01", "lluvia")), Withdraw("e02", "lluvia"))
    with pytest.raises(errors.NotEnoughEntrants, match="No queda ningún equipo"):
        next_pairings(t)
