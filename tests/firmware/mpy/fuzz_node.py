"""The node's answers to a file of lines, the same on MicroPython and CPython.

``fuzz_node.py LINES`` reads LINES (one input a line, written as hex so that any
byte can be in it), feeds each to a ``NodeApp`` followed by LF, with a clock that
advances 7 ms per line, and prints one line per input: what the node sent (its
frames, ``|``-separated), ``rx_errors``, whether it counts the Pi alive, its LED
mode and identify state, and the RESET/REPL requests (cleared after each line).
tests/firmware/test_fw_fuzz_micropython.py runs it under both interpreters and
compares the outputs byte for byte.
"""

import sys
from binascii import unhexlify

from seatnode.node import NodeApp


def main(path: str) -> None:
    sent: list[bytes] = []
    app = NodeApp(sent.append, seat=3, serial="e6614103e7ab1234", now=0, reader_version=0x92)
    now = 0
    out = sys.stdout
    with open(path) as f:
        for line in f:  # a line at a time: the whole file in memory nears the unix heap
            fuzz_line(app, sent, line.rstrip("\n"), now + 7, out)
            now += 7
    out.write("END " + str(app.rx_errors) + "\n")


def fuzz_line(app, sent, text, now, out):
    sent.clear()
    app.receive(unhexlify(text) + b"\n", now)
    app.tick(now)
    frames = b"|".join(frame[:-1] for frame in sent).decode()
    out.write(
        frames
        + " ; "
        + str(app.rx_errors)
        + " "
        + ("alive" if app.host_alive(now) else "gone")
        + " "
        + app.led.mode
        + " "
        + app.led.pattern(now, True, True)
        + (" reset" if app.reset_requested else "")
        + (" repl" if app.repl_requested else "")
        + "\n"
    )
    app.reset_requested = False
    app.repl_requested = False


if __name__ == "__main__":
    main(sys.argv[1])
