"""hardware/bom.md: the totals of the priced parts list are the sums of its rows, and
the guide quotes the same totals."""

from __future__ import annotations

import re
from pathlib import Path

BOM = Path(__file__).resolve().parents[2] / "hardware" / "bom.md"
GUIDE = BOM.with_name("README.md")
SIZES = ("2 seats", "4 seats", "6 seats")


def quantity(cell: str) -> float:
    cell = cell.strip()
    if cell in ("–", "-", ""):
        return 0.0
    return float(cell.split()[0])  # "1 set" counts one


def row_totals(text: str) -> dict[str, float]:
    """Sum of quantity x unit price per table size, optional parts left out."""
    totals = dict.fromkeys(SIZES, 0.0)
    text = text.split("\n## Variants")[0]  # the variants' rows change a table, not add to it
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
    main = text.split("\n## Variants")[0]
    assert re.search(r'^\| 6 \| OLED display 2\.42" 128×64, SSD1309 \|', main, re.M)
    assert "TCA9548A" not in main and "multiplexer" not in main.split("## The table's")[1]
    assert "TCA9548A" in text.split("\n## Variants")[1]  # the variant's own list


def test_the_guide_quotes_the_bom_totals() -> None:
    totals = stated_totals(BOM.read_text(encoding="utf-8"))
    guide = GUIDE.read_text(encoding="utf-8")
    for size, total in totals.items():
        assert re.search(rf"^\| {size} \| {int(total)} \|$", guide, re.M), size


# Raspberry Pi's order codes for the Pi 5 by its memory, as the reseller lists give them
# (SC1111 the 4 GB board, SC1112 the 8 GB one): the code bought must be the RAM named.
PI5_CODES = {"4 GB": "SC1111", "8 GB": "SC1112"}


def test_the_pi_s_part_number_is_the_ram_named() -> None:
    for path in (BOM, BOM.parents[1] / "docs" / "bares" / "armado.md"):
        rows = [
            line
            for line in path.read_text(encoding="utf-8").splitlines()
            if re.match(r"^\|( 1 \|)? Raspberry Pi 5, \d+ GB \|", line)
        ]
        assert rows, path
        for row in rows:
            ram = re.search(r"Raspberry Pi 5, (\d+ GB)", row)
            assert ram is not None
            code = re.search(r"Raspberry Pi \**(SC\d{4})", row)
            assert code is not None and code.group(1) == PI5_CODES[ram.group(1)], (path, row)


def test_the_buttons_price_is_the_named_part_s() -> None:
    """Row 10 names the Sanwa OBSF-24: its price is the Sanwa's (USD 2.5-4), not a
    generic button's (about 1)."""
    row = next(
        line for line in BOM.read_text(encoding="utf-8").splitlines() if line.startswith("| 10 |")
    )
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert cells[2].startswith("**Sanwa OBSF-24**")
    assert 2.5 <= float(cells[6]) <= 4
