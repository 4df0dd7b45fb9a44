"""Headless Chromium (Debian ``chromium``) driven as tests/tournament/desk/test_page.py does:
the DOM after the page's scripts ran, a screenshot, a PDF. Tests using it are skipped,
saying why, only when the browser is not installed (``.ci/run`` installs it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: Where the tests put their screenshots: a temporary folder, so that a test run writes
#: nothing in the working tree. ``TRUCO_REGEN_SCREENSHOTS=1`` puts them in
#: docs/screenshots instead (the pictures the manual's pages show; look at them before committing).
SCREENSHOTS = (
    Path(__file__).resolve().parents[3] / "docs" / "screenshots"
    if os.environ.get("TRUCO_REGEN_SCREENSHOTS") == "1"
    else Path(tempfile.mkdtemp(prefix="truco-screenshots-"))
)


def _run(url: str, profile: Path, size: tuple[int, int], budget_ms: int, *args: str) -> str:
    if CHROMIUM is None:
        pytest.skip("chromium not installed (apt-get install chromium; .ci/run does)")
    done = subprocess.run(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--hide-scrollbars", "--lang=es-AR", f"--user-data-dir={profile}",
            f"--virtual-time-budget={budget_ms}", f"--window-size={size[0]},{size[1]}",
            *args, url,
        ],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


_chrome: list[int] = []  # how much taller than its page the window of --dump-dom is


def _window_chrome(tmp: Path) -> int:
    """Headless Chromium's ``--dump-dom`` window keeps a browser frame around the page
    (its ``innerHeight`` is less than ``--window-size``): measured once with a probe."""
    if not _chrome:
        probe = "data:text/html,<script>document.write('<p id=h>'+innerHeight+'</p>')</script>"
        out = _run(probe, tmp / "profile-probe", (1366, 768), 500, "--dump-dom")
        found = re.search(r"<p id=\"h\">(\d+)</p>", out)
        assert found is not None, out
        _chrome.append(768 - int(found[1]))
    return _chrome[0]


def dom(url: str, tmp: Path, size: tuple[int, int] = (1366, 768), budget_ms: int = 3000) -> str:
    """The page's DOM after ``budget_ms`` of (virtual) time, the page itself ``size``
    (as a laptop screen of that size shows it, full screen)."""
    window = (size[0], size[1] + _window_chrome(tmp))
    return _run(url, tmp / "profile-dom", window, budget_ms, "--dump-dom")


def screenshot(
    url: str, out: Path, tmp: Path, size: tuple[int, int] = (1366, 768), budget_ms: int = 3000
) -> Path:
    """A PNG of the window (``size``) after ``budget_ms``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    _run(url, tmp / "profile-shot", size, budget_ms, f"--screenshot={out}")
    assert out.stat().st_size > 5_000, f"{out} is nearly empty"
    return out


def pdf(url: str, out: Path, tmp: Path) -> bytes:
    """The page printed to PDF (print media, its own @page size), as bytes."""
    _run(url, tmp / "profile-pdf", (1366, 768), 2000, "--no-pdf-header-footer",
         f"--print-to-pdf={out}")  # fmt: skip
    return out.read_bytes()


_NUMBER = rb"\s*([-\d.]+)"
_MEDIA_BOX = re.compile(rb"/MediaBox\s*\[" + _NUMBER * 4)


def pdf_pages(data: bytes) -> list[tuple[float, float]]:
    """A PDF's pages: each one's size in points (its page objects' MediaBox, as
    Chromium writes them)."""
    count = len(re.findall(rb"/Type\s*/Page(?![a-z])", data))
    boxes = [
        (float(b[3]) - float(b[1]), float(b[4]) - float(b[2])) for b in _MEDIA_BOX.finditer(data)
    ]
    assert len(boxes) >= count, "a page without its size"
    return boxes[:count]


_OBJECT = re.compile(rb"(\d+) 0 obj\s*(.*?)endobj", re.S)
_REF = rb"(\d+) 0 R"


def _streams(data: bytes) -> tuple[dict[int, bytes], dict[int, bytes]]:
    """Every object's dictionary text and its stream (inflated), by number."""
    import zlib

    heads: dict[int, bytes] = {}
    bodies: dict[int, bytes] = {}
    for found in _OBJECT.finditer(data):
        number, body = int(found[1]), found[2]
        head, marker, rest = body.partition(b"stream")
        heads[number] = head
        if marker:
            raw = rest.lstrip(b"\r\n").rsplit(b"endstream", 1)[0]
            bodies[number] = zlib.decompress(raw) if b"/FlateDecode" in head else raw
    return heads, bodies


def _cmap(text: bytes) -> dict[int, str]:
    out: dict[int, str] = {}

    def chars(hexa: bytes) -> str:
        b = bytes.fromhex(hexa.decode())
        return b.decode("utf-16-be", "replace")

    for block in re.findall(rb"beginbfchar(.*?)endbfchar", text, re.S):
        for src, dst in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            out[int(src, 16)] = chars(dst)
    for block in re.findall(rb"beginbfrange(.*?)endbfrange", text, re.S):
        for lo, hi, dst in re.findall(
            rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block
        ):
            first = int(dst, 16)
            for i, code in enumerate(range(int(lo, 16), int(hi, 16) + 1)):
                out[code] = chr(first + i)
    return out


def pdf_texts(data: bytes) -> list[str]:
    """The text on each page of a PDF as Chromium (Skia) writes it: each page's content
    streams, their strings decoded through their fonts' ToUnicode maps (the glyphs are
    2-byte codes), in drawing order, run together (a line's glyphs come in pieces)."""
    heads, bodies = _streams(data)
    kids: list[int] = []
    for head in heads.values():
        if re.search(rb"/Type\s*/Pages\b", head):
            found = re.search(rb"/Kids\s*\[(.*?)\]", head, re.S)
            assert found is not None
            kids = [int(n) for n in re.findall(_REF, found[1])]
            break
    texts = []
    for page in kids:
        head = heads[page]
        fonts: dict[bytes, dict[int, str]] = {}
        font_dict = re.search(rb"/Font\s*<<(.*?)>>", head, re.S)
        if font_dict is None:  # resources by reference
            resources = re.search(rb"/Resources\s+" + _REF, head)
            if resources is not None:
                font_dict = re.search(rb"/Font\s*<<(.*?)>>", heads[int(resources[1])], re.S)
        for name, number in re.findall(rb"/(\w+)\s+" + _REF, font_dict[1] if font_dict else b""):
            to_unicode = re.search(rb"/ToUnicode\s+" + _REF, heads[int(number)])
            fonts[name] = _cmap(bodies[int(to_unicode[1])]) if to_unicode else {}
        contents = re.search(rb"/Contents\s+(?:\[(.*?)\]|" + _REF + rb")", head, re.S)
        refs = [] if contents is None else (
            [int(n) for n in re.findall(_REF, contents[1])] if contents[1] else [int(contents[2])]
        )  # fmt: skip
        lines: list[str] = []
        for ref in refs:
            cmap: dict[int, str] = {}
            for token in re.finditer(
                rb"/(\w+)\s+[\d.]+\s+Tf|<([0-9A-Fa-f]*)>|(T[Jj])", bodies[ref]
            ):
                if token[1]:
                    cmap = fonts.get(token[1], {})
                elif token[2] is not None:
                    codes = bytes.fromhex(token[2].decode())
                    lines.append("".join(cmap.get(int.from_bytes(codes[i : i + 2]), "?")
                                         for i in range(0, len(codes) - 1, 2)))  # fmt: skip
        texts.append("".join(lines))
    return texts
