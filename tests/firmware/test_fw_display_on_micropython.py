"""Display frames through the node's firmware running on the real MicroPython.

The Pi's side is the real one (DisplayWriter, NodePort, the frame decoder); the node
is a MicroPython process (the unix port) running NodeApp with its display frames and
panel driver, writing into the panel model of tests/firmware/fake_oled.py on its
I2C. Random sequences of screens, some of the Pi's writes mangled on the way, and a
panel that drops off its bus and comes back dark: after every frame the panel's glass
shows exactly the Pi's image.
"""

from __future__ import annotations

import binascii
import os
import random
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from micropython_unix import require_micropython
from PIL import Image, ImageDraw
from seatnode.config import USB_READ_BUDGET

from controller.hal.display_planner import DisplayWriter, Panel
from controller.hal.events import Heartbeat, Hello
from controller.hal.frames import FrameDecoder, encode_counted, encode_frame
from controller.hal.node_display import NodePort
from controller.hal.pages import image_to_pages
from controller.hal.panels import Controller
from controller.render.matchsticks import render_scoreboard_image

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCRIPT = HERE / "mpy" / "display_node.py"


def micropython() -> str:
    return require_micropython()  # skips, saying why (fails in CI)


class MicroPythonNode:
    """The node process, and the Pi's port and writer talking to it."""

    def __init__(self, kind: str, rnd: random.Random, protocol: int = 5) -> None:
        # the session's version (the HELLO sent first): 5 and 4, DR frames, DACK on
        # request and HB's written (5: the node's queue 8 KB); 3, DR frames, a DACK each;
        # 2, DW
        self.protocol = protocol
        env = dict(os.environ, MICROPYPATH=f"{ROOT / 'firmware'}:{HERE}")
        self.proc = subprocess.Popen(
            [micropython(), str(SCRIPT), kind],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self.rnd = rnd
        self.mangle_next = False
        self.seq = 0
        self.decoder = FrameDecoder()
        self.port = NodePort(self, Panel(Controller(kind)))
        self.writer = DisplayWriter(self.port)
        self.hellos: list[Hello] = []
        self.beats: list[Heartbeat] = []
        self.send_many([("HELLO", (str(protocol), "1"))])
        self.glass()  # HELLO and PANEL OK: the port is ready
        assert [h.protocol for h in self.hellos] == [5, protocol], self.hellos

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)

    def _write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send_many(self, messages: list[tuple[str, tuple[str, ...]]]) -> bool:
        frames = []
        for kind, args in messages:
            frames.append(encode_frame(self.seq, kind, *args))
            self.seq += 1
        if self.mangle_next:
            self.mangle_next = False
            i = self.rnd.randrange(len(frames))
            if self.rnd.random() < 0.5:
                del frames[i]
            else:
                frame = bytearray(frames[i])
                frame[self.rnd.randrange(len(frame) - 1)] ^= 0x01
                frames[i] = bytes(frame)
        self._write(b"".join(frames))
        return True

    def send_counted(
        self,
        header: Callable[[int], tuple[str, tuple[str, ...]]],
        block: list[tuple[bytes, bytes]],
    ) -> int:
        assert self.protocol >= 3
        data, self.seq = encode_counted(self.seq, header, block)
        written = len(data)  # what the Pi wrote, whatever the way does to it
        if self.mangle_next:  # a byte flipped, or a line lost
            self.mangle_next = False
            lines = data.split(b"\n")
            i = self.rnd.randrange(1, len(lines) - 1)
            if self.rnd.random() < 0.5:
                del lines[i]
            else:
                line = bytearray(lines[i])
                line[self.rnd.randrange(len(line))] ^= 0x01
                lines[i] = bytes(line)
            data = b"\n".join(lines)
        self._write(data)
        return written

    def glass(self) -> bytes:
        """Ask for the glass; the node's frames before it go to the Pi's port."""
        self._write(b"?\n")
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, "the MicroPython node stopped"
            if line.startswith(b"GLASS "):
                return binascii.unhexlify(line[6:].strip())
            for event in self.decoder.feed(line):
                if isinstance(event, Hello):
                    self.hellos.append(event)
                elif isinstance(event, Heartbeat):
                    self.beats.append(event)
                self.port.on_event(event)

    def settled_glass(self) -> bytes:
        """The glass once the node and the Pi have nothing more to say to each other."""
        glass = self.glass()
        for _ in range(5):
            again = self.glass()
            if again == glass:
                return glass
            glass = again
        return glass

    def wait(self, ms: int) -> None:
        self._write(b"!wait %d\n" % ms)


@pytest.fixture(
    params=[
        ("ssd1306", 5),
        ("sh1106", 5),
        ("ssd1309", 4),
        ("ssd1306", 3),
        ("sh1106", 3),
        ("ssd1309", 3),
        ("sh1106", 2),
    ]
)
def node(request: pytest.FixtureRequest) -> Iterator[MicroPythonNode]:
    kind, protocol = request.param
    mp = MicroPythonNode(kind, random.Random(kind), protocol)
    yield mp
    mp.close()


def screens(rnd: random.Random, count: int) -> list[Image.Image]:
    out = []
    for _ in range(count):
        if rnd.random() < 0.7:
            image = render_scoreboard_image(rnd.randrange(31), rnd.randrange(31), 30)
        else:
            image = Image.new("1", (128, 64), 0)
        draw = ImageDraw.Draw(image)
        for _ in range(rnd.randrange(3)):
            x, y = rnd.randrange(128), rnd.randrange(64)
            draw.rectangle((x, y, x + rnd.randrange(40), y + rnd.randrange(20)), fill="white")
        out.append(image)
    return out


