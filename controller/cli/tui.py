"""The terminal table: ``truco-table run --mock`` on a terminal, full screen (curses).

Why curses: it is in the standard library (nothing to install on a laptop or on the Pi),
it reads one key at a time without Enter, redraws only the cells that changed, and
reports the terminal's size and its changes; the table needs no widgets, only a few
lines of text and the seat panels drawn in braille.

:class:`TerminalTable` is the table's side, free of curses so the tests can drive it:
``key()`` acts on a key the moment it is typed (a card tapped out of turn is refused
then, as the real table refuses it), ``tick()`` moves the clock on (bots act every
``pace`` seconds, the next hand is dealt once the player has seen the end of the last
one), and ``lines()`` lays the screen out for a terminal of a given size: the score,
the seat panels side by side as many as the width takes (the very frames sent to the
mock OLEDs, so their banners come and go with the table's clock), the baza in play and
the finished ones, the player's cards, the hand's calls, and the end of the hand held
with its points until the player goes on. :func:`play` runs it in curses, redrawing
every ``FRAME_SECONDS``.

What must be seen comes first at any size (80x24 has no room for a panel): the score in
numbers and matchsticks, the hand, the bazas wrapped on as many lines as they need, the
cards, the hand's end with its points; then, as the height allows, the last calls, each
seat's texts, every key, the panels, more calls. ``feed()`` takes the characters as the
terminal sends them: a bracketed paste (asked for with ``ESC [ ? 2004 h``) is set aside
whole and said so, never played as keys. A locale that is not UTF-8 gets the panels and
the text in ASCII (``ascii``); :func:`line_mode` is the same table a line at a time, for
a terminal that cannot move the cursor.
"""

from __future__ import annotations

import contextlib
import curses
import locale
import os
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, TextIO

from PIL import Image

from ..engine import Action, Card, Game, Kind, RefusalCode, envido_points, flor_points
from ..engine.hand import Telling
from ..engine.results import Award
from ..render.notices import notice_text
from ..render.screen import SeatScreen, render_screen, screen_content, screen_texts
from ..render.terminal import braille, to_ascii
from ..table.controls import Button
from ..table.run_mock import MockRun
from ..table.screens import screen_for
from ..table.table import Phase
from .words import REASON_WORDS, say_action

__all__ = [
    "FRAME_SECONDS",
    "KEYS",
    "TEXTS",
    "HandEnd",
    "TerminalTable",
    "cursor_addressable",
    "line_mode",
    "play",
    "unicode_terminal",
]

PASTE_START: Final = "\x1b[200~"  # bracketed paste (on with ESC [ ? 2004 h)
PASTE_END: Final = "\x1b[201~"
FLASH_SECONDS: Final = 5.0
FRAME_SECONDS: Final = 0.1
#: a square of matchsticks as its sticks are laid: left, top, right, bottom, the diagonal
STICKS: Final = (
    "",
    "│",
    "┌",
    "⊓",
    "□",
    "⧄",
)  # the clock: redraw (banners expire), bots move, keys are read
PANEL_WIDTH: Final = 66  # 64 braille columns and the box
PANEL_HEIGHT: Final = 19  # 16 braille rows, the box and its texts in letters
PANEL_GAP: Final = 2

#: one key, one button of the player's pad (capital: hold the button)
KEYS: Final[dict[str, Button]] = {
    "t": Button.TRUCO,
    "e": Button.ENVIDO,
    "r": Button.REAL_ENVIDO,
    "f": Button.FALTA_ENVIDO,
    "l": Button.FLOR,
    "q": Button.QUIERO,
    "n": Button.NO_QUIERO,
    "m": Button.MAZO,
}

