"""The one HTTP answer the project's pages send (controller.render.answer)."""

from __future__ import annotations

import io
from typing import Any

from controller.render.answer import answer


class Handler:
    """What ``answer`` uses of a ``BaseHTTPRequestHandler``, writing down what it sends."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.wfile = io.BytesIO()

    def send_response(self, status: int) -> None:
        self.sent.append(("status", status))

    def send_header(self, name: str, value: str) -> None:
        self.sent.append((name, value))

    def end_headers(self) -> None:
        self.sent.append(("end", None))


def test_an_answer_is_whole_uncached_unsniffed_with_its_policy() -> None:
    h = Handler()
    answer(h, 404, b"No existe.\n", "text/plain; charset=utf-8",  # type: ignore[arg-type]
           policy="default-src 'self'", headers=(("Referrer-Policy", "no-referrer"),))  # fmt: skip
    assert h.sent == [
        ("status", 404),
        ("Referrer-Policy", "no-referrer"),
        ("Content-Type", "text/plain; charset=utf-8"),
        ("Content-Length", "11"),
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
        ("Content-Security-Policy", "default-src 'self'"),
        ("end", None),
    ]
    assert h.wfile.getvalue() == b"No existe.\n"


def test_without_a_policy_none_is_sent() -> None:
    h = Handler()
    answer(h, 200, b"{}", "application/json")  # type: ignore[arg-type]
    assert "Content-Security-Policy" not in dict(h.sent)
