"""A seat's screen: the matchstick score plus two lines about the hand.

Pure drawing: ``render_screen`` is a function of a ``SeatScreen`` (the seat's view, its
transient message and what its pad is doing), unaware of any device.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from PIL import Image, ImageDraw

from ..engine import Kind, SeatView
from .matchsticks import SCOREBOARD_BOX, SCREEN_SIZE, TEXT_BOX, draw_scoreboard
from .pixelfont import FONT_5X7

__all__ = ["SeatScreen", "render_screen", "screen_lines"]

LINE_CHARS = (SCREEN_SIZE[0] + FONT_5X7.spacing) // (FONT_5X7.width + FONT_5X7.spacing)

_LADDER = {1: "TRUCO", 2: "RETRUCO", 3: "VALE CUATRO"}
_ENVIDO = {Kind.ENVIDO: "ENVIDO", Kind.REAL_ENVIDO: "REAL", Kind.FALTA_ENVIDO: "FALTA"}


@dataclass(frozen=True, slots=True)
class SeatScreen:
    view: SeatView
    message: str | None = None  # a refusal or an announcement, for a few seconds
    refusal: bool = False
    prompt: str | None = None  # the pad's menu or number entry
    dealing: bool = False


def plain(text: str) -> str:
    """Upper case, no accents, only what the 5x7 font draws."""
    decomposed = unicodedata.normalize("NFKD", text.upper())
    out = []
    for ch in decomposed:
        if unicodedata.combining(ch):
            continue
        out.append(ch if FONT_5X7.supports(ch) else " ")
    return " ".join("".join(out).split())


def _state_line(view: SeatView, dealing: bool) -> str:
    if view.winner is not None:
        return "GANAMOS" if view.winner == view.team else "GANARON ELLOS"
    if dealing:
        return "REPARTIENDO"
    if not view.hand_in_progress:
        return "FIN DE LA MANO"
    telling = view.telling
    if telling is not None:
        if telling.next_seat == view.seat:
            return "CANTE SUS TANTOS"
        return f"CANTA EL {telling.next_seat}"
    if view.envido_pending is not None:
        chain = " ".join(_ENVIDO[k] for k in view.envido_chain)
        return f"{chain} QUIERO" if view.envido_pending != view.team else f"{chain} ESPERA"
    if view.flor_pending is not None:
        return "CONTRAFLOR QUIERO" if view.flor_pending == view.team else "CONTRAFLOR ESPERA"
    if view.truco_pending is not None:
        level, team = view.truco_pending
        return f"{_LADDER[level]} QUIERO" if team != view.team else f"{_LADDER[level]} ESPERA"
    if view.my_turn:
        return "TU TURNO"
    return f"JUEGA EL {view.turn}"


def _hand_line(view: SeatView) -> str:
    parts = []
    if view.truco_level:
        parts.append(_LADDER[view.truco_level])
    if view.bazas:
        parts.append(
            " ".join("P" if r is None else ("N" if r == view.team else "E") for r in view.bazas)
        )
    if view.mano is not None:
        parts.append("MANO" if view.mano == view.seat else f"MANO {view.mano}")
    return " ".join(parts)


def screen_lines(screen: SeatScreen) -> tuple[str, str]:
    """The two text lines under the score (each at most ``LINE_CHARS`` long)."""
    first = screen.prompt or _state_line(screen.view, screen.dealing)
    second = screen.message or _hand_line(screen.view)
    return plain(first)[:LINE_CHARS], plain(second)[:LINE_CHARS]


def render_screen(screen: SeatScreen) -> Image.Image:
    view = screen.view
    image = Image.new("1", SCREEN_SIZE, 0)
    draw = ImageDraw.Draw(image)
    draw_scoreboard(draw, SCOREBOARD_BOX, view.ours, view.theirs, view.target)
    first, second = screen_lines(screen)
    left, top = TEXT_BOX[0], TEXT_BOX[1] + 1
    FONT_5X7.draw(draw, (left, top), first)
    if screen.refusal and screen.message:
        draw.rectangle((0, top + 8, SCREEN_SIZE[0] - 1, SCREEN_SIZE[1] - 1), fill=1)
        FONT_5X7.draw(draw, (left + 1, top + 9), second, fill=0)
    else:
        FONT_5X7.draw(draw, (left, top + 9), second)
    return image
