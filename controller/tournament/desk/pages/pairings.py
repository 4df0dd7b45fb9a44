"""``/imprimir/emparejamientos``: the round's pairings with their tables, on A4.

One line per match, by table (the matches still waiting for one last): the table, the
match, home and away with their players, and how many chicos; a bye says who goes
through. This is the sheet pinned up at the venue's door.
"""

from __future__ import annotations

from ...competition.model import Match, MatchStatus, Tournament
from .common import current_round, document, entrant_name, h, players_text
from .printing import PRINT_CSS, print_header

__all__ = ["pairings_page", "round_order"]


def round_order(matches: tuple[Match, ...]) -> list[Match]:
    """The round's matches by table (natural order: mesa2 before mesa10); those without
    a table after, in the order they were made."""

    def key(m: Match) -> tuple[int, str, int]:
        table = m.table or ""
        digits = "".join(c for c in table if c.isdigit())
        return (0 if m.table else 1, table.rstrip("0123456789"), int(digits or 0))

    return sorted(matches, key=key)


def _team(t: Tournament, entrant_id: str | None) -> str:
    if entrant_id is None:
        return "<em>libre</em>"
    name = h(entrant_name(t, entrant_id))
    try:
        players = h(players_text(t.entrant(entrant_id)))
    except KeyError:
        players = ""
    return f'<strong>{name}</strong><div class="small">{players}</div>'


_CSS = """
.print .pairings{table-layout:fixed}.print .pairings td{overflow-wrap:anywhere}
.print .pairings td.t{font-size:13pt;font-weight:700}
.print .pairings .t{width:13%}.print .pairings .id{width:13%}.print .pairings .vs{width:5%;
 text-align:center}.print .pairings .c{width:13%}
"""


def pairings_page(t: Tournament, round_no: int | None = None) -> str:
    """The pairings of ``round_no`` (default: the round being played)."""
    r = current_round(t) if round_no is None else round_no
    lines = []
    for m in round_order(t.round_matches(r)):
        if m.result.status is MatchStatus.BYE:
            table = "—"
            note = "pasa libre"
        else:
            table = m.table or "sin mesa"
            note = f"mejor de {m.best_of}" if m.best_of > 1 else "uno"
        group = f"Grupo {m.group} · " if m.group and f"Grupo {m.group}" not in m.label else ""
        lines.append(
            f'<tr data-match="{h(m.id)}"><td class="t">{h(table)}</td>'
            f'<td>{h(m.id)}<div class="small">{h(group)}{h(m.label)}</div></td>'
            f'<td>{_team(t, m.pairing.home)}</td><td class="vs">vs</td>'
            f"<td>{_team(t, m.pairing.away)}</td><td>{h(note)}</td></tr>"
        )
    body = print_header(t, "Emparejamientos", r) + (
        '<table class="grid pairings"><thead><tr><th class="t">Mesa</th><th class="id">Partido'
        '</th><th>Local</th><th class="vs"></th><th>Visitante</th><th class="c">Chicos</th>'
        "</tr></thead>"
        f"<tbody>{''.join(lines)}</tbody></table>"
        if lines
        else "<p>La ronda todavía no está emparejada.</p>"
    )
    return document(
        f"Emparejamientos: {t.display_name}", body, css=PRINT_CSS + _CSS, body_class="print"
    )
