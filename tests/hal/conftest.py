"""The link tests run the firmware's own modules as a simulated seat node."""

import sys
from pathlib import Path

FIRMWARE_DIR = Path(__file__).resolve().parents[2] / "firmware"
if str(FIRMWARE_DIR) not in sys.path:
    sys.path.insert(0, str(FIRMWARE_DIR))
# The panel models are shared with the node's tests (tests/firmware/fake_oled.py).
TESTS_FIRMWARE_DIR = Path(__file__).resolve().parents[1] / "firmware"
if str(TESTS_FIRMWARE_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_FIRMWARE_DIR))
