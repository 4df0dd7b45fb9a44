"""``truco-table replay-hand``: the hand replayer, for any finished game's record.

The record of a game already played (the desk's ``records/``, the table's ``archive/``),
step by step with the cards face up:

- without options: every step of the hand (``--mano N``; all of them without it) in the
  terminal, one line each;
- ``--gif SALIDA.gif``: the hand as an animated picture (Pillow), to share;
- ``--video SALIDA.mp4``: the same as a short video, where ffmpeg is installed;
- ``--puerto P``: the replayer's page on ``http://127.0.0.1:P/`` (◀ ▶ or the arrow keys
  step through it), until Ctrl-C.

Exit status: 0 done; 2 an unreadable or malformed record, a hand it does not have, a
video without ffmpeg (one line in Spanish on standard error).
"""

from __future__ import annotations

import argparse
import errno
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..render.answer import answer
from ..render.broadcast_pages import FONTS, font_bytes, replayer_page
from ..render.replayer import export_gif, export_video, hand_steps, steps
from ..textfile import os_reason
from ..transcript import RecordFileError, TranscriptError, read_record
from .arguments import port

__all__ = ["configure"]


def _line(frame: dict[str, Any]) -> str:
    seats = []
    for seat in frame["seats"]:
        cards = seat["cards"] or [{"card": p["card"], "baza": p["baza"]} for p in seat["played"]]
        held = " ".join(c["card"] + ("*" if c["baza"] is not None else "") for c in cards)
        seats.append(f"{seat['seat']}: {held}")
    best = frame.get("best") or []
    gana = "; ".join(f"a la vista gana {b['name']} ({b['value']})" for b in best)
    score = f"{frame['score'][0]}-{frame['score'][1]}"
    said = frame["said"] or "-"
    return f"paso {frame['step'] + 1}: {said} · {score} · {' | '.join(seats)}" + (
        f" · {gana}" if gana else ""
    )


def _cmd(args: argparse.Namespace) -> int:
    name = "truco-table replay-hand"
    try:
        text = read_record(args.archivo)
        names = (args.nombres[0], args.nombres[1]) if args.nombres else ("Equipo 0", "Equipo 1")
        if args.mano is not None:
            frames = hand_steps(text, args.mano, table=Path(args.archivo).stem, names=names)
        else:
            frames = steps(text, table=Path(args.archivo).stem, names=names)
    except RecordFileError as e:
        print(f"{name}: {e}", file=sys.stderr)
        return 2
    except TranscriptError as e:
        lines = text.splitlines()
        shown = lines[e.line - 1].strip()[:80] if 0 < e.line <= len(lines) else ""
        print(f"{name}: {args.archivo}: línea {e.line}: no es un registro de partida que se "
              f"pueda jugar: «{shown}»", file=sys.stderr)  # fmt: skip
        return 2
    except ValueError as e:
        print(f"{name}: {args.archivo}: {e}", file=sys.stderr)
        return 2
    if not frames:
        print(f"{name}: {args.archivo}: el registro está vacío", file=sys.stderr)
        return 2
    if args.gif or args.video:
        try:
            for out in (args.gif, args.video):
                if out and Path(out).is_dir():
                    raise IsADirectoryError(errno.EISDIR, "", out)
                if out and not Path(out).resolve().parent.is_dir():
                    raise FileNotFoundError(errno.ENOENT, "", out)
            if args.gif:
                export_gif(frames, Path(args.gif))
                print(f"{args.gif}: {len(frames)} pasos")
            if args.video:
                export_video(frames, Path(args.video))
                print(f"{args.video}: {len(frames)} pasos")
        except OSError as e:
            where = e.filename if e.filename is not None else (args.gif or args.video)
            why = os_reason(e, writing=True)
            print(f"{name}: no puedo escribir {where}: {why}", file=sys.stderr)
            return 2
        except RuntimeError as e:
            print(f"{name}: {e}", file=sys.stderr)
            return 2
        return 0
    if args.puerto is not None:
        return _serve(frames, args.puerto)
    for frame in frames:
        print(_line(frame))
    return 0


def _serve(frames: list[dict[str, Any]], where: int) -> int:
    page = replayer_page(len(frames)).encode("utf-8")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: bytes, kind: str) -> None:
            answer(self, status, body, kind)

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            if url.path == "/":
                self._send(200, page, "text/html; charset=utf-8")
            elif url.path == "/api/paso":
                asked = (parse_qs(url.query).get("n") or ["0"])[0]
                n = int(asked) if asked.isdigit() else 0
                frame = frames[max(0, min(n, len(frames) - 1))]
                self._send(200, json.dumps(frame, ensure_ascii=False).encode(), "application/json")
            elif url.path.startswith("/fuentes/") and url.path[9:] in FONTS:
                self._send(200, font_bytes(url.path[9:]), "font/ttf")
            else:
                self._send(404, "No existe esa página.\n".encode(), "text/plain; charset=utf-8")

    try:
        server = ThreadingHTTPServer(("127.0.0.1", where), Handler)
    except OSError as e:
        print(f"truco-table replay-hand: no se puede abrir el puerto {where}: "
              f"{e.strerror or e}", file=sys.stderr)  # fmt: skip
        return 2
    print(f"La repetición: http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C termina)",
          flush=True)  # fmt: skip
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        thread.join()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()
    return 0


def configure(p: argparse.ArgumentParser) -> None:
    """The ``replay-hand`` subcommand's arguments."""
    p.add_argument("archivo", help="el registro (.truco) de un partido ya jugado")
    p.add_argument("--mano", type=int, metavar="N", help="solo la mano N (desde 1)")
    p.add_argument("--gif", metavar="SALIDA.gif", help="exportar como imagen animada")
    p.add_argument("--video", metavar="SALIDA.mp4", help="exportar como video (con ffmpeg)")
    p.add_argument("--nombres", nargs=2, metavar=("EQUIPO0", "EQUIPO1"),
                   help="los nombres de los equipos")  # fmt: skip
    p.add_argument("--puerto", type=port, metavar="PUERTO",
                   help="la repetición en una página, en 127.0.0.1:PUERTO")  # fmt: skip
    p.set_defaults(func=_cmd)
