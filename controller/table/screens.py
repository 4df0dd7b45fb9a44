"""From the table's state to what each seat's display shows.

``screen_for(table, seat)`` gathers one seat's ``SeatScreen``: its view of the game, what
its pad is in the middle of (a menu, a number, cards to show), the deal being read, its
reader's connection, the table's message for it, the public flor state the view does
not carry, and before a tournament game the match it is (``table.match``, set by the
service from the desk's assignment, or ``table.waiting`` for the desk), shown too once a
won game's result was held (``table.show_next``). ``controller.render.screen`` decides
how that looks.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from dataclasses import dataclass

from ..engine import Action, Game, HandPlay, Kind, SeatView
from ..notices import DealStarted, LinkNotice, Notice, Scored
from ..render.screen import SeatScreen, new_seat_screen
from .controls import MENUS, MenuItem, Mode, SeatInput
from .table import DealReading, Phase, Table

__all__ = [
    "PadPrompt",
    "before_game",
    "clear_caches",
    "pad_prompt",
    "pad_screen",
    "screen_for",
    "screens_for",
    "seat_screen",
]

_NAMES = {
    Kind.TRUCO: "truco",
    Kind.RETRUCO: "retruco",
    Kind.VALE_CUATRO: "vale cuatro",
    Kind.ENVIDO: "envido",
    Kind.REAL_ENVIDO: "real envido",
    Kind.FALTA_ENVIDO: "falta envido",
    Kind.FLOR: "flor",
    Kind.CONTRAFLOR: "contraflor",
    Kind.CONTRAFLOR_AL_RESTO: "al resto",
    Kind.CON_FLOR_ME_ACHICO: "me achico",
    Kind.QUIERO: "quiero",
    Kind.NO_QUIERO: "no quiero",
    Kind.SON_BUENAS: "son buenas",
    Kind.MAZO: "mazo",
}


#: notices a screen shows from the state itself (a tuple: no union made at every call)
_SHOWN_BY_STATE = (DealStarted, Scored)


# Enum members read once, as module globals (a member read off its class costs a call of
# ``EnumType``'s attribute hook: some 90 ns here, against 7 for a global)
_NORMAL, _DEALING, _DEALER_READS = Mode.NORMAL, Phase.DEALING, DealReading.DEALER


def _entry_name(entry: Kind | MenuItem) -> str:
    return entry.value if isinstance(entry, MenuItem) else _NAMES.get(entry, entry.word)


@dataclass(frozen=True, slots=True)
class PadPrompt:
    """What the seat's pad shows: an open menu, or a prompt (number, cards to show)."""

    prompt: str | None = None
    prompt_help: str | None = None
    menu: tuple[str, ...] = ()
    menu_index: int = 0


_NO_PAD = PadPrompt()  # the pad in the middle of nothing


def pad_screen(game: Game, seat: int, inp: SeatInput) -> PadPrompt:
    """What the seat's pad is doing (menu, number, show), for its screen."""
    if inp.mode is Mode.MENU and inp.menu is not None:
        entries = MENUS[inp.menu]
        return PadPrompt(menu=tuple(_entry_name(e) for e in entries), menu_index=inp.index)
    if inp.mode is Mode.NUMBER:
        return PadPrompt(f"declarar {inp.number}?", "e+10 r+1 f-1·q: sí")
    if inp.mode is Mode.SHOW:
        shown = " ".join(str(c) for c in inp.shown)  # this seat's own taps
        return PadPrompt(
            f"mostrar: {shown}" if shown else "mostrar: tocá cartas", "q: mostrar·no: salir"
        )
    telling = game.play_of(seat).telling
    if inp.mode is Mode.NORMAL and telling is not None and telling.next_seat == seat:
        best = max((n for _, n in telling.declarations if n is not None), default=None)
        prompt = f"tengo {inp.number}?" + (f" mejor {best}" if best is not None else "")
        may_concede = any(a.kind is Kind.SON_BUENAS for a in game.legal_list() if a.seat == seat)
        return PadPrompt(prompt, "q: sí·no: son buenas" if may_concede else "q: sí·e+10 r+1 f-1")
    return _NO_PAD


def pad_prompt(table: Table, seat: int) -> str | None:
    """What the seat's pad is in the middle of, in one line: a menu, a number, cards."""
    pad = pad_screen(table.game, seat, table.inputs[seat])
    if pad.menu:
        return f"elegir: {pad.menu[pad.menu_index]}?"
    return pad.prompt


