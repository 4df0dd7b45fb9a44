"""The tournament refereeing profile: strict rules and a record that hides nothing.

``profile = "tournament"`` in a table's ``[tournament]`` section (read by :mod:`.link`,
applied to the service by ``controller/cli/service.py``) means:

- **claims = declared**: envido and flor points are told by the players, never counted
  by the table; a false declaration is penalized (docs/RULES.md section 4).
- **no implicit quiero**: a card played while a truco call is pending is refused with
  ``call_pending``, it never accepts the call.
- **flor tapada and false claims are penalized**: the engine always does so (3 points
  for a flor tapada, the points at stake for a false or unproven claim, reason
  ``penalty``); the profile keeps the tournament's own choice of flor on or off.
- **every refusal** is shown on the seat's display with its reason (the table always
  does) and written into the record as a comment (``# rechazado: 1 play 7E
  (not_your_turn)``): ``ServiceConfig.record_refusals``. A stuck button must not fill
  the sealed record: past ``REFUSAL_BURST`` (5) refusals of one seat in
  ``REFUSAL_WINDOW_S`` (10 s) the rest are counted and written as one comment a seat
  and window (``# rechazos sin anotar: asiento 1, 4995 (not_your_turn 4995)``); like
  every comment, ``replay`` skips it, so the game replays exactly the same.
- **a referee call** (a player held *quiero* and *no quiero* together) is written into
  the record as a comment too (``# llamado al árbitro: asiento 1``), and sent to the desk.
- **the referee's undo** leaves ``# deshecho por el árbitro: <action>`` in the record
  (the service always does), so the action is visible but does not replay.

- **pica-pica only at six**: ``pica_pica`` is the tournament's to choose, the same at
  every table of six; at a table of two or four, where it never applies (RULES.md
  section 8b), the profile writes ``pica_pica=off``, so that every record's ``table``
  line says what was played. The desk compares records with the tournament's rules the
  same way (a record of four saying ``pica_pica=on`` played exactly the same game).

The other house rules (players, target, flor, falta, mazo_envido_point) are the
tournament's to choose and are kept as given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from ...engine import Claims, HouseRules

if TYPE_CHECKING:  # the desk reads the profile without the table's whole service
    from ...table.service import ServiceConfig

__all__ = [
    "FORCED_RULES",
    "PICA_PICA_PLAYERS",
    "PROFILE",
    "PROFILES",
    "RECORD_REFUSALS",
    "REFUSAL_MARK",
    "UNDO_MARK",
    "profile_problems",
    "tournament_profile",
    "tournament_service_config",
]

#: The value of ``profile`` that selects this profile (the other one is ``"house"``).
PROFILE: Final = "tournament"
PROFILES: Final = ("house", PROFILE)
#: House rules the profile imposes, as ``table`` line options.
FORCED_RULES: Final[Mapping[str, str]] = {"claims": "declared", "implicit_quiero": "off"}
#: Refusals go into the record as comments.
RECORD_REFUSALS: Final = True
#: How the record marks a refused action and an action the referee undid.
REFUSAL_MARK: Final = "# rechazado: "
UNDO_MARK: Final = "# deshecho por el árbitro: "


#: The only table size pica-pica is played at (RULES.md section 8b).
PICA_PICA_PLAYERS: Final = 6


def tournament_profile(rules: HouseRules) -> HouseRules:
    """``rules`` with the profile's rules imposed (claims declared, no implicit quiero;
    pica-pica kept at six, off at the tables where it never applies)."""
    return dataclasses.replace(
        rules,
        claims=Claims.DECLARED,
        implicit_quiero=False,
        pica_pica=rules.pica_pica and rules.players == PICA_PICA_PLAYERS,
    )


def tournament_service_config(config: ServiceConfig) -> ServiceConfig:
    """A service configuration under the tournament profile (rules and refusal comments)."""
    return dataclasses.replace(
        config, rules=tournament_profile(config.rules), record_refusals=RECORD_REFUSALS
    )


def profile_problems(rules: HouseRules) -> list[str]:
    """Why a game played under ``rules`` was not played under the tournament profile
    (empty when it was); the desk flags such records."""
    problems = []
    wanted = tournament_profile(rules).to_options()
    have = rules.to_options()
    for key in FORCED_RULES:
        if have[key] != wanted[key]:
            problems.append(f"{key}={have[key]} (the tournament profile says {wanted[key]})")
    return problems