def test_random_screens_through_the_micropython_node(node: MicroPythonNode) -> None:
    rnd = random.Random(5)
    for index, image in enumerate(screens(rnd, 40)):
        node.mangle_next = rnd.random() < 0.2
        node.writer.update(image)
        glass = node.settled_glass()
        if glass != image_to_pages(image):  # a mangled update: DLOST, or no DACK
            node.wait(1100)
            node.port.on_event(Heartbeat())
            glass = node.settled_glass()
        assert glass == image_to_pages(image), f"screen {index}"
    stats = node.port.stats
    assert stats.full_resends >= 2  # the first screen, and some mangled ones
    if node.protocol < 4:  # a DACK each, a heartbeat of three arguments
        assert stats.acks > 30 and stats.asked == stats.updates
        assert node.beats and all(beat.written is None for beat in node.beats)
        return
    # protocols 4 and 5: DACK only when asked, the heartbeats acknowledge the rest
    assert 0 < stats.acks <= stats.asked < stats.updates - 10, stats
    node.wait(1100)  # the next heartbeat names the last update: nothing unacknowledged
    node.settled_glass()
    assert node.beats[-1].written == stats.updates - 1, (node.beats[-1], stats)
    assert node.port.unacknowledged == ()


def test_a_panel_reset_on_the_micropython_node(node: MicroPythonNode) -> None:
    node.writer.update(render_scoreboard_image(9, 9, 30))
    assert node.settled_glass() == image_to_pages(render_scoreboard_image(9, 9, 30))
    node._write(b"!unplug\n")
    node.writer.update(render_scoreboard_image(10, 9, 30))
    node.settled_glass()
    assert not node.port.ready  # the node said PANEL ... MISSING
    node._write(b"!replug\n")
    assert node.glass() == bytes(1024)  # back, dark
    node.wait(600)  # the node initialises it again and says PANEL ... OK
    assert node.settled_glass() == image_to_pages(render_scoreboard_image(10, 9, 30))


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
@pytest.mark.parametrize("per_pass", [USB_READ_BUDGET, 4096])
def test_an_unpaced_sender_cannot_exhaust_the_nodes_memory(per_pass: int, protocol: int) -> None:
    # 20,000 display frames (FULL updates back to back, no waiting for DACKs) into the
    # real firmware on the real MicroPython with a 256 KiB heap (the unix port: 64-bit
    # objects, the panel model compiled in it), in a session of ``protocol``: no
    # MemoryError; updates the node could not keep up with are dropped (and reported
    # lost), the rest written.  Protocol 4's and 5's updates ask for their DACK every
    # other one (ACK, -, ACK, ...): the node's queue is bounded the same way (protocol 5:
    # 8 KB of blocks, 128 updates), and it answers only those that asked.
    lines = []
    sent, update = 0, 0
    data = bytes(range(256)) * 4
    block = [(b"DR", b"0 7 0 127 " + binascii.b2a_base64(data, newline=False))]

    def header(count: int) -> tuple[str, tuple[str, ...]]:
        if protocol >= 4:
            return "DU", (str(update), "1", str(count), "FULL", "-" if update % 2 else "ACK")
        return "DU", (str(update), "1", str(count), "FULL")

    while protocol >= 3 and sent < 4_000:  # a whole screen in one DR frame, counted (2.8 MB)
        frames, sent = encode_counted(sent, header, block)
        lines.append(frames)
        update = (update + 1) % 65536
    while protocol == 2 and sent < 20_000:
        lines.append(encode_frame(sent, "DU", str(update), "43", "FULL"))
        for index, offset in enumerate(range(0, 1024, 24)):
            text = binascii.b2a_base64(data[offset : offset + 24], newline=False).decode()
            lines.append(encode_frame(sent + 1 + index, "DW", str(index), "0", "7", "0", "127",
                                      str(offset), text))  # fmt: skip
        sent += 44
        update = (update + 1) % 65536
    env = dict(os.environ, MICROPYPATH=f"{ROOT / 'firmware'}:{HERE}:{HERE / 'mpy'}")
    script = HERE / "mpy" / "flood_node.py"
    done = subprocess.run(
        [micropython(), "-X", "heapsize=256k", str(script), str(per_pass), str(protocol)],
        input=b"".join(lines),
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    words = done.stdout.split()
    assert words[0] == b"FLOOD", done.stdout[-500:]
    dropped, lost, acks, lowest, written_whole, last = (int(w) for w in words[1:7])
    assert lowest > 64 * 1024  # what stays allocated is bounded, whatever comes
    if per_pass > USB_READ_BUDGET:  # faster than the panel is written: dropped, lost
        assert dropped > 0 and lost > 0
    else:  # at the node's own USB budget it keeps up: every update written whole
        assert dropped == 0 and lost == 0 and written_whole == update
        assert last == update - 1  # what protocol 4's heartbeat would say
        assert acks == ((update + 1) // 2 if protocol >= 4 else update)  # 4, 5: the ACK ones


def test_a_panel_that_resets_silently_is_lit_again_by_the_node(node: MicroPythonNode) -> None:
    screen = render_scoreboard_image(4, 8, 30)
    node.writer.update(screen)
    assert node.settled_glass() == image_to_pages(screen)
    sent = node.seq
    node._write(b"!reset\n")  # a brown-out: no I2C error, the glass dark
    assert node.glass() == bytes(1024)
    node.wait(2000)  # the node's liveness refresh, from its own copy of the RAM
    assert node.glass() == image_to_pages(screen)
    assert node.seq == sent  # the Pi sent nothing: the node did it alone
