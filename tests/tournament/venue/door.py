"""The venue broker's door (:mod:`controller.tournament.venue.front`) in a test: its own
event loop on a thread, the configuration ``venue-broker`` wrote (its wait shortened when
asked)."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace
from pathlib import Path

from controller.tournament.venue.front import BrokerFront, load_front


class Door:
    def __init__(
        self,
        config: Path,
        connect_s: float | None = None,
        max_waiting: int | None = None,
        listen: tuple[str, int] | None = None,
    ) -> None:
        loaded = load_front(config)
        if listen is not None:
            loaded = replace(loaded, listen=listen)
        if connect_s is not None:
            loaded = replace(loaded, connect_s=connect_s)
        if max_waiting is not None:
            loaded = replace(loaded, max_waiting=max_waiting)
        self.front = BrokerFront(loaded)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.front.start(), self.loop).result(30)

    def __enter__(self) -> Door:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        async def stop() -> None:
            assert self.front.server is not None
            self.front.server.close()

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)
        self.loop.close()
