"""The bots of the mock table: the club bot (issue 44) decides from what its seat may
know, by what a call is worth; the plain bot of before plays the cards it has shown."""

from __future__ import annotations

import random

import pytest

from controller.engine import Action, Card, Claims, Game, HouseRules, Kind
from controller.table.bots import BasicBot, Bot, Signals, make_bot, played_cards


def cards(text: str) -> tuple[Card, ...]:
    return tuple(Card.from_str(w) for w in text.split())


def test_a_shown_card_is_still_played_with_hands_unknown() -> None:
    """Issue 44: with hands unknown the plain bot left its shown cards out of the cards it
    could play, and went to the mazo after proving its tanto."""
    game = Game(HouseRules(players=2, flor=False))
    game.deal()  # hands unknown
    hand = cards("7E 6E 1C")
    game.push(Action(0, Kind.SHOW, cards=hand))
    assert not played_cards(game, 0)
    for bot in (BasicBot(0, random.Random(1)), Bot(0, random.Random(1))):
        action = bot.choose(game, hand)
        assert action is not None and action.kind is not Kind.MAZO
        assert action.kind is not Kind.PLAY or action.card in hand


def _envido_called(mine: str, theirs: str, score: tuple[int, int], call: str) -> Game:
    game = Game(HouseRules(players=2), score=score)
    game.deal({0: list(cards(theirs)), 1: list(cards(mine))})
    game.push_str(f"0 {call}")
    return game


def test_a_falta_that_decides_the_game_is_refused_against_points_seen_higher() -> None:
    """Seat 0 showed 7E 6E (33): seat 1's 27 cannot win; refusing the falta costs 1."""
    game = Game(HouseRules(players=2), score=(12, 6))
    mine = cards("7C 10C 4O")
    game.deal({0: list(cards("7E 6E 1B")), 1: list(mine)})
    game.push_str("0 show 7E 6E")
    game.push_str("0 falta-envido")
    action = Bot(1, random.Random(3), level="dificil").choose(game, mine)
    assert action == Action(1, Kind.NO_QUIERO)


def test_a_sure_envido_is_accepted_or_raised() -> None:
    game = _envido_called("7C 6C 4O", "1B 2O 3E", (0, 0), "envido")
    action = Bot(1, random.Random(3), level="dificil").choose(game, cards("7C 6C 4O"))
    assert action is not None and action.kind in (
        Kind.QUIERO,
        Kind.REAL_ENVIDO,
        Kind.FALTA_ENVIDO,
    )


def test_a_hopeless_envido_is_refused() -> None:
    game = _envido_called("4C 5O 6E", "1B 2O 3E", (0, 0), "real-envido")
    action = Bot(1, random.Random(3), level="dificil").choose(game, cards("4C 5O 6E"))
    assert action == Action(1, Kind.NO_QUIERO)


def test_the_team_answers_as_one_from_the_partners_signs() -> None:
    """Four players: seat 1 holds 20, its partner seat 3 holds 33 and says so with its
    señas; seat 1 answers the real envido for the team: not a no quiero."""
    game = Game(HouseRules(players=4))
    hands = {
        0: cards("1B 2O 3E"),
        1: cards("10B 11O 12E"),
        2: cards("4B 5O 6B"),
        3: cards("7C 6C 4O"),
    }
    game.deal({s: list(h) for s, h in hands.items()})
    game.push_str("0 real-envido")
    signals = Signals()
    alone = Bot(1, random.Random(5), level="dificil")
    assert alone.choose(game, hands[1]) == Action(1, Kind.NO_QUIERO)
    partners = {s: Bot(s, random.Random(5), level="dificil", signals=signals) for s in (1, 3)}
    for s, bot in partners.items():
        bot.look(game, hands[s])
    action = partners[1].choose(game, hands[1])
    assert action is not None and action.kind is not Kind.NO_QUIERO


@pytest.mark.parametrize("players", [2, 4, 6])
def test_the_bot_never_peeks_at_a_hidden_card(players: int) -> None:
    """The same seat's cards and the same public table, the others' hidden cards
    different: the same decisions, step by step."""
    rng = random.Random(players)
    for _ in range(30):
        deck = rng.sample(range(40), 6 * players)
        mine = [Card.from_index(i) for i in deck[:3]]
        others_a = [Card.from_index(i) for i in deck[3 : 3 * players]]
        others_b = [Card.from_index(i) for i in deck[3 * players : 6 * players - 3]]
        decided = []
        for others in (others_a, others_b):
            game = Game(HouseRules(players=players, flor=True))
            hands = {0: mine}
            for s in range(1, players):
                hands[s] = others[3 * (s - 1) : 3 * s]
            game.deal(hands)
            bot = Bot(0, random.Random(7), level="normal")
            decided.append(bot.choose(game, tuple(mine)))
        assert decided[0] == decided[1]


@pytest.mark.parametrize("players", [2, 4, 6])
@pytest.mark.parametrize("level", ["facil", "normal", "dificil"])
def test_bots_play_whole_games_with_legal_actions_only(players: int, level: str) -> None:
    """Every level, hands read and unknown, pica-pica at six: each action the bots choose
    is legal, and the game ends."""
    for known in (True, False):
        rules = HouseRules(players=players, flor=True, pica_pica=players == 6,
                           claims=Claims.AUTO, target=15)  # fmt: skip
        game = Game(rules, score=(5, 0) if players == 6 else (0, 0))
        rng = random.Random(players * 31 + known)
        signals = (Signals(), Signals())
        bots = {
            s: make_bot(level, s, random.Random(s), signals=signals[s % 2]) for s in range(players)
        }
        for _ in range(200):
            if game.winner is not None:
                break
            dealt = rng.sample(range(40), 3 * players)
            hands = {s: tuple(Card.from_index(i) for i in dealt[3 * s : 3 * s + 3])
                     for s in range(players)}  # fmt: skip
            game.deal({s: list(h) for s, h in hands.items()} if known else None)
            for s, bot in bots.items():
                if isinstance(bot, Bot):
                    bot.look(game, hands[s])
            while game.hand_in_progress and game.winner is None:
                for s, bot in bots.items():
                    action = bot.due_proof(game, hands[s]) if isinstance(bot, Bot) else None
                    action = action or bot.choose(game, hands[s])
                    if action is not None:
                        assert game.refusal(action) is None, action
                        game.push(action)
                        break
                else:
                    raise AssertionError(f"stuck: {game.hand_actions}")
        assert game.winner is not None
