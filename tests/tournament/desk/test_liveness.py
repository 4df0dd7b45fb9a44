"""Whether the desk saw a game as it was played (issue 43): a game played live counts,
whatever the table's clock says; one that reached the desk after the fact is held."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from controller.tournament.desk.liveness import RESEND_S, unseen


def played(hands: int, hand_s: float, start: float = 1000.0) -> list[float]:
    """The table's times of a game's events: four a hand, ``hand_s`` seconds a hand."""
    return [start + h * hand_s + k * hand_s / 4 for h in range(hands) for k in range(4)]


@given(skew=st.floats(-86_400 * 3, 86_400 * 3), delay=st.floats(0.0, 5.0))
def test_a_game_seen_live_is_not_held_whatever_the_tables_clock(skew: float, delay: float) -> None:
    times = played(8, 30.0)
    arrivals = [(t + delay, t + skew) for t in times]  # a clock off by any constant
    assert unseen(arrivals, 8, 3.0) is None


def test_a_short_cut_the_outbox_sends_again_is_not_held() -> None:
    times = played(8, 30.0)
    back = times[10] + 60.0  # a minute without the link, then the outbox sends the rest
    arrivals = [(max(t, back) if 5 <= i <= 10 else t, t) for i, t in enumerate(times)]
    assert unseen(arrivals, 8, 3.0) is None


def test_a_game_played_offline_and_sent_afterwards_is_held() -> None:
    times = played(8, 30.0)  # four minutes of play, all reaching the desk at once, later
    sent = times[-1] + 5.0
    why = unseen([(sent + i * 0.01, t) for i, t in enumerate(times)], 8, 3.0)
    assert why is not None and why.startswith("held: its events reached the desk up to")
    assert float(why.split("up to ")[1].split(" s")[0]) > RESEND_S


def test_a_burst_whose_times_were_made_to_look_punctual_is_held() -> None:
    sent = 5000.0  # the forger stamped every event as it sent it
    arrivals = [(sent + i * 0.01, sent + i * 0.01 - 0.5) for i in range(32)]
    why = unseen(arrivals, 8, 3.0)
    assert why is not None and "hands reached the desk in" in why
    assert unseen(arrivals, 8, None) is None  # the demos' desk: no pace checked
