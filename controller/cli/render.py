"""``truco-table render``: PNG previews of the seat displays.

::

    truco-table render FILE --seat S [--line N | --action K] --out PNG [--scale 4]
    truco-table render --contact-sheet --out PNG [--scale 2]

The first form replays the transcript ``FILE`` through a real ``Table`` (the deal tapped
card by card, every action tried as the table would) up to line ``N`` (statements on
lines ``<= N``) or up to its ``K``-th action (default: the whole file), and draws what
seat ``S``'s display shows then: the very frame the table would send, including a refusal
or notice the last statement caused. The second form draws every kind of seat screen
(``controller.cli.gallery``) on one labelled sheet.

``controller.cli`` adds the subcommand with :func:`configure`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from PIL import Image

from ..engine import Action, Card, Game, RefusalCode
from ..hal.events import TagArrived, TagLeft
from ..hal.mock import MockDeck
from ..render.matchsticks import SCREEN_SIZE
from ..render.pixelfont import FONT_TEXT
from ..render.screen import SeatScreen, plain, render_screen
from ..table.screens import screen_for
from ..table.table import Table
from ..transcript import (
    ActionStmt,
    RecordFileError,
    Statement,
    TranscriptError,
    parse,
    read_record,
    replay,
)

__all__ = ["TableTarget", "configure", "contact_sheet", "screen_at"]

MESSAGE_GAP = 10.0  # seconds between statements: only the last one's messages remain


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class TableTarget:
    """A replay target that drives a ``Table`` (taps for the deal, tries for actions)."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.deck = MockDeck(0)
        self.clock = _Clock()
        self.table = Table(game.rules, self.deck.lookup, game=game, clock=self.clock)

    def start_hand(self, dealer: int | None, deal: Mapping[int, tuple[Card, ...]]) -> None:
        self.clock.now += MESSAGE_GAP
        self.table.new_hand(dealer)
        for seat, cards in sorted(deal.items()):
            for card in cards:
                uid = self.deck.uid(card)
                self.table.handle(seat, TagArrived(uid))
                self.table.handle(seat, TagLeft(uid))
        self.table.start_play()  # seats not dealt play with hands unknown
        self.clock.now += MESSAGE_GAP  # the deal's "tocá tus cartas" is over

    def act(self, action: Action) -> RefusalCode | None:
        self.clock.now += MESSAGE_GAP
        return self.table.attempt(action)

    def close(self) -> None:
        pass


def _prefix(
    statements: Sequence[Statement], line: int | None, action: int | None
) -> list[Statement]:
    if line is not None:
        return [st for st in statements if st.line <= line]
    if action is not None:
        out: list[Statement] = []
        seen = 0
        for st in statements:
            if isinstance(st, ActionStmt):
                if seen == action:
                    break
                seen += 1
            out.append(st)
        return out
    return list(statements)


def screen_at(
    text: str, seat: int, *, line: int | None = None, action: int | None = None
) -> SeatScreen:
    """Seat ``seat``'s screen after the transcript ``text`` up to ``line`` or ``action``."""
    statements = _prefix(parse(text), line, action)
    targets: list[TableTarget] = []

    def make(game: Game) -> TableTarget:
        targets.append(TableTarget(game))
        return targets[-1]

    result = replay(statements, target=make)
    if not 0 <= seat < result.game.players:
        raise ValueError(f"no seat {seat} at a table of {result.game.players}")
    return screen_for(targets[0].table, seat)


def _scaled(image: Image.Image, scale: int) -> Image.Image:
    width, height = image.size
    return image.resize((width * scale, height * scale), Image.Resampling.NEAREST)


def _label(text: str, scale: int) -> Image.Image:
    text = plain(text)
    mask = Image.new("1", (max(1, FONT_TEXT.text_width(text)), FONT_TEXT.height), 0)
    lit = FONT_TEXT.pixels(text)
    if lit:
        for xy in lit:
            mask.putpixel(xy, 1)
    return _scaled(mask, scale)


