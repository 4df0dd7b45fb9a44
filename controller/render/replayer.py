"""The hand replayer: any finished game's record, step by step with the cards face up.

``steps(text)`` gives one broadcast frame (``controller.render.broadcast.frame``'s JSON,
with ``said``: the statement just applied, in Spanish) per statement of the record, from
its start; ``hand_steps(text, hand)`` those of one hand (from its deal to its last
action). A record read here is of a game already played (the desk's ``records/``, the
table's ``archive/``): its cards are shown as the replay goes.

``export_gif(frames, path)`` draws the frames with Pillow (the project's font) into an
animated GIF; ``export_video(frames, path)`` into an MP4 with ffmpeg when it is
installed (``video_available``). Pure drawing and files: no clock, no network.
"""

from __future__ import annotations

import functools
import io
import shutil
import subprocess
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Final

from PIL import Image, ImageDraw, ImageFont

from ..transcript import parse, replay
from .broadcast import _calls, record_log

__all__ = ["export_gif", "export_video", "hand_steps", "steps", "video_available"]

#: An exported picture's size, and how long each step stays on it.
SIZE: Final = (1280, 720)
STEP_MS: Final = 1400

_SUIT: Final = {"E": "espada", "B": "basto", "O": "oro", "C": "copa"}
_SUIT_COLOUR: Final = {"E": "#1e3a8a", "B": "#166534", "O": "#a16207", "C": "#b91c1c"}
_TEAM_COLOUR: Final = ("#ffe082", "#80d8ff")


def _card_said(word: str) -> str:
    card = word.upper()
    return f"el {card[:-1]} de {_SUIT.get(card[-1], card[-1])}"


def _said(line: str) -> str:
    words = line.split()
    head = words[0].lower()
    if head == "table":
        return "empieza el partido"
    if head == "hand":
        return "se reparte una mano"
    if head in ("dealer", "score"):
        return ""
    if len(words) > 2 and words[1].lower() == "play":
        return f"asiento {words[0]} juega {_card_said(words[2])}"
    if len(words) > 2 and words[1].lower() == "show":
        return f"asiento {words[0]} muestra " + " y ".join(_card_said(w) for w in words[2:])
    called = _calls([line])
    if called:
        return called[0][0].lower() + called[0][1:]
    return f"asiento {words[0]}: {' '.join(words[1:]).replace('-', ' ')}"


def steps(
    text: str, *, table: str = "Repetición", names: tuple[str, str] = ("Equipo 0", "Equipo 1")
) -> list[dict[str, Any]]:
    """One frame per statement of the record ``text`` (``TranscriptError``, naming the
    line, when it is not a game's record or a hand starts before the last one ended; the
    parser and the replay run before any frame)."""
    replay(parse(text))
    log = record_log(text, table=table, names=names, step_s=1.0)
    out = []
    for i, (_, line) in enumerate(log.lines):
        shown = log.view(float(i), 0.0, teaching=True)
        shown["said"] = _said(line)
        shown["step"] = i
        out.append(shown)
    return out


def hand_steps(
    text: str,
    hand: int,
    *,
    table: str = "Repetición",
    names: tuple[str, str] = ("Equipo 0", "Equipo 1"),
) -> list[dict[str, Any]]:
    """The frames of hand ``hand`` (from 1): from its deal to its last statement
    (``ValueError`` when the record has no such hand)."""
    if hand < 1:
        raise ValueError(f"las manos se cuentan desde 1: no hay una mano {hand}")
    frames = [f for f in steps(text, table=table, names=names) if f.get("hand") == hand]
    if not frames:
        raise ValueError(f"el registro no tiene una mano {hand}")
    return frames


@functools.lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.FreeTypeFont:
    data = resources.files("controller.render").joinpath("fonts", "DejaVuSans-Bold.ttf")
    return ImageFont.truetype(io.BytesIO(data.read_bytes()), size)


