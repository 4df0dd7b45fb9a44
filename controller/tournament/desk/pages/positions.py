"""The standings: the table with its tie-break columns, and its printable sheet.

Columns as organisers read them: position, team (club), matches played, won and lost,
games (chicos) won and lost, points (tantos) for, against and their difference, and
Buchholz in a Swiss tournament. The order is the competition's
(``competition.standings``); a group stage has one table per group.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ...competition.model import Format, Standing, Tournament
from ...competition.standings import group_members
from ..exports import standings_of
from .common import document, entrant_name, h
from .printing import PRINT_CSS, print_header

__all__ = ["standings_page", "standings_sections", "standings_table"]


def standings_sections(t: Tournament) -> list[tuple[str, list[Standing]]]:
    """``(title, standings)`` for each table to show: one per group in a group stage,
    else one."""
    groups = sorted(group_members(t))
    if groups:
        return [(f"Grupo {g}", standings_of(t, g)) for g in groups]
    return [("Posiciones", standings_of(t))]


def standings_table(
    t: Tournament, lines: Sequence[Standing], *, css_class: str = "grid", club: bool = True
) -> str:
    """One ``<table>`` of standings (every entrant's text escaped)."""
    swiss = t.spec is not None and t.spec.format is Format.SWISS
    head = (
        '<tr><th class="n">Pos.</th><th>Equipo</th><th class="n" title="partidos jugados">PJ'
        '</th><th class="n" title="ganados">PG</th><th class="n" title="perdidos">PP</th>'
        '<th class="n" title="chicos ganados">CG</th><th class="n" title="chicos perdidos">CP'
        '</th><th class="n" title="tantos a favor">TF</th><th class="n" title="tantos en '
        'contra">TC</th><th class="n" title="diferencia de tantos">Dif.</th>'
        + ('<th class="n">Buchholz</th>' if swiss else "")
        + "</tr>"
    )
    body = []
    for s in lines:
        name = h(entrant_name(t, s.entrant))
        extra = ""
        if club:
            try:
                c = t.entrant(s.entrant).club
            except KeyError:
                c = None
            extra = f' <span class="club">({h(c)})</span>' if c else ""
        if s.withdrawn:
            extra += ' <span class="club">retirado</span>'
        diff = f"{s.points_diff:+d}" if s.points_diff else "0"
        counts = (s.played, s.won, s.lost, s.games_won, s.games_lost, s.points_for,
                  s.points_against)  # fmt: skip
        nums = "".join(f'<td class="n">{h(v)}</td>' for v in counts)
        buch = f'<td class="n">{h(s.buchholz if s.buchholz is not None else "")}</td>'
        body.append(
            f'<tr data-entrant="{h(s.entrant)}"><td class="n">{h(s.rank)}</td>'
            f'<td class="team">{name}{extra}</td>{nums}<td class="n">{h(diff)}</td>'
            + (buch if swiss else "")
            + "</tr>"
        )
    return (
        f'<table class="{h(css_class)} standings"><thead>{head}</thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


_EMPTY: Final = "<p>Todavía no hay posiciones: el torneo no empezó.</p>"

_CSS: Final = """
.print .standings td.team{width:40%}.print .club{font-size:8.5pt}
.print section{margin-bottom:6mm}.print section h2{break-after:avoid}
.print .legend{font-size:8.5pt;margin-top:3mm}
"""

LEGEND: Final = (
    "PJ partidos jugados, PG ganados, PP perdidos, CG y CP chicos ganados y perdidos, "
    "TF y TC tantos a favor y en contra, Dif. su diferencia"
)


def standings_page(t: Tournament) -> str:
    """``/imprimir/posiciones``: the standings on A4."""
    parts = [print_header(t, "Posiciones")]
    for title, lines in standings_sections(t):
        parts.append(f"<section><h2>{h(title)}</h2>")
        parts.append(standings_table(t, lines) if lines else _EMPTY)
        parts.append("</section>")
    swiss = t.spec is not None and t.spec.format is Format.SWISS
    legend = LEGEND + ("; Buchholz: suma de los partidos ganados por los rivales" if swiss else "")
    parts.append(f'<p class="legend">{h(legend)}. Solo cuentan los registros verificados.</p>')
    return document(
        f"Posiciones: {t.display_name}", "".join(parts), css=PRINT_CSS + _CSS, body_class="print"
    )
