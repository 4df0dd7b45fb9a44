"""A finished game told as its table tells the desk while it plays it (the tests' and
the benches' tables, which send a recorded game again instead of playing one)."""

from __future__ import annotations

from typing import Any

from ...transcript import parse, replay


def told(text: str) -> list[tuple[str, str, dict[str, Any]]]:
    """The events of the game whose record is ``text``, each ``(kind, text, fields)``: a
    ``deal`` for each hand with its dealer (the cards dealt counted, not shown), an
    ``action`` for each action, and ``finished`` (its ``winner`` and ``score``)."""
    played = replay(parse(text)).game
    out: list[tuple[str, str, dict[str, Any]]] = []
    deal: list[str] = []

    def flush() -> None:
        if deal:
            dealt = sum(1 for line in deal if line.startswith("deal "))
            shown = "\n".join(x for x in deal if not x.startswith("deal "))
            out.append(("deal", shown, {"dealt": dealt}))
            deal.clear()

    for raw in text.split("\n"):
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith(("table", "score ")):
            continue
        if line.startswith("dealer ") or line == "hand":
            flush()
            deal.append(line)
        elif line.startswith("deal "):
            deal.append(line)
        else:
            flush()
            out.append(("action", line, {}))
    flush()
    out.append(
        ("finished", f"gana el equipo {played.winner}",
         {"winner": played.winner, "score": list(played.score)})
    )  # fmt: skip
    return out
