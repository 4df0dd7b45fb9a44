"""hardware/bom.md: the totals of the priced parts list are the sums of its rows."""

from __future__ import annotations

import re
from pathlib import Path

BOM = Path(__file__).resolve().parents[2] / "hardware" / "bom.md"
SIZES = ("2 seats (GPIO)", "4 seats", "6 seats")


def quantity(cell: str) -> float:
    cell = cell.strip()
    if cell in ("–", "-", ""):
        return 0.0
    return float(cell.split()[0])  # "1 set" counts one


def row_totals(text: str) -> dict[str, float]:
    """Sum of quantity x unit price per table size, optional parts left out."""
    totals = dict.fromkeys(SIZES, 0.0)
    for line in text.splitlines():
        if not re.match(r"^\| \d+b? \|", line):
            continue
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if "(optional)" in cells[1]:
            continue
        if len(cells) == 8:  # #, part, what, 2, 4, 6, price, notes
            price = float(cells[6])
            for size, cell in zip(SIZES, cells[3:6], strict=True):
                totals[size] += quantity(cell) * price
        elif len(cells) == 6:  # the 2-seat GPIO extras: #, part, what, qty, price, notes
            totals[SIZES[0]] += quantity(cells[3]) * float(cells[4])
        else:
            raise AssertionError(f"a BOM row with {len(cells)} cells: {line}")
    return totals


def stated_totals(text: str) -> dict[str, float]:
    match = re.search(
        r"^\| \*\*total\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \|", text, re.M
    )
    assert match, "no totals row"
    return dict(zip(SIZES, (float(g) for g in match.groups()), strict=True))


def test_the_totals_are_the_sums_of_the_rows() -> None:
    text = BOM.read_text(encoding="utf-8")
    computed = row_totals(text)
    for size, total in stated_totals(text).items():
        assert round(computed[size]) == total, (size, computed[size])


def test_the_prices_are_dated_and_the_bigger_panel_recommended() -> None:
    text = BOM.read_text(encoding="utf-8")
    assert re.search(r"Prices .* on \*\*\d{4}-\d{2}-\d{2}\*\*", text)
    assert 'recommended: SH1106 1.3"' in text
