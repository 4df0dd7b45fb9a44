"""A seat's screen: the matchstick score on top, the state of the hand underneath.

Pure drawing: ``render_screen`` is a function of a ``SeatScreen`` (the seat's view, its
transient message and what its pad is doing), unaware of any device or clock. It works
in two steps: ``screen_content`` decides what the screen says (texts and marks, testable
without pixels) and ``render_content`` paints it from cached tiles (tens of microseconds
a screen).

Regions of the 128x64 panel. An SSD1306/SH1106 is written in pages of 8 rows, and every
region under the score is one page, so a change to one of them costs one page of the
columns it touches on the bus:

* rows 0-38 (pages 0-4), **score**: ``NOSOTROS`` (this seat's team, left) and ``ELLOS``,
  each team's matchsticks in 13 px squares, the malas on top, the buenas below the
  divider, ``+N`` past the target.
* rows 40-47 (page 5), **status strip**: ``M3`` the mano is seat 3, ``D2`` seat 2 deals,
  underlined when it is this seat; three boxes for the bazas of the hand (filled: won by
  us, crossed: won by them, a bar across: parda, empty: still to play); the accepted
  truco level (``TRUCO``, ``RETRUCO``, ``VALE CUATRO``), underlined while our team holds
  the quiero (we may raise next).
* rows 49-55 (page 6), **line 1**, what is going on: ``TURNO: VOS`` / ``TURNO: 3``; a
  call this seat's team must answer (``TRUCO?``, ``ENVIDO REAL ENVIDO?``) or our team's
  truco call the others must answer (``CANTAMOS TRUCO``); the telling of points; the
  deal being read (``TOCÁ TUS CARTAS 2/3``); the end of the hand (``+2 NOS: LA MANO``)
  or of the game (``FIN: GANAMOS``); the pad's menu (``[RETRUCO]`` is the entry a
  quiero would choose) or number (``TENGO 33?``).
* rows 57-63 (page 7), **line 2**, what this seat may do or what happened: the answers
  this seat may give (``QUIERO·NO·MAZO·RETRUCO``, from ``view.legal``), the keys of the
  pad's prompt, ``CANTAMOS ENVIDO`` while the other team must answer our envido (its
  points will be written over it), the declarations of a telling, the hand's last
  points (``+2 NOS: ENVIDO 33``: the envido winner's points, never the loser's; a
  penalty with its reason, ``+3 ELLOS: FLOR TAPADA``), or ``MOSTRÁ TUS CARTAS`` when the
  table asks this seat to prove its claim before the hand ends.
* A **refusal** (``NO ES TU TURNO``), an unplugged reader or a **notice** about the
  seat's reader (``UNA CARTA POR VEZ``: several cards lay on it at once, none was
  read) is an inverted banner over rows 40-63 for a few seconds (the table times
  it); the score stays in view. Other
  notices (a reader reconnected, a table alert) take lines 1 and 2 when the seat is not
  in the middle of something. A lasting table alert (``SIN DISCO``, ``REGISTRO DAÑADO``)
  reaches every seat: where the lines are taken (the seat's turn or a call it must
  answer, a deal being read, a message), it is an inverted line in the strip's place,
  and the lines stay as they are; a banner then keeps to the lines' two pages.

In a **pica-pica** hand (RULES.md section 8b) the seat's screen is its own pica's: ``M``
is its pica's mano, the bazas, the truco level, the calls, the telling and the turn are
its pica's, line 1 names its opponent with the turn (``PICA CON 3·TURNO: VOS``) and,
once its pica has ended while the others play on, that pica's result (``+1 NOS:
MAZO``); the points on line 2 are its pica's. The score stays the teams'.

Before a tournament game (**the match card**): when the desk assigned the table a match
and none of its games is in progress, the whole panel is the match, one line a page: the
round (``CUARTOS DE FINAL``), the two entrants (``LOS DEL FONDO``, ``VS``, ``LA BARRA``:
team 0 then team 1, the seat's own team inverted; a name too long is shortened, its
small words dropped, then its first words cut to initials: ``C.A.I. AVELLANEDA``),
``CHICO 2 DE 3`` and ``SOS DE LOS DEL FONDO``; when the desk names the players (a
league's pair its club named), the seat's own side's go under the two sides (``ANA Y
BETO``). The score is 0 to 0 then, and the first
card tapped of the first deal brings the game's own screen back; during the game the
match is not shown (the terminal table names it above the panels).

Between chicos (**what comes next**): a won game's screen (``FIN: GANAMOS``, the final
score) stays while the table holds the result (``RESULT_HOLD_S`` in
``controller.table.service``, for both teams to read it); then, until the next game
starts, the whole panel is what the table plays next (``SeatScreen.match`` with the
won game's view): the result first (``GANAMOS 15 A 9``, ours first), then, when the
desk assigned the next chico of the same match (``MatchCard.follows``: the table played
the one before), ``PRÓXIMO: CHICO 2 DE 3``, ``CONTRA``, the other team's name and the
round; when the desk sent another match, that match's own card; when there is no chico
to play (the desk has not said yet, the match is decided, the table is free:
``SeatScreen.waiting``), ``ESPERANDO AL`` / ``ORGANIZADOR``. Before a game a tournament
table with nothing to play shows the same two lines (the first card tapped still starts
the game). A table outside a tournament never waits.

The layout keeps what an event changes small: a card played changes one word of line 1
(and a baza box), a call and its answer touch the lines of the team that answers, the
points scored add their sticks and one line. Text is the 5x7 pixel font
(``FONT_TEXT``), upper case, with Spanish accents and Ñ. Nothing here names a card except the cards
this seat itself is showing.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from enum import Enum
from functools import lru_cache
from operator import attrgetter
from typing import TypeVar

from PIL import Image, ImageDraw

from ..engine import Kind, SeatView
from ..engine.frozen import quick_constructor
from ..engine.results import Award, Reason
from ..hal.pages import image_to_pages
from ..notices import Notice
from .matchsticks import SCREEN_SIZE, draw_scoreboard
from .notices import alert_text, notice_text
from .pixelfont import FONT_STRIP, FONT_TEXT, PixelFont

__all__ = [
    "BANNER_BOX",
    "LINE_TOPS",
    "SCORE_BOX",
    "STRIP_TOP",
    "BazaMark",
    "Line",
    "MatchCard",
    "Notice",
    "ScreenContent",
    "SeatScreen",
    "Strip",
    "answer_label",
    "clear_caches",
    "contents_differ",
    "fit_text",
    "match_lines",
    "new_seat_screen",
    "next_lines",
    "pair_text",
    "plain",
    "render_content",
    "render_pages",
    "render_screen",
    "render_tiles",
    "screen_content",
    "screen_lines",
    "screen_texts",
    "short_name",
    "text_width",
    "waiting_lines",
    "warm_score_tiles",
]

WIDTH, HEIGHT = SCREEN_SIZE
SCORE_BOX = (0, 0, WIDTH, 39)  # labels rows 0-6, squares rows 8-38
SCORE_LABEL_GAP = 1
SCORE_DIVIDER_BAND = 5
STRIP_TOP = 40  # page 5
LINE_TOPS = (48, 56)  # pages 6 and 7
LINE_TEXT_ROW = 0  # the marks on rows 48 and 56, capitals on 49-55 and 57-63 (FONT_TEXT)
PAGE = 8
BANNER_BOX = (0, STRIP_TOP, WIDTH, HEIGHT)  # pages 5-7

# status strip geometry (x positions inside the strip)
MANO_X = 0
DEALER_X = 15
BAZA_X = (31, 40, 49)
BAZA_SIZE = 7
TRUCO_X = 60

LADDER = {1: "TRUCO", 2: "RETRUCO", 3: "VALE CUATRO"}


@dataclass(frozen=True, slots=True)
class MatchCard:
    """The match a seat is about to play (from the desk's assignment), as it reads it."""

    label: str  # the round: "Cuartos de final", "Ronda 2", "Grupo A, fecha 1"
    home: str  # team 0 (seats 0, 2, 4)
    away: str  # team 1 (seats 1, 3, 5)
    chico: int  # the game of the match about to start, 1-based
    best_of: int
    players: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # home's, away's names
    follows: bool = False  # this table played the match's previous chico


@dataclass(frozen=True, slots=True)
class SeatScreen:
    """Everything one seat's display shows; built by ``controller.table.screens`` (which
    passes the fields by position, in this order: a field added goes at the end)."""

    view: SeatView
    message: Notice | None = None  # a refusal or a notice, for a few seconds
    refusal: bool = False
    prompt: str | None = None  # the pad's number entry or cards to show (line 1)
    dealing: bool = False
    prompt_help: str | None = None  # the keys for that prompt (line 2)
    menu: tuple[str, ...] = ()  # the pad's open menu, entry names
    menu_index: int = 0  # the entry a quiero would choose
    #: while dealing, the count the screen shows: this seat's cards read so far (``dealt``)
    #: or, to the dealer who taps every card, all of them (``dealt_total``); ``screens_for``
    #: leaves the other 0, so a card read changes only the screens that show it
    dealt: int = 0
    dealt_total: int = 0
    deal_dealer: int | None = None  # while dealing: the dealer of the hand being read
    dealer_reads: bool = False  # the dealer taps every card (else each seat its own)
    node_ok: bool = True  # this seat's reader and pad are connected
    notice: Notice | None = None  # about this seat's reader (one card at a time), briefly
    alert: Notice | None = None  # a lasting table-wide warning (a full disk)
    flor_open: bool = False  # a flor was called and is not settled
    flor_call: Kind | None = None  # contraflor / al resto awaiting an answer
    flor_course_team: int | None = None  # a flor was called against this team
    award_notes: tuple[str | None, ...] = ()  # per award of the hand: a penalty's reason
    must_show: bool = False  # the table asks this seat to show its cards (claim unproven)
    match: MatchCard | None = None  # before a match's game: the card takes the whole panel
    #: a tournament table with no chico to play: the card says it waits for the desk
    waiting: bool = False


class BazaMark(Enum):
    OPEN = "open"
    WON = "won"
    LOST = "lost"
    PARDA = "parda"


# Enum members read once, as module globals: read off its class (``Reason.ENVIDO``) a
# member costs a call of ``EnumType``'s attribute hook (some 90 ns here against 7 for a
# global), a few times a seat in the code below.
_OPEN, _WON, _LOST, _PARDA = BazaMark.OPEN, BazaMark.WON, BazaMark.LOST, BazaMark.PARDA
_ENVIDO_KIND, _FLOR_KIND, _AL_RESTO = Kind.ENVIDO, Kind.FLOR, Kind.CONTRAFLOR_AL_RESTO
_ENVIDO_WON, _FLOR_WON, _TRUCO_WON = Reason.ENVIDO, Reason.FLOR, Reason.TRUCO


@dataclass(frozen=True, slots=True)
class Strip:
    """The status strip: mano and dealer (seats), the bazas, the truco level."""

    mano: int | None = None
    dealer: int | None = None
    seat: int = 0
    bazas: tuple[BazaMark, BazaMark, BazaMark] = (BazaMark.OPEN,) * 3
    truco: int = 0  # accepted level
    quiero_ours: bool = False

    @property
    def text(self) -> str:
        parts = []
        if self.mano is not None:
            parts.append(f"M{self.mano}")
        if self.dealer is not None:
            parts.append(f"D{self.dealer}")
        parts.append("".join({"open": "_", "won": "#", "lost": "X", "parda": "="}[b.value]
                             for b in self.bazas))  # fmt: skip
        if self.truco:
            parts.append(LADDER[self.truco])
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Line:
    """One text line (already ``plain``), left-aligned or centred."""

    text: str = ""
    centre: bool = False
    inverted: bool = False  # lit across the panel, the text dark

    @classmethod
    def of(cls, text: str, centre: bool = False, inverted: bool = False) -> Line:
        if cls is Line:  # one object per line (equal contents then compare by identity)
            return _line_of(text, centre, inverted)
        return cls(plain(text), centre, inverted)


@lru_cache(maxsize=4096)
def _line_of(text: str, centre: bool, inverted: bool) -> Line:
    return Line(plain(text), centre, inverted)


_BLANK = Line()  # an empty line: one object, for the screens that show one


@lru_cache(maxsize=1024)
def _strip_of(
    mano: int | None,
    dealer: int | None,
    seat: int,
    bazas: tuple[BazaMark, BazaMark, BazaMark] = (BazaMark.OPEN,) * 3,
    truco: int = 0,
    quiero_ours: bool = False,
) -> Strip:
    """One ``Strip`` object per strip: the seats' strips are shared, and equal screens
    compare them by identity."""
    return Strip(mano, dealer, seat, bazas, truco, quiero_ours)


@dataclass(frozen=True, slots=True)
class ScreenContent:
    """What a screen says, before pixels."""

    ours: int
    theirs: int
    target: int
    strip: Strip = field(default_factory=Strip)
    lines: tuple[Line, Line] = (Line(), Line())
    banner: tuple[str, ...] = ()  # an inverted banner over the strip and the lines
    card: tuple[Line, ...] = ()  # the match card: one line a page, over the whole panel
    #: a lasting table alert the lines cannot carry (the seat is busy, a deal is read, a
    #: message holds them): an inverted line in the strip's place
    strip_alert: Line | None = None

    @property
    def texts(self) -> tuple[str, ...]:
        if self.banner:
            return self.banner
        if self.card:
            return tuple(line.text for line in self.card)
        strip = self.strip_alert.text if self.strip_alert is not None else self.strip.text
        return (strip, self.lines[0].text, self.lines[1].text)


def contents_differ(new: ScreenContent, old: ScreenContent | None) -> bool:
    """``new != old``, the lines' texts and the score looked at first: a redrawn seat's
    content mostly differs there (``TURNO: 3`` then ``TURNO: 4``), which a string's
    comparison says without the dataclasses' own (a tuple of every field made twice)."""
    if old is None:
        return True
    if new is old:
        return False
    new_lines, old_lines = new.lines, old.lines
    if (
        new_lines[0].text != old_lines[0].text
        or new_lines[1].text != old_lines[1].text
        or new.ours != old.ours
        or new.theirs != old.theirs
    ):
        return True
    return new != old


#: ``SeatScreen(...)`` and ``ScreenContent(...)`` made cheaper (``quick_constructor``):
#: six of each a redraw
new_seat_screen = quick_constructor(SeatScreen)
_new_content = quick_constructor(ScreenContent)


# ----------------------------------------------------------------------------- text


@lru_cache(maxsize=2048)
def plain(text: str) -> str:
    """Upper case, only what the 5x7 font draws: Spanish accents and Ñ kept, other marks
    taken off their letters (``Ç`` is ``C``), anything else a space."""
    upper = unicodedata.normalize("NFC", text.upper())
    if FONT_TEXT.supports(upper):  # most texts: every letter drawn as it is
        return " ".join(upper.split())
    out = []
    for ch in upper:
        if FONT_TEXT.supports(ch):
            out.append(ch)
            continue
        for part in unicodedata.normalize("NFKD", ch):
            if not unicodedata.combining(part):
                out.append(part if FONT_TEXT.supports(part) else " ")
    return " ".join("".join(out).split())


@lru_cache(maxsize=4096)
def text_width(text: str) -> int:
    return FONT_TEXT.text_width(text)


def _fits(text: str, width: int = WIDTH) -> bool:
    return text_width(text) <= width


def fit_text(candidates: Sequence[str], width: int = WIDTH) -> str:
    """The first candidate that fits ``width`` px, else the last one cut to fit."""
    for text in candidates:
        if _fits(plain(text), width):
            return plain(text)
    text = plain(candidates[-1])
    while text and not _fits(text, width):
        text = text[:-1]
    return text.rstrip()


_SMALL_WORDS = frozenset({"DE", "DEL", "LA", "LAS", "LOS", "EL", "Y", "E"})


def short_name(name: str, width: int = WIDTH) -> str:
    """``name`` (``plain``) in ``width`` px: whole; else without its small words (de,
    del, la, los, y...); else with as few of its first words cut to initials as it takes
    (``M. ESQUINA BARRIO``, ``C.A.I. AVELLANEDA``); else cut."""
    text = plain(name)
    words = text.split()
    big = [w for w in words if w not in _SMALL_WORDS] or words
    initials = [
        "".join(f"{w[0]}." for w in big[:k]) + " " + " ".join(big[k:]) for k in range(1, len(big))
    ]
    return fit_text([text, " ".join(big), *initials, text], width)


def pair_text(players: Sequence[str], width: int = WIDTH) -> str:
    """A side's players on one line: ``ANA LÓPEZ Y BETO DÍAZ``; too long, their last
    names (``LÓPEZ Y DÍAZ``), then their first names, then cut."""
    words = [p.split() for p in players if p.split()]
    full = " Y ".join(" ".join(w) for w in words)
    last = " Y ".join(w[-1] for w in words)
    first = " Y ".join(w[0] for w in words)
    return fit_text([full, last, first, last], width)


def match_lines(card: MatchCard, team: int) -> tuple[Line, ...]:
    """The match card's eight lines (one a page) for a seat of ``team`` (0: home); when
    the card names the players (a league's pair, a tournament team's players), the line
    under the two sides is the seat's own side's (``ANA Y BETO``)."""
    names = (short_name(card.home), short_name(card.away))
    mine = [p for p in (card.players[team] if team in (0, 1) else ()) if p.strip()]
    who = Line(pair_text(mine), centre=True) if mine else Line()
    ours = short_name(card.home if team == 0 else card.away, WIDTH - text_width("SOS DE "))
    chico = "CHICO ÚNICO" if card.best_of == 1 else f"CHICO {card.chico} DE {card.best_of}"
    return (
        Line(fit_text([card.label or "TORNEO"]), centre=True),
        Line(),
        Line(names[0], centre=True, inverted=team == 0),
        Line("VS", centre=True),
        Line(names[1], centre=True, inverted=team == 1),
        who,
        Line.of(chico, centre=True),
        Line(f"SOS DE {ours}", centre=True),
    )


WAITING = ("ESPERANDO AL", "ORGANIZADOR")


def next_lines(card: MatchCard | None, view: SeatView) -> tuple[Line, ...]:
    """The card between chicos (``view``'s game is won, its result held long enough):
    the result first, then the next chico of the same match (``PRÓXIMO``), the next
    match's own card, or ``ESPERANDO AL ORGANIZADOR`` (``card`` ``None``)."""
    if card is not None and not card.follows:
        return match_lines(card, view.team)
    won = "GANAMOS" if view.winner == view.team else "PERDIMOS"
    result = Line.of(f"{won} {view.ours} A {view.theirs}", centre=True)
    if card is None:
        return (result, *waiting_lines()[1:])
    chico = "CHICO ÚNICO" if card.best_of == 1 else f"CHICO {card.chico} DE {card.best_of}"
    other = short_name(card.away if view.team == 0 else card.home)
    return (
        result,
        Line(),
        Line(fit_text([f"PRÓXIMO: {chico}", chico]), centre=True),
        Line("CONTRA", centre=True),
        Line(other, centre=True),
        Line(),
        Line(fit_text([card.label or "TORNEO"]), centre=True),
        Line(),
    )


def waiting_lines() -> tuple[Line, ...]:
    """Before a game, a tournament table with no chico to play."""
    return (Line(), Line(), Line(), *(Line(w, centre=True) for w in WAITING), Line(), Line(),
            Line())  # fmt: skip


def _wrap(words: Sequence[str], sep: str, lines: int, width: int = WIDTH) -> list[str] | None:
    """Greedy wrap of ``words`` into at most ``lines`` lines, or None if they do not fit."""
    out: list[str] = []
    current = ""
    for word in words:
        trial = f"{current}{sep}{word}" if current else word
        if _fits(trial, width):
            current = trial
            continue
        if not current or not _fits(word, width):
            return None
        out.append(current)
        current = word
    if current:
        out.append(current)
    return out if len(out) <= lines else None


def _wrap_message(text: str, lines: int = 2) -> tuple[str, ...]:
    words = plain(text).split()
    wrapped = _wrap(words, " ", lines)
    if wrapped is not None:
        return tuple(wrapped)
    # too long: as much as fits, the last line cut
    out: list[str] = []
    rest = list(words)
    while rest and len(out) < lines:
        current = ""
        while rest and _fits(f"{current} {rest[0]}".strip()):
            current = f"{current} {rest.pop(0)}".strip()
        if not current:  # one word wider than the line
            current = fit_text([rest.pop(0)])
        out.append(current)
    return tuple(out)


# --------------------------------------------------------------------- calls, answers

# label sets, widest first: long, medium, abbreviated, short
_LABELS: dict[Kind, tuple[str, str, str, str]] = {
    Kind.QUIERO: ("QUIERO", "QUIERO", "QUIERO", "Q"),
    Kind.NO_QUIERO: ("NO QUIERO", "NO", "NO", "NO"),
    Kind.CON_FLOR_ME_ACHICO: ("ME ACHICO", "ACHICO", "ACHICO", "ACH"),
    Kind.MAZO: ("MAZO", "MAZO", "MAZO", "MZ"),
    Kind.TRUCO: ("TRUCO", "TRUCO", "TRUCO", "T"),
    Kind.RETRUCO: ("RETRUCO", "RETRUCO", "RETRUCO", "RT"),
    Kind.VALE_CUATRO: ("VALE CUATRO", "VALE 4", "VALE 4", "V4"),
    Kind.CONTRAFLOR: ("CONTRAFLOR", "CONTRA", "CONTRA", "CF"),
    Kind.CONTRAFLOR_AL_RESTO: ("AL RESTO", "RESTO", "RESTO", "AR"),
    Kind.ENVIDO: ("ENVIDO", "ENVIDO", "ENV", "E"),
    Kind.REAL_ENVIDO: ("REAL ENVIDO", "REAL", "REAL", "R"),
    Kind.FALTA_ENVIDO: ("FALTA ENVIDO", "FALTA", "FALTA", "F"),
    Kind.FLOR: ("FLOR", "FLOR", "FLOR", "FL"),
    Kind.SON_BUENAS: ("SON BUENAS", "BUENAS", "BUENAS", "SB"),
}

#: the order answers are listed in: accept or refuse first, then raises
ANSWER_ORDER: tuple[Kind, ...] = (
    Kind.QUIERO,
    Kind.NO_QUIERO,
    Kind.CON_FLOR_ME_ACHICO,
    Kind.MAZO,
    Kind.RETRUCO,
    Kind.VALE_CUATRO,
    Kind.CONTRAFLOR,
    Kind.CONTRAFLOR_AL_RESTO,
    Kind.ENVIDO,
    Kind.REAL_ENVIDO,
    Kind.FALTA_ENVIDO,
    Kind.FLOR,
)


def answer_label(kind: Kind, level: int = 0) -> str:
    """The name of an answer on the screen; ``level`` 0 (long) to 3 (shortest)."""
    return _LABELS[kind][level]


def _answers(view: SeatView) -> list[Kind]:
    # a list, searched by identity in C code: a set would hash every kind (``Enum.__hash__``
    # is Python code)
    kinds = [a.kind for a in view.legal]
    return [k for k in ANSWER_ORDER if k in kinds]


def _envido_call(chain: Sequence[Kind]) -> list[str]:
    """Ways to write an envido chain, widest first."""
    long = [answer_label(k, 0) for k in chain]
    medium = [answer_label(k, 1) for k in chain]
    if chain and chain[-1] is not _ENVIDO_KIND:
        medium[-1] = answer_label(chain[-1], 0)
    short = [answer_label(k, 2) for k in chain]
    return [" ".join(long), " ".join(medium), " ".join(short), " ".join(answer_label(k, 3)
            for k in chain)]  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Call:
    names: tuple[str, ...]  # ways to write it, widest first
    ours: bool  # our team made it (the others answer)
    to_us: bool  # this seat's team must answer
    last: tuple[str, ...] = ()  # the last call of a chain, widest first (else ``names``)
    truco: bool = False  # a truco call (its answer may end the hand)


def _pending_call(screen: SeatScreen) -> _Call | None:
    view = screen.view
    team = view.team
    if view.flor_pending is not None:
        resto = screen.flor_call is _AL_RESTO
        name = "CONTRAFLOR AL RESTO" if resto else "CONTRAFLOR"
        return _Call((name,), view.flor_pending != team, view.flor_pending == team)
    if screen.flor_course_team is not None:
        to_us = screen.flor_course_team == team
        return _Call(("FLOR",), not to_us, to_us)
    if screen.flor_open:
        flor_answers = any(a.kind in _FLOR_KINDS for a in view.legal)
        return _Call(("FLOR",), not flor_answers, flor_answers)
    if view.envido_pending is not None:
        ours = view.envido_pending == team
        last = view.envido_chain[-1:]
        return _Call(
            tuple(_envido_call(view.envido_chain)),
            ours,
            not ours,
            tuple(answer_label(k, level) for k in last for level in (0, 1)),
        )
    if view.truco_pending is not None:
        level, caller = view.truco_pending
        return _Call((LADDER[level],), caller == team, caller != team, truco=True)
    return None


#: a tuple: its members are found by identity, no enum hashed (``Enum.__hash__`` is Python)
_FLOR_KINDS = (Kind.FLOR, Kind.CONTRAFLOR, Kind.CONTRAFLOR_AL_RESTO, Kind.CON_FLOR_ME_ACHICO)


def _call_lines(call: _Call, answers: list[Kind], turn: Line, quiet: Line) -> tuple[Line, Line]:
    """A call awaiting an answer.

    To the team that must answer: line 1 the call, line 2 the answers (or, when they do
    not fit, both lines flowing). To the team that called, ``CANTAMOS ...`` where the
    next change will be written anyway, so that the answer costs few bytes on the bus:
    a truco's on line 1 (a refusal ends the hand, whose result goes there; line 2 keeps
    ``quiet``), an envido's or a flor's on line 2 (where its points will show; line 1
    keeps ``turn``)."""
    if not call.to_us:
        names = call.last or call.names
        said = [f"CANTAMOS {n}" for n in names] if call.ours else [f"{n}: ESPERANDO" for n in names]
        line = Line.of(fit_text([*said, f"{names[-1]}!"]))
        return (line, quiet) if call.truco else (turn, line)
    if not answers:
        return (
            Line.of(fit_text([f"{n}?" for n in call.names])),
            Line.of(fit_text(["RESPONDE TU COMPAÑERO", "RESPONDE OTRO"])),
        )
    if call.names[0] == "FLOR" and _FLOR_KIND in answers:  # the plain answer first
        answers = [_FLOR_KIND, *(k for k in answers if k is not _FLOR_KIND)]
    heads = [f"{name}?" for name in call.names if _fits(f"{name}?")]
    # One form for a whole list, the same from screen to screen: short words ("NO",
    # "ACHICO", "REAL") while they fit, then "ENV" for envido, one- or two-letter names last.
    for levels in ((1, 2), (3,)):
        for level in levels:  # the call alone on line 1, the answers on line 2
            row = "·".join(answer_label(k, level) for k in answers)
            if heads and _fits(row):
                return Line.of(heads[0]), Line.of(row)
        for level in levels:  # the call and the first answers on line 1, the rest below
            labels = [answer_label(k, level) for k in answers]
            for head in heads:
                for split in range(len(labels) - 1, 0, -1):
                    first, second = "·".join(labels[:split]), "·".join(labels[split:])
                    if _fits(f"{head} {first}") and _fits(second):
                        return Line.of(f"{head} {first}"), Line.of(second)
    shortest = "·".join(answer_label(k, 3) for k in answers)
    return Line.of(call.names[-1] + "?"), Line.of(fit_text([shortest]))


# ------------------------------------------------------------------------- content


def _who(view: SeatView, seat: int) -> str:
    return "VOS" if seat == view.seat else f"EL {seat}"


def _team_word(view: SeatView, team: int) -> str:
    return "NOS" if team == view.team else "ELLOS"


_REASON = {
    Reason.ENVIDO: "ENVIDO",
    Reason.FLOR: "FLOR",
    Reason.TRUCO: "LA MANO",
    Reason.MAZO: "AL MAZO",
    Reason.MAZO_ENVIDO: "MAZO SIN ENVIDO",
    Reason.PENALTY: "PENALIDAD",
}


#: a penalty's reason (``controller.table.claims``) when the whole one does not fit
_NOTE_SHORT = {
    "tanto mal cantado": "mal cantado",
    "tanto sin mostrar": "sin mostrar",
    "flor sin mostrar": "sin mostrar",
}


def _award_line(view: SeatView, award: Award, note: str | None = None) -> Line:
    """The line telling ``award`` (``+2 NOS: ENVIDO 33``, a penalty with its reason)."""
    reason = award.reason
    points: int | None = None  # the winner's tanto, told with an envido or a flor won
    if reason is _ENVIDO_WON and view.envido_result is not None:
        points = view.envido_result[1]
    elif reason is _FLOR_WON and view.flor_result is not None:
        points = view.flor_result[1]
    # the reason by its value: a string's hash is kept, an Enum's is Python code
    return _award_line_of(award.team == view.team, award.points, reason._value_, points, note)


@lru_cache(maxsize=1024)
def _award_line_of(
    ours: bool, points: int, reason: str, tanto: int | None, note: str | None
) -> Line:
    detail = "" if tanto is None else f" {tanto}"
    head = f"+{points} {'NOS' if ours else 'ELLOS'}:"
    if reason == Reason.PENALTY._value_ and note:
        return Line.of(fit_text([f"{head} {note}", f"{head} {_NOTE_SHORT.get(note, note)}",
                                 f"{head} PENALIDAD"]))  # fmt: skip
    said = _REASON[Reason(reason)]
    return Line.of(fit_text([f"{head} {said}{detail}", f"{head} {said}"]))


def _strip(screen: SeatScreen) -> Strip:
    view = screen.view
    if screen.dealing:
        dealer = screen.deal_dealer
        mano = None if dealer is None else (dealer + 1) % view.players
        return _strip_of(mano, dealer, view.seat)
    if view.hand_number == 0:
        return _strip_of(None, None, view.seat)
    return _play_strip(
        view.pica if view.pica_pica else view.mano,  # the mano of the seat's pica
        view.dealer,
        view.seat,
        view.team,
        view.bazas[:3],
        view.truco_level,
        view.raise_team == view.team,
    )


@lru_cache(maxsize=1024)
def _play_strip(
    mano: int | None,
    dealer: int | None,
    seat: int,
    team: int,
    bazas: tuple[int | None, ...],
    truco: int,
    quiero_ours: bool,
) -> Strip:
    """A hand's strip from the bazas' winners (None: parda), kept by those numbers."""
    marks = [_PARDA if r is None else _WON if r == team else _LOST for r in bazas]
    marks += [_OPEN] * (3 - len(marks))
    return _strip_of(mano, dealer, seat, (marks[0], marks[1], marks[2]), truco, quiero_ours)


def _declarations(view: SeatView) -> str:
    telling = view.telling
    if telling is None or not telling.declarations:
        return ""
    items = [
        f"{seat}:{'BUENAS' if points is None else points}" for seat, points in telling.declarations
    ]
    while items and not _fits("·".join(items)):
        items.pop(0)
    return "·".join(items)


def _prompt_lines(screen: SeatScreen) -> tuple[Line, Line] | None:
    if screen.menu:
        entries = [plain(e) for e in screen.menu]
        for names in (entries, [_MENU_SHORT.get(e, e) for e in entries]):
            if _fits(" ".join(names) + "[]"):
                break
        marked = [f"[{n}]" if i == screen.menu_index else n for i, n in enumerate(names)]
        return Line(" ".join(marked)), Line.of("Q: ELEGIR·OTRO: SALIR")
    if screen.prompt:
        return (
            Line.of(fit_text([screen.prompt])),
            Line.of(fit_text([screen.prompt_help or ""])),
        )
    return None


_MENU_SHORT = {
    "VALE CUATRO": "VALE 4",
    "DECLARAR": "TANTO",
    "MOSTRAR CARTAS": "MOSTRAR",
    "CONTRAFLOR": "CONTRA",
    "CONTRAFLOR AL RESTO": "AL RESTO",
    "CON FLOR ME ACHICO": "ACHICO",
    "ME ACHICO": "ACHICO",
    "NO QUIERO": "NO",
    "SON BUENAS": "BUENAS",
    "REAL ENVIDO": "REAL",
    "FALTA ENVIDO": "FALTA",
}


def _dealing_lines(screen: SeatScreen) -> tuple[Line, Line]:
    view = screen.view
    if screen.dealer_reads:
        if screen.deal_dealer == view.seat:
            total = 3 * view.players
            return Line.of(f"TOCÁ CADA CARTA {screen.dealt_total}/{total}"), _BLANK
        dealer = "?" if screen.deal_dealer is None else screen.deal_dealer
        return Line.of(f"REPARTE EL {dealer}: {screen.dealt}/3"), _BLANK
    return Line.of(f"TOCÁ TUS CARTAS {screen.dealt}/3"), _BLANK


_HAND_END = (Reason.TRUCO, Reason.MAZO, Reason.MAZO_ENVIDO)


def _own_awards(view: SeatView) -> list[int]:
    """The indexes of the hand's awards this seat's screen tells: all of them, or those
    of its own pica in a pica-pica hand."""
    return [i for i, a in enumerate(view.awards) if not view.pica_pica or a.pica == view.pica]


def _last_award(screen: SeatScreen) -> Line:
    """The hand's (the seat's pica's) last award before its end (envido, flor, a
    penalty), if any."""
    view = screen.view
    awards = view.awards
    if not awards:
        return _BLANK
    notes = screen.award_notes
    key = (view.team, view.pica if view.pica_pica else -1)
    kept = _AWARD_LINES.get(key)
    if (
        kept is not None
        and kept[0] is awards
        and kept[1] is notes
        and kept[2] is view.envido_result
        and kept[3] is view.flor_result
    ):
        return kept[4]
    line = _BLANK
    every = not view.pica_pica  # else only its own pica's
    for i in range(len(awards) - 1, -1, -1):
        award = awards[i]
        if (every or award.pica == view.pica) and award.reason not in _HAND_END:
            line = _award_line(view, award, notes[i] if i < len(notes) else None)
            break
    _AWARD_LINES[key] = (awards, notes, view.envido_result, view.flor_result, line)
    return line


#: ``_last_award``'s line for a team's seats (in a pica-pica hand, a pica's), by the
#: identity of what it is made of: the seats' views of one state share the hand's
#: awards and tanto results, their screens the awards' notes (the same objects), so the
#: line made for a team's first seat is its next seats' (no loop, no ``_award_line``).
#: Each entry holds its objects: an identity it compares is never another object's.
_AWARD_LINES: dict[
    tuple[int, int | None],
    tuple[
        tuple[Award, ...],
        tuple[str | None, ...],
        tuple[int, int] | None,
        tuple[int, int] | None,
        Line,
    ],
] = {}


def _quiet_line(screen: SeatScreen) -> Line:
    """Line 2 when nothing is asked of the seat: a request to show its cards (its claim
    is not proven and the hand may end), else the hand's last award."""
    if screen.must_show and screen.view.hand_in_progress:
        return Line.of("MOSTRÁ TUS CARTAS")
    return _last_award(screen)


def _hand_end(view: SeatView) -> Line:
    """Who won the hand (the seat's pica) and what it was worth."""
    end = [view.awards[i] for i in _own_awards(view) if view.awards[i].reason in _HAND_END]
    if not end:
        return Line.of("FIN DE LA PICA" if view.pica_pica else "FIN DE LA MANO")
    team = end[0].team
    points = sum(a.points for a in end if a.team == team)
    won = "LA PICA" if view.pica_pica else "LA MANO"
    what = won if end[0].reason is _TRUCO_WON else "MAZO"
    return Line.of(f"+{points} {_team_word(view, team)}: {what}")


def _turn_line(view: SeatView) -> Line:
    """Whose turn it is (in a pica-pica hand, in the seat's pica, named by its opponent)."""
    turn = view.turn
    if turn is None:
        return _BLANK
    mine = turn == view.seat
    if view.pica_pica and view.opponent is not None:
        said = f"TURNO: {'VOS' if mine else turn}"
        opponent = view.opponent
        return Line.of(fit_text([f"PICA CON {opponent}·{said}", f"CON {opponent}·{said}"]))
    return _turn_line_of(turn, mine)


@lru_cache(maxsize=64)
def _turn_line_of(turn: int, mine: bool) -> Line:
    return Line.of(f"TURNO: {'VOS' if mine else turn}")


def _state_lines(screen: SeatScreen) -> tuple[Line, Line]:
    """Lines 1 and 2 from the state alone (no message).

    Line 2 keeps the hand's last award through the end of the hand, and the end of the
    hand and of the game change line 1 only: few bytes on the bus for those events.
    """
    view = screen.view
    if view.winner is not None:
        first = "FIN: GANAMOS" if view.winner == view.team else "FIN: PERDIMOS"
        return Line.of(first), _last_award(screen)
    if screen.dealing:
        return _dealing_lines(screen)
    if screen.menu or screen.prompt:
        prompt = _prompt_lines(screen)
        if prompt is not None:
            return prompt
    if view.hand_number == 0:
        return Line.of("NUEVO PARTIDO"), Line.of(f"A {view.target}·{view.players} JUGADORES")
    if not view.hand_in_progress:
        return _hand_end(view), _last_award(screen)
    telling = view.telling
    if telling is not None:
        kind = "FLOR" if telling.kind == "flor" else "ENVIDO"
        nxt = telling.next_seat
        if nxt == view.seat:
            head = Line.of(f"{kind}: CANTÁ TU TANTO")
        elif nxt is not None:
            head = Line.of(f"{kind}: CANTA {_who(view, nxt)}")
        else:
            head = Line.of(f"{kind}: TANTOS")
        return head, Line.of(_declarations(view))
    if view.pica_pica:
        if view.turn is None:  # this seat's pica ended, the others go on
            return _hand_end(view), _last_award(screen)
        turn = _turn_line(view)
    else:  # ``_turn_line`` written out: most screens of a hand come this way
        seat = view.turn
        turn = _BLANK if seat is None else _turn_line_of(seat, seat == view.seat)
    if not (
        view.flor_pending is None
        and screen.flor_course_team is None
        and not screen.flor_open
        and view.envido_pending is None
        and view.truco_pending is None
    ):  # a call awaits its answer (``_pending_call``)
        call = _pending_call(screen)
        if call is not None:
            answers = _answers(view) if call.to_us else []
            return _call_lines(call, answers, turn, _quiet_line(screen))
    if view.awards or screen.must_show:
        return turn, _quiet_line(screen)
    return turn, _BLANK  # ``_quiet_line`` with no award and nothing to show


#: each seat's screen last said and what it said (``screen_content``)
_LAST_CONTENT: dict[int, tuple[SeatScreen, ScreenContent]] = {}


def screen_content(screen: SeatScreen) -> ScreenContent:
    """What the screen says (see the module docstring for where).

    A screen of the same view as the seat's last one, unlike it only in what neither
    shows (the cards read for the other seats while a deal is read), says the same:
    that one's content is returned."""
    view = screen.view
    seat = view.seat
    last = _LAST_CONTENT.get(seat)
    # ``_says_alike`` asked only of a screen of the same view: after a change of the
    # game's state (most redraws) every view is new
    if last is not None and (
        last[0] is screen or (last[0].view is view and _says_alike(last[0], screen))
    ):
        return last[1]
    content = _screen_content(screen)
    _LAST_CONTENT[seat] = (screen, content)
    return content


#: every field of a screen but its view and the deal's counts, read at once (C code)
_SAID_ALIKE = attrgetter(
    *(f.name for f in fields(SeatScreen) if f.name not in ("view", "dealt", "dealt_total"))
)


def _says_alike(one: SeatScreen, other: SeatScreen) -> bool:
    """``one`` and ``other`` say the same: the same view and the same fields, but for
    the counts of a deal that neither shows (``_dealing_lines`` shows the dealer who
    taps every card the cards read, any other seat its own)."""
    if one.view is not other.view or _SAID_ALIKE(one) != _SAID_ALIKE(other):
        return False
    if not one.dealing:
        return one.dealt == other.dealt and one.dealt_total == other.dealt_total
    if one.dealer_reads and one.deal_dealer == one.view.seat:
        return one.dealt_total == other.dealt_total
    return one.dealt == other.dealt


def _screen_content(screen: SeatScreen) -> ScreenContent:
    view = screen.view
    strip = _strip(screen)
    card: tuple[Line, ...] = ()
    if screen.match is not None or screen.waiting:
        if view.winner is not None:
            card = next_lines(screen.match, view)
        elif screen.match is not None:
            card = match_lines(screen.match, view.team)
        else:
            card = waiting_lines()
    if not screen.node_ok:
        return _new_content(
            view.ours, view.theirs, view.target, strip, banner=_UNPLUGGED, card=card
        )
    alert = screen.alert
    banner: Notice | None = screen.notice
    if banner is None and screen.message is not None and screen.refusal:
        banner = screen.message
    if banner is not None:
        wrapped = _wrap_message(notice_text(banner, view.seat))
        if alert is None or len(wrapped) > 2:
            return _new_content(
                view.ours, view.theirs, view.target, strip, banner=wrapped, card=card
            )
        # the banner keeps to the lines' pages: the strip's says the lasting alert
        first, second = (*wrapped, "")[:2]
        return _new_content(
            view.ours,
            view.theirs,
            view.target,
            strip,
            (Line(first, True, True), Line(second, True, True)),
            card=card,
            strip_alert=_alert_line(alert, view.seat),
        )
    message = screen.message
    if message is not None and message == alert:
        message = None  # told and lasting
    notice = message if message is not None else alert
    if card:  # a message (a table alert) takes the card's last line
        if notice is not None:
            said = Line.of(_wrap_message(notice_text(notice, view.seat), 1)[0], centre=True)
            card = (*card[:-1], said)
        return _new_content(view.ours, view.theirs, view.target, strip, card=card)
    lines = _state_lines(screen)
    if notice is None:
        return _new_content(view.ours, view.theirs, view.target, strip, lines)
    if not (notice is alert and screen.dealing) and not _busy(screen):
        wrapped = _wrap_message(notice_text(notice, view.seat))
        if len(wrapped) == 1:
            lines = (lines[0], Line.of(wrapped[0]))
        else:
            lines = (Line.of(wrapped[0]), Line.of(wrapped[1]))
        if notice is alert:
            alert = None  # said on the lines
    # every seat sees a lasting alert: where the lines are taken, in the strip's place
    return _new_content(
        view.ours,
        view.theirs,
        view.target,
        strip,
        lines,
        strip_alert=None if alert is None else _alert_line(alert, view.seat),
    )


_UNPLUGGED = ("LECTOR DESCONECTADO", "RECONECTANDO...")


def _alert_line(alert: Notice, seat: int) -> Line:
    return Line.of(fit_text([notice_text(alert, seat), alert_text(alert)]), True, True)


def _busy(screen: SeatScreen) -> bool:
    """The seat is in the middle of something a notice must not hide."""
    if screen.menu or screen.prompt:
        return True
    view = screen.view
    if not view.hand_in_progress or screen.dealing:
        return False
    call = _pending_call(screen)
    return call.to_us if call is not None else view.turn == view.seat


def screen_lines(screen: SeatScreen) -> tuple[str, str]:
    """The two text lines under the strip (or the banner's lines)."""
    content = screen_content(screen)
    if content.banner:
        lines = (*content.banner, "", "")
        return lines[0], lines[1]
    return content.lines[0].text, content.lines[1].text


def screen_texts(screen: SeatScreen) -> tuple[str, ...]:
    """Every text on the screen below the score: the strip, the lines or the banner."""
    return screen_content(screen).texts


# ------------------------------------------------------------------------- drawing

_BAZA_PATTERNS: dict[BazaMark, tuple[str, ...]] = {
    BazaMark.OPEN: ("#######", "#.....#", "#.....#", "#.....#", "#.....#", "#.....#", "#######"),
    BazaMark.WON: ("#######",) * 7,
    BazaMark.LOST: ("#######", "##...##", "#.#.#.#", "#..#..#", "#.#.#.#", "##...##", "#######"),
    BazaMark.PARDA: ("#######", "#.....#", "#.....#", "#######", "#.....#", "#.....#", "#######"),
}


_BAZA_CELLS = {
    mark: tuple(
        (dx, dy) for dy, row in enumerate(rows) for dx, cell in enumerate(row) if cell == "#"
    )
    for mark, rows in _BAZA_PATTERNS.items()
}


def _draw_text(
    draw: ImageDraw.ImageDraw, x: int, y: int, text: str, fill: int, font: PixelFont = FONT_TEXT
) -> int:
    """Draws ``text`` at (x, y); returns its width."""
    lit = font.pixels(text, (x, y))
    if lit:
        draw.point(lit, fill=fill)
    return text_width(text)


@lru_cache(maxsize=256)
def _score_tile(ours: int, theirs: int, target: int) -> Image.Image:
    tile = Image.new("1", (WIDTH, SCORE_BOX[3] + 1), 0)
    draw_scoreboard(
        ImageDraw.Draw(tile),
        SCORE_BOX,
        ours,
        theirs,
        target,
        label_gap=SCORE_LABEL_GAP,
        divider_band=SCORE_DIVIDER_BAND,
    )
    return tile


@lru_cache(maxsize=512)
def _strip_tile(strip: Strip) -> Image.Image:
    tile = Image.new("1", (WIDTH, PAGE), 0)
    draw = ImageDraw.Draw(tile)
    for x, letter, seat in ((MANO_X, "M", strip.mano), (DEALER_X, "D", strip.dealer)):
        if seat is None:
            continue
        width = _draw_text(draw, x, 0, f"{letter}{seat}", 1, FONT_STRIP)
        if seat == strip.seat:
            draw.line((x, PAGE - 1, x + width - 1, PAGE - 1), fill=1)
    for x, mark in zip(BAZA_X, strip.bazas, strict=True):
        draw.point([(x + dx, dy) for dx, dy in _BAZA_CELLS[mark]], fill=1)
    if strip.truco:
        width = _draw_text(draw, TRUCO_X, 0, LADDER[strip.truco], 1, FONT_STRIP)
        if strip.quiero_ours and strip.truco < 3:
            draw.line((TRUCO_X, PAGE - 1, TRUCO_X + width - 1, PAGE - 1), fill=1)
    return tile


@lru_cache(maxsize=1024)
def _line_tile(line: Line) -> Image.Image:
    tile = Image.new("1", (WIDTH, PAGE), 1 if line.inverted else 0)
    x = max(0, (WIDTH - text_width(line.text)) // 2) if line.centre else 0
    _draw_text(ImageDraw.Draw(tile), x, LINE_TEXT_ROW, line.text, 0 if line.inverted else 1)
    return tile


@lru_cache(maxsize=256)
def _banner_tile(lines: tuple[str, ...]) -> Image.Image:
    x0, y0, x1, y1 = BANNER_BOX
    tile = Image.new("1", (x1 - x0, y1 - y0), 1)
    draw = ImageDraw.Draw(tile)
    height = y1 - y0
    step = FONT_TEXT.height + 3
    block = FONT_TEXT.height + step * (len(lines) - 1)
    top = (height - block) // 2
    for index, text in enumerate(lines):
        x = max(0, (tile.width - text_width(text)) // 2)
        _draw_text(draw, x, top + index * step, text, 0)
    return tile


def render_content(content: ScreenContent) -> Image.Image:
    """The 128x64 mode "1" frame of ``content``."""
    image = Image.new("1", SCREEN_SIZE, 0)
    if content.card:
        for page, line in enumerate(content.card):
            if line.text or line.inverted:
                image.paste(_line_tile(line), (0, page * PAGE))
    else:
        image.paste(_score_tile(content.ours, content.theirs, content.target), (0, 0))
    if content.banner:
        image.paste(_banner_tile(content.banner), BANNER_BOX[:2])
        return image
    if content.card:
        return image
    if content.strip_alert is not None:
        image.paste(_line_tile(content.strip_alert), (0, STRIP_TOP))
    else:
        image.paste(_strip_tile(content.strip), (0, STRIP_TOP))
    for top, line in zip(LINE_TOPS, content.lines, strict=True):
        if line.text or line.inverted:
            image.paste(_line_tile(line), (0, top))
    return image


@lru_cache(maxsize=128)
def _score_side_pages(side: int, points: int, target: int) -> bytes:
    """One team's half of the score tile (0: ours, with the separator; 1: theirs)."""
    tile = Image.new("1", (WIDTH, SCORE_BOX[3] + 1), 0)
    draw_scoreboard(
        ImageDraw.Draw(tile),
        SCORE_BOX,
        points,
        points,
        target,
        label_gap=SCORE_LABEL_GAP,
        divider_band=SCORE_DIVIDER_BAND,
        sides=(side,),
        separator=side == 0,
    )
    return image_to_pages(tile)


@lru_cache(maxsize=256)
def _score_pages(ours: int, theirs: int, target: int) -> bytes:
    """``image_to_pages(_score_tile(...))``, as the union of the two teams' halves: a
    hand's end (both scores new at every seat) joins cached halves, draws nothing
    once ``warm_score_tiles`` ran."""
    left = _score_side_pages(0, ours, target)
    right = _score_side_pages(1, theirs, target)
    size = len(left)
    return (int.from_bytes(left, "big") | int.from_bytes(right, "big")).to_bytes(size, "big")


def warm_score_tiles(target: int) -> None:
    """Draw every half score tile of a game to ``target`` ahead (about 60 tiles, some
    10 ms here): the service does it at start-up, so no score is drawn during play."""
    for points in range(target + 1):
        for side in (0, 1):
            _score_side_pages(side, points, target)


@lru_cache(maxsize=512)
def _glyph_columns(char: str, row: int, font: PixelFont = FONT_TEXT) -> bytes:
    """A character's columns on a page, its top at ``row``: one byte a column, as wide as
    its advance (the spacing after it blank; no glyph reaches past its advance)."""
    columns = bytearray(font.advance(char))
    for dx, dy in font.pixels(char):
        columns[dx] |= 1 << (row + dy)
    return bytes(columns)


def _put(page: bytearray, x: int, columns: bytes, clear: bool = False) -> None:
    """ORs (or, ``clear``, clears) ``columns`` into a one-page tile from column ``x``;
    what falls past the right edge is left out, as Pillow leaves it out of an image."""
    columns = columns[: max(0, WIDTH - x)]
    end = x + len(columns)
    old = int.from_bytes(page[x:end], "big")
    new = int.from_bytes(columns, "big")
    page[x:end] = ((old & ~new) if clear else (old | new)).to_bytes(len(columns), "big")


def _put_text(
    page: bytearray,
    x: int,
    row: int,
    text: str,
    clear: bool = False,
    font: PixelFont = FONT_TEXT,
) -> int:
    """``_draw_text`` on a one-page tile in page layout; returns the text's width."""
    _put(page, x, b"".join([_glyph_columns(char, row, font) for char in text]), clear)
    return text_width(text)


def _underline(page: bytearray, x: int, width: int) -> None:
    _put(page, x, b"\x80" * width)  # the page's bottom row


@lru_cache(maxsize=8)
def _baza_columns(mark: BazaMark) -> bytes:
    columns = bytearray(max((dx for dx, _ in _BAZA_CELLS[mark]), default=-1) + 1)
    for dx, dy in _BAZA_CELLS[mark]:
        columns[dx] |= 1 << dy
    return bytes(columns)


@lru_cache(maxsize=512)
def _strip_pages(strip: Strip) -> bytes:
    """``image_to_pages(_strip_tile(strip))``, joined from the font's columns with no
    image drawn: a baza won or a truco accepted gives every seat a strip of its own."""
    page = bytearray(WIDTH)
    for x, letter, seat in ((MANO_X, "M", strip.mano), (DEALER_X, "D", strip.dealer)):
        if seat is None:
            continue
        width = _put_text(page, x, 0, f"{letter}{seat}", font=FONT_STRIP)
        if seat == strip.seat:
            _underline(page, x, width)
    for x, mark in zip(BAZA_X, strip.bazas, strict=True):
        _put(page, x, _baza_columns(mark))
    if strip.truco:
        width = _put_text(page, TRUCO_X, 0, LADDER[strip.truco], font=FONT_STRIP)
        if strip.quiero_ours and strip.truco < 3:
            _underline(page, TRUCO_X, width)
    return bytes(page)


@lru_cache(maxsize=1024)
def _line_pages(line: Line) -> bytes:
    """``image_to_pages(_line_tile(line))``, joined from the font's columns with no image
    drawn (an inverted line: the text cleared out of a lit page)."""
    if not line.text and not line.inverted:
        return bytes(WIDTH)
    page = bytearray(b"\xff" * WIDTH if line.inverted else bytes(WIDTH))
    x = max(0, (WIDTH - text_width(line.text)) // 2) if line.centre else 0
    _put_text(page, x, LINE_TEXT_ROW, line.text, clear=line.inverted)
    return bytes(page)


@lru_cache(maxsize=256)
def _banner_pages(lines: tuple[str, ...]) -> bytes:
    return image_to_pages(_banner_tile(lines))


#: the pages of the strips and lines drawn, by the object's identity: a screen's strips
#: and most of its lines are shared objects (``_strip_of``, ``Line.of``), found here with
#: no hash of theirs computed (a dataclass's hash is Python code). Each entry holds its
#: object, so the id stays that object's; emptied when full.
_STRIP_PAGES_BY_ID: dict[int, tuple[Strip, bytes]] = {}
_LINE_PAGES_BY_ID: dict[int, tuple[Line, bytes]] = {}
_BY_ID_MAX = 4096
_Drawn = TypeVar("_Drawn", Strip, Line)


def _pages_by_id(
    drawn: _Drawn, kept_pages: dict[int, tuple[_Drawn, bytes]], draw: Callable[[_Drawn], bytes]
) -> bytes:
    """``draw(drawn)``, found in ``kept_pages`` by the object's identity first."""
    kept = kept_pages.get(id(drawn))
    if kept is not None and kept[0] is drawn:
        return kept[1]
    pages = draw(drawn)
    if len(kept_pages) >= _BY_ID_MAX:
        kept_pages.clear()
    kept_pages[id(drawn)] = (drawn, pages)
    return pages


def _strip_pages_of(strip: Strip) -> bytes:
    return _pages_by_id(strip, _STRIP_PAGES_BY_ID, _strip_pages)


def _line_pages_of(line: Line) -> bytes:
    return _pages_by_id(line, _LINE_PAGES_BY_ID, _line_pages)


def render_pages(content: ScreenContent) -> bytes:
    """The frame of ``content`` in an OLED controller's page layout: exactly
    ``image_to_pages(render_content(content))``, joined from the cached tiles' pages
    (every region is whole pages) without drawing or converting a pixel."""
    if content.card:
        pages = [_line_pages_of(line) for line in content.card]
        if content.banner:
            pages[STRIP_TOP // PAGE :] = [_banner_pages(content.banner)]
        return b"".join(pages)
    if content.banner:
        return _score_pages(content.ours, content.theirs, content.target) + _banner_pages(
            content.banner
        )
    return b"".join(_tiles(content))


def render_tiles(content: ScreenContent) -> tuple[bytes, bytes, bytes, bytes] | None:
    """``render_pages(content)`` cut into its kept tiles, top to bottom: the score's
    pages, the strip's (or the lasting alert's) page, the two lines' pages. Each is the
    object the renderer keeps for its tile, so a tile unchanged since the last screen is
    the very same object (a seat node's port sends only the changed ones, compared by
    identity: ``NodePort.send_tiles``). None for a banner or a match card (drawn whole)."""
    if content.card or content.banner:
        return None
    return _tiles(content)


def _tiles(content: ScreenContent) -> tuple[bytes, bytes, bytes, bytes]:
    score = _score_pages(content.ours, content.theirs, content.target)
    line1, line2 = content.lines
    alert = content.strip_alert
    # ``_pages_by_id`` written out: three lookups a seat, every redraw
    lines = _LINE_PAGES_BY_ID
    if alert is None:
        strip = content.strip
        kept_strip = _STRIP_PAGES_BY_ID.get(id(strip))
        if kept_strip is not None and kept_strip[0] is strip:
            head = kept_strip[1]
        else:
            head = _strip_pages_of(strip)
    else:
        head = _line_pages_of(alert)
    kept = lines.get(id(line1))
    first = kept[1] if kept is not None and kept[0] is line1 else _line_pages_of(line1)
    kept = lines.get(id(line2))
    second = kept[1] if kept is not None and kept[0] is line2 else _line_pages_of(line2)
    return score, head, first, second


def clear_caches() -> None:
    """Forget the cached tiles and contents (benchmarks measure a cold render with it)."""
    for cached in (
        _score_tile,
        _strip_tile,
        _line_tile,
        _banner_tile,
        _score_pages,
        _score_side_pages,
        _strip_pages,
        _line_pages,
        _glyph_columns,
        _banner_pages,
        _line_of,
        _strip_of,
        _play_strip,
        _award_line_of,
        _turn_line_of,
    ):
        cached.cache_clear()
    _STRIP_PAGES_BY_ID.clear()
    _LINE_PAGES_BY_ID.clear()
    _LAST_CONTENT.clear()
    _AWARD_LINES.clear()


def render_screen(screen: SeatScreen) -> Image.Image:
    """The seat's 128x64 mode "1" frame."""
    return render_content(screen_content(screen))
