"""What every view shares: escaping, the document shell, the Spanish words for the
tournament's values, the standings (from :mod:`~controller.tournament.competition`).

Every text that comes from an entrant (names, clubs, players) or from the network goes
through :func:`h` before it reaches a page; builders take values and return ``str``.
"""

from __future__ import annotations

import html
from typing import Final

from ...competition.model import (
    Entrant,
    Format,
    Match,
    MatchStatus,
    Stage,
    Tournament,
)
from ...competition.tournament import SETTLED
from ..wording import detail_text

__all__ = [
    "FINISHED",
    "FORMAT_NAMES",
    "STATUS_TEXT",
    "current_round",
    "detail_text",
    "document",
    "entrant_name",
    "h",
    "is_withdrawn",
    "players_text",
    "round_label",
    "score_text",
]

#: A match that needs nothing more from its table (the competition's settled ones).
FINISHED: Final = SETTLED

STATUS_TEXT: Final = {
    MatchStatus.WAITING: "espera mesa",
    MatchStatus.ASSIGNED: "por empezar",
    MatchStatus.PLAYING: "jugando",
    MatchStatus.DECIDED: "terminado",
    MatchStatus.BYE: "pasa libre",
    MatchStatus.WALKOVER: "W.O.",
    MatchStatus.OVERRIDDEN: "resultado corregido",
}

FORMAT_NAMES: Final = {
    Format.KNOCKOUT: "eliminación directa",
    Format.ROUND_ROBIN: "todos contra todos",
    Format.SWISS: "sistema suizo",
    Format.GROUPS: "grupos y eliminación directa",
}


def h(text: object) -> str:
    """``text`` as HTML text (``<``, ``&``, quotes escaped): safe in content and in
    attribute values."""
    return html.escape(str(text), quote=True)


def entrant_name(t: Tournament, entrant_id: str | None) -> str:
    """The entrant's name (``libre`` for a bye's empty side; the id if unknown)."""
    if entrant_id is None:
        return "libre"
    try:
        return t.entrant(entrant_id).name
    except KeyError:
        return entrant_id


def is_withdrawn(t: Tournament, entrant_id: str) -> bool:
    return any(e == entrant_id for e, _ in t.withdrawn)


def players_text(e: Entrant) -> str:
    """``Ana Pérez y Juan Gómez`` (with member ids: ``Ana Pérez (1234)``)."""
    names = [p.name + (f" ({p.member_id})" if p.member_id else "") for p in e.players]
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " y " + names[-1]


def score_text(m: Match) -> str:
    """Games won ``2-1`` (a bye: ``-``)."""
    if m.result.status is MatchStatus.BYE:
        return "-"
    return f"{m.result.games[0]}-{m.result.games[1]}"


def current_round(t: Tournament) -> int:
    """The round being played (the last paired one when the tournament waits)."""
    if t.round:
        return t.round
    return max((m.round for m in t.matches), default=0)


def round_label(t: Tournament, round_no: int) -> str:
    """What the round is called: its matches' label (``Cuartos de final``,
    ``Ronda 2``); for a round of groups, ``Fecha N``."""
    matches = t.round_matches(round_no)
    if not matches:
        return f"Ronda {round_no}" if round_no else "Sin emparejar"
    if matches[0].stage is Stage.GROUP:
        return f"Grupos, fecha {round_no}"
    labels = [m.label for m in matches if m.stage is not Stage.THIRD_PLACE] or [matches[0].label]
    return labels[0]


# ---------------------------------------------------------------------------- the shell

_BASE_CSS: Final = """
*{box-sizing:border-box}
body{margin:0;font-family:system-ui,"DejaVu Sans",sans-serif}
table{border-collapse:collapse}
.n{font-variant-numeric:tabular-nums;text-align:right}
.muted{opacity:.75}
"""


def document(
    title: str,
    body: str,
    *,
    css: str = "",
    script: str = "",
    body_class: str = "",
) -> str:
    """A whole page: ``title`` is text (escaped here), ``body``, ``css`` and ``script``
    are markup the caller built (every value in them escaped with :func:`h`)."""
    cls = f' class="{h(body_class)}"' if body_class else ""
    js = f"<script>{script}</script>" if script else ""
    return (
        '<!doctype html>\n<html lang="es"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{h(title)}</title><style>{_BASE_CSS}{css}</style></head>"
        f"<body{cls}>{body}{js}</body></html>\n"
    )
