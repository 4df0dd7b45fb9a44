"""Hypothesis strategies shared by the engine's property tests."""

from __future__ import annotations

from hypothesis import strategies as st

from controller.engine import HouseRules
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
