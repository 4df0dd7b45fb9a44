"""The practice bot against the plain one: who wins, how fast it decides, and whether it
ever does something certainly wrong.

The club bot (:class:`controller.table.bots.Bot`, level ``normal`` unless ``--level``)
plays one team, the plain bot of before (:class:`controller.table.bots.BasicBot`, level
``facil``) the other, on the engine itself (no table, no screens: what the bots decide
is all that is measured), each game with its own seed, the teams' sides alternating.
At each player count the games are spread over the house rules a table plays: flor off
and on, hands read and unknown (a quarter of the games: the bots hold their cards, the
engine does not), pica-pica at six players, the falta variants.

The checker reads every decision of the club bot with what that seat knew (its cards,
the cards seen, the calls, its partners' señas) and counts the certainly wrong ones:

1. ``quiero`` to a falta envido that decides the game (winning or losing it ends it,
   refusing does not) while the other team's seen cards already make more points than
   the team's best.
2. Going to the mazo with the hand already won: the team has the baza it needs in hand
   (its best card beats every card it has not seen and every card of theirs on the
   table, and winning that baza wins the hand).
3. Calling or raising to a falta envido with no chance: the other team's seen cards
   already beat the team's best envido.
4. ``no quiero`` to an envido with points nothing can beat (33, or the best possible
   given the cards seen, with the tie on its side).
5. A penalty against its team (a false declaration, a claim left unproven, a flor
   tapada): the bot knows its cards.
6. A refusal: the bot asked for something the rules forbid.

Prints key=value lines, one per player count and a total::

    players=2 level=normal games=2000 wins=... win_rate=... decisions=... ms_mean=...
    ms_p99=... ms_max=... over_5ms=... over_5ms_retimed_max=... absurd=...
    total games=6000 win_rate=... ms_p99=... ms_max=... absurd=...

Run: ``nice .venv/bin/python bench/bots.py [--games 2000] [--players 2,4,6]
[--level normal] [--seed 1]``. The decision time is CPU time (``time.process_time``)
of one ``choose`` that returned an action.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter

from controller.engine import CARDS, Card, Falta, Game, HouseRules, Kind, envido_points
from controller.table.bots import BasicBot, Bot, Signals, flor_due, played_cards


def _rules(players: int, index: int) -> tuple[HouseRules, bool]:
    """The house rules of game ``index``, and whether the hands are read."""
    flor = index % 2 == 1
    known = index % 4 != 3
    falta = (Falta.TO_WIN, Falta.MALAS_BUENAS, Falta.LOSER_BASED, Falta.GAME_IN_MALAS)[
        (index // 4) % 4
    ]
    pica = players == 6 and (index // 2) % 2 == 0
    return HouseRules(players=players, flor=flor, falta=falta, pica_pica=pica), known


class Checker:
    """The certainly wrong decisions (see the module docstring), counted by kind."""

    def __init__(self) -> None:
        self.found: Counter[str] = Counter()
        self.examples: list[str] = []

    def note(self, kind: str, game: Game, what: str) -> None:
        self.found[kind] += 1
        if len(self.examples) < 5:
            self.examples.append(f"{kind}: {what} score={game.score}")

    @staticmethod
    def _their_floor(game: Game, bot: Bot) -> int:
        """The most envido the other team's seen cards already make."""
        flor = game.rules.flor
        best = -1
        play = game.play_of(bot.seat)
        for s in play.order:
            if s % 2 != bot.seat % 2:
                seen = game.seen_cards(s)
                if seen:
                    best = max(best, envido_points(seen, flor=flor))
        return best

    def check(self, game: Game, bot: Bot, hand: tuple[Card, ...], action_kind: Kind) -> None:
        view = game.view(bot.seat)
        flor = game.rules.flor
        mine = envido_points(hand, flor=flor)
        team_best = bot._team_envido(game, mine)[0]
        floor = self._their_floor(game, bot)
        target = game.rules.target
        us, them = view.team, 1 - view.team
        chain = view.envido_chain
        if (
            action_kind is Kind.QUIERO
            and view.envido_pending == them
            and Kind.FALTA_ENVIDO in chain
        ):
            stake_us = bot._stake(game, chain, us)
            stake_them = bot._stake(game, chain, them)
            refused = 1 if len(chain) == 1 else bot._stake(game, chain[:-1], them)
            decides = game.score[us] + stake_us >= target or game.score[them] + stake_them >= target
            if decides and game.score[them] + refused < target and floor > team_best:
                self.note("falta_accepted_against_higher", game, f"{team_best} vs {floor}")
        if action_kind is Kind.FALTA_ENVIDO and floor > team_best:
            self.note("falta_called_without_chance", game, f"{team_best} vs {floor}")
        if action_kind is Kind.NO_QUIERO and view.envido_pending == them and team_best >= 33:
            self.note("envido_refused_with_33", game, f"{team_best}")
        if action_kind is Kind.MAZO and self._won(game, bot, hand):
            self.note("mazo_with_hand_won", game, " ".join(map(str, hand)))

    @staticmethod
    def _won(game: Game, bot: Bot, hand: tuple[Card, ...]) -> bool:
        view = game.view(bot.seat)
        us = view.team
        left = [c for c in hand if c not in played_cards(game, bot.seat)]
        if not left:
            return False
        best = max(c.strength for c in left)
        seen = {c for s in range(game.players) for c in game.seen_cards(s)} | set(hand)
        unseen = [c for c in CARDS if c not in seen]
        if any(c.strength >= best for c in unseen):
            return False
        if any(s % 2 != us and c.strength >= best for s, c in view.table):
            return False
        results = list(view.bazas)
        if not results:
            return False
        # winning this baza wins the hand: the first won, or the first a parda
        return results[0] == us or results[0] is None