TEXTS: Final[dict[str, dict[str, str]]] = {
    "es": {
        "title": "TRUCO · partido a {target} · {players} jugadores",
        "match": "{label} · {home} vs {away} · chico {chico} de {best_of}",
        "players": "{team}: {names}",
        "score_teams": "Nosotros {ours} · Ellos {theirs}",
        "score_demo": "Equipo 0: {a} · Equipo 1: {b}",
        "hand": "Mano n.º {n} · da: {dealer} · sale: {mano} (es mano)",
        "turn": "turno: {who}",
        "answer_you": "contestás vos",
        "answer_us": "contestamos nosotros (vos o tu compañero)",
        "answer_them": "contestan ellos",
        "answer_seat": "contesta el {seat}",
        "pica_pica": "pica-pica",
        "picas": "Picas: {picas}",
        "pica_turn": "{pica} turno {who}",
        "pica_over": "{pica} terminó",
        "pica_table": "{pica} (baza {n}): {cards}",
        "table_picas": "En la mesa: {picas}",
        "you": "vos",
        "seat": "asiento {seat}",
        "panel_you": " asiento {seat} (vos) · equipo {team} ",
        "panel": " asiento {seat} · equipo {team} ",
        "table": "En la mesa (baza {n}): {cards}",
        "bazas": "Bazas: {bazas}",
        "baza_won": "ganó el {seat}",
        "baza_you": "ganaste vos",
        "parda": "parda",
        "cards": "Tus cartas: {cards}",
        "cards_unknown": "(la mesa no leyó tus cartas)",
        "calls": "Cantos de la mano:",
        "no_calls": "(todavía nada)",
        "refused": "rechazado: {why}",
        "end_title": "Terminó la mano {n}",
        "no_points": "sin puntos",
        "go_on": "Enter o espacio: seguir",
        "demo_go_on": "sigue en {s:.0f} s (Enter: ya)",
        "game_over": "¡Fin del partido! Ganó el equipo {team}: {a} a {b}",
        "game_won": "¡Fin del partido! Ganamos nosotros, {ours} a {theirs}",
        "game_lost": "¡Fin del partido! Ganaron ellos, {theirs} a {ours}",
        "undone": "deshecho por el árbitro: {what}",
        "quit_hint": "o: otra partida · x: salir",
        "quit_ask": "¿Dejás el partido? s: sí, salir · cualquier otra tecla: seguir jugando",
        "resume_state": "Lo retomás donde quedó con: truco-table run --mock --state {dir}",
        "resume_none": (
            "Sin --state el partido no se guarda: se pierde al salir "
            "(para poder retomarlo, jugá con --state CARPETA)"
        ),
        "new_game": "Partida nueva a {target}, {players} jugadores, las mismas reglas",
        "game_end_line": "Escribí otra (o) para jugar otra partida; cualquier otra cosa sale",
        "help_more": "(sigue: cualquier tecla)",
        "tell_prompt": "Tus tantos: {entry}",
        "tell_keys": "escribí el número y Enter",
        "tell_buenas": "n: son buenas",
        "tell_best": "lo mejor: {best}",
        "tell_arrows": "↑ ↓ desde tu {what} ({own})",
        "tell_hint": "Para cantar los tantos escribí el número y Enter (q no canta nada)",
        "tell_empty": "Escribí tus tantos (el número) y después Enter",
        "seats_hidden": "Faltan {n} asientos: agrandá la terminal",
        "all_no_room": (
            "a: no entran los paneles de los {n} asientos en {w}x{h} (cada panel pide 66x19): "
            "agrandá la terminal a {mw}x{mh}; mientras, cada asiento en una línea"
        ),
        "paused": "EN PAUSA · p: seguir",
        "dealing": "Repartiendo...",
        "small": "La terminal es chica ({w}x{h}): agrandala a {mw}x{mh} o más",
        "keys": (
            "t truco · e envido · r real · f falta · l flor · q quiero · n no quiero · "
            "m mazo · 1 2 3 tus cartas · s mostrar · Mayúscula: mantener · ! árbitro · "
            "a asientos · ? ayuda · x salir"
        ),
        "keys_demo": "p pausa · + más rápido · - más lento · a asientos · x salir",
        "keys_short": "? ayuda · x salir",
        "line_help": (
            "Modo de líneas: escribí las teclas y Enter (t truco · e envido · r real · "
            "f falta · l flor · q quiero · n no quiero · m mazo · 1 2 3 o el nombre de tu "
            "carta (7E) · s mostrar · Mayúscula: mantener · ! árbitro · a asientos · "
            "? ayuda · x salir)"
        ),
        "line_unknown": "¿{word}? Escribí ? para ver las teclas",
        "help": (
            "Cada tecla es un botón de tu botonera y actúa en el acto:\n"
            "  t truco (y retruco, vale cuatro)   e envido   r real envido   f falta envido\n"
            "  l flor   q quiero   n no quiero   m me voy al mazo\n"
            "  1 2 3: apoyás esa carta en tu lector (la jugás)\n"
            "  s: mostrar cartas (después 1 2 3 y q)\n"
            "  Mayúscula (T E L N ...): mantener el botón, abre su menú;\n"
            "    la misma tecla avanza, q elige, otra sale.\n"
            "  !: llamar al árbitro (quiero y no quiero mantenidos juntos)\n"
            "Tus tantos, cuando te toca cantarlos: escribí el número y Enter (↑ ↓ suben y\n"
            "  bajan desde tu envido si la mesa leyó tus cartas; Retroceso borra); n: son buenas.\n"
            "a: todos los asientos · Enter: seguir después de cada mano · o: otra partida al\n"
            "  terminar · x: salir (pregunta antes si el partido sigue)\n"
            "En pantalla:\n"
            "  Nosotros/Ellos: los puntos y los fósforos (cuadrados de cinco; malas y buenas)\n"
            "  Mano n.º 1 · da: 3 · sale: 0 (es mano): la mano que se juega, quién\n"
            "    repartió y quién es mano (juega primero y gana los empates)\n"
            "  turno: quién juega · contestamos/contestan: qué equipo debe contestar un canto\n"
            "  En la mesa: las cartas de la baza en juego (asiento:carta) · Bazas: las jugadas\n"
            "  Tus cartas: [1] [2] [3], la tecla de cada una · Cantos de la mano: lo dicho\n"
            "  En cada panel, la tira M0 D1 #X_ TRUCO: M es mano (asiento 0), D da (asiento 1),\n"
            "    subrayado si sos vos; las tres bazas: # ganada por nosotros, X por ellos,\n"
            "    = parda, _ por jugar; después el truco querido (subrayado: el quiero es nuestro)\n"
            "  Las líneas del panel: qué pasa (TURNO: VOS, TRUCO?) y qué podés contestar\n"
            "  Un renglón en inverso: un rechazo, un aviso o lo que la mesa te pide\n"
            "(cualquier tecla cierra esta ayuda)"
        ),
        "penalty_for": "penalidad: {why}",
        "show_now": "¡mostrá tus cartas! (s, 1 2 3, q): tu tanto no está probado",
        "pasted": "Pegaste {n} caracteres: un pegado no juega nada (tocá las teclas de a una)",
    },
    "en": {
        "title": "TRUCO · game to {target} · {players} players",
        "match": "{label} · {home} vs {away} · chico {chico} of {best_of}",
        "players": "{team}: {names}",
        "score_teams": "Us {ours} · Them {theirs}",
        "score_demo": "Team 0: {a} · Team 1: {b}",
        "hand": "Hand no. {n} · dealer: {dealer} · leads: {mano} (is mano)",
        "turn": "turn: {who}",
        "answer_you": "you answer",
        "answer_us": "we answer (you or your partner)",
        "answer_them": "they answer",
        "answer_seat": "seat {seat} answers",
        "pica_pica": "pica-pica",
        "picas": "Picas: {picas}",
        "pica_turn": "{pica} turn {who}",
        "pica_over": "{pica} over",
        "pica_table": "{pica} (baza {n}): {cards}",
        "table_picas": "On the table: {picas}",
        "you": "you",
        "seat": "seat {seat}",
        "panel_you": " seat {seat} (you) · team {team} ",
        "panel": " seat {seat} · team {team} ",
        "table": "On the table (baza {n}): {cards}",
        "bazas": "Bazas: {bazas}",
        "baza_won": "won by {seat}",
        "baza_you": "you won it",
        "parda": "parda (tie)",
        "cards": "Your cards: {cards}",
        "cards_unknown": "(the table did not read your cards)",
        "calls": "This hand's calls:",
        "no_calls": "(nothing yet)",
        "refused": "refused: {why}",
        "end_title": "Hand {n} is over",
        "no_points": "no points",
        "go_on": "Enter or space: go on",
        "demo_go_on": "next hand in {s:.0f} s (Enter: now)",
        "game_over": "Game over! Team {team} won {a} to {b}",
        "game_won": "Game over! We won, {ours} to {theirs}",
        "game_lost": "Game over! They won, {theirs} to {ours}",
        "undone": "undone by the referee: {what}",
        "quit_hint": "o: another game · x: quit",
        "quit_ask": "Leave the game? s: yes, quit · any other key: keep playing",
        "resume_state": "Resume it where it stopped with: truco-table run --mock --state {dir}",
        "resume_none": (
            "Without --state the game is not kept: it is lost when you quit "
            "(to resume it later, play with --state FOLDER)"
        ),
        "new_game": "New game to {target}, {players} players, the same rules",
        "game_end_line": "Type another (o) to play another game; anything else quits",
        "help_more": "(more: any key)",
        "tell_prompt": "Your points: {entry}",
        "tell_keys": "type the number then Enter",
        "tell_buenas": "n: son buenas",
        "tell_best": "best so far: {best}",
        "tell_arrows": "↑ ↓ from your {what} ({own})",
        "tell_hint": "To declare your points type the number then Enter (q declares nothing)",
        "tell_empty": "Type your points (the number) then Enter",
        "seats_hidden": "{n} seats missing: enlarge the terminal",
        "all_no_room": (
            "a: the panels of the {n} seats do not fit in {w}x{h} (each takes 66x19): make "
            "the terminal {mw}x{mh}; meanwhile each seat on one line"
        ),
        "paused": "PAUSED · p: resume",
        "dealing": "Dealing...",
        "small": "The terminal is small ({w}x{h}): make it {mw}x{mh} or more",
        "keys": (
            "t truco · e envido · r real · f falta · l flor · q quiero · n no quiero · "
            "m mazo · 1 2 3 your cards · s show · Capital: hold · ! referee · a seats · "
            "? help · x quit"
        ),
        "keys_demo": "p pause · + faster · - slower · a seats · x quit",
        "keys_short": "? help · x quit",
        "line_help": (
            "Line mode: type the keys then Enter (t truco · e envido · r real · f falta · "
            "l flor · q quiero · n no quiero · m mazo · 1 2 3 or your card's name (7E) · "
            "s show · Capital: hold · ! referee · a seats · ? help · x quit)"
        ),
        "line_unknown": "{word}? Type ? for the keys",
        "help": (
            "Each key is a button of your pad and acts at once:\n"
            "  t truco (then retruco, vale cuatro)   e envido   r real envido   f falta envido\n"
            "  l flor   q quiero   n no quiero   m mazo (fold)\n"
            "  1 2 3: tap that card on your reader (play it)\n"
            "  s: show cards (then 1 2 3 and q)\n"
            "  Capital (T E L N ...): hold the button, opens its menu;\n"
            "    the same key moves on, q chooses, another key leaves.\n"
            "  !: call the referee (quiero and no quiero held together)\n"
            "Your points, when it is your turn to declare: type the number then Enter (up and\n"
            "  down from your envido when the table read your cards; Backspace erases);\n"
            "  n: son buenas.\n"
            "a: every seat · Enter: go on after each hand · o: another game at the end ·\n"
            "  x: quit (asks first while the game goes on)\n"
            "On the screen: the strip M0 D1 #X_ of each panel: M the mano (seat 0), D the\n"
            "  dealer (seat 1); the bazas: # won by us, X by them, = parda, _ to play; then\n"
            "  the accepted truco (underlined: we hold the quiero)\n"
            "(any key closes this help)"
        ),
        "penalty_for": "penalty: {why}",
        "show_now": "show your cards! (s, 1 2 3, q): your claim is not proven",
        "pasted": "You pasted {n} characters: a paste plays nothing (type the keys one by one)",
    },
}

