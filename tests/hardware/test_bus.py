"""hardware/bus.md's tables are what their formulas and numbers give: the rise times,
and the sink current with every pull-up on the line in parallel (the Pi's own 1.8 kOhm,
the breakout's, the module's and the added ones)."""

from __future__ import annotations

import math
import re
from pathlib import Path

BUS = Path(__file__).resolve().parents[2] / "hardware" / "bus.md"
FIXED_PF = 45
CABLE_PF_PER_M = 56
PI_OHMS, BREAKOUT_OHMS = 1_800, 10_000  # GPIO2/3's resistors on the Pi; Adafruit 2717's


def parallel(*ohms: float) -> float:
    return 1 / sum(1 / r for r in ohms)


PULL_UPS = (10_000, 4_700, parallel(10_000, 10_000), parallel(4_700, 10_000))  # the columns


def rise_ns(ohms: float, picofarads: float) -> float:
    """30 % to 70 % of the supply through R into C (the I2C specification's t_r)."""
    return ohms * picofarads * 1e-12 * math.log(0.7 / 0.3) * 1e9


def cable(metres: float) -> float:
    return FIXED_PF + CABLE_PF_PER_M * metres


def sink_ma(*ohms: float) -> float:
    """The current into a low line (0.4 V) through every pull-up in parallel."""
    return (3.3 - 0.4) / parallel(PI_OHMS, BREAKOUT_OHMS, *ohms) * 1e3


def test_the_rise_time_table_is_computed_from_its_own_numbers() -> None:
    text = BUS.read_text(encoding="utf-8")
    assert f"{FIXED_PF} pF fixed" in text and f"**{CABLE_PF_PER_M} pF per metre**" in text
    assert "0.8473 · R · C" in text and round(math.log(0.7 / 0.3), 4) == 0.8473
    rows = re.findall(
        r"^\| ([\d.]+) m \| (\d+) pF \| (\d+) ns \| (\d+) ns \| (\d+) ns \| (\d+) ns \|$",
        text,
        re.M,
    )
    assert len(rows) == 5
    for length, cap, *times in rows:
        c = cable(float(length))
        assert int(cap) == round(c)
        assert [int(t) for t in times] == [round(rise_ns(r, c)) for r in PULL_UPS]


def test_the_sink_current_table_counts_every_pull_up() -> None:
    text = BUS.read_text(encoding="utf-8")
    assert f"{PI_OHMS / 1000:.1f} kΩ" in text and "967 Ω" in text
    rows = re.findall(
        r"^\| ([\d.]+ kΩ|none) \| ([\d.]+) kΩ[^|]* \| (\d+) Ω \| ([\d.]+) mA", text, re.M
    )
    assert len(rows) == 4
    for module, added, together, current in rows:
        ohms = [float(added) * 1000]
        if module != "none":
            ohms.append(float(module.split()[0]) * 1000)
        assert int(together) == round(parallel(PI_OHMS, BREAKOUT_OHMS, *ohms))
        assert float(current) == round(sink_ma(*ohms), 2)


def test_the_advice_follows_from_the_limits() -> None:
    fast, standard, limit_ma = 300, 1000, 3.0
    # what the page tells the builder to fit stays within 3 mA for every kind of module
    assert sink_ma(4_700, 10_000) < limit_ma
    assert sink_ma(10_000, 10_000) < limit_ma
    assert sink_ma(4_700) < limit_ma  # a module without its own, 4.7k added
    # the old advice (2.2k added to a 4.7k module) did not: 3.8 mA
    assert sink_ma(4_700, 2_200) > limit_ma
    # ... nor does adding 10k on a board that already has 10k per channel
    assert sink_ma(4_700, 10_000, 10_000) > limit_ma
    # 100 kHz: every advised combination rises in time at 2 m; a 10k module alone not
    for ohms in (parallel(10_000, 10_000), parallel(4_700, 10_000), 4_700):
        assert rise_ns(ohms, cable(2.0)) < standard
    assert rise_ns(10_000, cable(1.0)) < standard < rise_ns(10_000, cable(1.5))
    # 400 kHz does not fit: the worst advised case fails beyond half a metre
    assert rise_ns(parallel(10_000, 10_000), cable(0.5)) > fast
