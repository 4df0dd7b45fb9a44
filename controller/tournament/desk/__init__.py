"""The tournament desk: follows every table through the broker, keeps the results.

- :mod:`.state`: ``DeskState``, the desk without the network (what the tests drive).
- :mod:`.records`: each game's result judged from its record; the records at rest.
- :mod:`.client`: ``Desk``, the MQTT client feeding a ``DeskState``.
- :mod:`.board`: ``render_board``, the terminal scoreboard (matchsticks as text).
- :mod:`.web`: ``serve_http``, the page and its JSON on 127.0.0.1.
- :mod:`.picture`: the matchstick PNGs of the page.

The messages themselves are :mod:`controller.tournament.wire.messages`.
"""

from .board import render_board, sticks_text
from .client import Desk, all_finished
from .state import DeskState, GameResult, Refusal, TableState, unseal
from .web import serve_http

__all__ = [
    "Desk",
    "DeskState",
    "GameResult",
    "Refusal",
    "TableState",
    "all_finished",
    "render_board",
    "serve_http",
    "sticks_text",
    "unseal",
]
