"""Seeded random play: deals and uniformly random legal actions.

Used by the benchmark, the property tests and the mock table's bots. Randomness comes
only from the ``random.Random`` passed in.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from .actions import Action, Kind
from .cards import CARDS, Card
from .game import Game

__all__ = ["random_deal", "random_game", "random_hand"]


def random_deal(rng: random.Random, players: int) -> dict[int, list[Card]]:
    """Shuffle the deck and give three cards to each seat."""
    cards = rng.sample(CARDS, 3 * players)
    return {s: cards[3 * s : 3 * s + 3] for s in range(players)}


Policy = Callable[[Game, random.Random], Action]


def uniform(game: Game, rng: random.Random) -> Action:
    legal = game.legal_list()
    return legal[rng.randrange(len(legal))]


def uniform_without_mazo(game: Game, rng: random.Random) -> Action:
    legal = [a for a in game.legal_list() if a.kind is not Kind.MAZO]
    if not legal:
        legal = game.legal_list()
    return legal[rng.randrange(len(legal))]


def random_hand(
    game: Game,
    rng: random.Random,
    *,
    policy: Policy = uniform,
    known: bool = True,
    max_actions: int = 500,
) -> int:
    """Deal and play one hand to its end (or the game's); returns the actions pushed."""
    game.deal(random_deal(rng, game.players) if known else None)
    pushed = 0
    while game.hand_in_progress and game.winner is None and pushed < max_actions:
        game.push(policy(game, rng))
        pushed += 1
    return pushed


def random_game(
    game: Game,
    rng: random.Random,
    *,
    policy: Policy = uniform,
    known: bool = True,
    max_hands: int = 1000,
) -> Game:
    """Play hands until a team wins (or ``max_hands``)."""
    for _ in range(max_hands):
        if game.winner is not None:
            break
        random_hand(game, rng, policy=policy, known=known)
    return game
