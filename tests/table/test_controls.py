"""The pad's buttons: what a press or a hold means in every state where it varies.

The strongest check: for random game states, every legal action of every seat is made
exactly by the gestures ``gestures_for`` proposes, played through the pure press/hold/
tap functions the table uses.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.engine import CARDS, Action, Card, Claims, Game, HouseRules, Kind
from controller.table.controls import (
    ENVIDO_VALUES,
    FLOR_VALUES,
    Button,
    Gesture,
    SeatInput,
    declarable,
    gestures_for,
    on_hold,
    on_press,
    on_show_tap,
    short_press_kind,
    start_number_entry,
    step_number,
)
from tests.helpers import cards

from ..engine.strategies import house_rules


def game_with(rules: HouseRules, *deals: str, moves: str = "") -> Game:
    game = Game(rules)
    game.deal({s: cards(d) for s, d in enumerate(deals)})
    for move in filter(None, (m.strip() for m in moves.split(","))):
        game.push_str(move)
    return game


def perform(game: Game, gestures: list[Gesture], inp: SeatInput) -> Action | None:
    """Play gestures through the pure controls; the last action they make."""
    made = None
    for g in gestures:
        if g.kind == "press":
            assert g.button is not None
            made = on_press(game, g.seat, g.button, inp) or made
        elif g.kind == "hold":
            assert g.button is not None
            on_hold(game, g.seat, g.button, inp)
        else:
            assert g.card is not None
            if not on_show_tap(inp, g.card):
                made = Action(g.seat, Kind.PLAY, card=g.card)
    return made


TWO = HouseRules()


class TestShortPress:
    def test_truco_button_climbs_the_ladder(self) -> None:
        g = game_with(TWO, "7C 6C 3E", "2O 1B 4B")
        assert short_press_kind(g, 1, Button.TRUCO) is Kind.TRUCO
        g.push_str("1 truco")
        assert short_press_kind(g, 0, Button.TRUCO) is Kind.RETRUCO  # quiero retruco
        g.push_str("0 quiero")
        assert short_press_kind(g, 0, Button.TRUCO) is Kind.RETRUCO
        g.push_str("0 retruco")
        assert short_press_kind(g, 1, Button.TRUCO) is Kind.VALE_CUATRO
        g.push_str("1 vale-cuatro")
        assert short_press_kind(g, 0, Button.TRUCO) is Kind.VALE_CUATRO  # nothing above

    def test_flor_button_becomes_al_resto_against_a_contraflor(self) -> None:
        g = game_with(HouseRules(flor=True), "7C 6C 3C", "2O 1O 4O", moves="0 flor")
        assert short_press_kind(g, 1, Button.FLOR) is Kind.FLOR
        g.push_str("1 contraflor")
        assert short_press_kind(g, 0, Button.FLOR) is Kind.CONTRAFLOR_AL_RESTO
        assert short_press_kind(g, 1, Button.FLOR) is Kind.FLOR

    def test_no_quiero_is_me_achico_when_a_flor_awaits_the_team(self) -> None:
        g = game_with(HouseRules(flor=True), "7C 6C 3C", "2O 1O 4O", moves="0 flor")
        assert short_press_kind(g, 1, Button.NO_QUIERO) is Kind.CON_FLOR_ME_ACHICO
        assert short_press_kind(g, 0, Button.NO_QUIERO) is Kind.NO_QUIERO

    @pytest.mark.parametrize(
        ("button", "kind"),
        [
            (Button.ENVIDO, Kind.ENVIDO),
            (Button.REAL_ENVIDO, Kind.REAL_ENVIDO),
            (Button.FALTA_ENVIDO, Kind.FALTA_ENVIDO),
            (Button.QUIERO, Kind.QUIERO),
            (Button.MAZO, Kind.MAZO),
        ],
    )
    def test_plain_buttons(self, button: Button, kind: Kind) -> None:
        g = game_with(TWO, "7C 6C 3E", "2O 1B 4B")
        assert on_press(g, 0, button, SeatInput()) == Action(0, kind)


class TestTellingPad:
    def test_number_pad_starts_at_own_points(self) -> None:
        rules = HouseRules(claims=Claims.DECLARED)
        g = game_with(rules, "7C 6C 3E", "2O 1B 4B", moves="0 envido, 1 quiero")
        inp = SeatInput()
        start_number_entry(g, 0, inp)
        assert inp.number == 33
        assert on_press(g, 0, Button.REAL_ENVIDO, inp) is None and inp.number == 0  # wraps
        assert on_press(g, 0, Button.FALTA_ENVIDO, inp) is None and inp.number == 33
        assert on_press(g, 0, Button.ENVIDO, inp) is None and inp.number == 20  # 43: 9, then 20
        inp.number = 33
        assert on_press(g, 0, Button.QUIERO, inp) == Action(0, Kind.DECLARE, number=33)
        g.push_str("0 declare 33")
        assert on_press(g, 1, Button.NO_QUIERO, SeatInput()) == Action(1, Kind.SON_BUENAS)


class TestNumberPad:
    """The pad's number moves within the points a hand can have, wrapping both ways."""

    def test_envido_steps(self) -> None:
        v = ENVIDO_VALUES
        assert v == (0, 1, 2, 3, 4, 5, 6, 7, *range(20, 34))
        assert step_number(v, 7, 1) == 20 and step_number(v, 20, -1) == 7
        assert step_number(v, 33, 1) == 0 and step_number(v, 0, -1) == 33
        assert step_number(v, 5, 10) == 20 and step_number(v, 22, 10) == 32
        assert step_number(v, 25, 10) == 1  # 35: one past the top, counted round

    def test_flor_steps(self) -> None:
        v = FLOR_VALUES
        assert v == tuple(range(20, 39))
        assert step_number(v, 38, 1) == 20 and step_number(v, 20, -1) == 38
        assert step_number(v, 25, 10) == 35 and step_number(v, 30, 10) == 21

    @given(
        kind=st.sampled_from(["envido", "flor"]),
        start=st.integers(-5, 60),
        steps=st.lists(st.sampled_from([10, 1, -1]), max_size=40),
    )
    def test_never_an_impossible_number(self, kind: str, start: int, steps: list[int]) -> None:
        values = declarable(kind)
        number = start
        for step in steps:
            number = step_number(values, number, step)
            assert number in values

    @pytest.mark.parametrize("kind", ["envido", "flor"])
    def test_plus_one_and_minus_one_visit_every_value_both_ways(self, kind: str) -> None:
        values = declarable(kind)
        for step in (1, -1):
            seen, number = [], values[0]
            for _ in values:
                seen.append(number)
                number = step_number(values, number, step)
            assert sorted(seen) == list(values) and number == values[0]

    def test_a_flor_telling_pad(self) -> None:
        rules = HouseRules(claims=Claims.DECLARED, flor=True)
        g = game_with(rules, "7C 6C 5C", "7O 6O 5O", moves="0 flor, 1 flor")
        assert g.telling is not None and g.telling.kind == "flor"
        inp = SeatInput()
        start_number_entry(g, 0, inp)
        assert inp.number == 38
        assert on_press(g, 0, Button.REAL_ENVIDO, inp) is None and inp.number == 20

    def test_an_impossible_number_has_no_gestures(self) -> None:
        rules = HouseRules(claims=Claims.DECLARED)
        g = game_with(rules, "7C 6C 3E", "2O 1B 4B", moves="0 envido, 1 quiero")
        with pytest.raises(ValueError, match="cannot enter 15"):
            gestures_for(g, Action(0, Kind.DECLARE, number=15), SeatInput())


