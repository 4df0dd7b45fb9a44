"""One seat's flood against another seat's action (issue 26).

The real ``TableService`` loop on its own thread, a state directory on this machine's
disk (every accepted action written and fsynced), two seats whose displays take frames
in the nodes' page layout. Seat 0 presses *envido* (accepted: a record line, a redraw)
and the referee's undo takes it back, ``ACTIONS`` times; the latency is from posting the
press to seat 0's frame showing it. Measured idle, then while a thread posts seat 1's
stuck *truco* button (refused each time) as fast as it can, as a pad's or a reader's
thread would with a bad cable or a stuck button, without pause (its first press calls
truco; every later one is refused, ``call_pending``, and seat 0's envido goes first). A
seat node's frames are read on the loop's own thread (``SeatBus``), at most 4 KiB a
wait: a flooding node is not this thread's case.

Prints key=value: ``idle_ms_median``, ``idle_ms_p90``, ``flood_ms_median``,
``flood_ms_p90``, ``ratio_median`` (flood over idle), ``flood_posted_per_s`` (what the
flooding thread managed to post), ``flood_dropped`` (what the inbox dropped of it) and
``refusals_untold`` (refusals counted, not told one by one).

Left out: the serial link and its reader's parsing (the flood is posted as events), the
panels' bus time (frames are only taken), the Pi's slower cores. The machine is shared:
read the ratio, not the milliseconds.
Run: ``.venv/bin/python bench/flood.py``.
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
from pathlib import Path

from controller.engine import Card, HouseRules
from controller.hal.events import ButtonPressed, TagArrived, TagLeft
from controller.hal.mock import MockDeck
from controller.table.service import ServiceConfig, TableService

ACTIONS = 60
DECK = MockDeck(1)
DEAL = {0: "7C 6C 3E", 1: "2O 1B 4B"}


class Panel:
    def __init__(self) -> None:
        self.shown = threading.Event()
        self.frames = 0

    def show(self, image: object) -> None:
        self.frames += 1
        self.shown.set()

    def show_pages(self, frame: bytes) -> None:
        self.frames += 1
        self.shown.set()


def measure(state: Path, flood: bool) -> tuple[list[float], float, int, int]:
    panels = [Panel(), Panel()]
    service = TableService(
        ServiceConfig(HouseRules(), state_dir=state, next_deal_after_s=0.0),
        DECK.lookup,
        panels,
    )
    service.ready()
    for seat, cards in DEAL.items():
        for card in cards.split():
            uid = DECK.uid(Card.from_str(card))
            service.post(seat, TagArrived(uid))
            service.post(seat, TagLeft(uid))
    stop = threading.Event()
    loop = threading.Thread(target=service.run, args=(stop.is_set,))
    loop.start()
    posted = [0]

    def flooding() -> None:
        while not stop.is_set():
            service.post(1, ButtonPressed("truco"))
            posted[0] += 1

    flooder = threading.Thread(target=flooding)
    try:
        deadline = time.monotonic() + 10
        while not service.table.game.hand_in_progress and time.monotonic() < deadline:
            time.sleep(0.01)
        if flood:
            flooder.start()
            time.sleep(0.2)
        start = time.monotonic()
        latencies = []
        for _ in range(ACTIONS):
            panels[0].shown.clear()
            t0 = time.perf_counter()
            service.post(0, ButtonPressed("envido"))
            panels[0].shown.wait(5)
            latencies.append((time.perf_counter() - t0) * 1000)
            time.sleep(0.01)
            undone = threading.Event()

            def undo(done: threading.Event = undone) -> None:
                service.undo()
                done.set()

            service.call_soon(undo)
            undone.wait(5)
            time.sleep(0.01)
        elapsed = time.monotonic() - start
    finally:
        stop.set()
        if flood:
            flooder.join()
        loop.join()
        service.close()
    rate = posted[0] / elapsed if flood else 0.0
    return latencies, rate, sum(service.events.dropped.values()), service.refusals_untold


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        idle, _, _, _ = measure(Path(tmp) / "idle", flood=False)
        flooded, rate, dropped, untold = measure(Path(tmp) / "flood", flood=True)
    q = statistics.quantiles
    print(f"idle_ms_median={statistics.median(idle):.2f}")
    print(f"idle_ms_p90={q(idle, n=10)[-1]:.2f}")
    print(f"flood_ms_median={statistics.median(flooded):.2f}")
    print(f"flood_ms_p90={q(flooded, n=10)[-1]:.2f}")
    print(f"ratio_median={statistics.median(flooded) / statistics.median(idle):.2f}")
    print(f"flood_posted_per_s={rate:.0f}")
    print(f"flood_dropped={dropped}")
    print(f"refusals_untold={untold}")


if __name__ == "__main__":
    main()