#: the refusal messages the terminal writes in English (the displays keep Spanish)
REFUSALS_EN: Final[dict[RefusalCode, str]] = {
    RefusalCode.GAME_OVER: "the game is over",
    RefusalCode.HAND_OVER: "the hand is over",
    RefusalCode.FLOR_DISABLED: "playing without flor",
    RefusalCode.CALL_PENDING: "a call awaits an answer",
    RefusalCode.NO_PENDING_CALL: "nothing to answer",
    RefusalCode.ENVIDO_CLOSED: "the envido is closed",
    RefusalCode.RAISE_NOT_ALLOWED: "not yours to raise",
    RefusalCode.NOT_YOUR_TURN: "not your turn",
    RefusalCode.CARD_ALREADY_PLAYED: "that card was played",
    RefusalCode.CARD_NOT_IN_HAND: "that card is not yours",
    RefusalCode.NO_FLOR: "you have no flor",
    RefusalCode.BAD_DECLARATION: "wrong points declared",
    RefusalCode.UNKNOWN_CARD: "unknown card",
}


#: a penalty's reason (controller.table.claims) in English
NOTES_EN: Final[dict[str, str]] = {
    "flor tapada": "flor tapada: a flor played unsung",
    "tanto mal cantado": "tanto mal cantado: points the cards deny",
    "tanto sin mostrar": "envido claim not shown",
    "flor sin mostrar": "flor not shown",
}


@dataclass(frozen=True)
class LogEntry:
    """One line of the hand's history: who did what, and whether the table refused it."""

    seat: int
    action: Action | None
    refusal: RefusalCode | None = None
    undone: bool = False  # the referee's undo took this action back


Bazas = tuple[tuple[tuple[int, Card], ...], ...]
Rows = list[tuple[str, str]]  # a screen's rows: (text, style)


@dataclass(frozen=True)
class PlayBazas:
    """The finished bazas of one play: the whole hand, or one pica (``pica`` its mano
    seat, ``seats`` its two seats in play order)."""

    pica: int | None
    seats: tuple[int, ...]
    bazas: Bazas
    results: tuple[int | None, ...]


@dataclass(frozen=True)
class HandEnd:
    """A finished hand, held on the screen until the player goes on."""

    number: int
    awards: tuple[Award, ...]
    notes: tuple[str | None, ...]  # each award's detail (a penalty's reason)
    plays: tuple[PlayBazas, ...]  # one, or a pica-pica hand's three picas
    score: tuple[int, int]
    until: float  # bots-only: when the demo goes on by itself


@dataclass
class _Cache:
    """Braille text of the last frame of each seat, so an unchanged frame costs nothing."""

    frames: dict[int, tuple[bytes, list[str]]] = field(default_factory=dict)

    def braille(self, seat: int, image: Image.Image) -> list[str]:
        data = image.tobytes()
        hit = self.frames.get(seat)
        if hit is not None and hit[0] == data:
            return hit[1]
        text = braille(image)
        self.frames[seat] = (data, text)
        return text


