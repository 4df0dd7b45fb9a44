"""The tournament's views, built from values (one module per view, HTML as ``str``).

- :mod:`.desk`: the organiser's page (``/``): the round at a glance, attention first.
- :mod:`.projector`: ``/proyector``, the room's screen (bracket or standings, paging).
- :mod:`.pairings`, :mod:`.positions`, :mod:`.bracket`, :mod:`.sheets`: the printable
  pairings, standings, bracket and score sheets (``/imprimir/...``, A4).
- :mod:`.api`: ``/api/tournament``, the tournament as JSON.

Texts for players and the organiser are in Rioplatense Spanish; every text from an
entrant or the network is escaped (:func:`.common.h` here, ``esc`` in the desk page's
script).
"""

from .api import tournament_api
from .bracket import bracket_page
from .desk import desk_page, desk_view
from .pairings import pairings_page
from .positions import standings_page
from .projector import projector_page
from .sheets import sheets_page

__all__ = [
    "bracket_page",
    "desk_page",
    "desk_view",
    "pairings_page",
    "projector_page",
    "sheets_page",
    "standings_page",
    "tournament_api",
]
