"""The bracket: the knockout's rounds as columns, for the projector and for print.

Matches of a knockout round are taken in the order they were made, and match ``i`` of a
round is fed by matches ``2i`` and ``2i+1`` of the round before (the competition pairs
them so). Rounds not paired yet are drawn empty, with the winners already known in
their places; the third-place match goes under the final. A bracket too tall for one
screen or sheet is cut into sub-brackets (:func:`bracket_slides`), then the rounds
where they meet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ...competition.model import Format, Match, MatchStatus, Stage, Tournament
from ...competition.pairing import bracket_size, knockout_label
from .common import (
    FINISHED,
    STATUS_TEXT,
    document,
    entrant_name,
    h,
    is_withdrawn,
)
from .printing import PRINT_CSS, print_header

__all__ = ["Column", "bracket_columns", "bracket_html", "bracket_page", "bracket_slides"]


@dataclass(frozen=True)
class Column:
    """One round of the bracket: its name and its matches, ``None`` where a match is
    not paired yet (``feeds`` then names who will play it, when known)."""

    label: str
    matches: tuple[Match | None, ...]
    feeds: tuple[tuple[str | None, str | None], ...]


def _winner(m: Match | None) -> str | None:
    if m is None:
        return None
    if m.result.status is MatchStatus.BYE:
        return m.pairing.home
    return m.result.winner


def bracket_columns(t: Tournament) -> tuple[list[Column], Match | None]:
    """The knockout's columns (first round first) and the third-place match; no columns
    when there is no knockout yet (a group stage still being played)."""
    knockout = [m for m in t.matches if m.stage is Stage.KNOCKOUT]
    third = next((m for m in t.matches if m.stage is Stage.THIRD_PLACE), None)
    by_round: dict[int, list[Match]] = {}
    for m in knockout:
        by_round.setdefault(m.round, []).append(m)
    rounds = sorted(by_round)
    if rounds:
        first = len(by_round[rounds[0]])
    elif t.spec is not None and t.spec.format is Format.KNOCKOUT:
        active = sum(1 for e in t.entrants if not is_withdrawn(t, e.id))
        first = bracket_size(active) // 2
    else:
        return [], third
    columns: list[Column] = []
    count, index = first, 0
    previous: tuple[Match | None, ...] = ()
    while count >= 1:
        made = by_round[rounds[index]] if index < len(rounds) else []
        cells: list[Match | None] = [*made[:count], *[None] * (count - len(made[:count]))]
        feeds = tuple(
            (
                _winner(previous[2 * i]) if 2 * i < len(previous) else None,
                _winner(previous[2 * i + 1]) if 2 * i + 1 < len(previous) else None,
            )
            for i in range(count)
        )
        label = made[0].label if made else knockout_label(count)
        columns.append(Column(label, tuple(cells), feeds))
        previous = tuple(cells)
        index += 1
        if count == 1:
            break
        count = (count + 1) // 2
    return columns, third


def no_bracket(t: Tournament) -> str:
    """Why there is no bracket to draw."""
    if t.spec is None:
        return "El torneo todavía no empezó."
    if t.spec.format is Format.GROUPS:
        return "La llave se arma al terminar los grupos."
    return "Este torneo no tiene llave: se juega por posiciones."


def bracket_slides(columns: list[Column], max_first: int) -> list[list[Column]]:
    """Cut the bracket so no piece has more than ``max_first`` matches in its first
    column: the sub-brackets (each up to the round where it ends), then the rounds
    where they meet. One piece when it fits."""
    if not columns or len(columns[0].matches) <= max_first:
        return [columns]
    parts = -(-len(columns[0].matches) // max_first)
    while len(columns[0].matches) % parts:
        parts += 1
    slides: list[list[Column]] = []
    for j in range(parts):
        piece = []
        for c in columns:
            n = len(c.matches)
            if n < parts:
                break
            size = n // parts
            cut = slice(j * size, (j + 1) * size)
            piece.append(Column(c.label, c.matches[cut], c.feeds[cut]))
        slides.append(piece)
    slides.append([c for c in columns if len(c.matches) <= parts])
    return slides


def _side(t: Tournament, m: Match | None, side: int, feed: str | None) -> str:
    if m is None:
        name = entrant_name(t, feed) if feed is not None else "—"
        return f'<div class="side tbd"><span class="name">{h(name)}</span></div>'
    who = m.pairing.home if side == 0 else m.pairing.away
    won = _winner(m)
    cls = "side" + (" won" if won is not None and won == who else "")
    cls += " lost" if won is not None and won != who else ""
    games = "" if m.result.status is MatchStatus.BYE else str(m.result.games[side])
    return (
        f'<div class="{cls}"><span class="name">{h(entrant_name(t, who))}</span>'
        f'<span class="g">{h(games)}</span></div>'
    )


def _box(t: Tournament, m: Match | None, feed: tuple[str | None, str | None]) -> str:
    if m is None:
        foot = "a definir"
        ident = ""
    else:
        foot = STATUS_TEXT[m.result.status]
        if m.table and m.result.status not in FINISHED:
            foot = f"{m.table} · {foot}"
        ident = f' data-match="{h(m.id)}"'
    return (
        f'<div class="m"{ident}>{_side(t, m, 0, feed[0])}{_side(t, m, 1, feed[1])}'
        f'<div class="foot">{h(foot)}</div></div>'
    )


def bracket_html(
    t: Tournament, columns: list[Column], third: Match | None = None, *, last: bool = True
) -> str:
    """The columns side by side, each round's matches spread over the full height so a
    match sits level with the two that feed it; under the final, the third-place match
    (or its place, while the format has one) when these are the ``last`` columns."""
    third_place = (
        last and t.spec is not None and t.spec.third_place
        and t.spec.format in (Format.KNOCKOUT, Format.GROUPS)
    )  # fmt: skip
    out = ['<div class="bracket">']
    for i, c in enumerate(columns):
        out.append(f'<div class="col"><h3>{h(c.label)}</h3><div class="cells">')
        out.extend(_box(t, m, f) for m, f in zip(c.matches, c.feeds, strict=True))
        out.append("</div>")
        if i == len(columns) - 1 and len(c.matches) == 1 and third_place:
            out.append(f"<h3>{h(third.label if third else 'Tercer puesto')}</h3>")
            out.append(f'<div class="third">{_box(t, third, (None, None))}</div>')
        out.append("</div>")
    out.append("</div>")
    return "".join(out)


#: The bracket's layout, shared by the projector and the sheet (sizes set there).
BRACKET_CSS: Final = """
.bracket{display:flex;gap:1.2em;align-items:stretch}
.col{flex:1;display:flex;flex-direction:column;min-width:0}
.col h3{margin:0 0 .3em;font-size:1em;text-align:center}
.cells{flex:1;display:flex;flex-direction:column;justify-content:space-around;gap:.3em}
.m{border:1px solid currentColor;border-radius:4px;padding:.15em .4em}
.side{display:flex;justify-content:space-between;gap:.4em;white-space:nowrap}
.side .name{overflow:hidden;text-overflow:ellipsis}.side .g{font-variant-numeric:tabular-nums}
.side.won{font-weight:700}.side.lost{opacity:.6}.side.tbd{opacity:.5}
.foot{font-size:.7em;opacity:.8}
.third{margin-top:.3em}
"""

_PRINT_BRACKET_CSS: Final = """
@page{size:A4 landscape;margin:10mm}
.slide{break-after:page;height:180mm;display:flex;flex-direction:column}
.slide:last-child{break-after:auto}
.slide .bracket{flex:1;font-size:9pt}
@media screen{body{max-width:297mm}.slide{height:180mm;margin-bottom:10mm}}
"""

#: Matches in a sheet's first column before the bracket is cut (one A4, landscape).
PRINT_FIRST: Final = 16


def bracket_page(t: Tournament) -> str:
    """``/imprimir/llave``: the bracket on A4 landscape sheets."""
    columns, third = bracket_columns(t)
    if not columns:
        body = print_header(t, "Llave") + f"<p>{h(no_bracket(t))}</p>"
    else:
        slides = bracket_slides(columns, PRINT_FIRST)
        body = "".join(
            f'<section class="slide">{print_header(t, "Llave")}'
            f"{bracket_html(t, s, third, last=s is slides[-1])}</section>"
            for s in slides
        )
    return document(
        f"Llave: {t.display_name}", body, css=PRINT_CSS + BRACKET_CSS + _PRINT_BRACKET_CSS,
        body_class="print",
    )  # fmt: skip
