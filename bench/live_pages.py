"""The live pages' server: our standard-library one (polled) against Starlette on uvicorn
(server-sent events), for the framework decision in docs/dev/broadcast.md.

One server process per run, fed like a venue's desk: a ``DeskState`` hearing six tables
(an action every ``1/--rate`` s, spread over the tables) plus a clock table whose score
is the feeder's clock (hundredths of a second: a client can tell how old what it sees is). Then
``--clients`` live TV clients (asyncio, one connection each) for ``--seconds``:

The staleness is that of every change: a change fed at T and first seen (with the
later ones) at S waited S - T; a poll once a second makes the viewer wait half a second
on average, a push only the delivery.

- ``server=stdlib``: the shipped ``controller.tournament.desk.tv.serve_tv``
  (``ThreadingHTTPServer``, a thread and a connection per request); each client polls
  ``/api/tv`` once a second, as the TV page does;
- ``server=starlette``: the same ``DeskState.tv()`` JSON pushed by Starlette 1.x on
  uvicorn as server-sent events: one long connection per client, one JSON per change.

Measured from outside the server: its CPU (utime + stime from ``/proc/PID/stat``, the
kernel's), its RSS at the end, each poll's latency, and the *staleness*: how old the
feeder's clock is when a client first sees it (what a viewer waits for a change).
Prints one key=value line per run::

    server=stdlib clients=100 cpu_pct=... rss_mb=... latency_ms_p50=... latency_ms_p99=...
    stale_ms_p50=... stale_ms_p99=... errors=0 load=...

Starlette and uvicorn are not dependencies of the project: install them in the venv to
run this (``.venv/bin/pip install starlette uvicorn``); without them the starlette runs
are skipped, said on one line.

Run: ``.venv/bin/python bench/live_pages.py [--clients 10 100 400] [--seconds 10]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import subprocess
import sys
import threading
import time
from typing import Any

TABLES = [f"mesa0{i}" for i in range(1, 7)]
CLOCK_TABLE = "reloj"
RULES = "table players=2 target=30 flor=off claims=declared implicit_quiero=off"
#: what each table plays, again and again (a hand of two seats, with hands unknown)
HAND = ["hand", "0 play 4C", "1 play 5C", "1 play 6C", "0 play 7B"]


def _feeder(state: Any, rate: float, notify: Any = None) -> None:
    """Six tables and the clock table, fed as a desk hears them (in a thread)."""
    from controller.tournament.wire.topics import encode

    seqs = {t: 0 for t in [*TABLES, CLOCK_TABLE]}

    def send(table: str, kind: str, text: str, **fields: Any) -> None:
        seqs[table] += 1
        payload = {"v": 1, "table": table, "seq": seqs[table], "ts": time.time(),
                   "kind": kind, "game": f"{table}-g001", "hand": fields.pop("hand", 1),
                   "score": fields.pop("score", [0, 0]), "text": text, **fields}  # fmt: skip
        state.handle(f"truco/t/tables/{table}/events", encode(payload))

    for table in [*TABLES, CLOCK_TABLE]:
        send(table, "new-game", "", rules=RULES)
    step = 0
    while True:
        time.sleep(1 / rate)
        table = TABLES[step % len(TABLES)]
        line = HAND[(step // len(TABLES)) % len(HAND)]
        send(table, "deal" if line == "hand" else "action", line)
        # the wall clock in hundredths of a second (mod 10^6), as a score (each side at
        # most 1000): the clients, on this machine, read the same clock
        cs = int(time.time() * 100) % 1_000_000
        send(CLOCK_TABLE, "score", "reloj", score=[cs // 1000, cs % 1000])
        if notify is not None:
            notify()
        step += 1


def _state() -> Any:
    from controller.tournament.desk import DeskState

    state = DeskState("t")
    state.broker_up()
    return state


def serve_stdlib(port: int, rate: float) -> None:
    from controller.tournament.desk.tv import serve_tv

    state = _state()
    serve_tv(state, port, host="127.0.0.1")
    print("ready", flush=True)
    _feeder(state, rate)


def serve_starlette(port: int, rate: float) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    state = _state()
    loop_box: dict[str, Any] = {}
    changed: dict[str, Any] = {"event": None, "json": b""}

    def publish() -> None:  # on the event loop
        changed["json"] = json.dumps(state.tv(), ensure_ascii=False).encode("utf-8")
        old, changed["event"] = changed["event"], asyncio.Event()
        if old is not None:
            old.set()

    def notify() -> None:  # from the feeder's thread
        loop = loop_box.get("loop")
        if loop is not None:
            loop.call_soon_threadsafe(publish)

    async def stream(request: Request) -> StreamingResponse:
        async def events() -> Any:
            while True:
                event = changed["event"]
                yield b"data: " + changed["json"] + b"\n\n"
                await event.wait()

        return StreamingResponse(events(), media_type="text/event-stream")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        loop_box["loop"] = asyncio.get_running_loop()
        publish()
        threading.Thread(target=_feeder, args=(state, rate, notify), daemon=True).start()
        print("ready", flush=True)
        yield

    app = Starlette(routes=[Route("/api/tv/stream", stream)], lifespan=lifespan)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", access_log=False)


def _clock_of(body: bytes) -> int | None:
    for t in json.loads(body)["tables"]:
        if t["table"] == CLOCK_TABLE:
            return (int(t["score"][0]) * 1000 + int(t["score"][1])) * 10
    return None


def _age_ms(clock_ms: int) -> float:
    """How old a clock value read in a page is now (ms; the clock wraps every 10^4 s)."""
    return (time.time() * 1000 - clock_ms) % 10_000_000


def _saw(clock: int, seen: int, rate: float, out: dict[str, list[float]]) -> int:
    """A client first sees ``clock`` (it last saw ``seen``): every change fed since, one
    each ``1/rate`` s back from ``clock``, waited until now to be seen."""
    age = _age_ms(clock)
    step = 1000 / rate
    back = 0.0
    while seen >= 0 and back < (clock - seen) % 10_000_000:
        out["stale"].append(age + back)
        back += step
    return clock


async def poll_client(port: int, until: float, rate: float, out: dict[str, list[float]]) -> None:
    await asyncio.sleep(random.random())  # the TVs are not in step
    seen = -1
    while time.monotonic() < until:
        t0 = time.monotonic()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /api/tv HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            data = await reader.read()
            writer.close()
            body = data.split(b"\r\n\r\n", 1)[1]
            now = time.monotonic()
            out["latency"].append((now - t0) * 1000)
            clock = _clock_of(body)
            if clock is not None and clock != seen:
                seen = _saw(clock, seen, rate, out)
        except (OSError, ValueError, IndexError):
            out["errors"].append(1)
        await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - t0)))


async def sse_client(port: int, until: float, rate: float, out: dict[str, list[float]]) -> None:
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /api/tv/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        seen = -1
        while time.monotonic() < until:
            line = await asyncio.wait_for(reader.readline(), max(0.1, until - time.monotonic()))
            if not line.startswith(b"data: "):
                continue
            clock = _clock_of(line[6:])
            if clock is not None and clock != seen:
                seen = _saw(clock, seen, rate, out)
        writer.close()
    except TimeoutError:
        pass
    except (OSError, ValueError):
        out["errors"].append(1)


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))]


def measure(server: str, clients: int, seconds: float, rate: float, port: int) -> str:
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", server, "--port", str(port), "--rate", str(rate)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(1.0)
        out: dict[str, list[float]] = {"latency": [], "stale": [], "errors": []}
        cpu0, t0 = _cpu_s(proc.pid), time.monotonic()
        until = t0 + seconds
        client = poll_client if server == "stdlib" else sse_client

        async def run_all() -> None:
            await asyncio.gather(*(client(port, until, rate, out) for _ in range(clients)))

        asyncio.run(run_all())
        cpu = (_cpu_s(proc.pid) - cpu0) / (time.monotonic() - t0) * 100
        rss = _rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    lat = (
        f"latency_ms_p50={_pct(out['latency'], 0.5):.1f} "
        f"latency_ms_p99={_pct(out['latency'], 0.99):.1f} "
        if server == "stdlib"
        else ""
    )
    return (
        f"server={server} clients={clients} cpu_pct={cpu:.1f} rss_mb={rss:.1f} {lat}"
        f"stale_ms_p50={_pct(out['stale'], 0.5):.0f} stale_ms_p99={_pct(out['stale'], 0.99):.0f} "
        f"errors={len(out['errors'])} load={os.getloadavg()[0]:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[10, 100, 400])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=6.0, help="actions a second, all tables")
    parser.add_argument("--port", type=int, default=18431)
    parser.add_argument("--serve", choices=("stdlib", "starlette"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve == "stdlib":
        serve_stdlib(args.port, args.rate)
        return
    if args.serve == "starlette":
        serve_starlette(args.port, args.rate)
        return
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401

        servers = ["stdlib", "starlette"]
    except ImportError:
        print("starlette and uvicorn are not installed: only the standard library's server")
        servers = ["stdlib"]
    for clients in args.clients:
        for server in servers:
            print(measure(server, clients, args.seconds, args.rate, args.port), flush=True)


if __name__ == "__main__":
    main()