class TestMenus:
    def test_hold_truco_then_cycle(self) -> None:
        g = game_with(TWO, "7C 6C 3E", "2O 1B 4B")
        inp = SeatInput()
        on_hold(g, 3 % 2, Button.TRUCO, inp)
        assert on_press(g, 1, Button.TRUCO, inp) is None
        assert on_press(g, 1, Button.QUIERO, inp) == Action(1, Kind.RETRUCO)

    def test_cancel(self) -> None:
        g = game_with(TWO, "7C 6C 3E", "2O 1B 4B")
        inp = SeatInput()
        on_hold(g, 0, Button.FLOR, inp)
        assert on_press(g, 0, Button.NO_QUIERO, inp) is None
        assert inp.mode.value == "normal"

    def test_show_collects_taps(self) -> None:
        g = Game(TWO)
        g.deal()
        inp = SeatInput()
        made = perform(g, gestures_for(g, Action.from_str("0 show 7E 6E"), inp), inp)
        assert made == Action.from_str("0 show 7E 6E")


def _all_candidates(game: Game) -> list[Action]:
    out = list(game.legal_list())
    for seat in range(game.players):
        for kind in Kind:
            if kind not in (Kind.PLAY, Kind.DECLARE, Kind.SHOW):
                out.append(Action(seat, kind))
        out.append(Action(seat, Kind.DECLARE, number=27))
        out.append(Action(seat, Kind.SHOW, cards=(CARDS[seat],)))
    return out


