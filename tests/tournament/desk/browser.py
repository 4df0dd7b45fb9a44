"""Headless Chromium (Debian ``chromium``) driven as tests/tournament/test_page.py does:
the DOM after the page's scripts ran, a screenshot, a PDF. Tests using it are skipped,
saying why, only when the browser is not installed (``.ci/run`` installs it)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: The screenshots the README shows (rewritten by the tests, looked at by a person).
SCREENSHOTS = Path(__file__).resolve().parents[3] / "docs" / "screenshots"


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


def pdf_pages(data: bytes) -> int:
    """How many pages a PDF has (its page objects)."""
    return data.count(b"/Type /Page") - data.count(b"/Type /Pages")
