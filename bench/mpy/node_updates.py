# Runs under MicroPython (unix port): the node's own handling of protocol 4's (and 5's) display
# updates (a DU and its counted block of DR frames, one whole window each), timed.
# bench/display.py starts it with MICROPYPATH=firmware and reads its key=value line.
import binascii
import sys
import time

from seatnode import protocol
from seatnode.node import NodeApp
from seatnode.panel import Panel


class CountingI2C:
    def __init__(self):
        self.bytes = 0

    def writeto(self, address, buf):
        self.bytes += len(buf) + 1


def update(number, regions, pages, cols):
    """One DU and its block: ``regions`` windows of ``pages`` x ``cols`` bytes."""
    frames = []
    for i in range(regions):
        p0 = (i * pages) % 8
        p1 = min(7, p0 + pages - 1)
        size = (p1 - p0 + 1) * cols
        b64 = binascii.b2a_base64(bytes((i + k) % 256 for k in range(size)), newline=False)
        body = b"%d DR %d %d 0 %d %s" % (i + 1, p0, p1, cols - 1, b64)
        frames.append(b"$%s*%04X\n" % (body, protocol.crc16(body)))
    block = b"".join(frames)
    head = protocol.encode(0, "DU", (number, regions, len(block), "DIFF", "-"))
    return head + block, 1 + regions


def main():
    regions = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    pages = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    cols = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 30
    out = []
    app = NodeApp(
        out.append, 0, "e6614103e7ab1234", time.ticks_ms(), panel=Panel(CountingI2C(), "ssd1306")
    )
    app.set_version(5)  # the shipped protocol: protocol 4's frames, the 8 KB queue
    best = None
    frames = 1
    for n in range(rounds):
        data, frames = update(n + 1, regions, pages, cols)
        start = time.ticks_us()
        app.receive(data, 0)
        while app.display.pending:
            app.display.step(0)
        took = time.ticks_diff(time.ticks_us(), start)
        best = took if best is None or took < best else best
    per_frame = best / frames
    print(f"node_update_us_unix={best:.1f} node_frame_us_unix={per_frame:.1f} frames={frames}")


main()