@settings(max_examples=150, deadline=None)
@given(rules=house_rules, seed=st.integers(0, 2**32 - 1), known=st.booleans())
def test_every_action_can_be_made_on_the_pad(rules: HouseRules, seed: int, known: bool) -> None:
    """Legal or not, every action is made exactly by its gestures, in every state."""
    rng = random.Random(seed)
    game = Game(rules)
    for _ in range(40):
        if game.winner is not None:
            break
        if not game.hand_in_progress:
            deal = None
            if known:
                dealt = rng.sample(CARDS, 3 * rules.players)
                deal = {s: dealt[3 * s : 3 * s + 3] for s in range(rules.players)}
            game.deal(deal)
        inputs = [SeatInput() for _ in range(rules.players)]
        for s, inp in enumerate(inputs):
            if game.play_of(s).telling is not None:  # the seat's own pica's, in pica-pica
                start_number_entry(game, s, inp)
        for action in rng.sample(_all_candidates(game), 12):
            inp = inputs[action.seat]
            keep = SeatInput(inp.mode, inp.menu, inp.index, inp.number, list(inp.shown))
            made = perform(game, gestures_for(game, action, inp), inp)
            assert made == action, (action, made)
            inputs[action.seat] = keep
        legal = game.legal_list()
        game.push(legal[rng.randrange(len(legal))])


def test_buttons_are_the_ones_on_the_wire() -> None:
    """The pad's buttons are the names the seat nodes send (PRESS/HOLD) and the pin map uses."""
    from controller.hal.frames import BUTTONS

    assert [b.value for b in Button] == list(BUTTONS)


