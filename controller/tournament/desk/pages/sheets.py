"""``/imprimir/planillas``: a score sheet per match of the round, one A4 page each.

The paper the referee keeps next to the table: the match, round and table, both teams
with their players (and member numbers), one row per chico (the games the tables
already proved are filled in), the result, and the lines where both captains and the
referee sign. Byes get no sheet.
"""

from __future__ import annotations

from typing import Final

from ...competition.model import Match, MatchStatus, Tournament
from ..wording import count_of
from .common import current_round, document, entrant_name, h
from .pairings import round_order
from .printing import PRINT_CSS, print_header

__all__ = ["sheets_page"]

_CSS: Final = """
.print .sheet{break-after:page;page-break-after:always}
.print .sheet:last-child{break-after:auto;page-break-after:auto}
@media screen{.print .sheet{border-bottom:2px dashed #999;padding-bottom:8mm;margin-bottom:8mm}}
.print .facts{display:flex;gap:8mm;font-size:11pt;margin-bottom:4mm}
.print .teams{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:6mm;
 margin-bottom:5mm}.print .team,.print .chicos th{overflow-wrap:anywhere}
.print .chicos{table-layout:fixed}.print .chicos .k{width:17mm;overflow-wrap:normal}
.print .chicos .s{width:22%}
.print .chicos .w{width:24%}
.print .team{border:1px solid #000;padding:2mm 3mm;min-height:28mm}
.print .team h3{margin:0 0 1mm;font-size:12.5pt}.print .team ol{margin:1mm 0 0;padding-left:5mm}
.print .chicos td{height:11mm}.print .chicos td.k{text-align:center}
.print .result{margin:6mm 0 4mm;font-size:11.5pt}
.print .signs{display:grid;grid-template-columns:1fr 1fr 1fr;gap:8mm;margin-top:16mm}
.print .sign{border-top:1px solid #000;padding-top:1mm;text-align:center;font-size:9.5pt}
.print .sign .who{font-weight:700}
"""


def _team(t: Tournament, entrant_id: str | None, side: str) -> str:
    if entrant_id is None:
        return f'<div class="team"><div class="small">{h(side)}</div><h3>libre</h3></div>'
    try:
        e = t.entrant(entrant_id)
    except KeyError:
        return f'<div class="team"><div class="small">{h(side)}</div><h3>{h(entrant_id)}</h3></div>'
    club = f'<div class="small">{h(e.club)}</div>' if e.club else ""
    players = "".join(
        f"<li>{h(p.name)}" + (f' <span class="small">(socio {h(p.member_id)})</span>'
                              if p.member_id else "") + "</li>"
        for p in e.players
    )  # fmt: skip
    return (
        f'<div class="team"><div class="small">{h(side)}</div><h3>{h(e.name)}</h3>{club}'
        f"<ol>{players}</ol></div>"
    )


def _result(t: Tournament, m: Match) -> str:
    """The result line: blank to fill in, or the result the desk already has."""
    if m.result.winner is None:
        return (
            '<p class="result">Resultado: ______ chicos a ______ &nbsp; Ganador: '
            "______________________________</p>"
        )
    reason = f" ({h(m.result.reason)})" if m.result.reason else ""
    return (
        f'<p class="result">Resultado: <strong>{count_of(m.result.games[0], "chico", "chicos")} a '
        f"{m.result.games[1]}</strong> &nbsp; Ganador: "
        f"<strong>{h(entrant_name(t, m.result.winner))}</strong>{reason}</p>"
    )


def _sheet(t: Tournament, m: Match, target: int | None) -> str:
    home, away = entrant_name(t, m.pairing.home), entrant_name(t, m.pairing.away)
    chicos = []
    for k in range(1, m.best_of + 1):
        g = m.games[k - 1] if k <= len(m.games) else None
        if g is not None:
            winner = home if g.winner == 0 else away
            cells = (str(g.score[0]), str(g.score[1]), winner)
        else:
            cells = ("", "", "")
        chicos.append(
            f'<tr><td class="k">{k}</td>' + "".join(f"<td>{h(c)}</td>" for c in cells)
            + "<td></td></tr>"
        )  # fmt: skip
    to = f", a {target} tantos" if target else ""
    chicos_text = f"al mejor de {m.best_of} chicos{to}" if m.best_of > 1 else f"un chico{to}"
    group = f"<span>Grupo <strong>{h(m.group)}</strong></span>" if m.group else ""
    return (
        f'<section class="sheet" data-match="{h(m.id)}">{print_header(t, "Planilla", m.round)}'
        f'<div class="facts"><span>Partido <strong>{h(m.id)}</strong></span>'
        f"<span>{h(m.label)}</span>{group}"
        f"<span>Mesa <strong>{h(m.table or '______')}</strong></span>"
        f"<span>{h(chicos_text)}</span></div>"
        f'<div class="teams">{_team(t, m.pairing.home, "Local (equipo 0)")}'
        f"{_team(t, m.pairing.away, 'Visitante (equipo 1)')}</div>"
        '<table class="grid chicos"><thead><tr><th class="k">Chico</th>'
        f'<th class="s">Tantos {h(home)}</th><th class="s">Tantos {h(away)}</th>'
        '<th class="w">Ganó</th><th>Firma del árbitro</th></tr></thead>'
        f"<tbody>{''.join(chicos)}</tbody></table>{_result(t, m)}"
        '<p class="small">Observaciones:</p>'
        '<div class="signs">'
        f'<div class="sign"><div class="who">Capitán de {h(home)}</div>Firma y aclaración</div>'
        f'<div class="sign"><div class="who">Capitán de {h(away)}</div>Firma y aclaración</div>'
        '<div class="sign"><div class="who">Árbitro</div>Firma y aclaración</div></div>'
        "</section>"
    )


def sheets_page(t: Tournament, round_no: int | None = None, target: int | None = None) -> str:
    """The sheets of ``round_no`` (default: the round being played); ``target`` the
    tournament's game length in points, when the desk knows it."""
    r = current_round(t) if round_no is None else round_no
    matches = [m for m in round_order(t.round_matches(r)) if m.result.status is not MatchStatus.BYE]
    body = "".join(_sheet(t, m, target) for m in matches) or (
        print_header(t, "Planillas", r) + "<p>No hay partidos emparejados.</p>"
    )
    return document(f"Planillas: {t.display_name}", body, css=PRINT_CSS + _CSS, body_class="print")
