"""``/proyector``: the room's screen. Big type on a dark background, no controls.

A knockout shows its bracket; a round robin or a Swiss tournament its standings and
where everyone plays this round; a group stage its groups' standings, then the
knockout's bracket once it is paired. What does not fit one screen is cut into pages
(``section.slide``: a fixed number of lines each, a bracket cut into sub-brackets) and
the page turns by itself every ``PAGE_S`` seconds; after the last page the screen
fetches itself again, so it follows the tournament with nobody at the laptop. A page
still too tall for the projector is shrunk until it fits.
"""

from __future__ import annotations

from typing import Final

from ...competition.model import Format, MatchStatus, Tournament
from .bracket import BRACKET_CSS, bracket_columns, bracket_html, bracket_slides
from .common import FINISHED, current_round, document, entrant_name, h, round_label, score_text
from .pairings import round_order
from .positions import standings_sections, standings_table

__all__ = ["LINES_PER_PAGE", "PAGE_S", "projector_page"]

PAGE_S: Final = 10  # seconds a page stays on screen
LINES_PER_PAGE: Final = 10  # standings or pairings lines on one page
BRACKET_FIRST: Final = 8  # first-round matches of a bracket on one page

_CSS: Final = """
html{background:#0b1a12;color:#f5f1e6;font-size:3.4vh;overflow:hidden;height:100%}
body{height:100%;overflow:hidden}
#slides{height:100%}
.slide{display:none;height:100%;padding:2.5vh 3vw;flex-direction:column}
.slide.on{display:flex}
.slide h1{font-size:1.6em;margin:0 0 .5em;color:#ffe082;display:flex;justify-content:space-between}
.slide h1 .page{font-size:.55em;color:#9fb9a8;align-self:center}
.slide .body{flex:1;min-height:0}
table{width:100%}th,td{padding:.18em .5em;text-align:left;white-space:nowrap}
th{font-size:.7em;color:#9fb9a8;font-weight:600;border-bottom:2px solid #35654a}
td{border-bottom:1px solid #21452f}td.team{overflow:hidden;text-overflow:ellipsis;max-width:45vw}
th.n,td.n{text-align:right}.club{font-size:.6em;color:#9fb9a8}
tr:first-child td{color:#fff}
.bracket{height:100%;font-size:.8em}.m{background:#132b1e;border-color:#35654a}
.side.won{color:#b9f6ca}.col h3{color:#9fb9a8;font-size:.75em}
.vs{color:#9fb9a8;text-align:center}.t{color:#ffe082;font-weight:700}
.empty{font-size:1.2em;color:#9fb9a8}
"""

_SCRIPT: Final = f"""
const PAGE_MS = {PAGE_S * 1000};
let shown = 0;
function fit(slide) {{
  slide.style.fontSize = "";
  for (let size = 100; size > 50 && slide.scrollHeight > innerHeight + 1; size -= 5)
    slide.style.fontSize = size - 5 + "%";
}}
function show(i) {{
  const slides = document.querySelectorAll(".slide");
  if (!slides.length) return;
  shown = i % slides.length;
  slides.forEach((s, k) => s.classList.toggle("on", k === shown));
  fit(slides[shown]);
  document.documentElement.dataset.slide = shown + 1;
  document.documentElement.dataset.slides = slides.length;
}}
async function next() {{
  const slides = document.querySelectorAll(".slide");
  if (shown + 1 >= slides.length) {{
    try {{
      const text = await (await fetch(location.href)).text();
      const fresh = new DOMParser().parseFromString(text, "text/html").getElementById("slides");
      if (fresh) document.getElementById("slides").replaceWith(fresh);
    }} catch (e) {{}}
    show(0);
  }} else show(shown + 1);
}}
show(0); setInterval(next, PAGE_MS); addEventListener("resize", () => show(shown));
"""


def _chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)] or [[]]


def _standings_slides(t: Tournament) -> list[tuple[str, str]]:
    slides = []
    for title, lines in standings_sections(t):
        for i in range(0, max(len(lines), 1), LINES_PER_PAGE):
            chunk = lines[i : i + LINES_PER_PAGE]
            slides.append((title, standings_table(t, chunk, css_class="big")))
    return slides


def _round_slides(t: Tournament) -> list[tuple[str, str]]:
    r = current_round(t)
    matches = round_order(t.round_matches(r))
    if not matches:
        return []
    lines = []
    for m in matches:
        if m.result.status is MatchStatus.BYE:
            state = "libre"
        elif m.result.status in FINISHED:
            state = score_text(m)
        else:
            state = f"chico {m.chico} de {m.best_of}" if m.best_of > 1 else ""
        lines.append(
            f'<tr data-match="{h(m.id)}"><td class="t">{h(m.table or "—")}</td>'
            f'<td class="team">{h(entrant_name(t, m.pairing.home))}</td><td class="vs">vs</td>'
            f'<td class="team">{h(entrant_name(t, m.pairing.away))}</td>'
            f'<td class="n">{h(state)}</td></tr>'
        )
    head = '<tr><th>Mesa</th><th>Local</th><th></th><th>Visitante</th><th class="n"></th></tr>'
    return [
        (round_label(t, r), f"<table><thead>{head}</thead><tbody>{''.join(c)}</tbody></table>")
        for c in _chunks(lines, LINES_PER_PAGE)
    ]


def _bracket_slides(t: Tournament) -> list[tuple[str, str]]:
    columns, third = bracket_columns(t)
    if not columns:
        return []
    pieces = bracket_slides(columns, BRACKET_FIRST)
    return [
        ("Llave", bracket_html(t, piece, third if piece is pieces[-1] else None))
        for piece in pieces
    ]


def projector_page(t: Tournament) -> str:
    """The projector's pages (see the module docstring)."""
    fmt = t.spec.format if t.spec is not None else None
    if fmt is Format.KNOCKOUT:
        slides = _bracket_slides(t)
    elif fmt is Format.GROUPS:
        slides = _standings_slides(t) + _bracket_slides(t)
    elif fmt is not None:
        slides = _standings_slides(t) + _round_slides(t)
    else:
        slides = []
    if not slides:
        slides = [(t.name, '<p class="empty">El torneo todavía no empezó.</p>')]
    body = "".join(
        f'<section class="slide"><h1><span>{h(title)}</span><span class="page">'
        f'{h(t.name)} · {i} de {len(slides)}</span></h1><div class="body">{content}</div>'
        "</section>"
        for i, (title, content) in enumerate(slides, start=1)
    )
    return document(
        f"Proyector: {t.name}", f'<div id="slides">{body}</div>', css=BRACKET_CSS + _CSS,
        script=_SCRIPT,
    )  # fmt: skip
