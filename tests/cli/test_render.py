"""``truco-table render``: a seat's screen at a transcript position, and the contact sheet.

Run through the ``truco-table`` parser (:func:`controller.cli.build_parser`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, ImageChops

from controller.cli import build_parser
from controller.cli.render import screen_at
from controller.render.matchsticks import SCREEN_SIZE
from controller.render.screen import render_screen, screen_texts

SCENARIOS = Path(__file__).parent.parent / "scenarios"
WORKED_1 = SCENARIOS / "worked-hand-1.truco"  # line 7: 0 envido, line 8: 1 quiero, ...


def run(*argv: str) -> int:
    args = build_parser().parse_args(["render", *argv])
    code: int = args.func(args)
    return code


def test_screen_after_a_line(tmp_path: Path) -> None:
    out = tmp_path / "s.png"
    assert run(str(WORKED_1), "--seat", "1", "--line", "7", "--out", str(out)) == 0
    with Image.open(out) as image:
        assert image.size == (SCREEN_SIZE[0] * 4, SCREEN_SIZE[1] * 4)
        small = image.convert("L").resize(SCREEN_SIZE, Image.Resampling.NEAREST)
    expected = render_screen(screen_at(WORKED_1.read_text(), 1, line=7)).convert("L")
    assert ImageChops.difference(small, expected).getbbox() is None
    assert screen_texts(screen_at(WORKED_1.read_text(), 1, line=7))[1] == "ENVIDO? QUIERO·NO"


def test_positions_by_line_and_by_action() -> None:
    text = WORKED_1.read_text()
    assert screen_texts(screen_at(text, 0, action=2))[2] == "+2 NOS: ENVIDO 33"
    assert screen_texts(screen_at(text, 0, line=8)) == screen_texts(screen_at(text, 0, action=2))
    assert screen_texts(screen_at(text, 1, action=0))[1] == "TURNO: 0"
    end = screen_texts(screen_at(text, 0))  # the whole file
    assert end[1] == "+2 NOS: LA MANO"


def test_a_refused_action_shows_on_the_seat_that_tried_it() -> None:
    text = (SCENARIOS / "refusal_not_your_turn.truco").read_text()
    assert screen_texts(screen_at(text, 1, action=1)) == ("NO ES TU TURNO",)
    assert screen_texts(screen_at(text, 0, action=1))[1] == "TURNO: VOS"


def test_scale(tmp_path: Path) -> None:
    out = tmp_path / "s.png"
    assert run(str(WORKED_1), "--seat", "0", "--out", str(out), "--scale", "1") == 0
    with Image.open(out) as image:
        assert image.size == SCREEN_SIZE


def test_contact_sheet(tmp_path: Path) -> None:
    out = tmp_path / "sheet.png"
    assert run("--contact-sheet", "--out", str(out)) == 0
    with Image.open(out) as image:
        assert image.width > 5 * 2 * SCREEN_SIZE[0] and image.height > 10 * 2 * SCREEN_SIZE[1]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--out", "x.png"], "give a transcript FILE"),
        (["missing.truco", "--out", "x.png"], "no puedo leer"),
        ([str(WORKED_1), "--seat", "5", "--out", "x.png"], "no seat 5"),
    ],
)
def test_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = [a if a != "x.png" else str(tmp_path / a) for a in argv]
    assert run(*argv) == 2
    assert message in capsys.readouterr().err


def test_malformed_transcript_names_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.truco"
    bad.write_text("table players=2\nhand\ndeal 0: 8E 1E 2E\n")
    assert run(str(bad), "--out", str(tmp_path / "x.png")) == 2
    assert f"{bad}:3:" in capsys.readouterr().err
