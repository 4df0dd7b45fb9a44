"""Card to light: a card landing on a seat's reader until the last panel shows it.

One end-to-end figure for a six-seat table with its panels on the seat nodes (the
guide's table), composed of three parts measured by the benches that own them, each
printed with it:

1. ``card_to_tagon_ms``: the card on the reader until its ``TAGON`` leaves the node's
   USB, on the emulated Pico (``bench/pico.py``'s ``card_to_tagon_ms_p99_busy``, while
   display updates arrive back to back), plus ``usb_poll_ms`` (the Pi's host controller
   polls a full-speed device once a millisecond). Given with ``--card-to-tagon-ms``, or
   read from ``bench/pico.py``'s key=value output (``--pico-output FILE``); otherwise the
   figure firmware/README.md documents (section 10), said by ``card_to_tagon_source``.
2. ``service_ms_pi4``: the real service's CPU for the event, ``truco-table run`` as the
   Pi runs it (``bench/table.py``, topology node: the 99th percentile of its ``tag_on``
   events on this machine) times ``PI4_FACTOR``: an ESTIMATE (a Raspberry Pi 4 is about
   six times slower than this machine's core), not a Pi 4's measurement.
   ``--service-cpu-ms`` gives this machine's figure instead of running the bench.
3. ``display_ms``: from the Pi's frames leaving until the last changed panel shows its
   new image (``bench/display.py``'s ``after_pi_ms_p99``: USB, the node's own handling
   under the Pico factor, the node's panel bus, the panel's scan; ``--node-bus``,
   ``--pico-factor`` passed on).

``card_to_light_ms_p99`` is their sum: the sum of three 99th percentiles is above the
99th percentile of the sums (the parts are independent), so it errs on the slow side.
Target: 100 ms. ``loadavg``: the one-minute load average as it ended.

Run: ``.venv/bin/python bench/card_to_light.py [--card-to-tagon-ms MS | --pico-output
FILE] [--service-cpu-ms MS] [--seeds 5] [--node-bus i2c|spi] [--pico-factor 162]``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: bench/pico.py's card_to_tagon_ms_p99_busy as firmware/README.md (section 10) has it
DOCUMENTED_CARD_TO_TAGON_MS = 40.4  # firmware 0.6.1, SPI panel, seed 1
USB_POLL_MS = 1.0
PI4_FACTOR = 6.0  # a Raspberry Pi 4's core against this machine's (an estimate)
TARGET_MS = 100.0


def pairs(text: str, where: str) -> dict[str, str]:
    found = dict(re.findall(r"(\w+)=(\S+)", text))
    if not found:
        raise SystemExit(f"bench/card_to_light.py: no key=value figures in {where}")
    return found


def run_bench(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-3000:])
        raise SystemExit(f"bench/card_to_light.py: {args[0]} failed")
    return done.stdout


def line_with(text: str, *keys: str) -> dict[str, str]:
    """The key=value pairs of the first line holding every one of ``keys`` (k=v)."""
    for line in text.splitlines():
        found = pairs(line, "a line") if "=" in line else {}
        if all(found.get(k) == v for k, v in (key.split("=", 1) for key in keys)):
            return found
    raise SystemExit(f"bench/card_to_light.py: no line with {' '.join(keys)}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--card-to-tagon-ms", type=float, default=None)
    parser.add_argument("--pico-output", type=Path, default=None, help="bench/pico.py's output")
    parser.add_argument("--service-cpu-ms", type=float, default=None)
    parser.add_argument("--seeds", type=int, default=5, help="bench/display.py's games")
    parser.add_argument("--node-bus", choices=("i2c", "spi"), default="i2c")
    parser.add_argument("--pico-factor", type=float, default=162.0, help="126-162 measured")
    args = parser.parse_args(argv)

    source = "argument"
    tagon = args.card_to_tagon_ms
    if tagon is None and args.pico_output is not None:
        tagon = float(
            pairs(args.pico_output.read_text(), str(args.pico_output))["card_to_tagon_ms_p99_busy"]
        )
        source = "bench_pico"
    if tagon is None:
        tagon, source = DOCUMENTED_CARD_TO_TAGON_MS, "documented_firmware_readme"

    cpu = args.service_cpu_ms
    if cpu is None:
        table = run_bench("bench/table.py", "--games", "1", "--topology", "node")
        cpu = float(line_with(table, "topology=node", "kind=tag_on")["cpu_ms_p99"])
    service = cpu * PI4_FACTOR

    display_args = ["bench/display.py", "--seats", "6", "--seeds", str(args.seeds)]
    display_args += ["--node-bus", args.node_bus]
    display_args += ["--pico-factor", str(args.pico_factor)]
    node = line_with(run_bench(*display_args), "topology=node")
    display = float(node["after_pi_ms_p99"])

    total = tagon + USB_POLL_MS + service + display
    load = f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "-"
    print(
        f"card_to_light_ms_p99={total:.1f} target_ms_p99={TARGET_MS:g} "
        f"card_to_tagon_ms={tagon:.1f} card_to_tagon_source={source} "
        f"usb_poll_ms={USB_POLL_MS:g} service_cpu_ms_p99_here={cpu:.3f} "
        f"pi4_factor={PI4_FACTOR:g} service_ms_pi4_estimate={service:.1f} "
        f"display_ms={display:.1f} node_bus={args.node_bus} "
        f"pico_factor={args.pico_factor:g} loadavg={load}",
        flush=True,
    )


if __name__ == "__main__":
    main()