def contact_sheet(
    shots: Sequence[tuple[str, SeatScreen]], *, scale: int = 2, columns: int = 5
) -> Image.Image:
    """Screens side by side, each under its label, drawn as a lit panel on a dark sheet."""
    width, height = SCREEN_SIZE
    pad, label_h = 8 * scale, (FONT_TEXT.height + 4) * scale
    cell_w, cell_h = width * scale + 2 * pad, height * scale + label_h + 2 * pad
    rows = -(-len(shots) // columns)
    sheet = Image.new("L", (columns * cell_w + pad, rows * cell_h + pad), 48)
    for index, (title, screen) in enumerate(shots):
        x = pad + (index % columns) * cell_w
        y = pad + (index // columns) * cell_h
        sheet.paste(200, (x, y), _label(title, scale))
        top = y + label_h
        sheet.paste(110, (x - 1, top - 1, x + width * scale + 1, top + height * scale + 1))
        sheet.paste(_scaled(render_screen(screen), scale).convert("L"), (x, top))
    return sheet


MAX_PIXELS = 50_000_000  # an image larger than this is refused (a mistyped --scale)


class _RenderError(Exception):
    """A one-line message for standard error (exit status 2)."""


def _check_out(path: Path) -> None:
    if path.suffix.lower() != ".png":
        raise _RenderError(f"--out {path}: the file must end in .png")
    if path.is_dir():
        raise _RenderError(f"--out {path}: that is a folder; give a file name ending in .png")
    folder = path.parent
    if not folder.is_dir():
        raise _RenderError(f"--out {path}: no folder {folder}")


def _check_size(width: int, height: int, scale: int) -> None:
    if width * height * scale * scale > MAX_PIXELS:
        raise _RenderError(
            f"--scale {scale} makes a {width * scale}x{height * scale} image: at most "
            f"{MAX_PIXELS // 1_000_000} megapixels"
        )


def _save(image: Image.Image, out: Path) -> int:
    try:
        image.save(out, format="PNG")
    except OSError as e:
        raise _RenderError(f"cannot write {out}: {e.strerror or e}") from None
    print(f"wrote {out} ({image.width}x{image.height})")
    return 0


def _check_position(text: str, statements: Sequence[Statement], args: argparse.Namespace) -> None:
    if args.line is not None:
        lines = max(1, len(text.splitlines()))
        if not 1 <= args.line <= lines:
            raise _RenderError(f"--line {args.line}: {args.file} has lines 1 to {lines}")
    if args.action is not None:
        actions = sum(isinstance(st, ActionStmt) for st in statements)
        if not 0 <= args.action <= actions:
            raise _RenderError(
                f"--action {args.action}: {args.file} has {actions} actions (give 0 to {actions})"
            )


def _cmd_render(args: argparse.Namespace) -> int:
    """0 written; 2 bad arguments, an unreadable or malformed record, or a failed write."""
    try:
        return _render(args)
    except _RenderError as e:
        print(f"truco-table render: {e}", file=sys.stderr)
        return 2


def _render(args: argparse.Namespace) -> int:
    out = Path(args.out)
    _check_out(out)
    if args.contact_sheet:
        from .gallery import shots

        scale = args.scale or 2
        sheet = [(s.title, s.screen) for s in shots()]
        columns = 5
        rows = -(-len(sheet) // columns)
        width, height = SCREEN_SIZE
        _check_size(columns * (width + 16) + 8, rows * (height + FONT_TEXT.height + 20) + 8, scale)
        return _save(contact_sheet(sheet, scale=scale, columns=columns), out)
    if args.file is None:
        raise _RenderError("give a transcript FILE or --contact-sheet")
    scale = args.scale or 4
    _check_size(*SCREEN_SIZE, scale)
    try:
        text = read_record(args.file)
    except RecordFileError as e:
        raise _RenderError(str(e)) from None
    try:
        statements = parse(text)
        _check_position(text, statements, args)
        screen = screen_at(text, args.seat, line=args.line, action=args.action)
    except TranscriptError as e:
        print(f"{args.file}:{e.line}: {e.message}", file=sys.stderr)
        return 2
    except ValueError as e:
        raise _RenderError(str(e)) from None
    return _save(_scaled(render_screen(screen), scale), out)


MAX_SCALE = 32  # a 128x64 display 4096 pixels wide: more is no preview, only memory


def _positive(text: str) -> int:
    """A scale: a whole number from 1 to ``MAX_SCALE``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= MAX_SCALE:
        raise argparse.ArgumentTypeError(f"from 1 to {MAX_SCALE}, not {value}")
    return value


def configure(p: argparse.ArgumentParser) -> None:
    """The ``render`` subcommand's arguments."""
    p.add_argument("file", nargs="?", help="the .truco transcript")
    p.add_argument("--seat", type=int, default=0, help="the seat whose display to draw")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--line", type=int, help="after the statements up to this line")
    where.add_argument("--action", type=int, help="after this many actions")
    p.add_argument("--out", required=True, help="the PNG to write")
    p.add_argument("--scale", type=_positive, help="pixels per display pixel (4; the sheet: 2)")
    p.add_argument(
        "--contact-sheet", action="store_true", help="every kind of seat screen on one sheet"
    )
    p.set_defaults(func=_cmd_render)
