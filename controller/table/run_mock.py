"""``truco-table run --mock``: a playable table in the terminal, on mock hardware.

The mock dealer shuffles (seeded) and deals tagged cards; the cards are tapped on the
seats' readers as the table is set to read the deal. You play one seat with the keyboard
(its eight buttons and its card reader); bots play the other seats through their own
pads and readers. Every seat's display is drawn in the terminal from the very images
sent to the (mock) OLEDs.

``--script FILE`` (or ``-`` for standard input) plays transcript lines instead of the
keyboard: actions (``0 truco``, ``1 play 7E``), and optionally ``hand``, ``deal`` and
``dealer`` lines to fix a deal; a hand is dealt by the mock dealer whenever an action
comes and no hand is in progress. ``--bots`` then lets the bots finish the game. The
result is printed as ``replay --json`` prints it.
"""

from __future__ import annotations

import contextlib
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ..engine import CARDS, Action, Card, Game, HouseRules, RefusalCode
from ..render.screen import render_screen
from ..render.terminal import braille, side_by_side
from ..transcript import (
    ActionStmt,
    DealerStmt,
    DealStmt,
    HandStmt,
    Rejected,
    ReplayResult,
    ScoreStmt,
    TableStmt,
    TranscriptError,
    dumps_result,
    parse,
    replay,
    result_json,
)
from .bots import Bot
from .controls import Button
from .mock_table import MockTable
from .notify import Notifier
from .screens import screen_for
from .table import DealReading, Phase, Table

__all__ = ["MockRun", "main_mock"]

KEYS = {
    "t": Button.TRUCO,
    "e": Button.ENVIDO,
    "r": Button.REAL_ENVIDO,
    "f": Button.FALTA_ENVIDO,
    "l": Button.FLOR,
    "q": Button.QUIERO,
    "n": Button.NO_QUIERO,
    "m": Button.MAZO,
}

HELP = """\
Keys (then Enter): t truco · e envido · r real envido · f falta envido · l flor
                   q quiero · n no quiero · m mazo    (capital letter = hold the button)
                   1 2 3 tap the 1st/2nd/3rd card in your hand · or a card name (7E)
                   a show all seats' displays · ? help · x quit
While points are told: e +10, r +1, f -1, q declares the number shown, n son buenas.
Hold a button (capital) for its menu: press it again to move, q to choose, n to cancel.\
"""


