"""The hand replayer (``controller.render.replayer``, ``truco-table replay-hand``): a
record step by step with the cards face up, in the terminal, as an animated GIF, as the
replayer's page in headless Chromium; a video only where ffmpeg is installed."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from PIL import Image

from controller.render.replayer import _said, export_gif, hand_steps, steps
from tests.tournament.desk.browser import dom

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "tests" / "scenarios" / "worked-hand-1.truco"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller.cli", "replay-hand", *args],
        capture_output=True, text=True, timeout=120, check=False, cwd=ROOT,
    )  # fmt: skip


def test_every_statement_is_a_step_with_the_cards_face_up() -> None:
    frames = steps(RECORD.read_text())
    # table, hand, then the ten actions (the deal goes with its hand)
    assert len(frames) == 12
    after_deal = frames[1]
    assert [c["card"] for c in after_deal["seats"][0]["cards"]] == ["7C", "6C", "3E"]
    assert after_deal["seats"][0]["envido"] == 33 and after_deal["seats"][1]["envido"] == 25
    assert frames[3]["said"] == "asiento 1 dijo quiero" and frames[3]["score"] == [2, 0]
    assert frames[4]["said"] == "asiento 0 juega el 3 de espada"
    assert frames[4]["seats"][0]["played"] == [{"card": "3E", "baza": 0}]
    assert frames[-1]["hand_over"] and frames[-1]["score"] == [4, 0]
    assert [f["step"] for f in hand_steps(RECORD.read_text(), 1)] == list(range(1, 12))
    with pytest.raises(ValueError, match="no tiene una mano 2"):
        hand_steps(RECORD.read_text(), 2)


def test_a_hand_exported_as_an_animated_gif(tmp_path: Path) -> None:
    out = run(str(RECORD), "--mano", "1", "--gif", str(tmp_path / "mano.gif"),
              "--nombres", "Los Pumas", "Las Leonas")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"{tmp_path / 'mano.gif'}: 11 pasos\n"
    with Image.open(tmp_path / "mano.gif") as gif:
        assert getattr(gif, "n_frames", 1) == 11 and gif.size == (1280, 720)
    frames = hand_steps(RECORD.read_text(), 1)
    assert export_gif(frames[:2], tmp_path / "two.gif").stat().st_size > 1000


def test_the_steps_in_the_terminal_and_the_refusals() -> None:
    out = run(str(RECORD), "--mano", "1")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("paso 2: se reparte una mano · 0-0 · 0: 7C 6C 3E | 1: 2O 1B 4B")
    assert "paso 5: asiento 0 juega el 3 de espada · 2-0 · 0: 7C 6C 3E* |" in lines[3]
    bad = run(str(RECORD), "--mano", "4")
    assert bad.returncode == 2 and "el registro no tiene una mano 4" in bad.stderr
    missing = run("no-existe.truco")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr


@pytest.mark.skipif(shutil.which("ffmpeg") is not None, reason="ffmpeg is installed here")
def test_a_video_without_ffmpeg_says_so(tmp_path: Path) -> None:
    out = run(str(RECORD), "--video", str(tmp_path / "mano.mp4"))
    assert out.returncode == 2 and "ffmpeg no está instalado" in out.stderr


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")
def test_a_hand_exported_as_a_video(tmp_path: Path) -> None:
    out = run(str(RECORD), "--mano", "1", "--video", str(tmp_path / "mano.mp4"))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "mano.mp4").stat().st_size > 1000


def test_the_replayers_page_steps_through_the_record(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "replay-hand", str(RECORD), "--puerto", "0"],
        stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", first)
        assert found, first
        base = found[0]
        with urllib.request.urlopen(base + "api/paso?n=4", timeout=10) as r:
            assert b"juega el 3 de espada" in r.read()
        page = dom(base + "?paso=4", tmp_path, size=(1920, 1080))
        text = " ".join(re.sub(r"<[^>]+>", " ", page).split())
        assert "paso 5 de 12: asiento 0 juega el 3 de espada" in text
        assert "envido 33" in text and 'data-overflow="no"' in page
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_desks_sealed_record_replays_the_same() -> None:
    """The desk's ``records/`` hold sealed records (tags in comments): the same steps."""
    from controller.tournament.wire.seal import seal

    text = RECORD.read_text()
    sealed = seal(text, bytes(range(32)), key_id="k", game_id="mesa01-g001",
                  tournament="t", table="mesa01", match="r1-m01")  # fmt: skip
    assert "#~seal v2" in sealed
    assert steps(sealed) == steps(text)


#: What an English message would hold (argparse's, Python's, the system's, Pillow's).
ENGLISH = ("usage", "positional arguments", "options:", "show this help", "internal error",
           "bug to report", "Errno", "No such file", "unknown file extension", "Traceback",
           "not found", " show ")  # fmt: skip


def test_the_replayers_help_and_refusals_are_in_spanish(tmp_path: Path) -> None:
    """What the organiser or the bar reads from ``replay-hand``: its help, and a file that
    is not a record, a hand 0, an export to a folder or to a folder that is not there, each
    one line in Spanish (exit 2), never Python's or the system's English."""
    helped = run("--help")
    assert helped.returncode == 0 and helped.stdout.startswith("uso: truco-table replay-hand")
    for said in ("argumentos:", "opciones:", "muestra esta ayuda y sale", "solo la mano N",
                 "exportar como imagen animada", "los nombres de los equipos"):  # fmt: skip
        assert said in helped.stdout
    prose = tmp_path / "notas.truco"
    prose.write_text("Partido del viernes\nganamos nosotros\n", encoding="utf-8")
    missing = tmp_path / "no-esta" / "mano.gif"
    refused = {
        (str(prose),): f"{prose}: línea 1: no es un registro de partida que se pueda jugar: "
        "«Partido del viernes»",
        (str(RECORD), "--mano", "0"): f"{RECORD}: las manos se cuentan desde 1: no hay una mano 0",
        (str(RECORD), "--gif", str(tmp_path)): f"no puedo escribir {tmp_path}: es una carpeta: "
        "nombrá el archivo (por ejemplo mano3.gif)",
        (str(RECORD), "--gif", str(missing)): f"no puedo escribir {missing}: no existe esa "
        "carpeta: revisá la ruta",
    }
    for args, said in refused.items():
        out = run(*args)
        assert (out.returncode, out.stdout) == (2, ""), (args, out)
        assert out.stderr == f"truco-table replay-hand: {said}\n"
    assert not [w for w in ENGLISH if w in helped.stdout + helped.stderr]
    # a card shown (envido declared, the cards that prove it), said in Spanish
    assert _said("0 show 3E 4E") == "asiento 0 muestra el 3 de espada y el 4 de espada"
    assert _said("1 play 12O") == "asiento 1 juega el 12 de oro"
