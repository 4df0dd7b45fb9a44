"""The guide's table runs the firmware's own NodeApp as its seat nodes (tests/hal/simnode.py)
with the panel models of tests/firmware/fake_oled.py."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for folder in (ROOT / "firmware", ROOT / "tests" / "firmware"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
