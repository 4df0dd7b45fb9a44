"""The node's USB reader (``seatnode.main.UsbSerial``) on the real MicroPython: a budget a
pass, never blocking, nothing lost."""

from __future__ import annotations

import subprocess

from micropython_unix import environment, require_micropython

READER = """
from seatnode.main import UsbSerial
from seatnode.compat import sleep_ms
usb = UsbSerial(budget=96)
sizes, got, idle = [], b'', 0
while idle < 100:
    data = usb.read()
    if data:
        sizes.append(len(data)); got += data; idle = 0
    else:
        idle += 1; sleep_ms(2)
print('SIZES', max(sizes), len(got), got == bytes(range(32, 127)) * 20)
"""


def _words_on_micropython(script: str, data: bytes) -> list[bytes]:
    """What ``script`` prints on the Unix port with ``data`` on its stdin, word by word."""
    done = subprocess.run(
        [require_micropython(), "-c", script],
        input=data,
        capture_output=True,
        env=environment(),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()[-1500:]
    return done.stdout.split()


def test_usb_input_is_read_a_budget_at_a_time_without_losing_a_byte() -> None:
    words = _words_on_micropython(READER, bytes(range(32, 127)) * 20)  # 1,900 bytes at once
    assert words[0] == b"SIZES", words
    assert int(words[1]) == 96  # never more than the budget in one pass
    assert int(words[2]) == 1900 and words[3] == b"True"


BLOCK_READER = """
from seatnode.main import UsbSerial
from seatnode import config
usb = UsbSerial()
buf = bytearray(2048)
view = memoryview(buf)
sizes, filled = [], 0
while filled < 1500:
    count = usb.readinto(view[filled:1500])
    if count:
        sizes.append(count)
        filled += count
print('BLOCK', max(sizes), len(sizes), filled, bytes(buf[:1500]) == bytes(range(32, 92)) * 25,
      config.BLOCK_READ_BUDGET)
"""


def test_a_counted_block_is_read_with_a_call_a_pass_of_at_most_its_budget() -> None:
    """Protocol 3: the DU said how many bytes follow, so the node reads them straight
    into its buffer (readinto), at most BLOCK_READ_BUDGET a pass, nothing lost."""
    # 1,500 bytes: a whole screen's DR frame and more
    words = _words_on_micropython(BLOCK_READER, bytes(range(32, 92)) * 25)
    assert words[0] == b"BLOCK", words
    budget = int(words[5])
    assert int(words[1]) == budget and int(words[2]) == -(-1500 // budget)  # 3 calls of 512
    assert int(words[3]) == 1500 and words[4] == b"True"
