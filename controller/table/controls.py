"""What the eight buttons of a seat pad mean: pure functions of the game state.

Each pad has eight buttons: truco, envido, real envido, falta envido, flor, quiero,
no quiero, mazo. A button reports a short press (on release) or a hold (kept down
0.8 s). The design:

**Short press: the call this seat means now.**

- *truco*: the next call on the ladder: truco, then retruco, then vale cuatro
  (so "quiero retruco" when answering a truco is one press).
- *flor*: flor (call, announce, or the plain answer to a flor); when a contraflor
  awaits this seat's team, contraflor al resto.
- *no quiero*: no quiero; when a flor was called against this seat's team and its
  first flor action is due, con flor me achico.
- *envido*, *real envido*, *falta envido*, *quiero*, *mazo*: what they say.
- While points are being told (claims=declared, or hands unknown), the pad is a number
  pad: *envido* +10, *real envido* +1, *falta envido* -1 change the number on the
  display (it starts at the seat's own points when the table knows its cards),
  *quiero* declares it, *no quiero* says son buenas. The number only takes the values
  a hand can have (envido 0-7 and 20-33, flor 20-38) and wraps round at either end:
  +1 from 7 is 20, -1 from 0 is 33, +10 from 25 is 1 (35 counted on past 33).

**Hold: choose a call explicitly.** Holding a button opens its menu on the seat's
display; each further short press of the same button moves to the next entry,
*quiero* confirms, *no quiero* (or any other button) cancels:

- truco: truco, retruco, vale cuatro
- envido: envido, declarar (number entry as above), mostrar cartas
- flor: flor, contraflor, contraflor al resto
- no quiero: no quiero, con flor me achico, son buenas
- real envido, falta envido, quiero, mazo: that call alone

"Mostrar cartas" (show) collects the cards then tapped on the seat's reader, without
playing them; *quiero* shows them, *no quiero* cancels. A card tapped otherwise is
played. Every action of the game record can be made this way, which is how
``replay --through mock`` feeds a transcript through the pads.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ..engine import Action, Card, Game, Kind

__all__ = [
    "ENVIDO_VALUES",
    "FLOR_VALUES",
    "MENUS",
    "Button",
    "Gesture",
    "SeatInput",
    "declarable",
    "gestures_for",
    "on_hold",
    "on_press",
    "on_show_tap",
    "short_press_kind",
    "start_number_entry",
    "step_number",
]


class Button(enum.Enum):
    """The pad's buttons; the value is the name on the wire and in the pin map."""

    TRUCO = "truco"
    ENVIDO = "envido"
    REAL_ENVIDO = "real_envido"
    FALTA_ENVIDO = "falta_envido"
    FLOR = "flor"
    QUIERO = "quiero"
    NO_QUIERO = "no_quiero"
    MAZO = "mazo"


class MenuItem(enum.Enum):
    """Menu entries that are not a single call."""

    DECLARE = "declarar"
    SHOW = "mostrar cartas"


Entry = Kind | MenuItem

MENUS: dict[Button, tuple[Entry, ...]] = {
    Button.TRUCO: (Kind.TRUCO, Kind.RETRUCO, Kind.VALE_CUATRO),
    Button.ENVIDO: (Kind.ENVIDO, MenuItem.DECLARE, MenuItem.SHOW),
    Button.REAL_ENVIDO: (Kind.REAL_ENVIDO,),
    Button.FALTA_ENVIDO: (Kind.FALTA_ENVIDO,),
    Button.FLOR: (Kind.FLOR, Kind.CONTRAFLOR, Kind.CONTRAFLOR_AL_RESTO),
    Button.QUIERO: (Kind.QUIERO,),
    Button.NO_QUIERO: (Kind.NO_QUIERO, Kind.CON_FLOR_ME_ACHICO, Kind.SON_BUENAS),
    Button.MAZO: (Kind.MAZO,),
}

_BUTTON_OF: dict[Kind, Button] = {
    kind: button for button, entries in MENUS.items() for kind in entries if isinstance(kind, Kind)
}

NUMBER_STEP = {Button.ENVIDO: 10, Button.REAL_ENVIDO: 1, Button.FALTA_ENVIDO: -1}

#: the points a hand can have: what the number pad can show, in order
ENVIDO_VALUES: tuple[int, ...] = (*range(0, 8), *range(20, 34))
FLOR_VALUES: tuple[int, ...] = tuple(range(20, 39))


def declarable(kind: str) -> tuple[int, ...]:
    """The numbers a seat can declare in a telling of ``kind`` (``envido``/``flor``)."""
    return FLOR_VALUES if kind == "flor" else ENVIDO_VALUES