def seat_screen(game: Game, seat: int) -> SeatScreen:
    """A seat's screen from the game alone: its view and the public flor state (of its
    pica, in a pica-pica hand)."""
    play = game.play_of(seat)
    return SeatScreen(
        game.view(seat),
        flor_open=play.flor_open,
        flor_call=play.flor_call,
        flor_course_team=play.flor_course_team,
    )


class _GameScreens:
    """What every seat's screen takes from the table's game alone, kept until the game
    changes (``_game_screens``): each seat's view and its play's public flor state (read
    once per play), the seats asked to show their cards, the notes of the hand's awards,
    whether the game has started."""

    __slots__ = ("game", "legal", "noted", "notes", "parts", "show", "started")

    def __init__(self, table: Table, game: Game, legal: list[Action]) -> None:
        self.game = game
        self.legal = legal  # held: its identity cannot be reused while it is kept
        self.parts: tuple[_Part, ...] = ()  # read when first asked for (``all_parts``)
        self.show = table.show_requests()
        hand = game.hand_number
        self.noted = len(table.notes)  # the table's notes when these were read
        awards = len(game.awards)
        self.notes = tuple([table.award_note(hand, i) for i in range(awards)]) if awards else ()
        self.started = not (game.winner is None and hand == 0 and not game.move_stack)

    def all_parts(self) -> tuple[_Part, ...]:
        """Each seat's view and its play's public flor state (read when first asked)."""
        parts = self.parts
        if not parts:
            game = self.game
            made: list[_Part] = []
            last: HandPlay | None = None  # the play read last (one, or a pica's)
            flor_open, flor_call, flor_course_team = False, None, None
            for view in game.views():
                play = game.play_of(view.seat)
                if play is not last:
                    last = play
                    flor_open, flor_call = play.flor_open, play.flor_call
                    flor_course_team = play.flor_course_team
                made.append((view, flor_open, flor_call, flor_course_team))
            parts = self.parts = tuple(made)
        return parts


#: a seat's view and its play's public flor state (``SeatScreen.flor_open``,
#: ``flor_call``, ``flor_course_team``)
_Part = tuple[SeatView, bool, Kind | None, int | None]


class _Kept:
    """What is kept of a table (one box a table: a new state changes what it holds, not
    the weak dictionary): its ``_GameScreens``, and each seat's last screen with the
    arguments it was made of (``_made_screens``: the same arguments, the same object)."""

    __slots__ = ("made", "screens")

    def __init__(self) -> None:
        self.screens: _GameScreens | None = None
        self.made: dict[int, _Made] = {}


_GAME_SCREENS: weakref.WeakKeyDictionary[Table, _Kept] = weakref.WeakKeyDictionary()
#: the table last asked about and its box (a service has one table): found with no weak
#: reference made, as ``WeakKeyDictionary.get`` makes one a call
_LAST: list[tuple[weakref.ref[Table], _Kept] | None] = [None]


def _kept(table: Table) -> _Kept:
    """The table's box."""
    last = _LAST[0]
    if last is not None and last[0]() is table:
        return last[1]
    box = _GAME_SCREENS.get(table)
    if box is None:
        box = _GAME_SCREENS[table] = _Kept()
    _LAST[0] = (weakref.ref(table), box)
    return box


def _game_screens(table: Table, box: _Kept | None = None) -> _GameScreens:
    """The table's ``_GameScreens``, made again when the game changed: the engine lists
    the legal actions afresh after every push, pop and deal, so the list it returns is
    the same object exactly as long as the game is unchanged (the cache holds it, so its
    identity cannot be reused). An award's note is written just after the push that gave
    it: a note added since is read again."""
    game = table.game
    legal = game.legal_list()
    if box is None:
        box = _kept(table)
    kept = box.screens
    if (
        kept is None
        or kept.game is not game
        or kept.legal is not legal
        or kept.noted != len(table.notes)
    ):
        kept = box.screens = _GameScreens(table, game, legal)
    return kept


def clear_caches() -> None:
    """Forget what was kept of every table's game (the tests compare the screens made
    with and without it)."""
    _GAME_SCREENS.clear()
    _LAST[0] = None


def before_game(table: Table) -> bool:
    """The table's game has not started: no hand played, no card of the first deal read
    (its match card is shown then)."""
    return not _game_screens(table).started and not (
        table.phase is Phase.DEALING and any(table.deal.values())
    )


def screens_for(table: Table, seats: int) -> list[SeatScreen]:
    """``screen_for`` of seats ``0 .. seats-1``, the game's part and the table's (the
    deal being read, the table's alert) looked up once."""
    box = _kept(table)
    kept = _game_screens(table, box)
    parts = kept.all_parts()
    if seats > len(parts):
        raise ValueError(f"no seat {seats - 1} at a table of {len(parts)}")
    return _made_screens(table, kept, parts, box.made, range(seats))