def draw(frame: dict[str, Any]) -> Image.Image:
    """One frame as a picture (``SIZE``): score, every seat's cards (those played
    dimmed, with their baza), envido points, the best-play line and what was said."""
    img = Image.new("RGB", SIZE, "#0f3d24")
    d = ImageDraw.Draw(img)
    big, mid, small = _font(40), _font(26), _font(20)
    names = frame["names"]
    d.rounded_rectangle((20, 16, SIZE[0] - 20, 96), 14, fill="#0b2e1b")
    d.text((40, 34), f"{names[0]}  {frame['score'][0]}", font=big, fill=_TEAM_COLOUR[0])
    right = f"{frame['score'][1]}  {names[1]}"
    d.text((SIZE[0] - 40 - d.textlength(right, font=big), 34), right, font=big,
           fill=_TEAM_COLOUR[1])  # fmt: skip
    if frame.get("started"):
        centre = f"mano {frame['hand']} · es mano el asiento {frame['mano']}"
        d.text(((SIZE[0] - d.textlength(centre, font=small)) / 2, 46), centre, font=small,
               fill="#cfe8d6")  # fmt: skip
    seats = frame["seats"]
    columns = 2 if len(seats) <= 4 else 3
    box_w, box_h = (860 - 20 * (columns - 1)) // columns, 250 if len(seats) > 2 else 500
    card_w = min(80, (box_w - 40) // 3 - 10)
    for i, seat in enumerate(seats):
        x = 20 + (i % columns) * (box_w + 20)
        y = 116 + (i // columns) * (box_h + 16)
        d.rounded_rectangle((x, y, x + box_w, y + box_h), 12, fill="#0b2e1b",
                            outline="#ffffff" if seat["turn"] else None, width=3)  # fmt: skip
        d.rectangle((x, y + 8, x + 6, y + box_h - 8), fill=_TEAM_COLOUR[seat["team"]])
        title = f"Asiento {seat['seat']}"
        if seat["envido"] is not None:
            title += f" · envido {seat['envido']}"
        if seat["flor"] is not None:
            title += f" · flor {seat['flor']}"
        d.text((x + 18, y + 10), title, font=small, fill="#f4f1e8")
        cards = seat["cards"] or [{"card": p["card"], "baza": p["baza"]} for p in seat["played"]]
        for k, c in enumerate(cards):
            cx, cy = x + 18 + k * (card_w + 12), y + 44
            played = c["baza"] is not None
            d.rounded_rectangle((cx, cy, cx + card_w, cy + card_w * 1.45), 8,
                                fill="#8a9a8e" if played else "#fbf8ef")  # fmt: skip
            name = c["card"]
            colour = _SUIT_COLOUR[name[-1]]
            d.text((cx + card_w / 2, cy + card_w * 0.55), name[:-1], font=big, fill=colour,
                   anchor="mm")  # fmt: skip
            d.text((cx + card_w / 2, cy + card_w * 1.05), _SUIT[name[-1]], font=_font(14),
                   fill=colour, anchor="mm")  # fmt: skip
            if played:
                d.text((cx + card_w / 2, cy + card_w * 1.6), f"baza {c['baza'] + 1}",
                       font=_font(14), fill="#cfe8d6", anchor="mm")  # fmt: skip
    side = 900
    d.rounded_rectangle((side, 116, SIZE[0] - 20, 400), 12, fill="#0b2e1b")
    d.text((side + 16, 128), "Con las cartas a la vista", font=small, fill="#cfe8d6")
    y = 160
    for best in frame.get("best") or ():
        points = "1 punto" if best["value"] == 1 else f"{best['value']} puntos"
        d.text((side + 16, y), f"gana {best['name']} ({points})", font=small,
               fill=_TEAM_COLOUR[best["team"]])  # fmt: skip
        y += 30
        line = "  ".join(x.replace(":", "→") for x in best["line"])
        for chunk in _wrap(d, line, small, SIZE[0] - 40 - side):
            d.text((side + 16, y), chunk, font=_font(16), fill="#cfe8d6")
            y += 22
    d.rounded_rectangle((side, 416, SIZE[0] - 20, 700), 12, fill="#0b2e1b")
    d.text((side + 16, 428), "Cantos de la mano", font=small, fill="#cfe8d6")
    for k, call in enumerate(frame["calls"][-8:]):
        d.text((side + 16, 462 + k * 28), call, font=small, fill="#f4f1e8")
    said = frame.get("said") or ""
    d.text((20, SIZE[1] - 36), said, font=mid, fill="#ffffff")
    return img


def _wrap(d: ImageDraw.ImageDraw, text: str, font: ImageFont.FreeTypeFont, width: int) -> list[str]:
    out: list[str] = []
    line = ""
    for word in text.split("  "):
        probe = f"{line}  {word}" if line else word
        if line and d.textlength(probe, font=font) > width:
            out.append(line)
            line = word
        else:
            line = probe
    return out + ([line] if line else [])


def export_gif(frames: Sequence[dict[str, Any]], path: Path) -> Path:
    """The frames as an animated GIF (``STEP_MS`` each, the last one longer)."""
    pictures = [draw(f).convert("P", palette=Image.Palette.ADAPTIVE) for f in frames]
    if not pictures:
        raise ValueError("no hay pasos para exportar")
    durations = [STEP_MS] * (len(pictures) - 1) + [STEP_MS * 3]
    pictures[0].save(path, format="GIF", save_all=True, append_images=pictures[1:],
                     duration=durations, loop=0, optimize=False)  # fmt: skip
    return path


def video_available() -> bool:
    return shutil.which("ffmpeg") is not None


def export_video(frames: Sequence[dict[str, Any]], path: Path) -> Path:
    """The frames as an MP4 (H.264) with ffmpeg (``RuntimeError`` without it, or when it
    fails: its last words)."""
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise RuntimeError("ffmpeg no está instalado: exportá un GIF (--gif)")
    rate = 1000 / STEP_MS
    proc = subprocess.Popen(
        [ffmpeg, "-y", "-loglevel", "error", "-f", "image2pipe", "-framerate", f"{rate:.4f}",
         "-i", "-", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-r", "25", str(path)],
        stdin=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None
    for f in frames:
        draw(f).save(proc.stdin, format="PNG")
    _, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"ffmpeg falló: {err.decode('utf-8', 'replace').strip()[-300:]}")
    return path
