# Runs under the real MicroPython (unix port): the node's firmware (NodeApp with its
# display frames and panel driver) and a model of the panel on its I2C bus.
# Frames from the Pi come on stdin, the node's frames go to stdout. Lines the test adds:
#   ?        work through what is queued, then print "GLASS <hex of the glass>"
#   !unplug  the panel's cable comes off (its transfers fail)
#   !replug  it is back, dark, its registers at reset (a power cycle)
#   !wait N  N ms pass (the node's loop runs: retries, heartbeats, DLOST repeats)
#   !reset   the panel loses its settings and RAM without a failed transfer (a brown-out)
import binascii
import sys

from fake_oled import model_for
from seatnode.node import NodeApp
from seatnode.panel import Panel

kind = sys.argv[1]
model = model_for(kind)
model.power_cycle()
out = sys.stdout.buffer
now = 0


def write(frame):
    out.write(frame)


app = NodeApp(write, 0, "e6614103e7ab1234", now, panel=Panel(model, kind))


def settle():
    global now
    while app.display.pending:
        now += 1
        app.tick(now)


while True:
    line = sys.stdin.buffer.readline()
    if not line:
        break
    if line.startswith(b"?"):
        settle()
        out.write(b"GLASS " + binascii.hexlify(model.glass()) + b"\n")
    elif line.startswith(b"!unplug"):
        model.unplugged = True
    elif line.startswith(b"!replug"):
        model.unplugged = False
        model.power_cycle()
    elif line.startswith(b"!reset"):
        model.power_cycle()
    elif line.startswith(b"!wait"):
        for _ in range(int(line.split()[1]) // 10):
            now += 10
            app.tick(now)
    else:
        app.receive(line, now)
        now += 1
        app.tick(now)
    try:
        out.flush()
    except AttributeError:
        pass