class TerminalTable:
    """The terminal table's state and behaviour (see the module docstring)."""

    def __init__(
        self,
        run: MockRun,
        *,
        pace: float = 0.6,
        lang: str = "es",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.run = run
        self.pace = max(0.0, pace)
        self.lang = lang
        self.text = TEXTS[lang]
        self.clock = clock
        self.human = run.human
        self.all_seats = False
        self.paused = False
        self.help = False
        self.quit = False
        self.held: HandEnd | None = None
        self.log: list[LogEntry] = []
        self._log_hand = run.game.hand_number
        self._stack: tuple[Action, ...] = run.game.hand_actions
        self._ended = run.game.hand_number if not run.game.hand_in_progress else 0
        self._awards_seen = 0
        self.next_bot = clock() + self.pace
        self._cache = _Cache()
        self.flash: tuple[str, float] | None = None  # a line said for a while, and until when
        self._escape: str | None = None  # an escape sequence coming in
        self._paste: str | None = None  # a bracketed paste coming in
        self.ascii = False  # the terminal writes ASCII only (no braille, no matchsticks)
        self.panels = True  # False: never the panels (the line mode), their texts instead
        #: why the run must end now (a record that can no longer be written), if it must
        self.failure: Callable[[], str | None] | None = None
        self.help_page = 0  # the page of the help shown (a small terminal: more than one)
        self._help_count = 1
        self.entry = ""  # the points being typed for a telling
        self.asking_quit = False  # x was typed while the game goes on: asked first
        self.farewell: str | None = None  # said once the screen is given back
        self._size = (80, 24)  # the terminal's, as last drawn
        self._panel_seats = 0  # the seat panels the last screen had room for

    # ------------------------------------------------------------------ input

    def feed(self, key: str) -> None:
        """One character as the terminal sends it: a bracketed paste (``ESC [ 200 ~`` ...
        ``ESC [ 201 ~``) is set aside whole and said so, never played as keys; any other
        escape sequence (a function key) is dropped; the rest are keys (:meth:`key`)."""
        if self._paste is not None:
            self._paste += key
            if self._paste.endswith(PASTE_END):
                size = len(self._paste) - len(PASTE_END)
                self._paste = None
                self.flash = (self.text["pasted"].format(n=size), self.clock() + FLASH_SECONDS)
            return
        if self._escape is not None:
            self._escape += key
            if len(self._escape) == 2 and key != "[":  # Alt+key, or Esc then a key
                self._escape = None
                self.key(key)
            elif len(self._escape) > 2 and "\x40" <= key <= "\x7e":  # a CSI sequence ends
                if self._escape == PASTE_START:
                    self._paste = ""
                elif self._escape in ("\x1b[A", "\x1b[B"):  # up, down
                    self.arrow(1 if key == "A" else -1)
                self._escape = None
            elif len(self._escape) > 32:
                self._escape = None
            return
        if key == "\x1b":
            self._escape = key
            return
        self.key(key)

    def in_play(self) -> bool:
        """A game a player plays is going on (leaving it loses or leaves it): a hand
        played, or the first deal's cards being read (the player sees theirs already)."""
        game = self.run.game
        dealing = any(self.run.mock.service.table.deal.values())
        return (
            self.human is not None
            and game.winner is None
            and (game.hand_number > 0 or bool(game.hand_actions) or dealing)
        )

    def resume_hint(self) -> str:
        store = self.run.mock.service.store
        if store is None:
            return self.text["resume_none"]
        return self.text["resume_state"].format(dir=store.dir)

    def key(self, key: str) -> None:
        """Act on one typed key, now."""
        if self.help:
            if self.help_page + 1 < self._help_count:
                self.help_page += 1  # the next page of the help
            else:
                self.help = False
            return
        if self.asking_quit:
            self.asking_quit = False
            if key in ("s", "S", "x", "X"):
                self.quit = True
                self.farewell = self.resume_hint()
            return
        if key == "\x03":
            self.quit = True
            return
        if key in ("x", "X"):
            if self.in_play():
                self.asking_quit = True
            else:
                self.quit = True
            return
        if key == "?":
            self.help = True
            self.help_page = 0
            self._help_count = 1
            return
        if key == "a":
            self._all_seats()
            return
        if self._telling_key(key):
            return
        if key in ("o", "O") and self.run.game.winner is not None:
            self.new_game()
            return
        if key in ("\n", "\r", " "):
            self._go_on()
            return
        if key == "p" and self.human is None:
            self.paused = not self.paused
            return
        if key in ("+", "-") and self.human is None:
            self.pace = max(0.05, self.pace / 1.5) if key == "+" else min(10.0, self.pace * 1.5)
            return
        human = self.human
        if human is None:
            return
        mock = self.run.mock
        self.run.table.last = None
        if key in KEYS:
            mock.press(human, KEYS[key])
        elif key.lower() in KEYS and key.isupper():
            mock.hold(human, KEYS[key.lower()])
        elif key in ("1", "2", "3"):
            card = self.run.human_card(int(key) - 1)
            if card is None:
                return
            mock.tap(human, card)
        elif key == "!":  # quiero and no quiero held together: the referee is called
            mock.call_referee(human)
        elif key == "s":
            # the envido menu's third entry, "mostrar cartas", as the pad reaches it
            mock.hold(human, Button.ENVIDO)
            mock.press(human, Button.ENVIDO)
            mock.press(human, Button.ENVIDO)
            mock.press(human, Button.QUIERO)
        else:
            return
        last = self.run.table.last
        if last is not None:
            self._note(LogEntry(human, last.action, last.code))
            if last.code is None:
                self.next_bot = self.clock() + self.pace  # the others answer at their pace
        self._watch()

    def arrow(self, step: int) -> None:
        """Up (+1) or down (-1): the points being typed, from the player's own envido (or
        flor) when the table knows the hand."""
        if self._my_telling() is None:
            return
        own = self._own_points()
        if self.entry:
            value = int(self.entry) + step
        elif own is not None:
            value = own
        else:
            self.flash = (self.text["tell_empty"], self.clock() + FLASH_SECONDS)
            return
        self.entry = str(max(0, min(99, value)))

    def telling_mine(self) -> bool:
        """The player is the one to declare points now."""
        return self._my_telling() is not None

    def _my_telling(self) -> Telling | None:
        """The telling of points, when the player is the one to declare now."""
        human = self.human
        game = self.run.game
        if human is None or not game.hand_in_progress or game.winner is not None:
            return None
        telling = game.play_of(human).telling
        if telling is None or telling.next_seat != human:
            return None
        return telling

    def _own_points(self) -> int | None:
        """The player's envido (or flor) for the telling under way, when the table read the
        hand (the player's own cards: nobody else's)."""
        human = self.human
        telling = self._my_telling()
        if human is None or telling is None:
            return None
        dealt = self.run.game.hand_of(human)
        if dealt is None:
            return None
        if telling.kind == "flor":
            return flor_points(dealt)
        return envido_points(dealt, flor=self.run.rules.flor)

    def _telling_key(self, key: str) -> bool:
        """A key while the player must declare: digits and Enter tell the points, never
        q; returns whether the key was the telling's."""
        telling = self._my_telling()
        if telling is None:
            self.entry = ""
            return False
        if key.isdigit():
            if len(self.entry) < 2:
                self.entry += key
            return True
        if key in ("\x7f", "\x08"):
            self.entry = self.entry[:-1]
            return True
        if key in ("\n", "\r"):
            if not self.entry:
                self.flash = (self.text["tell_empty"], self.clock() + FLASH_SECONDS)
                return True
            number, self.entry = int(self.entry), ""
            self._act(Action(telling.next_seat or 0, Kind.DECLARE, number=number))
            return True
        if key in ("q", "e", "r", "f", " "):
            self.flash = (self.text["tell_hint"], self.clock() + FLASH_SECONDS)
            return True
        return False  # n (son buenas), ?, the rest: as always

    def _act(self, action: Action) -> None:
        """An action made with the player's pad (the gestures the pad takes for it)."""
        human = self.human
        assert human is not None
        self.run.table.last = None
        try:
            code = self.run.mock.act(action)
        except (ValueError, RuntimeError):
            code = self.run.game.refusal(action)
        last = self.run.table.last
        if last is not None:
            self._note(LogEntry(human, last.action, last.code))
            if last.code is None:
                self.next_bot = self.clock() + self.pace
        elif code is not None:
            self._note(LogEntry(human, action, code))
        self._watch()

    def new_game(self) -> None:
        """ "otra": a new game at the same table, the same house rules, once one is won."""
        service = self.run.mock.service
        service.new_game()
        self.held = None
        self.log = []
        self._stack = ()
        self._ended = 0
        self._log_hand = 0
        self.flash = (
            self.text["new_game"].format(
                target=self.run.rules.target, players=self.run.rules.players
            ),
            self.clock() + FLASH_SECONDS,
        )
        self._deal()

    def _all_seats(self) -> None:
        """a: every seat's panel, or why they do not fit."""
        self.all_seats = not self.all_seats
        if not self.all_seats or not self.panels:
            return
        width, height = self._size
        self.lines(width, height)
        n = self.run.rules.players
        if self.flash is not None and self.flash[0].startswith("a: "):
            self.flash = None  # what was said of a smaller terminal
        if self._panel_seats < n:
            per_row = max(1, min(n, 3))
            rows = -(-n // per_row)
            need_w = per_row * (PANEL_WIDTH + PANEL_GAP)
            need_h = rows * PANEL_HEIGHT + 12
            said = self.text["all_no_room"].format(n=n, w=width, h=height, mw=need_w, mh=need_h)
            self.flash = (said, self.clock() + 2 * FLASH_SECONDS)

    def _go_on(self) -> None:
        if self.held is not None and self.run.game.winner is None:
            self.held = None
            self._deal()

    # ------------------------------------------------------------------ the clock

    def tick(self) -> None:
        """Move the table on to now: the service's housekeeping, the bots, the next deal."""
        run = self.run
        now = self.clock()
        if self.failure is not None and self.failure() is not None:
            self.quit = True  # the caller says why, once the screen is given back
            return
        run.mock.pump(0.0)  # table controls dropped by `truco-table control`, link events
        self._watch()
        if self.held is not None:
            if self.human is None and now >= self.held.until and run.game.winner is None:
                self._go_on()
            return
        if run.game.winner is not None or self.paused:
            return
        if run.needs_deal():
            self._deal()
            return
        if now < self.next_bot:
            return
        action = run.bot_step()
        if action is not None:
            self._note(LogEntry(action.seat, action))
            self.next_bot = now + self.pace
            self._watch()

    def _deal(self) -> None:
        if self.run.needs_deal():
            self.run.deal()
            self.next_bot = self.clock() + self.pace
        self._watch()

    def _note(self, entry: LogEntry) -> None:
        self._watch()
        self.log.append(entry)

    def _watch(self) -> None:
        """Notice a new hand (its history starts empty) and a finished one (held)."""
        game = self.run.game
        if game.hand_in_progress and game.hand_number != self._log_hand:
            self._log_hand = game.hand_number
            self.log = []
            self._stack = ()
        stack = game.hand_actions
        if len(stack) < len(self._stack) and stack == self._stack[: len(stack)]:
            for action in reversed(self._stack[len(stack) :]):  # the referee's undo
                self.log.append(LogEntry(action.seat, action, undone=True))
        self._stack = stack
        over = not game.hand_in_progress or game.winner is not None  # (a game won mid-hand)
        if game.hand_number and over and self._ended != game.hand_number:
            self._ended = game.hand_number
            hand = game.hands[-1]
            table = self.run.table
            notes = tuple(table.award_note(hand.number, i) for i in range(len(hand.awards)))
            hold = max(2.0, 5 * self.pace)
            self.held = HandEnd(
                hand.number, hand.awards, notes, self._plays(), game.score, self.clock() + hold
            )

    def _plays(self) -> tuple[PlayBazas, ...]:
        """The bazas of each play of the hand, the player's pica first."""
        game = self.run.game
        plays = [
            PlayBazas(p.pica if game.pica_pica else None, p.order, p.played_bazas, p.baza_results)
            for p in game.plays
        ]
        return tuple(sorted(plays, key=lambda p: self.human not in p.seats))

    # ------------------------------------------------------------------ the screen

    def _who(self, seat: int) -> str:
        if seat == self.human:
            return self.text["you"]
        return self.text["seat"].format(seat=seat)

    def _team_name(self, team: int) -> str:
        if self.human is None:
            return "equipo " + str(team) if self.lang == "es" else f"team {team}"
        ours = team == self.human % 2
        if self.lang == "es":
            return "nosotros" if ours else "ellos"
        return "us" if ours else "them"

    def _say(self, entry: LogEntry) -> str:
        who = self._who(entry.seat)
        yours = entry.seat == self.human
        refused = entry.refusal is not None
        what = (
            "?"
            if entry.action is None
            else say_action(entry.action, self.lang, yours=yours, refused=refused)
        )
        line = f"{who}: {what}"
        if entry.undone:
            return self.text["undone"].format(what=line)
        if entry.refusal is not None:
            why = entry.refusal.message if self.lang == "es" else REFUSALS_EN[entry.refusal]
            line += " → " + self.text["refused"].format(why=why)
        return line

    def _award_line(self, award: Award, note: str | None) -> str:
        reason = REASON_WORDS[self.lang][award.reason]
        if note and self.lang == "en":
            note = NOTES_EN.get(note, note)
        if note:
            reason = f"{reason} ({note})"
        line = f"+{award.points} {self._team_name(award.team)}: {reason}"
        if award.pica is not None:  # a pica-pica hand: which pica scored it
            line += f" [{self._pica_name(award.pica)}]"
        return line

    def _pica_name(self, pica: int) -> str:
        """A pica by its two seats, its mano first: ``vos–3``, ``1–4``."""
        n = self.run.rules.players
        return f"{self._short(pica)}–{self._short((pica + n // 2) % n)}"

    def _pica_of(self, seat: int) -> int | None:
        game = self.run.game
        return game.play_of(seat).pica if game.pica_pica else None

    def _team_label(self, team: int) -> str:
        """A team in a panel's title: its entrant's name in a tournament match."""
        card = self.run.mock.service.match_card
        if card is None:
            return str(team)
        return card.home if team == 0 else card.away

    def _seat_order(self) -> list[int]:
        """The player's seat, the partners, then the others (bots only: seat order)."""
        n = self.run.rules.players
        if self.human is None:
            return list(range(n))
        partner = [s for s in range(n) if s != self.human and s % 2 == self.human % 2]
        others = [s for s in range(n) if s % 2 != self.human % 2]
        return [self.human, *partner, *others]

    def screens(self) -> dict[int, SeatScreen]:
        """Every seat's screen now; each is also sent to that seat's mock display."""
        out: dict[int, SeatScreen] = {}
        for seat, display in sorted(self.run.mock.parts.displays.items()):
            screen = screen_for(self.run.table, seat)
            display.show(render_screen(screen))
            out[seat] = screen
        return out

    def lines(self, width: int, height: int) -> list[tuple[str, str]]:
        """The screen for a ``width`` x ``height`` terminal: (text, style) per row, style
        ``""``, ``"bold"`` or ``"reverse"``.

        What must be seen comes first and always: the score (in numbers and matchsticks),
        the hand, the bazas (wrapped on as many lines as they need), the cards, the end of
        the hand with its points; then, as the height allows, the hand's last calls, each
        seat's texts, the seat panels, more calls; the keys last."""
        t = self.text
        self._size = (width, height)
        min_w, min_h = 40, 12
        if width < min_w or height < min_h:
            said = t["small"].format(w=width, h=height, mw=min_w, mh=min_h)
            return [(line, "bold") for line in textwrap.wrap(said, max(1, width))][:height]
        if self.help:
            pages = self._help_pages(width, height)
            self._help_count = len(pages)
            return pages[min(self.help_page, len(pages) - 1)]
        run, game = self.run, self.run.game
        screens = self.screens()
        live = game.hand_in_progress and game.winner is None  # a hand being played

        def clip(rows: Rows) -> Rows:
            if self.ascii:
                return [(to_ascii(text)[:width], style) for text, style in rows]
            return [(text[:width], style) for text, style in rows]

        # --- the head: title, score, match, the hand
        head: Rows = [(t["title"].format(target=run.rules.target, players=run.rules.players),
                       "bold"), (self._score_line(), "bold")]  # fmt: skip
        card = run.mock.service.match_card  # a tournament match: before and during its game
        if card is not None:
            match = t["match"].format(
                label=card.label, home=card.home, away=card.away, chico=card.chico,
                best_of=card.best_of,
            )  # fmt: skip
            head.append((match, "bold"))
            teams = [
                t["players"].format(team=team, names=", ".join(names))
                for team, names in zip((card.home, card.away), card.players, strict=True)
                if names
            ]
            if teams:
                head.append((" · ".join(teams), ""))
        if game.hand_number:
            hand = game.hands[-1]
            line = t["hand"].format(
                n=hand.number, dealer=self._short(hand.dealer), mano=self._short(hand.mano)
            )
            if game.pica_pica:
                line += " · " + t["pica_pica"]
            elif live and game.turns:
                line += " · " + self._whose(game)
            head.append((line, ""))
            if game.pica_pica and live:  # each pica's turn, the player's first
                picas = []
                for play in self._plays():
                    assert play.pica is not None
                    name = self._pica_name(play.pica)
                    turn = game.turn_of(play.pica)
                    picas.append(
                        t["pica_over"].format(pica=name)
                        if turn is None
                        else t["pica_turn"].format(pica=name, who=self._short(turn))
                    )
                head.append((t["picas"].format(picas=" · ".join(picas)), "bold"))
        elif run.table.phase is Phase.DEALING:
            head.append((t["dealing"], ""))

        # --- the play: the finished bazas (wrapped), the baza in play, the cards, notices
        play_rows: Rows = []
        end = self.held
        for play in end.plays if end is not None else self._plays():
            if play.bazas:
                parts = []
                for i, cards in enumerate(play.bazas):
                    result = play.results[i] if i < len(play.results) else None
                    played = " ".join(f"{self._short(s)}:{c}" for s, c in cards)
                    parts.append(f"{i + 1}ª {played} ({self._baza_winner(cards, result)})")
                first = t["bazas"].format(bazas="")
                if play.pica is not None:
                    first += f"{self._pica_name(play.pica)}: "
                parts[0] = first + parts[0]
                for i, line in enumerate(self._flow(parts, width - 2, 99)):
                    play_rows.append((line if i == 0 else "  " + line, ""))
        if live and game.pica_pica:
            picas = []
            for p in sorted(game.plays, key=lambda p: self.human not in p.order):
                on_table = " ".join(f"{self._short(s)}:{c}" for s, c in p.table_cards) or "—"
                name = self._pica_name(p.order[0])  # its mano
                picas.append(t["pica_table"].format(pica=name, n=p.baza + 1, cards=on_table))
            play_rows.append((t["table_picas"].format(picas=" · ".join(picas)), ""))
        elif live:
            (whole,) = game.plays  # the hand's one play
            on_table = " ".join(f"{self._short(s)}:{c}" for s, c in whole.table_cards) or "—"
            play_rows.append((t["table"].format(n=whole.baza + 1, cards=on_table), ""))
        if self.human is not None:
            hand_cards = self._human_cards()
            if hand_cards is None:
                play_rows.append((t["cards"].format(cards=t["cards_unknown"]), ""))
            else:
                shown_cards = "  ".join(f"[{i + 1}] {c}" for i, c in enumerate(hand_cards))
                play_rows.append((t["cards"].format(cards=shown_cards or "—"), ""))
            message = run.table.message(self.human)
            if message is not None and message.refusal:
                said = notice_text(message.notice, self.human).upper()
                play_rows.append((f" {said} ", "reverse"))
            if self.human in run.table.show_requests():
                play_rows.append((t["show_now"], "reverse"))
        if self.human is not None and self._my_telling() is not None:
            parts = [t["tell_prompt"].format(entry=(self.entry or "") + "_"), t["tell_keys"]]
            telling = self._my_telling()
            assert telling is not None
            told = [p for _, p in telling.declarations if p is not None]
            if told:
                parts.append(t["tell_best"].format(best=max(told)))
            own = self._own_points()
            if own is not None:
                what = "flor" if telling.kind == "flor" else "envido"
                parts.append(t["tell_arrows"].format(what=what, own=own))
            parts.append(t["tell_buenas"])
            play_rows += [(line, "reverse") for line in self._flow(parts, width, 3)]
        if self.asking_quit:
            for said, style in ((t["quit_ask"], "reverse"), (self.resume_hint(), "bold")):
                play_rows += [(line, style) for line in textwrap.wrap(said, max(10, width))]
        if self.flash is not None:
            if self.clock() < self.flash[1]:
                play_rows.append((self.flash[0], "reverse"))
            else:
                self.flash = None

        # --- the end: of the game, of the hand with its points
        end_rows: Rows = []
        if game.winner is not None:
            end_rows.append((self._game_over() + " · " + t["quit_hint"], "reverse"))
        if end is not None:
            end_rows.append((t["end_title"].format(n=end.number), "reverse"))
            for award, note in zip(end.awards, end.notes, strict=True):
                end_rows.append(("  " + self._award_line(award, note), "bold"))
            if not end.awards:
                end_rows.append(("  " + t["no_points"], ""))
            if game.winner is None:
                if self.human is None:
                    go_on = t["demo_go_on"].format(s=max(0.0, end.until - self.clock()))
                    end_rows.append((go_on, ""))
                else:
                    end_rows.append((t["go_on"], "bold"))
        if self.paused:
            end_rows.append((t["paused"], "reverse"))

        # --- what the height allows, in this order: the shortest keys, the hand's last
        # calls, each seat's texts, the whole list of keys, the seat panels, more calls
        keys_text = t["keys_demo"] if self.human is None else t["keys"]
        keys = [(line, "") for line in self._flow(t["keys_short"].split(" · "), width, 1)]
        budget = height - len(head) - len(play_rows) - len(end_rows) - len(keys)
        seats = self._seat_order()
        calls_rows = min(max(0, budget), 3 if end is not None else 2)  # a header, the last
        budget -= calls_rows
        text_lines = min(len(seats), max(0, budget))
        budget -= text_lines
        hidden_note = text_lines < len(seats)  # said, never dropped without a word
        if hidden_note:
            if calls_rows > 0:
                calls_rows -= 1
            elif text_lines > 0:
                text_lines -= 1
            else:
                end_rows = end_rows[:-1] if len(end_rows) > 1 else end_rows
        every_key = [(line, "") for line in self._flow(keys_text.split(" · "), width, 99)]
        if budget >= len(every_key) - len(keys):
            budget -= len(every_key) - len(keys)
            keys = every_key
        per_row = max(1, (width + PANEL_GAP) // (PANEL_WIDTH + PANEL_GAP))
        panel_rows = 0
        max_rows = -(-len(seats) // per_row) if self.all_seats or self.human is None else 1
        while self.panels and width >= PANEL_WIDTH and panel_rows < max_rows:
            group = len(seats[panel_rows * per_row : (panel_rows + 1) * per_row])
            cost = PANEL_HEIGHT - group  # the panels' rows, less the seats' text lines
            if text_lines < len(seats) or budget < cost:
                break
            budget -= cost
            panel_rows += 1
        calls_rows += max(0, budget)
        shown = seats[: panel_rows * per_row]
        seat_rows: Rows = []
        for row in range(0, len(shown), per_row):
            seat_rows += [
                (line, "") for line in self._panel_row(shown[row : row + per_row], screens)
            ]
        for seat in seats[len(shown) : text_lines]:  # no room for a panel: its texts on one line
            texts = " │ ".join(x for x in screen_texts(screens[seat]) if x)
            style = "reverse" if screens[seat].refusal else ""
            seat_rows.append((f"[{self._who(seat)}] {texts}", style))
        self._panel_seats = len(shown)
        if hidden_note:
            missing = len(seats) - max(text_lines, len(shown))
            seat_rows.append((t["seats_hidden"].format(n=missing), "bold"))
        calls: Rows = []
        if calls_rows > 0:
            calls.append((t["calls"], ""))
            calls += [("  " + line, "") for line in self._calls(width - 2, calls_rows - 1)]
        # at the hand's end: its points, then the calls that led there
        return clip(head + seat_rows + play_rows + end_rows + calls + keys)[:height]

    def _help_pages(self, width: int, height: int) -> list[Rows]:
        """The help wrapped to the width (each line's indent kept), in pages of the
        height: the last row of a page that is not the last says more follows."""
        rows: Rows = []
        for line in self.text["help"].split("\n"):
            indent = len(line) - len(line.lstrip(" "))
            wrapped = textwrap.wrap(
                line, max(10, width - 1), subsequent_indent=" " * (indent + 2)
            ) or [""]
            rows += [(w, "") for w in wrapped]
        per_page = max(1, height - 1)
        if len(rows) <= height:
            return [rows]
        pages: list[Rows] = []
        for start in range(0, len(rows), per_page):
            page = rows[start : start + per_page]
            if start + per_page < len(rows):
                page = [*page, (self.text["help_more"], "reverse")]
            pages.append(page)
        return pages

    def _score_line(self) -> str:
        """The score in numbers and in matchsticks (one square of five a stick each)."""
        a, b = self.run.game.score
        target = self.run.rules.target
        if self.human is None:
            return self.text["score_demo"].format(
                a=self._sticks(a, target), b=self._sticks(b, target)
            )
        team = self.human % 2
        ours, theirs = (a, b)[team], (a, b)[1 - team]
        return self.text["score_teams"].format(
            ours=self._sticks(ours, target), theirs=self._sticks(theirs, target)
        )

    def _sticks(self, points: int, target: int) -> str:
        """``17 ⧄⧄⧄ ┌``: the points, then squares of five (│ ┌ ⊓ □ ⧄ as the sticks are
        laid), the malas apart from the buenas; only the number where the terminal
        writes no such signs."""
        if points <= 0 or self.ascii:
            return str(points)
        shown = min(points, target)
        half = 15
        groups = []
        for start in range(0, shown, half):
            n = min(half, shown - start)
            groups.append(STICKS[5] * (n // 5) + (STICKS[n % 5] if n % 5 else ""))
        more = f"+{points - target}" if points > target else ""
        return f"{points} {' '.join(groups)}{more}"

    def _game_over(self) -> str:
        """Who won, as the player says it: "ganamos nosotros", "ganaron ellos"."""
        game, t = self.run.game, self.text
        a, b = game.score
        assert game.winner is not None
        if self.human is None:
            return t["game_over"].format(team=game.winner, a=a, b=b)
        team = self.human % 2
        ours, theirs = (a, b)[team], (a, b)[1 - team]
        key = "game_won" if game.winner == team else "game_lost"
        return t[key].format(ours=ours, theirs=theirs)

    def _calls(self, width: int, rows: int) -> list[str]:
        """The hand's calls on at most ``rows`` lines; in a pica-pica hand each pica's on
        lines of its own, headed by the pica, the player's first."""
        game = self.run.game
        if not self.log:
            return [self.text["no_calls"]]
        if not game.pica_pica:
            return self._flow(self._said(self.log), width, rows)
        if rows <= 0:
            return []
        flows: list[tuple[str, list[str]]] = []  # each pica's lines, the player's first
        for play in self._plays():
            assert play.pica is not None
            said = self._said([e for e in self.log if self._pica_of(e.seat) == play.pica])
            if said:
                name = f"[{self._pica_name(play.pica)}]"
                said[0] = f"{name} {said[0]}"
                flows.append((name, self._flow(said, width - len(name) - 1, 99)))
        # short of rows: each pica's last line, then the player's pica's, then the others'
        take = [0] * len(flows)
        left = rows
        for i in range(len(flows)):
            if left:
                take[i], left = 1, left - 1
        for i, (_, lines) in enumerate(flows):
            more = min(len(lines) - take[i], left)
            take[i], left = take[i] + more, left - more
        out: list[str] = []
        for (name, lines), n in zip(flows, take, strict=True):
            tail = lines[len(lines) - n :] if n else []
            if tail and not tail[0].startswith(name):
                tail[0] = f"{name} … {tail[0]}"  # the pica's earlier calls left out
            out += tail
        return out

    def _said(self, entries: Sequence[LogEntry]) -> list[str]:
        """The history in words, a refusal repeated in a row said once: ``... x12``."""
        out: list[str] = []
        counts: list[int] = []
        for entry in entries:
            line = self._say(entry)
            if out and entry.refusal is not None and out[-1] == line:
                counts[-1] += 1
            else:
                out.append(line)
                counts.append(1)
        return [line if n == 1 else f"{line} x{n}" for line, n in zip(out, counts, strict=True)]

    def _baza_winner(self, cards: Sequence[tuple[int, Card]], team: int | None) -> str:
        if team is None:
            return self.text["parda"]
        best = max((c.strength, s) for s, c in cards if s % 2 == team)
        if best[1] == self.human:
            return self.text["baza_you"]
        return self.text["baza_won"].format(seat=self._short(best[1]))

    def _whose(self, game: Game) -> str:
        """Who is awaited: the team that must answer a call (a call is answered by the
        team), else whose turn it is to play."""
        human = self.human
        t = self.text
        answer: int | None = None
        seat = game.turns[0]
        view = game.view(seat)
        if view.telling is None:
            pend = [view.envido_pending, view.truco_pending[1] if view.truco_pending else None]
            for caller in pend:
                if caller is not None:
                    answer = 1 - caller
                    break
            if answer is None and view.flor_pending is not None:
                answer = view.flor_pending
        if answer is None:
            return t["turn"].format(who=self._who(seat))
        if game.players == 2 or game.pica_pica:
            answerer = next(s for s in game.play_of(seat).order if s % 2 == answer)
            if answerer == human:
                return t["answer_you"]
            return t["answer_seat"].format(seat=answerer)
        if human is None:
            team = f"equipo {answer}" if self.lang == "es" else f"team {answer}"
            return t["answer_seat"].format(seat=team)
        return t["answer_us"] if answer == human % 2 else t["answer_them"]

    def _short(self, seat: int) -> str:
        return self.text["you"] if seat == self.human else str(seat)

    def _human_cards(self) -> tuple[Card, ...] | None:
        return self.run.human_cards()

    def _panel_row(self, seats: Sequence[int], screens: dict[int, SeatScreen]) -> list[str]:
        blocks = []
        titles = []
        for seat in seats:
            image = self.run.mock.parts.displays[seat].image
            blocks.append(self._cache.braille(seat, image))
            key = "panel_you" if seat == self.human else "panel"
            titles.append(self.text[key].format(seat=seat, team=self._team_label(seat % 2)))
        width = len(blocks[0][0])
        gap = " " * PANEL_GAP
        rows = [gap.join(f"┌{title[:width].center(width, '─')}┐" for title in titles)]
        for i in range(len(blocks[0])):
            rows.append(gap.join(f"│{block[i]}│" for block in blocks))
        rows.append(gap.join(f"└{'─' * width}┘" for _ in blocks))
        # what each panel says, in letters one can read at a glance
        said = [" · ".join(x for x in _said(screens[s]) if x) for s in seats]
        rows.append(gap.join(f" {text[: width + 1]:<{width + 1}}" for text in said))
        return rows

    @staticmethod
    def _flow(items: Sequence[str], width: int, rows: int) -> list[str]:
        """Items one after another on as few lines as ``width`` allows; the last ``rows``."""
        lines: list[str] = []
        current = ""
        for item in items:
            trial = f"{current} · {item}" if current else item
            if len(trial) <= width - 2 or not current:
                current = trial
            else:
                lines.append(current)
                current = item
        if current:
            lines.append(current)
        return lines[-rows:] if rows > 0 else []


# ---------------------------------------------------------------------------- curses


def _said(screen: SeatScreen) -> tuple[str, ...]:
    """The texts under a panel: a banner whole, else the two lines (not the strip)."""
    content = screen_content(screen)
    return content.banner or content.texts[1:]


def unicode_terminal() -> bool:
    """Whether the terminal's locale (``LANG``, ``LC_ALL``, ``LC_CTYPE``) writes the braille
    panels and accents: under ``LC_ALL=C`` it does not (Python's own UTF-8 mode aside)."""
    try:
        codeset = locale.nl_langinfo(locale.CODESET)
    except (AttributeError, ValueError):  # no nl_langinfo on this system
        codeset = locale.getpreferredencoding(False)
    return codeset.lower().replace("-", "") in ("utf8", "utf8mb4")


def _settle(table: TerminalTable, pace: float, out: TextIO) -> None:
    """The bots act and the dealer deals until the player has something to do (or the
    hand's end waits for them); ``pace`` seconds between actions on a terminal."""
    run = table.run
    table.pace = 0.0
    for _ in range(100_000):
        before = (len(run.game.hand_actions), run.game.hand_number, table.held is None)
        table.tick()
        if (len(run.game.hand_actions), run.game.hand_number, table.held is None) == before:
            return
        if pace and out.isatty():
            time.sleep(pace)


def line_mode(table: TerminalTable, inp: TextIO, out: TextIO, *, pace: float = 0.0) -> int:
    """The table one line at a time: the screen (without panels) written after each line
    of keys, for a terminal without cursor addressing or input that is not one; the exit
    status."""
    table.panels = False
    t = table.text
    width = 100
    out.write(t["line_help"] + "\n")
    while True:
        _settle(table, pace, out)
        screen = table.lines(width, 10_000)
        out.write("\n" + "\n".join(text for text, _ in screen if text) + "\n")
        if table.quit:
            return 0
        over = table.run.game.winner is not None
        if over:
            out.write(t["game_end_line"] + "\n")
        out.write("> ")
        out.flush()
        line = inp.readline()
        if not line:
            return 0
        word = line.strip()
        if over:  # the game is won: another one, or any other line leaves
            if word.lower() in ("o", "otra", "another"):
                table.new_game()
                continue
            return 0
        if word.lower() in ("x", "salir", "quit", "exit"):
            if not table.in_play():
                return 0
            out.write(t["quit_ask"] + "\n> ")  # asked first: the game goes on
            out.flush()
            if inp.readline().strip().lower() in ("s", "si", "sí", "x", "yes", "y"):
                out.write(table.resume_hint() + "\n")
                return 0
            continue
        if word.isdigit() and table.telling_mine():
            for ch in word:
                table.key(ch)
            table.key("\n")
            continue
        if table.held is not None or not word:
            table.key("\n")  # the hand's end was written: any line goes on
            if not word:
                continue
            _settle(table, pace, out)
        try:
            card = Card.from_str(word)
        except ValueError:
            card = None
        if card is not None and table.human is not None:
            table.run.mock.tap(table.human, card)
            continue
        if any(ch not in KEYS and ch.lower() not in KEYS and ch not in "123s!a?" for ch in word):
            out.write(t["line_unknown"].format(word=word) + "\n")
            continue
        for ch in word:
            table.key(ch)
        if table.help:
            out.write(t["help"] + "\n")
            table.help = False


def cursor_addressable() -> bool:
    """Whether the terminal (``TERM``) can move the cursor: without it (``TERM=dumb``, no
    ``TERM``) the full screen cannot be drawn."""
    term = os.environ.get("TERM", "")
    if not term or term in ("dumb", "unknown"):
        return False
    try:
        curses.setupterm(term, sys.__stdout__.fileno() if sys.__stdout__ else 1)
    except (curses.error, OSError, ValueError):
        return False
    return curses.tigetstr("cup") is not None


def play(table: TerminalTable) -> int:
    """Run ``table`` in the terminal (curses) until the player quits; the exit status."""
    locale.setlocale(locale.LC_ALL, "")
    table.ascii = table.ascii or not unicode_terminal()
    # (the caller holds the service's log while the screen is the table's: run.py)
    return int(curses.wrapper(_loop, table))


def _bracketed_paste(on: bool) -> None:
    """Ask the terminal to mark a paste (ESC [ ? 2004 h), or to stop; a terminal that
    does not know the mode ignores it."""
    out = sys.__stdout__
    if out is None:
        return
    with contextlib.suppress(OSError, ValueError):
        os.write(out.fileno(), b"\x1b[?2004h" if on else b"\x1b[?2004l")


def _follow_size(stdscr: curses.window) -> None:
    """Take the terminal's size now, even if its SIGWINCH came before curses listened."""
    try:
        size = os.get_terminal_size(sys.__stdout__.fileno() if sys.__stdout__ else 1)
    except (OSError, ValueError):
        return
    if (size.lines, size.columns) != stdscr.getmaxyx():
        with contextlib.suppress(curses.error):
            curses.resizeterm(size.lines, size.columns)


def _loop(stdscr: curses.window, table: TerminalTable) -> int:
    with contextlib.suppress(curses.error):
        curses.curs_set(0)
    stdscr.timeout(int(FRAME_SECONDS * 1000))
    styles = {"": curses.A_NORMAL, "bold": curses.A_BOLD, "reverse": curses.A_REVERSE}
    _bracketed_paste(True)
    try:
        return _frames(stdscr, table, styles)
    finally:
        _bracketed_paste(False)


def _frames(stdscr: curses.window, table: TerminalTable, styles: dict[str, int]) -> int:
    last_frame = 0.0
    dirty = True
    rows = 0
    table.tick()  # the first deal read before the first frame: the cards a key plays shown
    while not table.quit:
        now = time.monotonic()
        if dirty or now - last_frame >= FRAME_SECONDS:
            _follow_size(stdscr)
            height, width = stdscr.getmaxyx()
            stdscr.erase()
            lines = table.lines(width, height)
            if len(lines) != rows:  # lines came or went: repaint whole, not by shifting
                stdscr.clearok(True)  # (tmux lost the lines below one curses inserted)
                rows = len(lines)
            for y, (text, style) in enumerate(lines):
                with contextlib.suppress(curses.error):  # the bottom-right cell
                    stdscr.addnstr(y, 0, text, max(0, width - 1), styles[style])
            stdscr.refresh()
            last_frame, dirty = now, False
        for key in _keys(stdscr):
            if key == curses.KEY_RESIZE:
                curses.update_lines_cols()
                dirty = True
            elif key in (curses.KEY_UP, curses.KEY_DOWN):
                table.arrow(1 if key == curses.KEY_UP else -1)
                dirty = True
            elif key in (curses.KEY_BACKSPACE, curses.KEY_ENTER):
                table.feed("\x7f" if key == curses.KEY_BACKSPACE else "\n")
                dirty = True
            elif isinstance(key, str):
                table.feed(key)
                dirty = True
        table.tick()
    return 0


def _keys(stdscr: curses.window) -> list[str | int]:
    """The keys typed within a frame: the first waited for, then all that already came
    (a paste is read whole before the next frame is drawn)."""
    keys: list[str | int] = []
    stdscr.timeout(int(FRAME_SECONDS * 1000))
    try:
        while len(keys) < 4096:
            keys.append(stdscr.get_wch())
            stdscr.timeout(0)
    except curses.error:  # no more keys
        pass
    finally:
        stdscr.timeout(int(FRAME_SECONDS * 1000))
    return keys