def step_number(values: tuple[int, ...], number: int, step: int) -> int:
    """The pad's next number: +1/-1 the next legal value up or down, +10 ten up counted
    round the range (0 follows the top), then the first legal value from there; both
    wrap round."""
    low, high = values[0], values[-1]
    if step in (1, -1):
        if number in values:
            return values[(values.index(number) + step) % len(values)]
        above = [v for v in values if v > number] if step > 0 else []
        below = [v for v in values if v < number] if step < 0 else []
        if step > 0:
            return above[0] if above else low
        return below[-1] if below else high
    span = high - low + 1
    target = low + (number - low + step) % span
    return next((v for v in values if v >= target), low)


def _telling_kind(game: Game, seat: int) -> str:
    telling = game.play_of(seat).telling  # the seat's pica's, in a pica-pica hand
    return telling.kind if telling is not None else "envido"


class Mode(enum.Enum):
    NORMAL = "normal"
    MENU = "menu"
    NUMBER = "number"  # explicit declaration (from the envido menu)
    SHOW = "show"


@dataclass
class SeatInput:
    """One seat's input state between presses (menus, the number being entered)."""

    mode: Mode = Mode.NORMAL
    menu: Button | None = None
    index: int = 0
    number: int = 0
    shown: list[Card] = field(default_factory=list)

    def reset(self) -> None:
        self.mode, self.menu, self.index, self.shown = Mode.NORMAL, None, 0, []

    @property
    def entry(self) -> Entry | None:
        if self.mode is not Mode.MENU or self.menu is None:
            return None
        return MENUS[self.menu][self.index]


def _ladder_next(game: Game, seat: int) -> Kind:
    play = game.play_of(seat)  # the whole hand, or the seat's pica
    pending = play.truco_pending
    level = max(play.truco_level, pending[0] if pending else 0)
    return (Kind.TRUCO, Kind.RETRUCO, Kind.VALE_CUATRO)[min(level, 2)]


def short_press_kind(game: Game, seat: int, button: Button) -> Kind:
    """The call a short press of ``button`` makes now (outside number entry)."""
    team = seat % 2
    play = game.play_of(seat)  # the same buttons act in the seat's pica
    if button is Button.TRUCO:
        return _ladder_next(game, seat)
    if button is Button.FLOR:
        if play.flor_pending == team and play.flor_call is Kind.CONTRAFLOR:
            return Kind.CONTRAFLOR_AL_RESTO
        return Kind.FLOR
    if button is Button.NO_QUIERO:
        return Kind.CON_FLOR_ME_ACHICO if play.flor_course_team == team else Kind.NO_QUIERO
    return {
        Button.ENVIDO: Kind.ENVIDO,
        Button.REAL_ENVIDO: Kind.REAL_ENVIDO,
        Button.FALTA_ENVIDO: Kind.FALTA_ENVIDO,
        Button.QUIERO: Kind.QUIERO,
        Button.MAZO: Kind.MAZO,
    }[button]


def start_number_entry(game: Game, seat: int, inp: SeatInput) -> None:
    """Start the number on the display: the seat's own points if known, else the lowest
    value the telling takes."""
    telling = game.play_of(seat).telling
    kind = _telling_kind(game, seat)
    hand = game.hand_of(seat)
    if hand is not None:
        from ..engine import envido_points, flor_points

        own = flor_points(hand) if kind == "flor" else envido_points(hand, flor=game.rules.flor)
        inp.number = own if own is not None else 20
        return
    best = -1
    if telling is not None:
        declared = [n for _, n in telling.declarations if n is not None]
        best = max(declared, default=-1)
    values = declarable(kind)
    inp.number = next((v for v in values if v > best), values[-1])


def _telling_pad(game: Game, seat: int, inp: SeatInput) -> bool:
    return inp.mode is Mode.NORMAL and game.play_of(seat).telling is not None


def on_press(game: Game, seat: int, button: Button, inp: SeatInput) -> Action | None:
    """A short press; returns the action to push, or None (the display changes only)."""
    if inp.mode is Mode.MENU:
        assert inp.menu is not None
        if button is inp.menu and button is not Button.QUIERO:
            inp.index = (inp.index + 1) % len(MENUS[inp.menu])
            return None
        if button is Button.QUIERO:
            entry = MENUS[inp.menu][inp.index]
            inp.reset()
            if entry is MenuItem.DECLARE:
                inp.mode = Mode.NUMBER
                start_number_entry(game, seat, inp)
                return None
            if entry is MenuItem.SHOW:
                inp.mode = Mode.SHOW
                return None
            assert isinstance(entry, Kind)
            return Action(seat, entry)
        inp.reset()
        return None
    if inp.mode is Mode.SHOW:
        cards = tuple(inp.shown)
        inp.reset()
        if button is Button.QUIERO and cards:
            return Action(seat, Kind.SHOW, cards=cards)
        return None
    if inp.mode is Mode.NUMBER or _telling_pad(game, seat, inp):
        if button in NUMBER_STEP:
            values = declarable(_telling_kind(game, seat))
            inp.number = step_number(values, inp.number, NUMBER_STEP[button])
            return None
        if button is Button.QUIERO:
            number = inp.number
            inp.reset()
            return Action(seat, Kind.DECLARE, number=number)
        if button is Button.NO_QUIERO:
            explicit = inp.mode is Mode.NUMBER
            inp.reset()
            return None if explicit else Action(seat, Kind.SON_BUENAS)
        if inp.mode is Mode.NUMBER:
            inp.reset()
            return None
    return Action(seat, short_press_kind(game, seat, button))


