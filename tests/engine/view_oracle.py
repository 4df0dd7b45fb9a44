"""The seat's view read field by field, as the engine read it before ``seat_views``
(every seat's view at once, ``Game.view``): the oracle the views are checked against
(``test_views.py``, ``tests/table/test_screens_cache.py``)."""

from __future__ import annotations

from controller.engine import Game, SeatView


def seat_view(game: Game, seat: int) -> SeatView:
    """One seat's view, read field by field from the game's public API: the reference
    ``controller.engine.view.seat_views`` (what ``Game.view`` gives) is checked against."""
    team = seat % 2
    score = game.score
    play = game.play_of(seat)  # the whole hand, or the seat's pica
    live = game.pica_live(seat)
    flor = play.flor
    opponents = [s for s in play.order if s != seat] if game.pica_pica else []
    return SeatView(
        seat=seat,
        team=team,
        players=game.players,
        target=game.rules.target,
        ours=score[team],
        theirs=score[1 - team],
        winner=game.winner,
        hand_number=game.hand_number,
        hand_in_progress=game.hand_in_progress,
        dealer=game.dealer,
        mano=game.mano,
        turn=play.turn if live else None,
        baza=play.baza,
        cards=game.cards_in_hand(seat) if game.hand_number else None,
        table=play.table_cards,
        bazas=play.baza_results,
        truco_level=play.truco_level,
        truco_pending=play.truco_pending,
        raise_team=play.raise_team,
        envido_chain=play.envido_chain,
        envido_pending=play.envido_pending,
        envido_result=play.envido.result,
        flor_announced=tuple(flor.ann),
        flor_pending=play.flor_pending,
        flor_result=flor.result,
        telling=play.telling,
        awards=game.awards,
        legal=tuple(a for a in game.legal_list() if a.seat == seat),
        pica_pica=game.pica_pica,
        pica=play.pica,
        opponent=opponents[0] if opponents else None,
    )