class MockRun:
    """The mock table with its dealer and bots."""

    def __init__(
        self,
        rules: HouseRules,
        *,
        seed: int = 0,
        human: int | None = 0,
        deal_reading: DealReading = DealReading.SEATS,
        score: tuple[int, int] = (0, 0),
        on_record: Callable[[str], None] | None = None,
        state_dir: Path | None = None,
        notifier: Notifier | None = None,
        watchdog_s: float | None = None,
        mock: MockTable | None = None,
    ) -> None:
        """``mock``: the mock table to play on (one built with other displays), instead of
        one made from the other arguments."""
        self.rules = rules
        self.seed = seed
        self.human = human
        self.mock = mock or MockTable(
            rules,
            seed=seed,
            deal_reading=deal_reading,
            game=None if state_dir is not None else Game(rules, score=score),
            on_record=on_record,
            state_dir=state_dir,
            notifier=notifier,
            watchdog_s=watchdog_s,
        )
        self.rules = self.game.rules
        self.hands: dict[int, tuple[Card, ...]] = {}
        self.bots = {
            s: Bot(
                s,
                random.Random(seed * 1009 + s),
                answers=human is None or s % 2 != human % 2,
            )
            for s in range(rules.players)
            if s != human
        }

    @property
    def game(self) -> Game:
        return self.mock.game

    @property
    def table(self) -> Table:
        return self.mock.table

    def close(self) -> None:
        self.mock.close()

    # ------------------------------------------------------------------ the dealer

    def deal(
        self, hands: dict[int, tuple[Card, ...]] | None = None, dealer: int | None = None
    ) -> None:
        """Deal the next hand (shuffled unless ``hands`` is given) and read it."""
        if hands is None:
            # one generator per hand: a restarted table deals the same hand again
            rng = random.Random(f"{self.seed}-{self.game.hand_number + 1}")
            cards = rng.sample(CARDS, 3 * self.rules.players)
            hands = {s: tuple(cards[3 * s : 3 * s + 3]) for s in range(self.rules.players)}
        self.hands = dict(hands)
        self.mock.deal(hands, dealer)

    def needs_deal(self) -> bool:
        return self.game.winner is None and self.table.phase in (Phase.WAITING, Phase.DEALING)

    # ------------------------------------------------------------------ bots

    def bot_step(self) -> Action | None:
        """Let the first bot that wants to act do so; returns its action."""
        if self.game.winner is not None or not self.game.hand_in_progress:
            return None
        n = self.rules.players
        start = self.game.turn or 0
        for i in range(n):
            seat = (start + i) % n
            bot = self.bots.get(seat)
            if bot is None:
                continue
            action = bot.choose(self.game, self.hands.get(seat))
            if action is not None:
                self.mock.act(action)
                return action
        return None

    def play_out(self, max_actions: int = 100000) -> None:
        """Bots play every seat until the game is won."""
        for _ in range(max_actions):
            if self.game.winner is not None:
                return
            if self.needs_deal():
                self.deal()
                continue
            if self.bot_step() is None:
                raise RuntimeError("the bots are stuck")  # a bug: a live hand always moves

    # ------------------------------------------------------------------ the screen

    def render(self, all_seats: bool = False) -> list[str]:
        for seat, display in enumerate(self.mock.seats.displays):
            display.show(render_screen(screen_for(self.table, seat)))
        seats = list(range(self.rules.players))
        if self.human is not None and not all_seats:
            seats = [self.human]
        lines: list[str] = []
        for row in range(0, len(seats), 3):
            group = seats[row : row + 3]
            blocks = [braille(self.mock.seats.displays[s].image) for s in group]
            titles = [
                f" seat {s}" + (" (you)" if s == self.human else "") + f" team {s % 2} "
                for s in group
            ]
            lines.extend(side_by_side(blocks, titles))
        if self.human is not None:
            hand = self.game.cards_in_hand(self.human)
            if hand is None:
                held = self.hands.get(self.human, ())
                seen = set(self.game.seen_cards(self.human))
                hand = tuple(c for c in held if c not in seen)
            on_table = " ".join(f"{s}:{c}" for s, c in self.game.table_cards) or "-"
            lines.append(
                f"Your cards: {'  '.join(f'[{i + 1}] {c}' for i, c in enumerate(hand)) or '-'}"
                f"    On the table: {on_table}"
            )
        return lines

    def human_card(self, index: int) -> Card | None:
        if self.human is None:
            return None
        hand = self.game.cards_in_hand(self.human)
        if hand is None:
            seen = set(self.game.seen_cards(self.human))
            hand = tuple(c for c in self.hands.get(self.human, ()) if c not in seen)
        return hand[index] if 0 <= index < len(hand) else None


def _interactive(run: MockRun, inp: TextIO, out: TextIO, pace: float) -> int:
    clear = "\033[H\033[2J" if out.isatty() else ""
    all_seats = False
    out.write(HELP + "\n")
    while True:
        if run.game.winner is not None:
            out.write(clear + "\n".join(run.render(True)) + "\n")
            out.write(
                f"Game over: team {run.game.winner} wins {run.game.score[0]}-{run.game.score[1]}\n"
            )
            return 0
        if run.needs_deal():
            run.deal()
            continue
        action = run.bot_step()
        if action is not None:
            out.write(clear + "\n".join(run.render(all_seats)) + f"\nseat {action}\n")
            out.flush()
            time.sleep(pace)
            continue
        out.write(clear + "\n".join(run.render(all_seats)) + "\n> ")
        out.flush()
        line = inp.readline()
        if not line:
            return 0
        word = line.strip()
        assert run.human is not None
        if word in ("x", "quit", "exit"):
            return 0
        if word == "?":
            out.write(HELP + "\n")
        elif word == "a":
            all_seats = not all_seats
        elif word.lower() in KEYS and len(word) == 1:
            button = KEYS[word.lower()]
            if word.isupper():
                run.mock.hold(run.human, button)
            else:
                run.mock.press(run.human, button)
        elif word in ("1", "2", "3"):
            card = run.human_card(int(word) - 1)
            if card is not None:
                run.mock.tap(run.human, card)
        else:
            try:
                card = Card.from_str(word)
            except ValueError:
                out.write(f"? {word!r}: type ? for the keys\n")
            else:
                run.mock.tap(run.human, card)