def screen_for(table: Table, seat: int) -> SeatScreen:
    box = _kept(table)
    kept = _game_screens(table, box)
    parts = kept.all_parts()
    if not 0 <= seat < len(parts):
        raise ValueError(f"no seat {seat} at a table of {len(parts)}")
    return _made_screens(table, kept, parts, box.made, (seat,))[0]


#: a seat's screen and the arguments it was made of (``SeatScreen``'s fields, in order)
_Made = tuple[tuple[object, ...], SeatScreen]


def _made_screens(
    table: Table,
    kept: _GameScreens,
    parts: tuple[_Part, ...],
    made: dict[int, _Made],
    seats: Iterable[int],
) -> list[SeatScreen]:
    """The seats' screens: for each, the one made last for it when made of the same
    arguments (``made``, by seat: compared only when the view is the same object).

    One loop for every seat, what the table shows every seat alike read once before it
    (the deal being read, whether the table shows what it plays next, its lasting
    alert) and the table's lists held in locals: six seats a redraw, every redraw."""
    game = kept.game
    over = game.winner is not None
    dealing = table.phase is _DEALING
    deal = table.deal
    read = dealing and any(deal.values())
    # before the game, or once its result was held long enough: what it plays next
    between = (not kept.started and not read) or (over and table.show_next)
    deal_dealer = table.hand_dealer if dealing else None
    dealer_reads = table.deal_reading is _DEALER_READS
    # While a deal is read each screen carries the one count it shows (``dealt``: the
    # seat's own cards; ``dealt_total``: every card, to the dealer who taps them all), 0
    # for the other: a card read makes a new screen only for the seats that show it, the
    # others keep theirs (the same object: not even its content is looked at again).
    total_to = deal_dealer if dealing and dealer_reads else None
    dealt_total = sum(len(cards) for cards in deal.values()) if total_to is not None else 0
    # ``Table.alert`` of a connected seat: its own fault first, then the first table-wide
    table_alert: Notice | None = next(iter(table.alerts.values()), None)
    match = table.match if between else None
    waiting = table.waiting and table.match is None and between
    messages, notices, node_oks = table.messages, table.notices, table.node_ok
    seat_alerts, inputs = table.seat_alerts, table.inputs
    notes, show = kept.notes, kept.show
    screens: list[SeatScreen] = []
    for seat in seats:
        view, flor_open, flor_call, flor_course_team = parts[seat]
        node_ok = node_oks[seat]
        notice: Notice | None = None
        refusal = False
        # ``Table.message`` (which forgets what expired) for a seat with one
        message = table.message(seat) if messages[seat] is not None else None
        if message is not None:
            refusal = message.refusal
            notice = message.notice
            # The screen shows these from the state itself: the deal being read (its
            # notice outlives the deal by a few seconds), the points just scored (line 2
            # keeps the hand's last award), the end of the game, the reader unplugged.
            if not refusal and (
                dealing
                or isinstance(notice, _SHOWN_BY_STATE)
                or over
                or (isinstance(notice, LinkNotice) and not node_ok)
            ):
                notice = None
        total = 0
        if dealing:
            pad = _NO_PAD
            if seat == total_to:
                dealt, total = 0, dealt_total
            else:
                dealt = len(deal.get(seat, ()))
        else:
            inp = inputs[seat]
            # the pad in its normal mode prompts only a seat whose tanto the telling awaits
            if inp.mode is _NORMAL and view.telling is None:
                pad = _NO_PAD
            else:
                pad = pad_screen(game, seat, inp)
            dealt = 0
        args = (
            view,
            notice,  # message
            refusal and notice is not None,  # refusal
            pad.prompt,
            dealing,
            pad.prompt_help,
            pad.menu,
            pad.menu_index,
            dealt,
            total,  # dealt_total
            deal_dealer,
            dealer_reads,
            node_ok,
            # ``Table.notice`` (which forgets what expired) for a seat with one
            table.notice(seat) if notices[seat] is not None else None,
            # ``Table.alert``: a connected seat's own fault first, then the table's
            (seat_alerts[seat] or table_alert) if node_ok else None,
            flor_open,
            flor_call,
            flor_course_team,
            notes,  # award_notes
            seat in show,  # must_show
            match,
            waiting,
        )
        last = made.get(seat)
        if last is not None and last[0][0] is view and last[0] == args:
            screens.append(last[1])
            continue
        screen = new_seat_screen(*args)
        made[seat] = (args, screen)
        screens.append(screen)
    return screens