def on_hold(game: Game, seat: int, button: Button, inp: SeatInput) -> None:
    """A hold opens the button's menu."""
    inp.reset()
    inp.mode, inp.menu, inp.index = Mode.MENU, button, 0


def on_show_tap(inp: SeatInput, card: Card) -> bool:
    """A card tapped while showing: collected (True), or not in show mode (False)."""
    if inp.mode is not Mode.SHOW:
        return False
    if card not in inp.shown:
        inp.shown.append(card)
    return True


@dataclass(frozen=True, slots=True)
class Gesture:
    """One thing a player does at the seat: press or hold a button, tap a card."""

    seat: int
    kind: str  # "press", "hold", "tap"
    button: Button | None = None
    card: Card | None = None

    def __str__(self) -> str:
        what = self.button.value if self.button is not None else str(self.card)
        return f"{self.seat} {self.kind} {what}"


def _number_presses(seat: int, values: tuple[int, ...], start: int, target: int) -> list[Gesture]:
    """The fewest presses that take the pad's number from ``start`` to ``target``."""
    paths: dict[int, list[Button]] = {start: []}
    frontier = [start]
    while frontier and target not in paths:
        following: list[int] = []
        for value in frontier:
            for button, step in NUMBER_STEP.items():
                reached = step_number(values, value, step)
                if reached not in paths:
                    paths[reached] = [*paths[value], button]
                    following.append(reached)
        frontier = following
    return [Gesture(seat, "press", button) for button in paths[target]]


def _menu(seat: int, button: Button, entry: Entry) -> list[Gesture]:
    index = MENUS[button].index(entry)
    return [
        Gesture(seat, "hold", button),
        *[Gesture(seat, "press", button)] * index,
        Gesture(seat, "press", Button.QUIERO),
    ]


def gestures_for(game: Game, action: Action, inp: SeatInput) -> list[Gesture]:
    """The presses, holds and taps that make ``action`` at its seat in this state.

    ``inp`` is the seat's input state (normally idle). Used by the mock table's bots and
    by ``replay --through mock``. Only the points a hand can have can be entered
    (:func:`declarable`); other numbers raise ``ValueError``.
    """
    seat, kind = action.seat, action.kind
    if inp.mode is not Mode.NORMAL:
        # close whatever is open first: a press that cancels without acting
        cancel = (
            Button.MAZO
            if inp.mode is Mode.MENU and inp.menu is Button.NO_QUIERO
            else Button.NO_QUIERO
        )
        probe = SeatInput(inp.mode, inp.menu, inp.index, inp.number, list(inp.shown))
        on_press(game, seat, cancel, probe)
        return [Gesture(seat, "press", cancel), *gestures_for(game, action, probe)]
    if kind is Kind.PLAY:
        assert action.card is not None
        return [Gesture(seat, "tap", card=action.card)]
    if kind is Kind.SHOW:
        return [
            *_menu(seat, Button.ENVIDO, MenuItem.SHOW),
            *[Gesture(seat, "tap", card=c) for c in action.cards],
            Gesture(seat, "press", Button.QUIERO),
        ]
    if kind is Kind.DECLARE:
        assert action.number is not None
        values = declarable(_telling_kind(game, seat))
        if action.number not in values:
            raise ValueError(f"a pad cannot enter {action.number} (a hand has {values[0]}-"
                             f"{values[-1]})")  # fmt: skip
        probe = SeatInput()
        if game.play_of(seat).telling is not None:
            return [
                *_number_presses(seat, values, inp.number, action.number),
                Gesture(seat, "press", Button.QUIERO),
            ]
        start_number_entry(game, seat, probe)
        return [
            *_menu(seat, Button.ENVIDO, MenuItem.DECLARE),
            *_number_presses(seat, values, probe.number, action.number),
            Gesture(seat, "press", Button.QUIERO),
        ]
    telling = game.play_of(seat).telling
    if kind is Kind.SON_BUENAS and telling is not None:
        return [Gesture(seat, "press", Button.NO_QUIERO)]
    button = _BUTTON_OF[kind]
    in_telling = telling is not None and button in (
        *NUMBER_STEP,
        Button.QUIERO,
        Button.NO_QUIERO,
    )
    if not in_telling and short_press_kind(game, seat, button) is kind:
        return [Gesture(seat, "press", button)]
    return _menu(seat, button, kind)
