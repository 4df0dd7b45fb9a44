"""The best-play search (``controller.engine.bestplay``) against brute force: for 1,000
seeded random positions (2, 4 and 6 seats, any point of a hand, with and without an
accepted truco, pica-pica picas too) every card sequence is played through the engine
itself, and the hand's winner it scores must be the search's answer; the line the search
gives, played through the engine, must end the hand with that team's truco award."""

from __future__ import annotations

import random

import pytest

from controller.engine import Action, Game, HouseRules, Kind, Reason
from controller.engine.bestplay import BestPlay, Position, best_play, position_of
from controller.engine.cards import Card
from controller.engine.hand import HandPlay
from controller.engine.playout import random_deal

POSITIONS = 1000


def hand_winner(game: Game, play: HandPlay) -> int:
    """The team the engine gave the play's truco points (the hand just ended)."""
    truco = [a for a in game.hands[-1].awards if a.reason is Reason.TRUCO and a.pica == play.pica]
    assert len(truco) == 1
    return truco[0].team


def brute_force(game: Game, play: HandPlay) -> int:
    """Every card the seat to play holds, through the engine, to the hand's end; the
    team to play wins when one of its cards wins (exhaustive minimax, no table kept)."""
    seat = play.turn
    team = seat & 1
    for card in game.cards_in_hand(seat) or ():
        game.push(Action(seat, Kind.PLAY, card=card))
        winner = brute_force(game, play) if play.live else hand_winner(game, play)
        game.pop()
        if winner == team:
            return team
    return 1 - team


def random_position(rng: random.Random) -> tuple[Game, HandPlay]:
    """A hand dealt at random and played at random for a while: cards only, now and
    then an accepted truco (or retruco) first; a six-seat pica-pica hand now and then."""
    players = rng.choice((2, 4, 6))
    pica = players == 6 and rng.random() < 0.2
    rules = HouseRules(players=players, pica_pica=pica)
    game = Game(rules, score=(10, 10) if pica else (0, 0), dealer=rng.randrange(players))
    game.deal(random_deal(rng, players))
    play = rng.choice(game.plays)
    # a six-seat hand from its deal costs the brute force ~47,000 endings: few of them
    least = 0 if players < 6 or pica or rng.random() < 0.02 else 6
    plays = rng.randrange(least, 3 * play.n - 1)
    for level in range(rng.choice((0, 0, 1, 2))):
        caller = play.turn if level == 0 else 1 - (play.turn & 1)  # the raising team
        caller_seat = next(s for s in play.order if s & 1 == (caller & 1))
        game.push(Action(caller_seat, (Kind.TRUCO, Kind.RETRUCO)[level]))
        answer_seat = next(s for s in play.order if s & 1 != caller_seat & 1)
        game.push(Action(answer_seat, Kind.QUIERO))
    for _ in range(plays):
        if not play.live:
            break
        seat = play.turn
        game.push(Action(seat, Kind.PLAY, card=rng.choice(game.cards_in_hand(seat) or ())))
    return game, play


def test_the_search_agrees_with_brute_force_over_a_thousand_positions() -> None:
    rng = random.Random(46)
    checked = {2: 0, 4: 0, 6: 0}
    for _ in range(POSITIONS):
        game, play = random_position(rng)
        while not play.live:  # the random cards ended the hand: another
            game, play = random_position(rng)
        position = position_of(play)
        assert position is not None
        found = best_play(position)
        assert found.value == play.hand_value
        assert found.team == brute_force(game, play), position
        assert_line_ends_the_hand(game, play, found)
        assert_choices(game, play, found)
        checked[play.n] += 1
    assert min(checked.values()) > 100, checked


def assert_line_ends_the_hand(game: Game, play: HandPlay, found: BestPlay) -> None:
    """The line is legal card by card, and ends the hand won by ``found.team``."""
    depth = 0
    for seat, card in found.line:
        assert play.live and play.turn == seat
        action = Action(seat, Kind.PLAY, card=card)
        assert game.is_legal(action)
        game.push(action)
        depth += 1
    assert not play.live
    assert hand_winner(game, play) == found.team
    for _ in range(depth):
        game.pop()


def assert_choices(game: Game, play: HandPlay, found: BestPlay) -> None:
    """Each card the seat to play holds, with the winner after it, by brute force."""
    seat = play.turn
    assert sorted(str(c) for c, _ in found.choices) == sorted(
        str(c) for c in game.cards_in_hand(seat) or ()
    )
    for card, winner in found.choices:
        game.push(Action(seat, Kind.PLAY, card=card))
        assert winner == (brute_force(game, play) if play.live else hand_winner(game, play))
        game.pop()
    assert found.team in {w for _, w in found.choices}


def c(text: str) -> Card:
    return Card.from_str(text)


def test_three_pardas_go_to_the_mano_and_the_search_says_so() -> None:
    # first baza parda; seat 1 (mano) leads its 3 and seat 0 can only tie it (with its
    # 2 the hand is lost), then 2 against 2: three pardas, the mano's team
    position = Position(
        order=(1, 0),
        hands=((c("3E"), c("2E")), (c("3O"), c("2O"))),
        table=(),
        bazas=(None,),
        leader=1,
        value=2,
    )
    found = best_play(position)
    assert (found.team, found.value) == (1, 2)
    assert found.line == ((1, c("3O")), (0, c("3E")), (1, c("2O")), (0, c("2E")))


def test_the_same_cards_do_not_make_pardas_when_a_team_can_avoid_them() -> None:
    # seat 1 leads; seat 0 gives up the first baza to win the next two
    position = Position(
        order=(1, 0),
        hands=((c("3E"), c("2E"), c("12E")), (c("3O"), c("2O"), c("12O"))),
        table=(),
        bazas=(),
        leader=1,
        value=1,
    )
    assert best_play(position).team == 0


def test_after_a_parda_the_first_baza_won_decides() -> None:
    # first baza parda: the second decides; seat 1 holds the 1E
    position = Position(
        order=(0, 1),
        hands=((c("7O"), c("4C")), (c("1E"), c("4B"))),
        table=(),
        bazas=(None,),
        leader=0,
        value=1,
    )
    assert best_play(position).team == 1


@pytest.mark.parametrize(
    ("position", "message"),
    [
        (dict(order=(0,)), "2, 4 or 6"),
        (dict(bazas=(0, 0)), "already decided"),
        (dict(hands=((c("1E"), c("2E"), c("3E")), (c("1E"), c("2O"), c("3O")))), "two places"),
        (dict(leader=3), "does not play"),
    ],
)
def test_impossible_positions_are_refused(position: dict[str, object], message: str) -> None:
    fields: dict[str, object] = dict(
        order=(0, 1),
        hands=((c("1E"), c("2E"), c("3E")), (c("1B"), c("2O"), c("3O"))),
        table=(),
        bazas=(),
        leader=0,
        value=1,
    )
    fields.update(position)
    with pytest.raises(ValueError, match=message):
        Position(**fields)  # type: ignore[arg-type]


def test_a_hand_unknown_has_no_position() -> None:
    game = Game(HouseRules(players=2))
    game.deal({0: [c("1E"), c("2E"), c("3E")]})
    assert position_of(game.plays[0]) is None
