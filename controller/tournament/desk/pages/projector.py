"""``/proyector``: the room's screen. Big type on a dark background, no controls.

A knockout shows its bracket; a round robin or a Swiss tournament its standings and
where everyone plays this round (where they play first while no match of the round has
started, and no standings while nobody has played); a group stage its groups' standings, then the
knockout's bracket once it is paired. What does not fit one screen is cut into pages
(``section.slide``: a fixed number of lines each, a bracket cut into sub-brackets) and
the page turns by itself every ``PAGE_S`` seconds; after the last page the screen
fetches itself again, so it follows the tournament with nobody at the laptop. A page
still too tall for the projector is shrunk until it fits. A finished tournament opens
with its first four (the final ranking).
"""

from __future__ import annotations

from typing import Final

from ...competition.model import Format, MatchStatus, Stage, Tournament
from ...competition.tournament import final_ranking
from .bracket import BRACKET_CSS, bracket_columns, bracket_html, bracket_slides
from .common import (
    FINISHED,
    STATUS_TEXT,
    current_round,
    document,
    entrant_name,
    h,
    round_label,
    score_text,
)
from .pairings import round_order
from .positions import standings_sections, standings_table

__all__ = ["LINES_PER_PAGE", "PAGE_S", "projector_page"]

PAGE_S: Final = 10  # seconds a page stays on screen
LINES_PER_PAGE: Final = 12  # standings or pairings lines on one page
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
table{width:100%;table-layout:fixed}th,td{padding:.18em .5em;text-align:left;white-space:nowrap}
.big th:first-child{width:7%}.big th:nth-child(n+3){width:6.5%}.big th:nth-child(n+8){width:8%}
th{font-size:.7em;color:#9fb9a8;font-weight:600;border-bottom:2px solid #35654a}
td{border-bottom:1px solid #21452f}td.team{overflow:hidden;text-overflow:ellipsis}
th.vs{width:6%}th.t{width:14%}th.st{width:16%}
th.n,td.n{text-align:right}.club{font-size:.6em;color:#9fb9a8}
.big tr:first-child td{color:#fff}
.bracket{height:100%;font-size:.8em}.m{background:#132b1e;border-color:#35654a}
.side.won{color:#b9f6ca}.col h3{color:#9fb9a8;font-size:.75em}
.vs{color:#9fb9a8;text-align:center}td.t{color:#ffe082;font-weight:700}
.empty{font-size:1.2em;color:#9fb9a8}
.podium{display:flex;flex-direction:column;gap:.5em;margin-top:1.5em;font-size:1.3em}
.place{display:flex;gap:1em;align-items:baseline}.place .what{width:8em;color:#9fb9a8}
.place .who{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.place.p1 .who{font-size:2em;color:#ffe082;font-weight:700}.place.p2 .who{font-size:1.4em}
h2.group{font-size:.9em;margin:.4em 0 .1em;color:#ffe082}
"""

_SCRIPT: Final = f"""
const PAGE_MS = {PAGE_S * 1000};
let shown = 0;
function fit(slide) {{
  slide.style.fontSize = "";
  let size = 100;
  for (; size > 50 && slide.scrollHeight > innerHeight + 1; size -= 5)
    slide.style.fontSize = size - 5 + "%";
  document.documentElement.dataset.scale = size;
  document.documentElement.dataset.fits = slide.scrollHeight <= innerHeight + 1;
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
      if (fresh) {{
        document.getElementById("slides").replaceWith(fresh);
        const root = document.documentElement;
        root.dataset.refreshed = (Number(root.dataset.refreshed) || 0) + 1;
      }}
    }} catch (e) {{}}
    show(0);
  }} else show(shown + 1);
}}
show(0); setInterval(next, PAGE_MS); addEventListener("resize", () => show(shown));
"""


def _chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)] or [[]]


def _standings_slides(t: Tournament) -> list[tuple[str, str]]:
    """The standings, ``LINES_PER_PAGE`` lines a page; a group stage's groups packed
    whole onto pages (a group's title counts as two lines)."""
    sections = standings_sections(t)
    if len(sections) == 1:
        title, lines = sections[0]
        return [
            (title, standings_table(t, lines[i : i + LINES_PER_PAGE], css_class="big"))
            for i in range(0, max(len(lines), 1), LINES_PER_PAGE)
        ]
    pages: list[list[tuple[str, str]]] = [[]]
    used = 0
    for title, lines in sections:
        cost = len(lines) + 2
        if pages[-1] and used + cost > LINES_PER_PAGE + 2:
            pages.append([])
            used = 0
        pages[-1].append((title, standings_table(t, lines, css_class="big")))
        used += cost
    return [
        (
            "Grupos: " + ", ".join(title.removeprefix("Grupo ") for title, _ in page),
            "".join(f'<h2 class="group">{h(title)}</h2>{table}' for title, table in page),
        )
        for page in pages
    ]


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
        elif m.result.status is MatchStatus.WAITING or m.best_of == 1:
            state = STATUS_TEXT[m.result.status]
        else:
            state = f"chico {m.chico} de {m.best_of}"
        lines.append(
            f'<tr data-match="{h(m.id)}"><td class="t">{h(m.table or "—")}</td>'
            f'<td class="team">{h(entrant_name(t, m.pairing.home))}</td><td class="vs">vs</td>'
            f'<td class="team">{h(entrant_name(t, m.pairing.away))}</td>'
            f'<td class="n">{h(state)}</td></tr>'
        )
    head = (
        '<tr><th class="t">Mesa</th><th>Local</th><th class="vs"></th><th>Visitante</th>'
        '<th class="n st"></th></tr>'
    )
    return [
        (round_label(t, r), f"<table><thead>{head}</thead><tbody>{''.join(c)}</tbody></table>")
        for c in _chunks(lines, LINES_PER_PAGE)
    ]


def _bracket_slides(t: Tournament) -> list[tuple[str, str]]:
    columns, third = bracket_columns(t)
    if not columns:
        return []
    pieces = bracket_slides(columns, BRACKET_FIRST)
    knockout = [m for m in t.round_matches(current_round(t)) if m.stage is not Stage.GROUP]
    title = f"Llave · {knockout[0].label}" if knockout else "Llave"
    return [(title, bracket_html(t, piece, third, last=piece is pieces[-1])) for piece in pieces]


_PLACES: Final = ("Campeón", "Subcampeón", "Tercer puesto", "Cuarto puesto")


def _podium_slides(t: Tournament) -> list[tuple[str, str]]:
    """A finished tournament's first page: its first four, by the final ranking."""
    if not t.finished:
        return []
    top = final_ranking(t)[: len(_PLACES)]
    lines = "".join(
        f'<div class="place p{i}" data-entrant="{h(e)}"><span class="what">{h(what)}</span>'
        f'<span class="who">{h(entrant_name(t, e))}</span></div>'
        for i, (what, e) in enumerate(zip(_PLACES, top, strict=False), start=1)
    )
    return [("Posiciones finales", f'<div class="podium">{lines}</div>')]


def _anyone_played(t: Tournament) -> bool:
    """Some match counted (the standings are not all zeros)."""
    return any(m.result.status in FINISHED and m.pairing.away is not None for m in t.matches)


def _waiting_to_start(t: Tournament) -> bool:
    """The round's matches are paired and none has started at its table yet."""
    matches = t.round_matches(current_round(t))
    played = [m for m in matches if m.pairing.away is not None and m.result.status not in (
        MatchStatus.WAITING, MatchStatus.ASSIGNED, MatchStatus.WALKOVER)]  # fmt: skip
    return bool(matches) and not played and not t.finished


def projector_page(t: Tournament) -> str:
    """The projector's pages (see the module docstring)."""
    fmt = t.spec.format if t.spec is not None else None
    if fmt is Format.KNOCKOUT:
        slides = _bracket_slides(t)
    elif fmt is Format.GROUPS:
        slides = _standings_slides(t) + _bracket_slides(t)
    elif fmt is not None:
        standing = _standings_slides(t) if _anyone_played(t) else []
        if _waiting_to_start(t):  # where each pair plays, before anything else
            slides = _round_slides(t) + standing
        else:
            slides = standing + _round_slides(t)
    else:
        slides = []
    slides = _podium_slides(t) + slides
    if not slides:
        slides = [(t.display_name, '<p class="empty">El torneo todavía no empezó.</p>')]
    body = "".join(
        f'<section class="slide"><h1><span>{h(title)}</span><span class="page">'
        f'{h(t.display_name)} · {i} de {len(slides)}</span></h1><div class="body">{content}</div>'
        "</section>"
        for i, (title, content) in enumerate(slides, start=1)
    )
    return document(
        f"Proyector: {t.display_name}", f'<div id="slides">{body}</div>', css=BRACKET_CSS + _CSS,
        script=_SCRIPT,
    )  # fmt: skip
