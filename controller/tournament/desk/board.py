"""The desk's terminal scoreboard: one line a table, the scores in matchsticks as text.

``render_board`` is what ``truco-table desk`` prints every ``--refresh`` seconds, in
Spanish for the organiser and the referee (a record's detail through
:func:`~.wording.detail_text`).
"""

from __future__ import annotations

import collections
import time
from typing import Final

from ...render.matchsticks import HALF_POINTS, POINTS_PER_SQUARE, sticks_for_score
from .state import DeskState, clean
from .wording import detail_text

__all__ = ["render_board", "sticks_text"]

#: A record's verdict as the board says it.
#: The flagged records the board lists (the last ones; every one is in the exports).
BOARD_FLAGGED: Final = 10

_VERDICT: Final = {
    "intact": "íntegro",
    "tampered": "ALTERADO",
    "unsealed": "sin sello",
    "unreadable": "ilegible",
    "unchecked": "sin verificar",
}
_GLYPHS: Final = " |┌⊓□⧄"  # 0..5 sticks of one square: left, top, right, bottom, diagonal


def sticks_text(points: int, target: int) -> str:
    """The score in matchsticks, one character a square (``⧄`` is five), malas and
    buenas apart: ``⧄⧄⧄│⧄┌`` is 22 of 30; beyond the target, ``+N``."""
    counts: dict[tuple[int, int], int] = collections.Counter(
        (s.half, s.square) for s in sticks_for_score(max(points, 0), target)
    )
    halves = []
    for half in range(target // HALF_POINTS):
        squares = [counts.get((half, sq), 0) for sq in range(HALF_POINTS // POINTS_PER_SQUARE)]
        halves.append("".join(_GLYPHS[n] for n in squares))
    text = "│".join(halves)
    if points > target:
        text += f"+{points - target}"
    return text


def _ago(seconds: float | None) -> str:
    if seconds is None:
        return "nunca"
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.0f}h"


def _n(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _clock(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(ts))


def render_board(state: DeskState, width: int = 120) -> str:
    """The scoreboard as text (what ``truco-table desk`` prints every second).

    Every text that came from the network is cleaned of control characters
    (:func:`~controller.tournament.desk.state.clean`) before it is printed.
    """
    snap = state.snapshot()
    tables = snap["tables"]
    finished = len(snap["results"])
    broker = snap["broker"]
    down = broker["connected"] is False
    lost = sum(1 for t in tables if t["online"] is False and t["offline_reason"] != "stopped")
    lines = []
    if down:
        lines += [
            f"!! SIN BROKER desde las {_clock(broker['since'])} (hace {_ago(broker['for_s'])}): "
            "estados y tantos según lo último que llegó, no en vivo",
            "",
        ]
    elif broker["connected"] is None:
        lines += ["!! todavía sin conexión con el broker", ""]
    lines += [
        f"Torneo {clean(snap['tournament'])}: {_n(len(tables), 'mesa', 'mesas')}, "
        f"{snap['online']} en línea, {_n(lost, 'caída', 'caídas')}, "
        f"{_n(finished, 'partida terminada', 'partidas terminadas')}, "
        f"{snap['attention_pending']} para el árbitro "
        f"({_n(snap['refusals_total'], 'rechazo', 'rechazos')}), "
        f"{_n(snap['flagged'], 'registro marcado', 'registros marcados')}, "
        f"{_n(snap['rejected'], 'mensaje rechazado', 'mensajes rechazados')}",
        "",
        f"{'MESA':<10} {'ESTADO':<8} {'VISTA':>5} {'PARTIDA':<14} {'MANO':>4}  "
        f"{'EQUIPO 0':<11}{'':>4}  {'EQUIPO 1':<11}{'':>4}  {'ÁRB':>3}  ÚLTIMO",
    ]
    for t in tables:
        if t["online"] is None or down:
            state_text = "?"
        elif t["online"]:
            state_text = "en línea"
        else:  # a clean stop is not the referee's worry; a lost table is
            state_text = "detenida" if t["offline_reason"] == "stopped" else "CAÍDA"
        if t["held_back"]:
            state_text = "RETENIDA"
        s0, s1 = t["score"]
        target = t["target"] if t["target"] in (15, 30) else 30
        last = clean(t["last"][-1].replace("\n", " ")) if t["last"] else ""
        if t["held_back"]:
            last = f"esperando el #{t['waiting_for']}, {t['held_back']} retenidos · {last}"
        if t["rules_problems"]:
            last = f"OTRAS REGLAS: {clean('; '.join(t['rules_problems']))} · {last}"
        row = (
            f"{clean(t['table'], 10):<10} {state_text:<8} {_ago(t['silent_s']):>5} "
            f"{clean(t['game'] or '-', 14):<14} {t['hand']:>4}  "
            f"{sticks_text(s0, target):<11}{s0:>4}  {sticks_text(s1, target):<11}{s1:>4}  "
            f"{len(t['attention']) or '':>3}  {last}"
        )
        lines.append(row[:width])
    flagged = [r for r in snap["results"] if not r["ok"]]
    if flagged:
        lines.append("")
        lines.append("Registros marcados:")
        for r in flagged[-BOARD_FLAGGED:]:
            verdict = _VERDICT.get(r["verdict"], r["verdict"])
            detail = detail_text(clean(r["detail"]))
            lines.append(f"  {clean(r['game'])}: {verdict}: {detail}"[:width])
        if len(flagged) > BOARD_FLAGGED:
            lines.append(f"  y {len(flagged) - BOARD_FLAGGED} más (en results.csv)")
    pending = snap["attention"]
    if pending:
        lines.append("")
        lines.append("Para el árbitro (el más viejo primero):")
        for a in pending[:8]:
            seat = "" if a["seat"] is None else f" asiento {a['seat']}"
            lines.append(
                f"  {clean(a['table'])} #{a['seq']}{seat}: {a['words']}: {clean(a['text'])}"[:width]
            )
    if snap["rejections"]:
        lines.append("")
        lines.append(
            f"Mensajes rechazados (nunca aplicados; {snap['rejected']} en total, los últimos 5):"
        )
        for j in snap["rejections"][-5:]:
            lines.append(f"  {_clock(j['ts'])} {clean(j['table'])}: {clean(j['reason'])}"[:width])
    return "\n".join(lines)
