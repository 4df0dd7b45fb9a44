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


def test_usb_input_is_read_a_budget_at_a_time_without_losing_a_byte() -> None:
    done = subprocess.run(
        [require_micropython(), "-c", READER],
        input=bytes(range(32, 127)) * 20,  # 1,900 bytes waiting at once
        capture_output=True,
        env=environment(),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()[-1500:]
    words = done.stdout.split()
    assert words[0] == b"SIZES", done.stdout
    assert int(words[1]) == 96  # never more than the budget in one pass
    assert int(words[2]) == 1900 and words[3] == b"True"
