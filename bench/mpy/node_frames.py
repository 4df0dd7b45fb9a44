# Runs under MicroPython (unix port): the node's own handling of display frames, timed.
# bench/display.py starts it with MICROPYPATH=firmware and reads its key=value line.
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


def frames(count):
    lines = [protocol.encode(0, "DU", ("0", str(count), "FULL"))]
    data = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYX"  # 24 bytes
    for i in range(count):
        lines.append(
            protocol.encode(i + 1, "DW", (str(i), "0", "7", "0", "127", str(i * 24 % 1000), data))
        )
    return lines


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    out = []
    i2c = CountingI2C()
    app = NodeApp(out.append, 0, "e6614103e7ab1234", time.ticks_ms(), panel=Panel(i2c, "ssd1306"))
    lines = frames(count)
    best = None
    for _ in range(rounds):
        app.display._last = None
        app.display.synced = False
        start = time.ticks_us()
        for line in lines:
            app.receive(line, 0)
            while app.display.pending:
                app.display.step(0)
        took = time.ticks_diff(time.ticks_us(), start)
        best = took if best is None or took < best else best
    print(f"node_frame_us_unix={best / len(lines):.1f} frames={len(lines)}")


main()
