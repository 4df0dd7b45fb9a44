"""The mock table with its dealer and bots (:class:`MockRun`), as ``truco-table run
--mock`` (:mod:`controller.cli.run`), the benchmarks and the tournament demo use it.

The mock dealer shuffles (seeded) and deals tagged cards; the cards are tapped on the
seats' readers as the table is set to read the deal. Bots play the seats nobody plays
through their own pads and readers. Every seat's display is drawn from the very images
sent to the (mock) OLEDs.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from ..engine import CARDS, Action, Card, Game, HouseRules
from ..render.screen import render_screen
from ..render.terminal import braille, side_by_side
from .bots import BasicBot, Bot, Signals, flor_due, make_bot
from .mock_table import MockTable
from .notify import Notifier
from .screens import screen_for
from .table import DealReading, Phase, Table

__all__ = ["MockRun"]


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
        bot_level: str = "normal",
    ) -> None:
        """``mock``: the mock table to play on (one built with other displays), instead of
        one made from the other arguments; ``bot_level``: how the bots play (``facil``,
        ``normal``, ``dificil``: :func:`controller.table.bots.make_bot`)."""
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
        #: each team's señas (a bot's partners read its own cards' signs, never a card)
        self.signals = (Signals(), Signals())
        self.bots: dict[int, Bot | BasicBot] = {
            s: make_bot(
                bot_level,
                s,
                random.Random(seed * 1009 + s),
                answers=human is None or s % 2 != human % 2,
                signals=self.signals[s % 2],
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
        for seat, bot in self.bots.items():
            if isinstance(bot, Bot) and seat in self.hands:
                bot.look(self.game, self.hands[seat])  # its señas to its partners

    def needs_deal(self) -> bool:
        return self.game.winner is None and self.table.phase in (Phase.WAITING, Phase.DEALING)

    # ------------------------------------------------------------------ bots

    def bot_step(self) -> Action | None:
        """Let the first bot that wants to act do so; returns its action."""
        if self.game.winner is not None or not self.game.hand_in_progress:
            return None
        n = self.rules.players
        for seat, player in self.bots.items():  # a claim to prove first: the hand may end
            if isinstance(player, Bot):
                proof = player.due_proof(self.game, self.hands.get(seat))
                if proof is not None:
                    self.mock.act(proof)
                    return proof
        for seat in self.bots:  # a flor is announced the moment it may be
            flor = flor_due(self.game, seat, self.hands.get(seat))
            if flor is not None:
                self.mock.act(flor)
                return flor
        start = next(iter(self.game.turns), 0)  # a seat whose turn it is (one per pica)
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
        for seat, display in sorted(self.mock.parts.displays.items()):
            display.show(render_screen(screen_for(self.table, seat)))
        seats = list(range(self.rules.players))
        if self.human is not None and not all_seats:
            seats = [self.human]
        lines: list[str] = []
        for row in range(0, len(seats), 3):
            group = seats[row : row + 3]
            blocks = [braille(self.mock.parts.displays[s].image) for s in group]
            titles = [
                f" seat {s}" + (" (you)" if s == self.human else "") + f" team {s % 2} "
                for s in group
            ]
            lines.extend(side_by_side(blocks, titles))
        if self.human is not None:
            hand = self.human_cards() or ()
            play = self.game.play_of(self.human)  # the player's pica, in a pica-pica hand
            on_table = " ".join(f"{s}:{c}" for s, c in play.table_cards) or "-"
            lines.append(
                f"Your cards: {'  '.join(f'[{i + 1}] {c}' for i, c in enumerate(hand)) or '-'}"
                f"    On the table: {on_table}"
            )
        return lines

    def played_by(self, seat: int) -> tuple[Card, ...]:
        """The cards ``seat`` has played this hand (in its pica, in a pica-pica hand): a
        card only shown (to prove a tanto) is not among them, it is still to play."""
        play = self.game.play_of(seat)
        bazas = (*play.played_bazas, play.table_cards)
        return tuple(card for baza in bazas for s, card in baza if s == seat)

    def human_cards(self) -> tuple[Card, ...] | None:
        """The cards the player still holds: as the table read them, else the dealt ones
        not played yet (shown ones included); ``None`` if nobody knows them."""
        if self.human is None:
            return None
        hand = self.game.cards_in_hand(self.human)
        if hand is not None:
            return hand
        dealt = self.hands.get(self.human)
        if dealt is None:
            return None
        played = set(self.played_by(self.human))
        return tuple(c for c in dealt if c not in played)

    def human_card(self, index: int) -> Card | None:
        hand = self.human_cards() or ()
        return hand[index] if 0 <= index < len(hand) else None