SLOW_S = 0.005  # the target: a decision in at most 5 ms


def play_game(
    players: int,
    index: int,
    seed: int,
    level: str,
    checker: Checker,
    times: list[float],
    slow: list[tuple[float, float]] | None = None,
) -> int:
    """One game; returns 1 if the club bot's team won."""
    if slow is None:
        slow = []
    rules, known = _rules(players, index)
    rng = random.Random(f"{seed}-{players}-{index}")
    new_team = index % 2 if index % 4 < 2 else 1 - index % 2
    game = Game(rules)
    signals = Signals()
    bots: dict[int, Bot | BasicBot] = {}
    for s in range(players):
        seat_rng = random.Random(rng.random())
        if s % 2 == new_team:
            bots[s] = Bot(s, seat_rng, level=level, signals=signals)
        else:
            bots[s] = BasicBot(s, seat_rng)
    clock = time.process_time
    for _ in range(400):
        if game.winner is not None:
            break
        cards = rng.sample(CARDS, 3 * players)
        hands = {s: tuple(cards[3 * s : 3 * s + 3]) for s in range(players)}
        game.deal({s: list(h) for s, h in hands.items()} if known else None)
        for s, b in bots.items():
            if isinstance(b, Bot):
                b.look(game, hands[s])
        for _ in range(500):
            if not game.hand_in_progress or game.winner is not None:
                break
            if not known:  # a claim to prove is shown first: the hand may end at any action
                proof = next(
                    (
                        a
                        for s, b in bots.items()
                        if isinstance(b, Bot) and (a := b.due_proof(game, hands[s])) is not None
                    ),
                    None,
                )
                if proof is not None:
                    game.push(proof)
                    continue
            # a flor is announced the moment it may be (as a player says it), by either
            # bot; then the seats whose turn it is, then the others
            flor = next(
                (a for s in range(players) if (a := flor_due(game, s, hands[s])) is not None),
                None,
            )
            if flor is not None:
                game.push(flor)
                continue
            legal = game.legal_list()
            seats = sorted({a.seat for a in legal}, key=lambda s: s not in game.turns)
            for seat in seats:
                bot = bots[seat]
                start = clock()
                action = bot.choose(game, hands[seat])
                spent = clock() - start
                if action is None:
                    continue
                if isinstance(bot, Bot):
                    if spent > SLOW_S:  # timed again from the same state: the machine's or its?
                        state = bot.rng.getstate()
                        again = []
                        for _ in range(3):
                            bot.rng.setstate(state)
                            start = clock()
                            bot.choose(game, hands[seat])
                            again.append(clock() - start)
                        slow.append((spent, min(again)))
                    times.append(spent)
                    checker.check(game, bot, hands[seat], action.kind)
                if game.refusal(action) is not None:
                    if isinstance(bot, Bot):
                        checker.note("refused", game, str(action))
                    action = legal[0] if legal[0].seat == seat else action
                    if game.refusal(action) is not None:
                        continue
                game.push(action)
                break
            else:
                raise RuntimeError(f"the bots are stuck: {game.hand_actions[-5:]}")
        if game.hands:
            hand = game.hands[-1]
            for award in hand.awards:
                if award.team != new_team and award.reason.name == "PENALTY":
                    checker.note("penalty", game, " ".join(map(str, game.hand_actions)))
    return 1 if game.winner == new_team else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--players", default="2,4,6")
    parser.add_argument("--level", default="normal", choices=("normal", "dificil"))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    total_games = total_wins = 0
    all_times: list[float] = []
    total_absurd = 0
    for players in (int(p) for p in args.players.split(",")):
        checker = Checker()
        times: list[float] = []
        slow: list[tuple[float, float]] = []
        wins = 0
        for i in range(args.games):
            wins += play_game(players, i, args.seed, args.level, checker, times, slow)
        times.sort()
        ms = [t * 1000 for t in times]
        absurd = sum(checker.found.values())
        print(
            f"players={players} level={args.level} games={args.games} wins={wins} "
            f"win_rate={wins / args.games:.3f} decisions={len(ms)} "
            f"ms_mean={sum(ms) / len(ms):.3f} ms_p99={ms[int(len(ms) * 0.99)]:.3f} "
            f"ms_max={ms[-1]:.3f} over_5ms={len(slow)} "
            f"over_5ms_retimed_max={max((b for _, b in slow), default=0.0) * 1000:.3f} "
            f"absurd={absurd}",
            flush=True,
        )
        for kind, n in sorted(checker.found.items()):
            print(f"players={players} absurd_kind={kind} count={n}", flush=True)
        for example in checker.examples:
            print(f"# {example}", file=sys.stderr)
        total_games += args.games
        total_wins += wins
        all_times += times
        total_absurd += absurd
    all_times.sort()
    print(
        f"total games={total_games} win_rate={total_wins / max(1, total_games):.3f} "
        f"ms_p99={all_times[int(len(all_times) * 0.99)] * 1000:.3f} "
        f"ms_max={all_times[-1] * 1000:.3f} absurd={total_absurd}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
