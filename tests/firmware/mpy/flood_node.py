# Runs under the real MicroPython (unix port): the node's firmware (NodeApp, its display
# frames, the panel driver on a model of the panel) fed whatever comes on stdin,
# sys.argv[1] bytes a pass of its loop, as fast as it comes (a Pi that does not wait for
# DACKs), in a session of protocol sys.argv[2] (its display queue's bounds: 5, the newest,
# when not given). At the end it prints "FLOOD <dropped> <lost> <acks> <lowest free heap>
# <updates written whole> <the last written, -1: none (protocol 4's HB's written)>".
import gc
import sys

from fake_oled import model_for
from seatnode.node import NodeApp
from seatnode.panel import Panel

per_pass = int(sys.argv[1])
version = int(sys.argv[2]) if len(sys.argv) > 2 else 5
model = model_for("ssd1306")
acks = 0


def write(frame):
    global acks
    if b" DACK " in frame:
        acks += 1


app = NodeApp(write, 0, "e6614103e7ab1234", 0, panel=Panel(model, "ssd1306"))
app.set_version(version)  # as the Pi's HELLO chooses it
lowest = gc.mem_free()
now = 0
passes = 0
buf = bytearray(per_pass)
view = memoryview(buf)
readinto = sys.stdin.buffer.readinto
while True:
    count = readinto(buf)
    if not count:
        break
    app.receive(bytes(view[:count]), now)
    app.tick(now)
    now += 1
    passes += 1
    if passes % 64 == 0:  # what stays allocated (garbage collected first)
        model.commands_seen = []  # the panel model's own log, not the node's memory
        gc.collect()
        lowest = min(lowest, gc.mem_free())
while app.display.pending:
    app.tick(now)
written = app.display.written
print(
    "FLOOD",
    app.display.dropped,
    app.display.lost,
    acks,
    lowest,
    app.display.updates,
    -1 if written is None else written,
)
