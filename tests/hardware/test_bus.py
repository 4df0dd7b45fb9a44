"""hardware/bus.md's rise-time table is what its formula and numbers give."""

from __future__ import annotations

import math
import re
from pathlib import Path

BUS = Path(__file__).resolve().parents[2] / "hardware" / "bus.md"
FIXED_PF = 45
CABLE_PF_PER_M = 56
PULL_UPS = (10_000, 4_700, 1_800)  # the table's columns, ohms


def rise_ns(ohms: float, picofarads: float) -> float:
    """30 % to 70 % of the supply through R into C (the I2C specification's t_r)."""
    return ohms * picofarads * 1e-12 * math.log(0.7 / 0.3) * 1e9


def test_the_rise_time_table_is_computed_from_its_own_numbers() -> None:
    text = BUS.read_text(encoding="utf-8")
    assert f"{FIXED_PF} pF fixed" in text and f"**{CABLE_PF_PER_M} pF per metre**" in text
    assert "0.8473 · R · C" in text and round(math.log(0.7 / 0.3), 4) == 0.8473
    rows = re.findall(
        r"^\| ([\d.]+) m \| (\d+) pF \| (\d+) ns \| (\d+) ns \| (\d+) ns \|$", text, re.M
    )
    assert len(rows) == 5
    for length, cap, *times in rows:
        c = FIXED_PF + CABLE_PF_PER_M * float(length)
        assert int(cap) == round(c)
        assert [int(t) for t in times] == [round(rise_ns(r, c)) for r in PULL_UPS]


def cable(metres: float) -> float:
    return FIXED_PF + CABLE_PF_PER_M * metres


def test_the_advice_follows_from_the_limits() -> None:
    fast, standard = 300, 1000  # ns: the rise-time limits at 400 and 100 kHz
    # 400 kHz on the modules' resistors: 10k fails on any cable, 4.7k beyond ~0.5 m
    assert rise_ns(10_000, cable(0.3)) > fast
    assert rise_ns(4_700, cable(0.5)) < fast < rise_ns(4_700, cable(1.0))
    # 100 kHz on a 10k module alone: up to about 1.3 m
    assert rise_ns(10_000, cable(1.0)) < standard < rise_ns(10_000, cable(1.5))
    # with the 2.2 kOhm added (1.8k worst case): 400 kHz holds at 1 m, 100 kHz at 2 m easily
    assert rise_ns(1_800, cable(1.0)) < fast and rise_ns(1_800, cable(2.0)) < standard / 4
    # the lowest pull-up the 3 mA sink allows is below 2.2k || 4.7k
    assert (3.3 - 0.4) / 3e-3 < 1 / (1 / 2_200 + 1 / 4_700) < 1 / (1 / 2_200 + 1 / 10_000)
