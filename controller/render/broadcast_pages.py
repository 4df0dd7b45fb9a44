"""The broadcast's pages: the stream's page (1920x1080) and the bar's TV page.

Served by the table (``controller.table.broadcast``) and by the desk; both pages only
draw what their server's JSON says (``/api/transmision``, ``/api/tv``), polled twice a
second: the delay and the secrecy are the server's (``controller.render.broadcast``).

The font (DejaVu Sans Bold, ``fonts/``, Bitstream Vera licence: may be redistributed
with software, its notice beside it) is shipped and served with the pages, so a
streaming machine draws them the same without it installed. The QR codes are made with
``segno`` (PyPI): a QR encoder is a standard (ISO/IEC 18004: Reed-Solomon codes, masks,
version tables) better taken from a well-kept library than written again here.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Final

from .broadcast import BroadcastLog

__all__ = [
    "FONTS",
    "broadcast_page",
    "font_bytes",
    "qr_svg",
    "replayer_page",
    "tv_page",
    "tv_table",
]

#: The font files the pages may ask for (``/fuentes/<name>``).
FONTS: Final = frozenset({"DejaVuSans-Bold.ttf"})


def font_bytes(name: str) -> bytes:
    if name not in FONTS:
        raise KeyError(name)
    return resources.files("controller.render").joinpath("fonts", name).read_bytes()


def qr_svg(text: str, *, scale: int = 6) -> str:
    """A QR code of ``text`` as an SVG document (dark on white, quiet zone included)."""
    import io

    import segno

    code = segno.make(text, error="m", micro=False)
    out = io.BytesIO()
    code.save(out, kind="svg", scale=scale, dark="#000", light="#fff", xmldecl=False)
    return out.getvalue().decode("utf-8")


def tv_table(log: BroadcastLog, now: float) -> dict[str, Any]:
    """One table on the TV: score, mano, a hand's end, a flor or a falta envido called
    in the hand being played. No card, played or not, and no delay."""
    seen = log.view(now, 0.0, teaching=False)
    calls = seen["calls"]
    return {
        "table": seen["table"],
        "names": seen["names"],
        "started": seen["started"],
        "score": seen["score"],
        "target": seen["target"],
        "players": seen["players"],
        "hand": seen.get("hand", 0),
        "mano": seen.get("mano"),
        "hand_over": seen.get("hand_over", False),
        "winner": seen.get("winner"),
        "flor": any("flor" in c and "achicó" not in c for c in calls),
        "falta_envido": any("falta envido" in c for c in calls),
    }


_FONT_FACE: Final = """@font-face{font-family:"DejaVu Sans";font-weight:700;
src:url("/fuentes/DejaVuSans-Bold.ttf") format("truetype")}"""

#: The matchsticks drawn in SVG: a square of four sticks crossed by the fifth per 5
#: points; malas on top, buenas under them (15-point games: one row).
_STICKS_JS: Final = r"""
function sticks(points, target, size) {
  const s = size, gap = s * 0.25, half = Math.ceil(target / 2);
  const rows = target === 30 ? 2 : 1, per = Math.ceil(half / 5);
  const w = per * (s + gap), h = rows * (s + gap) + (rows - 1) * gap;
  let out = `<svg class="sticks" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">`;
  for (let row = 0; row < rows; row++) {
    const inRow = Math.max(0, Math.min(points - row * half, half));
    for (let sq = 0; sq < per; sq++) {
      const n = Math.max(0, Math.min(inRow - sq * 5, 5));
      const x = sq * (s + gap), y = row * (s + 2 * gap), m = s * 0.08;
      const lines = [[x + m, y + m, x + m, y + s - m], [x + m, y + m, x + s - m, y + m],
        [x + s - m, y + m, x + s - m, y + s - m], [x + m, y + s - m, x + s - m, y + s - m],
        [x + 2 * m, y + 2 * m, x + s - 2 * m, y + s - 2 * m]];
      for (let i = 0; i < n; i++) out += `<line x1="${lines[i][0]}" y1="${lines[i][1]}"
        x2="${lines[i][2]}" y2="${lines[i][3]}" />`;
    }
  }
  return out + "</svg>";
}
"""

_BROADCAST: Final = """<!doctype html>
<html lang="es"><head><meta charset="utf-8"><title>Transmisión</title>
<style>
__FONT__
html,body{margin:0;width:1920px;height:1080px;overflow:hidden}
body{font-family:"DejaVu Sans",sans-serif;font-weight:700;color:#f4f1e8;
background:__BACKGROUND__}
.top{position:absolute;left:40px;right:40px;top:24px;height:150px;display:flex;
align-items:center;justify-content:space-between;background:rgba(8,40,24,.86);
border-radius:18px;padding:0 36px;box-sizing:border-box}
.team{display:flex;align-items:center;gap:22px;font-size:40px}
.team .pts{font-size:72px;min-width:90px;text-align:center}
.t0{color:#ffe082}.t1{color:#80d8ff}
.sticks line{stroke:currentColor;stroke-width:5;stroke-linecap:round}
.mid{text-align:center;font-size:28px;color:#cfe8d6}.mid b{display:block;font-size:36px;color:#fff}
.seats{position:absolute;left:40px;top:200px;width:1260px;height:820px;display:grid;
grid-template-columns:1fr 1fr;gap:22px}
.seat{background:rgba(8,40,24,.86);border-radius:18px;padding:16px 22px;box-sizing:border-box;
border-left:12px solid #ffe082;overflow:hidden}
.seat.team1{border-left-color:#80d8ff}.seat.turn{box-shadow:0 0 0 5px #fff inset}
.seat h2{margin:0 0 10px;font-size:30px;display:flex;justify-content:space-between}
.seat h2 small{font-size:26px;color:#cfe8d6}
.cards{display:flex;gap:20px;margin-top:14px}
.card{width:150px;height:215px;background:#fbf8ef;color:#222;border-radius:14px;
display:flex;flex-direction:column;align-items:center;justify-content:center;font-size:76px;
position:relative;box-shadow:0 4px 10px rgba(0,0,0,.5)}
.card small{font-size:26px}.card.E{color:#1e3a8a}.card.B{color:#166534}.card.O{color:#a16207}
.card.C{color:#b91c1c}.card.played{opacity:.45}
.card .baza{position:absolute;bottom:4px;right:8px;font-size:20px;color:#222}
.seats.p6{grid-template-columns:1fr 1fr 1fr}
.p6 .card{width:112px;height:160px;font-size:56px}.p6 .card small{font-size:20px}
.p6 .seat h2{font-size:24px;flex-direction:column}.p6 .seat h2 small{font-size:22px}
.p6 .cards{gap:10px;margin-top:8px}
.card.back{background:repeating-linear-gradient(45deg,#7f1d1d,#7f1d1d 10px,#991b1b 10px,
#991b1b 20px)}
.side{position:absolute;right:40px;top:200px;width:540px;height:820px;display:flex;
flex-direction:column;gap:22px}
.box{background:rgba(8,40,24,.86);border-radius:18px;padding:18px 24px;box-sizing:border-box}
.box h3{margin:0 0 10px;font-size:26px;color:#cfe8d6}
#calls{flex:1;overflow:hidden;font-size:28px;line-height:1.35}
#best{font-size:30px;line-height:1.3}#best .line{font-size:22px;color:#cfe8d6}
.note{position:absolute;left:40px;bottom:8px;font-size:22px;color:#cfe8d6}
.held{color:#ffab91}
</style></head><body>
<div class="top"><div class="team t0" id="team0"></div>
<div class="mid" id="mid"></div><div class="team t1" id="team1"></div></div>
<div class="seats" id="seats"></div>
<div class="side"><div class="box" id="best"></div>
<div class="box" id="callsbox"><h3>Cantos de la mano</h3><div id="calls"></div></div></div>
<div class="note" id="note"></div>
__CONTROLS__
<script>
const ESC = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"};
const esc = s => String(s ?? "").replace(/[&<>"']/g, c => ESC[c]);
__STICKS__
const SUIT = {E: "espada", B: "basto", O: "oro", C: "copa"};
const card = (c, baza) => `<div class="card ${c.slice(-1)}${baza == null ? "" : " played"}">
  ${esc(c.slice(0, -1))}<small>${SUIT[c.slice(-1)]}</small>
  ${baza == null ? "" : `<span class="baza">baza ${baza + 1}</span>`}</div>`;
const back = () => `<div class="card back"></div>`;
const key = new URLSearchParams(location.search).get("clave") || "";
async function refresh() {
  let f;
  try { f = await (await fetch(__SOURCE__)).json(); }
  catch (e) { return; }
  for (const t of [0, 1]) {
    document.getElementById("team" + t).innerHTML = t === 0
      ? `<span>${esc(f.names[0])}</span>${sticks(f.score[0], f.target, 44)}
         <span class="pts">${f.score[0]}</span>`
      : `<span class="pts">${f.score[1]}</span>${sticks(f.score[1], f.target, 44)}
         <span>${esc(f.names[1])}</span>`;
  }
  const value = f.value === 1 ? "1 punto" : `${f.value} puntos`;
  document.getElementById("mid").innerHTML = !f.started ? `<b>${esc(f.table)}</b>todavía no empezó`
    : `<b>${esc(f.table)} · mano ${f.hand}</b>` + (f.winner != null
      ? `ganó ${esc(f.names[f.winner])}` : f.hand_over ? "terminó la mano"
      : `es mano el asiento ${f.mano} · en juego ${value}`);
  document.getElementById("seats").className = "seats p" + f.players;
  document.getElementById("seats").innerHTML = f.seats.map(s => {
    const cards = s.cards ? s.cards.map(c => card(c.card, c.baza)).join("")
      : s.played.map(p => card(p.card, p.baza)).join("") +
        Array(Math.max(0, 3 - s.played.length)).fill(0).map(back).join("");
    const pts = s.envido == null ? ""
      : `envido ${s.envido}` + (s.flor == null ? "" : ` · flor ${s.flor}`);
    return `<div class="seat team${s.team}${s.turn ? " turn" : ""}">
      <h2>Asiento ${s.seat} · ${esc(f.names[s.team])}<small>${pts}</small></h2>
      <div class="cards">${cards}</div></div>`;
  }).join("");
  const best = document.getElementById("best");
  if (f.best) {
    best.innerHTML = "<h3>Con las cartas a la vista</h3>" + f.best.map(b =>
      `<div>${f.pica_pica ? `pica ${b.seats.join(" y ")}: ` : ""}gana
       <span class="t${b.team}">${esc(b.name)}</span>
       (${b.value === 1 ? "1 punto" : b.value + " puntos"})</div>
       <div class="line">${b.line.map(x => { const [seat, c] = x.split(":");
         return `${seat} → ${c.slice(0, -1)} de ${SUIT[c.slice(-1)]}`; }).join(" · ")}</div>`
    ).join("");
  } else {
    best.innerHTML = "<h3>Con las cartas a la vista</h3>" + (f.held_back
      ? `<div class="held">cartas ocultas hasta que termine la mano</div>`
      : `<div class="line">sin mano en juego</div>`);
  }
  document.getElementById("calls").innerHTML = f.calls.slice(-12).map(esc).join("<br>") || "—";
  document.getElementById("note").textContent = f.teaching
    ? "Mesa para enseñar: cartas a la vista, sin demora"
    : `En diferido: ${Math.round(f.delay_s)} s` +
      (f.held_back ? " · las cartas se muestran al terminar la mano" : "");
  overflow();
}
// whether anything drawn goes past the 1920x1080 page or out of its box (the tests read it)
function overflow() {
  const boxes = [...document.querySelectorAll(".seat, .box, .top")];
  const out = document.documentElement.scrollWidth > 1920 ||
    document.documentElement.scrollHeight > 1080 ||
    boxes.some(b => b.scrollHeight > b.clientHeight + 1 || b.scrollWidth > b.clientWidth + 1);
  document.body.dataset.overflow = out ? "sí" : "no";
}
__START__
</script></body></html>
"""

_LIVE_SOURCE: Final = '"/api/transmision?clave=" + encodeURIComponent(key)'
_LIVE_START: Final = "refresh(); setInterval(refresh, 500);"

#: The replayer: one step of the record at a time, ◀ ▶ (or the arrow keys) to move.
_STEP_CONTROLS: Final = """<div class="steps"><button id="back">◀</button>
<span id="said"></span><button id="next">▶</button></div>
<style>.steps{position:absolute;right:40px;bottom:8px;display:flex;gap:16px;
align-items:center;font-size:24px}.steps button{font:inherit;font-size:28px;padding:2px 18px;
border-radius:10px;border:0;background:#f4f1e8;color:#0f3d24}#note{display:none}</style>"""
_STEP_SOURCE: Final = '"/api/paso?n=" + step'
_STEP_START: Final = """let step = Number(new URLSearchParams(location.search).get("paso") || 0);
const total = __TOTAL__;
function go(to) {
  step = Math.max(0, Math.min(total - 1, to));
  history.replaceState(null, "", "?paso=" + step);
  refresh().then(async () => {
    const f = await (await fetch(__SOURCE__)).json();
    document.getElementById("said").textContent = `paso ${step + 1} de ${total}: ${f.said}`;
  });
}
document.getElementById("back").onclick = () => go(step - 1);
document.getElementById("next").onclick = () => go(step + 1);
document.addEventListener("keydown", e => {
  if (e.key === "ArrowLeft") go(step - 1);
  if (e.key === "ArrowRight") go(step + 1);
});
go(step);"""


def broadcast_page(*, transparent: bool = False, source: str = "/api/transmision") -> str:
    """The stream's page; ``transparent``: no background (a browser source's overlay);
    ``source``: where its JSON is (the page's own ``?clave=`` goes with it)."""
    background = "transparent" if transparent else "#0f3d24"
    return (
        _BROADCAST.replace("__FONT__", _FONT_FACE)
        .replace("__BACKGROUND__", background)
        .replace("__STICKS__", _STICKS_JS)
        .replace("__CONTROLS__", "")
        .replace("__START__", _LIVE_START)
        .replace("__SOURCE__", _LIVE_SOURCE.replace("/api/transmision", json.dumps(source)[1:-1]))
    )


def replayer_page(total: int) -> str:
    """The hand replayer's page over ``total`` steps (``/api/paso?n=K``: step K's frame)."""
    return (
        _BROADCAST.replace("__FONT__", _FONT_FACE)
        .replace("__BACKGROUND__", "#0f3d24")
        .replace("__STICKS__", _STICKS_JS)
        .replace("__CONTROLS__", _STEP_CONTROLS)
        .replace("__START__", _STEP_START.replace("__TOTAL__", str(int(total))))
        .replace("__SOURCE__", _STEP_SOURCE)
    )


_TV: Final = """<!doctype html>
<html lang="es"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>Las mesas</title>
<style>
__FONT__
html,body{margin:0;overflow:hidden}
body{font-family:"DejaVu Sans",sans-serif;font-weight:700;background:#0f3d24;color:#f4f1e8;
min-height:100vh}
h1{margin:16px 32px;font-size:40px}
#tables{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:20px;
padding:0 32px 32px}
.t{background:#0b2e1b;border-radius:16px;padding:16px 22px;display:grid;
grid-template-columns:1fr auto;gap:8px 16px;align-items:center}
.t h2{margin:0;font-size:34px}.row{display:flex;align-items:center;gap:14px;font-size:28px}
.row .p{font-size:44px;min-width:60px}.t0{color:#ffe082}.t1{color:#80d8ff}
.sticks line{stroke:currentColor;stroke-width:4;stroke-linecap:round}
.state{font-size:24px;color:#cfe8d6}.hot{color:#ff8a80}
.qr{grid-row:1 / span 4;grid-column:2;width:120px;height:120px;background:#fff;border-radius:8px}
body.one .qr{display:none}
</style></head><body>
<h1 id="title">Las mesas</h1><div id="tables"></div>
<script>
const ESC = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"};
const esc = s => String(s ?? "").replace(/[&<>"']/g, c => ESC[c]);
__STICKS__
const only = new URLSearchParams(location.search).get("mesa");
if (only) document.body.classList.add("one");
async function refresh() {
  let d;
  try { d = await (await fetch("/api/tv")).json(); } catch (e) { return; }
  const tables = d.tables.filter(t => !only || t.table === only);
  document.getElementById("title").textContent = only ? only : "Las mesas";
  document.getElementById("tables").innerHTML = tables.map(t => `<div class="t">
    <h2>${esc(t.table)}</h2>
    <img class="qr" alt="QR de ${esc(t.table)}"
      src="/qr/tv.svg?mesa=${encodeURIComponent(t.table)}">
    ${[0, 1].map(k => `<div class="row t${k}"><span class="p">${t.score[k]}</span>
      ${sticks(t.score[k], t.target, 30)}<span>${esc(t.names[k])}</span></div>`).join("")}
    <div class="state">${!t.started ? "todavía no empezó"
      : t.winner != null ? `ganó ${esc(t.names[t.winner])}`
      : `mano ${t.hand} · es mano el asiento ${t.mano}` + (t.hand_over ? " · terminó la mano" : "")}
      ${t.flor ? ' · <span class="hot">¡flor!</span>' : ""}
      ${t.falta_envido ? ' · <span class="hot">¡falta envido!</span>' : ""}</div>
  </div>`).join("");
}
refresh(); setInterval(refresh, 1000);
</script></body></html>
"""


def tv_page() -> str:
    """The bar's TV page: every table the server knows (``?mesa=NAME``: one, for a
    phone; each table's QR code opens that)."""
    return _TV.replace("__FONT__", _FONT_FACE).replace("__STICKS__", _STICKS_JS)
