"""A whole tournament on one machine: Mosquitto, N mock tables, the desk.

``truco-table tournament-demo --tables 20`` (``sh scripts/tournament``) starts a local
Mosquitto on 127.0.0.1, set up as a venue's is (:mod:`..venue.broker`: one account per table
and for the desk, ACLs, anonymous access off, TLS with a CA made for the demo; without
``openssl``, an open one), N tables on mock hardware (``SimTable``: the real service,
mock seat nodes on ptys, bots at every seat, each table in its own thread with its own
state directory and outbox), the desk with its web page, and cuts the network of a few
tables now and then (``--flaky``). Players act at ``--speed`` times human speed: a
human takes about ``HUMAN_ACTION_S`` (3 s) per action, so 10x is one action every 0.3 s
per table. Now and then a player taps a card out of turn (a refusal the table handles:
the desk counts it), the referee undoes an action and a player calls the referee on the
pad (``--mistakes``); the desk must list every call.

When every table has played its games the demo checks the desk's results against every
table's own archived records, verifies every collected record with its table's key,
prints a summary and exits 0 when all is well.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import random
import secrets
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from ...engine import Action, Game, HouseRules, Kind
from ...table.mock_table import MockTableError
from ...table.run_mock import MockRun
from ...table.service import Accepted, ServiceEvent
from ...transcript import parse, replay
from ..desk import Desk, DeskState, all_finished, render_board, serve_http, unseal
from ..desk.referee import Concern
from ..table.profile import tournament_profile
from ..table.publisher import TablePublisher
from ..venue.access import BrokerAccess
from ..venue.broker import Venue, setup_venue
from ..wire.keys import table_key
from ..wire.seal import NotSealedError, TournamentKey, load_key, verify
from .mosquitto import LocalBroker, free_port
from .netsim import CuttableLink

__all__ = ["HUMAN_ACTION_S", "SimTable", "compare_with_tables", "run_demo"]

log = logging.getLogger(__name__)

#: Seconds a human player takes per action (a call, an answer, a card): "human speed".
HUMAN_ACTION_S = 3.0


class SimTable:
    """One mock table playing ``games`` games with bots, published to the broker.

    ``assigned=True``: it plays only what the desk assigns (``<prefix>/<table>/assign``,
    :class:`~..wire.messages.Assignment`): it waits (``idle`` set) for an assignment whose chico
    it has not played, plays exactly one game for it, and waits again for the next (the
    desk's chico + 1, another match, or none); ``games`` does not count then, and it
    plays until stopped.

    Runs in its own thread (``start``). ``power_cut()`` stops it the hard way (no goodbye
    to the broker, nothing flushed beyond what the disk already has) and ``start()``
    again restores it from its state directory, as a real table restarts.
    """

    def __init__(
        self,
        table_id: str,
        *,
        state_dir: Path,
        rules: HouseRules,
        broker: tuple[str, int],
        tournament: str,
        key: TournamentKey | None,  # the tournament's secret: the table derives its own key
        seed: int = 0,
        pace: float = HUMAN_ACTION_S / 10,
        games: int = 1,
        refusal_rate: float = 0.0,
        undo_rate: float = 0.0,
        call_rate: float = 0.0,
        fsync: bool = True,
        access: BrokerAccess | None = None,
        assigned: bool = False,
    ) -> None:
        self.table_id = table_id
        self.assigned = assigned
        self.access = access
        self.state_dir = Path(state_dir)
        self.rules = tournament_profile(rules)
        self.broker = broker
        self.tournament = tournament
        self.key = key
        self.seed = seed
        self.pace = pace
        self.games = games
        self.refusal_rate = refusal_rate
        self.undo_rate = undo_rate
        self.call_rate = call_rate
        self.fsync = fsync
        self.done = threading.Event()
        self.idle = threading.Event()  # assigned: waiting for the desk's next assignment
        self.error: BaseException | None = None
        self.publisher: TablePublisher | None = None
        self.refusals = 0
        self.undos = 0
        self.calls = 0  # referee calls made on the pads
        self.restarts = 0
        self._stop = threading.Event()
        self._kill = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_text = ""
        self._close_timeout = 5.0

    # ------------------------------------------------------------------ control

    def start(self) -> SimTable:
        self._stop.clear()
        self._kill.clear()
        self._thread = threading.Thread(target=self._main, name=self.table_id, daemon=True)
        self._thread.start()
        return self

    def power_cut(self) -> None:
        """Stop now, as if the power went (the broker sends the table's last will)."""
        self._kill.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.restarts += 1

    def stop(self, timeout: float = 5.0) -> None:
        """Stop playing, deliver what is pending, say offline, close everything."""
        self._close_timeout = timeout
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=timeout + 10)

    def join(self, timeout: float | None = None) -> bool:
        return self.done.wait(timeout)

    def archived(self) -> list[str]:
        """The table's own records of its finished games, oldest first."""
        folder = self.state_dir / "archive"
        if not folder.is_dir():
            return []
        files = sorted(folder.glob("*.truco"), key=lambda p: (p.stat().st_mtime_ns, p.name))
        return [p.read_text(encoding="utf-8") for p in files]

    # ------------------------------------------------------------------ the table

    def _main(self) -> None:
        run: MockRun | None = None
        publisher: TablePublisher | None = None
        try:
            run = MockRun(self.rules, seed=self.seed, human=None, state_dir=self.state_dir)
            service = run.mock.service
            service.config = dataclasses.replace(service.config, record_refusals=True)
            service.listeners.append(self._remember)
            publisher = TablePublisher(
                self.table_id,
                *self.broker,
                outbox_dir=self.state_dir / "outbox",
                tournament=self.tournament,
                key=table_key(self.key, self.tournament, self.table_id) if self.key else None,
                access=self.access,
                fsync=self.fsync,
            )
            self.publisher = publisher
            publisher.attach(service)
            publisher.start()
            if self.assigned:
                self._play_assigned(run, publisher)
            else:
                self._play(run)
        except BaseException as e:  # reported by the demo and the tests
            log.exception("table %s failed", self.table_id)
            self.error = e
            self.done.set()
        finally:
            if not self._kill.is_set():
                self.done.set()  # played out: stay connected until told to stop
                while not self._stop.wait(0.1) and not self._kill.is_set():
                    pass
            if publisher is not None:
                if self._kill.is_set():
                    publisher.abort()
                else:
                    publisher.close(timeout=self._close_timeout)
            if run is not None:
                run.close()

    def _remember(self, event: ServiceEvent) -> None:
        if isinstance(event, Accepted):
            self._last_text = event.text

    def _play(self, run: MockRun) -> None:
        rng = random.Random(f"{self.table_id}-{self.seed}-{self.restarts}")
        finished = len(self.archived())
        run.seed = self.seed * 1000 + finished
        while not self._kill.is_set() and not self._stop.is_set():
            game = run.game
            if game.winner is not None:
                finished += 1
                if finished >= self.games:
                    return
                run.seed = self.seed * 1000 + finished
                run.mock.service.new_game()
                continue
            if finished >= self.games:
                return
            self._step(run, rng)
            if self._kill.wait(self.pace):
                return

    def _step(self, run: MockRun, rng: random.Random) -> None:
        """One move at the table: the dealer deals, a bot acts, or a mistake is made."""
        if run.needs_deal():
            run.deal()
            return
        r = rng.random()
        if r < self.refusal_rate and self._mistake(run, rng):
            self.refusals += 1
        elif r > 1 - self.undo_rate and self._undo(run):
            self.undos += 1
        elif self.refusal_rate <= r < self.refusal_rate + self.call_rate:
            self.calls += 1  # counted first: the frames are sent whatever happens
            try:  # quiero and no quiero held together at a seat
                run.mock.call_referee(rng.randrange(run.game.players))
            except MockTableError as e:  # a mock node too slow on a loaded machine
                log.warning("%s: %s; the call is still on its way", self.table_id, e)
        else:
            try:
                moved = run.bot_step() is not None
            except MockTableError as e:  # a mock node too slow on a loaded machine
                log.warning("%s: %s; the bots look again", self.table_id, e)
                moved = True
            if not moved:
                raise RuntimeError(f"{self.table_id}: the bots are stuck")

    def _play_assigned(self, run: MockRun, publisher: TablePublisher) -> None:
        """Play one game per assignment, as the desk sends them (see the class)."""
        rng = random.Random(f"{self.table_id}-{self.seed}-{self.restarts}")
        while not self._kill.is_set() and not self._stop.is_set():
            game = run.game
            started = game.hand_number > 0 or bool(game.hand_actions)
            if game.winner is not None:
                run.mock.service.new_game()  # the next game waits for its assignment
                continue
            if not started and publisher.matches.to_play() is None:
                self.idle.set()
                run.mock.pump(min(self.pace, 0.1))  # the loop takes what the desk sends
                continue
            if not started:  # a new chico: its own shuffle
                self.idle.clear()
                run.seed = self.seed * 1000 + len(self.archived())
            self._step(run, rng)
            if self._kill.wait(self.pace):
                return

    def _mistake(self, run: MockRun, rng: random.Random) -> bool:
        """A player taps one of their cards out of turn: refused, shown, recorded."""
        game: Game = run.game
        if not game.hand_in_progress:
            return False
        seats = [s for s in range(game.players) if game.turn_of(s) != s]  # its own pica's
        seat = rng.choice(seats)
        cards = game.cards_in_hand(seat) or ()
        if not cards:
            return False
        action = Action(seat, Kind.PLAY, card=rng.choice(cards))
        if game.is_legal(action):
            return False
        try:
            return run.mock.act(action) is not None
        except MockTableError:
            return False

    def _undo(self, run: MockRun) -> bool:
        """The referee undoes the last action (never a deal, never one that ended a hand)."""
        game = run.game
        first = self._last_text.split(None, 1)[0] if self._last_text else ""
        if not game.hand_in_progress or not game.hand_actions or not first.isdigit():
            return False
        self._last_text = ""
        return run.mock.service.command("undo")


def compare_calls(state: DeskState, tables: Sequence[SimTable], timeout: float = 10.0) -> list[str]:
    """The tables whose referee calls the desk does not list, one each (empty when every
    call made on a pad is on the desk's list)."""

    def heard(s: DeskState) -> dict[str, int]:
        return {
            t.table_id: sum(
                1 for a in s.tables[t.table_id].attention if a.concern is Concern.CALLED
            )
            if t.table_id in s.tables
            else 0
            for t in tables
        }

    wanted = {t.table_id: t.calls for t in tables}
    deadline = time.monotonic() + timeout
    while (got := heard(state)) != wanted and time.monotonic() < deadline:
        time.sleep(0.1)
    return [
        f"{table}: {wanted[table]} referee calls made, the desk lists {got[table]}"
        for table in wanted
        if got[table] != wanted[table]
    ]


def compare_with_tables(state: DeskState, tables: Sequence[SimTable]) -> list[str]:
    """Differences between the desk's results and records and each table's own archive
    (empty when they agree): same games, same records, same winners and scores."""
    problems: list[str] = []
    results = {r.game: r for r in state.results_list()}
    seen = set()
    for table in tables:
        own = table.archived()
        mine = sorted(g for g in results if g.startswith(f"{table.table_id}-g"))
        if len(mine) != len(own):
            problems.append(f"{table.table_id}: {len(own)} games archived, desk has {len(mine)}")
        for game, text in zip(mine, own, strict=False):
            seen.add(game)
            result = results[game]
            if not result.ok:
                problems.append(f"{game}: {result.verdict}: {result.detail} {result.problems}")
            path = (state.out_dir / "records" / result.record) if state.out_dir else None
            if path is None or not path.exists():
                problems.append(f"{game}: no record file at the desk")
                continue
            if unseal(path.read_text(encoding="utf-8")) != text:
                problems.append(f"{game}: the desk's record differs from the table's archive")
            g = replay(parse(text)).game
            if (g.winner, g.score) != (result.winner, result.score):
                problems.append(
                    f"{game}: desk says team {result.winner} {result.score}, "
                    f"the table's record says team {g.winner} {g.score}"
                )
    for game in sorted(set(results) - seen):
        problems.append(f"{game}: at the desk but in no table's archive")
    return problems


def verify_folder(folder: Path, key: TournamentKey, tournament: str) -> tuple[int, list[str]]:
    """Verify every ``*.truco`` in ``folder`` (``<table>-gNNN.truco``) with its table's
    key, derived from the tournament's secret ``key``; (intact count, problems)."""
    intact, problems = 0, []
    for path in sorted(folder.glob("*.truco")):
        table = path.name.split(".", 1)[0].rsplit("-g", 1)[0]
        own = table_key(key, tournament, table)
        try:
            v = verify(path.read_text(encoding="utf-8"), own.key, key_id=own.key_id)
        except NotSealedError:
            problems.append(f"{path.name}: not sealed")
            continue
        if v.ok:
            intact += 1
        else:
            problems.append(f"{path.name}: tampered: line {v.first_bad_line}: {v.reason}")
    return intact, problems


def write_tournament_config(path: Path, name: str, key: TournamentKey, broker: str) -> None:
    """The tournament's TOML (``truco-table verify --config`` and ``desk --config`` read it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(
            "# written by truco-table tournament-demo; keep the key secret\n"
            "[tournament]\n"
            f'name = "{name}"\n'
            f'broker = "{broker}"\n'
            f'key = "{key.key.hex()}"\n'
            f'key_id = "{key.key_id}"\n'
        )


@dataclasses.dataclass
class DemoBroker:
    """The demo's broker: the venue's own set-up (accounts, ACLs, TLS) on the loopback,
    an open one without ``openssl``, or an existing one (``--broker``)."""

    host: str
    port: int
    key: TournamentKey
    venue: Venue | None = None
    broker: LocalBroker | None = None
    parent: Path | None = None

    @classmethod
    def start(
        cls,
        folder: Path,
        tournament: str,
        table_ids: Sequence[str],
        key: TournamentKey,
        existing: str | None,
        out: TextIO,
    ) -> DemoBroker:
        if existing is not None:
            from ..wire.topics import parse_broker

            host, port = parse_broker(existing)
            return cls(host, port, key)
        if shutil.which("openssl") is None:
            out.write("no está openssl: el broker de la demostración anda sin cuentas ni TLS\n")
            broker = LocalBroker(workdir=folder / "broker").start()
            return cls(broker.host, broker.port, key, broker=broker)
        # the venue's own broker set-up (accounts, ACLs, TLS), on the loopback; its
        # folder's parents must let Mosquitto's user through, hence a folder of its own
        parent = Path(tempfile.mkdtemp(prefix="truco-demo-venue-"))
        parent.chmod(0o711)
        venue = setup_venue(
            parent / "venue", tournament, list(table_ids), ["desk"],
            port=free_port(), local_port=free_port(), persistence=False,
        )  # fmt: skip
        secret = load_key(venue.root / "secret.key", kind="key-file")
        broker = LocalBroker(venue.port, workdir=folder / "broker", config=venue.broker_conf)
        broker.start()
        return cls(broker.host, broker.port, TournamentKey(secret.key, key.key_id), venue,
                   broker, parent)  # fmt: skip

    def access(self, account: str) -> BrokerAccess | None:
        if self.venue is None:
            return None
        return BrokerAccess(account, self.venue.password(account), self.venue.ca_file)

    def stop(self) -> None:
        if self.broker is not None:
            self.broker.stop()
        if self.parent is not None:
            shutil.rmtree(self.parent, ignore_errors=True)


@dataclasses.dataclass
class DemoOptions:
    tables: int = 20
    games: int = 1
    speed: float = 10.0
    players: int = 2
    target: int = 15
    flor: bool = False
    flaky: int = 4
    cut_every: float = 8.0
    cut_for: float = 2.0
    mistakes: float = 0.02
    seed: int = 0
    out: Path | None = None
    http_port: int = 8080
    broker: str | None = None
    tournament: str = "demo"
    timeout: float = 900.0
    board: bool = True


def run_demo(opts: DemoOptions, out: TextIO = sys.stdout) -> int:
    """The demo (see the module docstring); returns the exit status."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    folder = opts.out or Path(f"tournament-{stamp}")
    folder.mkdir(parents=True, exist_ok=True)
    key = TournamentKey(secrets.token_bytes(32), f"{opts.tournament}-{stamp}")
    table_ids = [f"mesa{i + 1:02d}" for i in range(opts.tables)]
    rules = HouseRules(players=opts.players, target=opts.target, flor=opts.flor)
    venue = DemoBroker.start(folder, opts.tournament, table_ids, key, opts.broker, out)
    key, host, port, access = venue.key, venue.host, venue.port, venue.access
    write_tournament_config(folder / "tournament.toml", opts.tournament, key, f"{host}:{port}")
    state = DeskState(
        opts.tournament, out_dir=folder / "desk", key=key, profile="tournament",
        tables=table_ids, rules=rules,
    )  # fmt: skip
    desk = Desk(state, host, port, access=access("desk")).start()
    http = None
    links: list[CuttableLink] = []
    tables: list[SimTable] = []
    stop_chaos = threading.Event()
    try:
        try:
            http = serve_http(state, opts.http_port)
        except OSError:  # the port is taken: any free one
            http = serve_http(state, 0)
        pace = HUMAN_ACTION_S / opts.speed
        for i, table_id in enumerate(table_ids):
            target = (host, port)
            if i < opts.flaky:
                link = CuttableLink(host, port)
                links.append(link)
                target = ("127.0.0.1", link.port)
            tables.append(
                SimTable(
                    table_id,
                    state_dir=folder / "tables" / table_id,
                    rules=rules,
                    broker=target,
                    tournament=opts.tournament,
                    key=key,
                    seed=opts.seed * 10_000 + i,
                    pace=pace,
                    games=opts.games,
                    refusal_rate=opts.mistakes,
                    undo_rate=opts.mistakes / 3,
                    call_rate=opts.mistakes / 4,
                    access=access(table_id),
                ).start()
            )
        chaos = threading.Thread(
            target=_chaos, args=(links, opts.cut_every, opts.cut_for, stop_chaos), daemon=True
        )
        chaos.start()
        page = f"http://127.0.0.1:{http.server_address[1]}/"
        _watch(tables, state, opts, out, page)
        stop_chaos.set()
        chaos.join()
        for link in links:
            link.restore()
        for t in tables:
            t.stop()
        complete = desk.wait(all_finished([t.table_id for t in tables], opts.games), 30)
        state.export()
        problems = [f"{t.table_id}: {t.error!r}" for t in tables if t.error is not None]
        if not complete:
            problems.append("the desk did not receive every record")
        problems += compare_with_tables(state, tables)
        problems += compare_calls(state, tables)
        intact, bad = verify_folder(folder / "desk" / "records", key, opts.tournament)
        problems += bad
        if opts.board:
            out.write(render_board(state) + "\n\n")
        snap = state.snapshot()
        out.write(
            f"tables={len(tables)} games={len(snap['results'])} records_intact={intact} "
            f"refusals={sum(t.refusals for t in tables)} undos={sum(t.undos for t in tables)} "
            f"referee_calls={sum(t.calls for t in tables)} attention={snap['attention_pending']} "
            f"network_cuts={sum(link.cuts for link in links)} "
            f"duplicates_dropped={snap['duplicates']} max_delay_s={snap['max_latency_s']}\n"
        )
        out.write(f"resultados: {folder / 'desk' / 'results.csv'} y results.json\n")
        out.write(f"registros: {folder / 'desk' / 'records'}/ (clave: "
                  f"{folder / 'tournament.toml'})\n")  # fmt: skip
        if problems:
            out.write("PROBLEMAS:\n" + "".join(f"  {p}\n" for p in problems))
            return 1
        out.write("todos los registros se verifican y coinciden con el de su mesa\n")
        return 0
    finally:
        stop_chaos.set()
        for t in tables:
            t.stop(timeout=1)
        desk.stop()
        if http is not None:
            http.shutdown()
        for link in links:
            link.close()
        venue.stop()


def _chaos(links: list[CuttableLink], every: float, length: float, stop: threading.Event) -> None:
    if not links or every <= 0:
        return
    while not stop.wait(every):
        for link in links:
            link.cut()
        if stop.wait(length):
            break
        for link in links:
            link.restore()
    for link in links:
        link.restore()


def _watch(
    tables: list[SimTable], state: DeskState, opts: DemoOptions, out: TextIO, page: str
) -> None:
    tty = out.isatty()
    deadline = time.monotonic() + opts.timeout
    last_line = 0.0
    out.write(f"mesa de control: {page}  (resultados y registros en {state.out_dir})\n")
    while time.monotonic() < deadline:
        if all(t.done.is_set() for t in tables):
            return
        time.sleep(1.0)
        if opts.board and tty:
            out.write("\033[H\033[2J" + render_board(state) + f"\n\nmesa de control: {page}\n")
            out.flush()
        elif time.monotonic() - last_line >= 5:
            last_line = time.monotonic()
            snap = state.snapshot()
            done = sum(t.done.is_set() for t in tables)
            out.write(
                f"{done}/{len(tables)} mesas terminadas, {len(snap['results'])} registros, "
                f"{snap['online']} en línea, {snap['received']} mensajes\n"
            )
            out.flush()


def wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()