class TestPadInEveryState:
    """What the player meets at the pad beyond the basic presses: the number pad's start
    and steps with hands unknown, menus closed before a call, one press where one does."""

    def test_the_envido_button_adds_ten_on_the_number_pad(self) -> None:
        rules = HouseRules(claims=Claims.DECLARED)
        g = game_with(rules, "7C 6C 3E", "2O 1B 4B", moves="0 envido, 1 quiero")
        inp = SeatInput(number=22)
        assert on_press(g, 0, Button.ENVIDO, inp) is None and inp.number == 32
        inp.number = 25
        assert on_press(g, 0, Button.ENVIDO, inp) is None and inp.number == 1

    def test_a_number_off_the_pad_steps_to_the_nearest_value_that_way(self) -> None:
        envido, flor = ENVIDO_VALUES, FLOR_VALUES
        assert step_number(envido, 10, 1) == 20 and step_number(envido, 10, -1) == 7
        assert step_number(flor, 5, 1) == 20 and step_number(flor, 5, -1) == 38
        assert step_number(flor, 40, 1) == 20 and step_number(flor, 40, -1) == 38
        assert step_number(envido, 40, 1) == 0 and step_number(envido, 40, -1) == 33

    def test_truco_button_answers_a_truco_from_either_team_with_retruco(self) -> None:
        g = game_with(TWO, "7C 6C 3E", "2O 1B 4B", moves="0 truco")
        assert short_press_kind(g, 1, Button.TRUCO) is Kind.RETRUCO

    def test_at_four_seats_the_partner_too_answers_a_contraflor_al_resto(self) -> None:
        rules = HouseRules(players=4, flor=True)
        g = game_with(rules, "7C 6C 3C", "2O 1O 4O", "5E 4E 3E", "1B 2B 3B",
                      moves="0 flor, 1 contraflor")  # fmt: skip
        assert short_press_kind(g, 2, Button.FLOR) is Kind.CONTRAFLOR_AL_RESTO
        assert short_press_kind(g, 3, Button.FLOR) is Kind.FLOR

    def test_hands_unknown_the_number_starts_above_the_best_told(self) -> None:
        g = Game(HouseRules(players=4))
        g.deal()  # the table read no cards
        inp = SeatInput()
        on_hold(g, 0, Button.ENVIDO, inp)
        on_press(g, 0, Button.ENVIDO, inp)
        assert on_press(g, 0, Button.QUIERO, inp) is None
        assert inp.number == 0  # declarar outside a telling: the lowest envido
        g.push_str("0 envido")
        g.push_str("1 quiero")
        start_number_entry(g, 0, inp)
        assert inp.number == 0  # nothing told yet
        g.push_str("0 declare 25")
        start_number_entry(g, 1, inp)
        assert inp.number == 26
        g.push_str("1 declare 33")
        assert g.telling is not None
        start_number_entry(g, 2, inp)
        assert inp.number == 33  # nothing is above 33: the top

    def test_a_seat_without_flor_starts_the_flor_pad_at_the_lowest_flor(self) -> None:
        rules = HouseRules(players=4, claims=Claims.DECLARED, flor=True)
        g = game_with(rules, "7C 6C 5C", "7O 6O 5O", "4E 2B 1C", "4B 5E 3E",
                      moves="0 flor, 1 flor")  # fmt: skip
        assert g.telling is not None and g.telling.kind == "flor"
        inp = SeatInput()
        start_number_entry(g, 2, inp)
        assert inp.number == 20

    def test_no_quiero_cancels_a_show_and_shows_nothing(self) -> None:
        g = Game(TWO)
        g.deal()
        inp = SeatInput()
        on_hold(g, 0, Button.ENVIDO, inp)  # the envido menu: mostrar cartas, third
        for button in (Button.ENVIDO, Button.ENVIDO, Button.QUIERO):
            assert on_press(g, 0, button, inp) is None
        assert inp.mode.value == "show"
        assert on_show_tap(inp, Card.from_str("7E"))
        assert on_press(g, 0, Button.NO_QUIERO, inp) is None
        assert inp.mode.value == "normal" and not on_show_tap(inp, Card.from_str("6E"))

    @pytest.mark.parametrize("button", list(Button))
    def test_a_call_from_an_open_menu_closes_it_first(self, button: Button) -> None:
        g = game_with(TWO, "7C 6C 3E", "2O 1B 4B")
        for action in (Action(0, Kind.TRUCO), Action(0, Kind.MAZO), Action(0, Kind.NO_QUIERO)):
            inp = SeatInput()
            on_hold(g, 0, button, inp)
            assert perform(g, gestures_for(g, action, inp), inp) == action

    def test_a_call_the_short_press_means_is_one_press(self) -> None:
        g = game_with(TWO, "7C 6C 3E", "2O 1B 4B")
        for kind, button in [
            (Kind.ENVIDO, Button.ENVIDO),
            (Kind.TRUCO, Button.TRUCO),
            (Kind.QUIERO, Button.QUIERO),
            (Kind.MAZO, Button.MAZO),
        ]:
            assert gestures_for(g, Action(0, kind), SeatInput()) == [Gesture(0, "press", button)]
        rules = HouseRules(claims=Claims.DECLARED)
        g = game_with(rules, "7C 6C 3E", "2O 1B 4B", moves="0 envido, 1 quiero")
        assert gestures_for(g, Action(0, Kind.MAZO), SeatInput()) == [
            Gesture(0, "press", Button.MAZO)
        ]
        assert on_press(g, 0, Button.MAZO, SeatInput()) == Action(0, Kind.MAZO)

    def test_another_button_cancels_the_number_entry(self) -> None:
        g = game_with(TWO, "7C 6C 3E", "2O 1B 4B")
        inp = SeatInput()
        on_hold(g, 0, Button.ENVIDO, inp)
        on_press(g, 0, Button.ENVIDO, inp)  # declarar
        assert on_press(g, 0, Button.QUIERO, inp) is None and inp.mode.value == "number"
        assert on_press(g, 0, Button.TRUCO, inp) is None and inp.mode.value == "normal"

    def test_an_impossible_number_says_what_a_hand_can_have(self) -> None:
        rules = HouseRules(claims=Claims.DECLARED)
        g = game_with(rules, "7C 6C 3E", "2O 1B 4B", moves="0 envido, 1 quiero")
        with pytest.raises(ValueError, match=r"^a pad cannot enter 15 \(a hand has 0-33\)$"):
            gestures_for(g, Action(0, Kind.DECLARE, number=15), SeatInput())

    def test_the_menu_entry_is_the_one_quiero_chooses(self) -> None:
        g = game_with(TWO, "7C 6C 3E", "2O 1B 4B")
        inp = SeatInput()
        assert inp.entry is None  # no menu open
        on_hold(g, 0, Button.TRUCO, inp)
        assert inp.entry is Kind.TRUCO
        on_press(g, 0, Button.TRUCO, inp)
        assert inp.entry is Kind.RETRUCO
        assert on_press(g, 0, Button.QUIERO, inp) == Action(0, Kind.RETRUCO)
        assert inp.entry is None

    def test_a_gesture_reads_as_written_and_is_a_value(self) -> None:
        press, tap = Gesture(0, "press", Button.TRUCO), Gesture(1, "tap", card=Card.from_str("7C"))
        assert [str(press), str(tap)] == ["0 press truco", "1 tap 7C"]
        assert {press, Gesture(0, "press", Button.TRUCO), tap} == {press, tap}
        with pytest.raises(AttributeError):
            press.seat = 1  # type: ignore[misc]