def _scripted(run: MockRun, text: str, bots: bool, out: TextIO) -> int:
    """Play a script through the mock hardware; with a restored game (``--state``), the
    script's statements already in the record are skipped, so a restarted table goes on
    where it stopped."""
    statements = parse(text)
    rejected: list[Rejected] = []
    done_actions = [a for _, _, actions in run.game.history() for a in actions]
    done_hands = run.game.hand_number
    script_hands = 0
    skipped = 0
    deal: dict[int, tuple[Card, ...]] | None = None  # a `hand` whose deal is being read
    dealer: int | None = None

    def flush() -> None:
        nonlocal deal, dealer
        if deal is not None:
            if script_hands > done_hands and run.needs_deal():
                run.deal(deal or None, dealer)
            deal, dealer = None, None

    for st in statements:
        if isinstance(st, TableStmt | ScoreStmt):
            continue
        if isinstance(st, DealerStmt):
            flush()
            dealer = st.seat
        elif isinstance(st, HandStmt):
            flush()
            script_hands += 1
            deal = {}
        elif isinstance(st, DealStmt):
            if deal is not None:
                deal[st.seat] = st.cards
        elif isinstance(st, ActionStmt):
            if skipped < len(done_actions):
                if done_actions[skipped] == st.action:
                    skipped += 1
                continue  # played before the restart (or refused then)
            flush()
            if run.needs_deal():
                run.deal(None, dealer)
                dealer = None
            code: RefusalCode | None = run.mock.act(st.action)
            if code is not None:
                rejected.append(Rejected(st.line, st.action.seat, st.action.text, code))
    flush()
    if bots:
        run.play_out()
    result = ReplayResult(run.game, rejected)
    out.write(dumps_result(result_json(result)) + "\n")
    return 0


def main_mock(
    rules: HouseRules,
    *,
    seed: int,
    human: int | None,
    script: str | None,
    bots: bool,
    deal_reading: DealReading,
    pace: float,
    score: tuple[int, int] = (0, 0),
    record: str | None = None,
    state_dir: Path | None = None,
    serve: bool = False,
) -> int:
    """Run the mock table; returns the exit status."""
    from .daemon import configure_logging, stop_on_signals, watchdog_interval
    from .store import GameStore

    if state_dir is not None and script is not None:
        store = GameStore(state_dir)
        if not store.path.exists() and store.archived():
            # the scripted game already ended before a restart: report it
            last = store.archived()[-1]
            result = replay(parse(last.read_text(encoding="utf-8")))
            sys.stdout.write(dumps_result(result_json(result)) + "\n")
            return 0
    record_file: TextIO | None = None
    if record is not None:
        record_file = open(record, "w", encoding="utf-8")  # noqa: SIM115 - closed below
        record_file.write(rules.to_line() + "\n")
        if score != (0, 0):
            record_file.write(f"score {score[0]} {score[1]}\n")

    def on_record(line: str) -> None:
        if record_file is not None:
            record_file.write(line + "\n")
            record_file.flush()

    def make(who: int | None) -> MockRun:
        return MockRun(
            rules,
            seed=seed,
            human=who,
            deal_reading=deal_reading,
            score=score,
            on_record=on_record,
            state_dir=state_dir,
            notifier=Notifier.from_environment(),
            watchdog_s=watchdog_interval(),
        )

    try:
        if serve:
            configure_logging()
            stop = stop_on_signals()
            run = make(None)
            try:
                run.mock.service.ready()
                run.mock.service.run(stop.is_set)
            finally:
                run.close()
            return 0
        if script is not None:
            if script == "-":
                text = sys.stdin.read()
            else:
                with open(script, encoding="utf-8") as f:
                    text = f.read()
            run = make(None)
            try:
                return _scripted(run, text, bots, sys.stdout)
            except TranscriptError as e:
                print(f"{script}:{e.line}: {e.message}", file=sys.stderr)
                return 2
            finally:
                run.close()
        run = make(human)
        try:
            if human is None:
                run.play_out()
                print("\n".join(run.render(True)))
                print(json.dumps({"score": list(run.game.score), "winner": run.game.winner}))
                return 0
            with contextlib.suppress(KeyboardInterrupt):
                return _interactive(run, sys.stdin, sys.stdout, pace)
            return 0
        finally:
            run.close()
    except OSError as e:
        print(f"truco-table: {e}", file=sys.stderr)
        return 2
    finally:
        if record_file is not None:
            record_file.close()
