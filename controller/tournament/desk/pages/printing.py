"""What the printable views share: A4, black on white, page breaks, the sheet's header.

On screen a printable view looks like its paper (white, A4 wide), so what the organiser
sees before printing is what comes out of the printer.
"""

from __future__ import annotations

from typing import Final

from ...competition.model import Tournament
from .common import FORMAT_NAMES, current_round, h, round_label

__all__ = ["PRINT_CSS", "print_header"]

PRINT_CSS: Final = """
@page{size:A4;margin:12mm}
html{background:#fff;color:#000;font:10.5pt/1.35 "DejaVu Sans",Arial,sans-serif}
@media screen{html{background:#777}body.print{background:#fff;max-width:210mm;margin:0 auto;
 padding:10mm 12mm;min-height:297mm}}
@media print{body{margin:0}a{color:#000;text-decoration:none}}
.print h1{font-size:15pt;margin:0}.print h2{font-size:12pt;margin:.2em 0 .6em}
.print header{border-bottom:2px solid #000;margin-bottom:4mm;padding-bottom:1.5mm;
 display:flex;justify-content:space-between;align-items:baseline}
.print table.grid{width:100%;border-collapse:collapse}
.print table.grid th,.print table.grid td{border:1px solid #000;padding:2px 5px;
 vertical-align:top;text-align:left}
.print table.grid th{background:#e8e8e8;font-weight:700}
.print table.grid th.n,.print table.grid td.n{text-align:right}
.print thead{display:table-header-group}.print tr{break-inside:avoid}
.print .small{font-size:8.5pt}
@media print{.print table.grid th{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
"""


def print_header(t: Tournament, what: str, round_no: int | None = None) -> str:
    """The top of a sheet: the tournament, what the sheet is, the round."""
    r = current_round(t) if round_no is None else round_no
    fmt = FORMAT_NAMES[t.spec.format] if t.spec is not None else ""
    when = round_label(t, r) if r else ""
    return (
        f'<header><div><h1>{h(t.display_name)}</h1><div class="small">{h(fmt)}</div></div>'
        f"<h2>{h(what)}{' · ' + h(when) if when else ''}</h2></header>"
    )
