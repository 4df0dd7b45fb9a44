"""One HTTP answer as the project's pages send it (the desk's, its TV's, the table's
broadcast, the replayer's): the body whole, never cached, its type never guessed by the
browser, and the page's content policy when it has one."""

from __future__ import annotations

from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler

__all__ = ["answer"]


def answer(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: bytes,
    kind: str,
    *,
    policy: str | None = None,
    headers: Sequence[tuple[str, str]] = (),
) -> None:
    """Send ``body`` (of type ``kind``) with ``status``, ``headers`` first, then the
    ``Content-Security-Policy`` ``policy`` when given."""
    handler.send_response(status)
    for name, value in headers:
        handler.send_header(name, value)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(body)))
    handler.send_header("Cache-Control", "no-store")
    handler.send_header("X-Content-Type-Options", "nosniff")
    if policy is not None:
        handler.send_header("Content-Security-Policy", policy)
    handler.end_headers()
    handler.wfile.write(body)
