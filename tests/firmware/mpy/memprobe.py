"""The seat node's heap under MicroPython: after import, and at its peak during a game.

``micropython [-X heapsize=N] memprobe.py SECONDS`` (with ``firmware``,
``tests/firmware`` and this folder on ``MICROPYPATH``) prints key=value lines:

* ``baseline_alloc``: bytes allocated by the bare interpreter (after gc.collect);
* ``import_alloc``: after importing every firmware module but ``seatnode.main``
  (which needs the board) and collecting: the firmware's resident code and data;
* ``running_alloc``: after the node is set up (the real ``seatnode.main.run``,
  on the stand-in board of machine.py) and collecting, as the loop starts;
* ``peak_alloc``: the most ever allocated, sampled on every pass of the loop,
  garbage included, while the node plays a scripted game for SECONDS: cards
  laid, swapped and stacked, buttons pressed and held, the Pi's HELLO, HB, IDENT
  and LED and bad lines;
* ``loops``, ``frames``, ``rx_errors``: what the node did meanwhile.

A run that needs more heap than ``-X heapsize`` gives dies with MemoryError.  The
stand-in board (the simulated MFRC522 and its tags) lives on the same heap and
is counted in the running and peak figures; the Pico has no such thing.
"""

import gc
import sys

gc.collect()
baseline = gc.mem_alloc()

import seatnode.compat  # noqa: E402
import seatnode.config  # noqa: E402
import seatnode.debounce  # noqa: E402
import seatnode.led  # noqa: E402
import seatnode.mfrc522  # noqa: E402
import seatnode.node  # noqa: E402
import seatnode.protocol  # noqa: E402
import seatnode.tags  # noqa: E402, F401

gc.collect()
imported = gc.mem_alloc()

import machine  # noqa: E402  (the stand-in board)
from seatnode import config, main, protocol  # noqa: E402
from seatnode.compat import ticks_diff, ticks_ms  # noqa: E402

CARD_A = bytes.fromhex("04A224B2C55E80")
CARD_B = bytes.fromhex("04A224B2C55E81")
STEP_MS = 60
# One step of the game every STEP_MS: what lies on the reader and which button is down.
SCRIPT = [
    ((CARD_A,), None),
    ((CARD_A,), None),
    ((CARD_A, CARD_B), None),  # a card laid on another
    ((CARD_B,), None),
    ((), "truco"),
    ((), None),
    ((CARD_A, CARD_B), None),  # stacked
    ((), "mazo"),
    ((), "mazo"),
    ((), "mazo"),
    ((), "mazo"),
    ((), "mazo"),
    ((), "mazo"),
    ((), "mazo"),
    ((), "mazo"),
    ((), "mazo"),
    ((), "mazo"),
    ((), "mazo"),
    ((), "mazo"),
    ((), "mazo"),
    ((), "mazo"),
    ((), None),
]
PI_LINES = [
    protocol.encode(0, "HELLO", ["2", "31337"]),
    protocol.encode(1, "HB"),
    protocol.encode(2, "IDENT", ["5"]),
    protocol.encode(3, "LED", ["SLOW"]),
    b"$9 HB*0000\r\n\x03\x03garbage\r\n",
    protocol.encode(4, "HB"),
]


class ScriptedLink:
    """The USB serial: the Pi's lines in, frames out; plays the game as it goes."""

    def __init__(self, seconds):
        self.start = ticks_ms()
        self.seconds = seconds
        self.frames = 0
        self.loops = 0
        self.peak = 0
        self.step = -1
        self.app = None

    def read(self, limit=256):
        self.loops += 1
        used = gc.mem_alloc()
        if used > self.peak:
            self.peak = used
        elapsed = ticks_diff(ticks_ms(), self.start)
        step = elapsed // STEP_MS
        if step == self.step:
            return b""
        self.step = step
        tags, button = SCRIPT[step % len(SCRIPT)]
        machine.chip.tags = [machine.SimTag(uid) for uid in tags]
        machine._pressed.clear()
        if button is not None:
            machine._pressed.add(machine._BUTTONS[button])
        if elapsed >= self.seconds * 1000:
            return protocol.encode(5, "RESET")  # ends the loop, as the Pi's RESET would
        return PI_LINES[step % len(PI_LINES)]

    def write(self, frame):
        self.frames += 1


def probe(seconds):
    config.LOOP_SLEEP_MS = 1
    hw = main.Hardware()
    link = ScriptedLink(seconds)
    gc.collect()
    running = gc.mem_alloc()
    app = main.run(hw, link, seat=0)
    print("baseline_alloc=" + str(baseline))
    print("import_alloc=" + str(imported - baseline))
    print("running_alloc=" + str(running - baseline))
    print("peak_alloc=" + str(link.peak - baseline))
    print("heap_total=" + str(gc.mem_alloc() + gc.mem_free()))
    print("loops=" + str(link.loops))
    print("frames=" + str(link.frames))
    print("rx_errors=" + str(app.rx_errors))


if __name__ == "__main__":
    probe(float(sys.argv[1]) if len(sys.argv) > 1 else 3.0)
