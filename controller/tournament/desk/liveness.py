"""Whether the desk saw a game as it was played: a stolen key decides nothing unseen.

A table's key signs whatever its holder likes, so a copy of it (a table's SD card read
during a power cut) can play a whole game offline, against its own broker, and publish
it afterwards as the table: sealed right, announced on the table's events, finished
there, every statement in its record. What the copy cannot do is go back in time: the
desk saw those events arrive all at once, after the fact. A real table sends each event
as it is played; when its link drops, its outbox sends what the desk missed as soon as
the link is back (a Wi-Fi cut of seconds, a broker restart), so a real game arrives
spread over its play, with at most a short stretch late.

:func:`unseen` says why a game's events do not look like that (``None``: they do):

- **late** — the events' delay (the desk's arrival time minus the table's ``ts``; the
  table's clock may be off by any constant amount: only the spread counts) varies by
  more than ``RESEND_S`` within the game: a stretch of play longer than any resend
  explains reached the desk after the fact;
- **too fast** (``hand_s``, the venue's human pace: ``Quota.hand_s``) — the game's
  events reached the desk within less than ``hand_s`` seconds per hand dealt: a burst
  whatever its ``ts`` say (a forger who made them look punctual).

Both are the venue's desk's (``truco-table desk``, with its ``Quota``); the demos and
benches, at a thousand times human speed, run without. A game that fails either is
*held*: it does not count by itself; the organiser sees it among the records with the
reason, and decides (a result entered by hand, if the game was really played). Pure: no
clock (the arrival times are given).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

__all__ = ["RESEND_S", "unseen"]

#: The longest stretch of a game a table's outbox can deliver late and still count by
#: itself: a link or broker away this long (the outbox sends again when it is back).
RESEND_S: Final = 120.0


def unseen(
    arrivals: Sequence[tuple[float, float]], hands: int, hand_s: float | None = None
) -> str | None:
    """Why the desk did not see a game as it was played (``None``: it did).

    ``arrivals``: ``(arrived at the desk, the table's ts)`` of each of its events;
    ``hands``: the hands dealt; ``hand_s``: the shortest a hand takes at a real table
    (``None``: not checked)."""
    if not arrivals:
        return None  # a game the events never announced is refused for that already
    lags = [arrived - ts for arrived, ts in arrivals]
    late = max(lags) - min(lags)
    if late > RESEND_S:
        return (
            f"held: its events reached the desk up to {late:.0f} s after they were played, "
            f"more than a resend explains ({RESEND_S:.0f} s)"
        )
    if hand_s and hands > 0:
        span = max(a for a, _ in arrivals) - min(a for a, _ in arrivals)
        if span < hands * hand_s:
            return (
                f"held: its {hands} hands reached the desk in {span:.1f} s, faster than a "
                f"table plays them ({hand_s:.0f} s a hand)"
            )
    return None
