"""Hypothesis strategies (and a seeded deal) shared by the engine's property tests."""

from __future__ import annotations

import random

from hypothesis import strategies as st

from controller.engine import CARDS, Card, HouseRules
from controller.engine.rules import Claims, Falta

house_rules = st.builds(
    HouseRules,
    players=st.sampled_from([2, 4, 6]),
    target=st.sampled_from([15, 30]),
    flor=st.booleans(),
    falta=st.sampled_from(list(Falta)),
    mazo_envido_point=st.booleans(),
    claims=st.sampled_from(list(Claims)),
    implicit_quiero=st.booleans(),
    pica_pica=st.booleans(),
)


def random_deal(
    rng: random.Random, rules: HouseRules, unread: float
) -> dict[int, list[Card]] | None:
    """A deal drawn from ``rng``: with probability ``unread`` no card read (hands
    unknown), else every seat's three cards, or (one time in five) some seats' only."""
    roll = rng.random()
    if roll < unread:
        return None
    cards = rng.sample(CARDS, 3 * rules.players)
    return {
        s: cards[3 * s : 3 * s + 3]
        for s in range(rules.players)
        if roll < 0.8 or rng.random() < 0.5
    }
