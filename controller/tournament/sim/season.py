"""A whole league season on this machine: ``sh scripts/league --season``.

Two divisions (Primera with two regional groups, Ascenso with one: three regional
groups), each club a venue with its own Mosquitto bridged to the central broker
(:mod:`.league`'s set-up), each club's list of four players and the pair it names for
every match (one confirmed substitution between chicos, one the organiser did not
confirm), the regional groups' two legs at the home venues, then the final phase
(Primera: a knockout among the best four; Ascenso: a final group at one venue among its
best two), then the promotion. Faults: two venues' uplinks cut during the first
matchday and one venue's broker restarted while its uplink is down; the league desk
adds each phase's matches to its schedule as the count decides them, and is restarted
once, as the final phase begins (it reads its journal back).

It exits 0 only if the league desk's count equals what the tables played and the
league's standings (every group, the final phases' order), the promotion, every player's
rating and statistics equal those recomputed by :mod:`.season_check` from what the
tables played. ``--small`` plays a smaller season (two clubs a group, a final of two)
in about half the time (the test runs it).
"""

from __future__ import annotations

import argparse
import datetime
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ..league.bridge import DESK_ACCOUNT, add_venue, venue_account
from ..league.desk import LeagueDesk
from ..league.model import Chico, Club, LeagueMatch, LeagueRules
from ..league.ratings import rate, season_chicos
from ..league.rosters import Lineup, Roster, RosterPlayer, Substitution
from ..league.season import (
    Division,
    FinalFormat,
    Group,
    Season,
    division_order,
    group_standings,
    movements,
    season_league,
    season_matches,
)
from ..league.season_web import SeasonRecord, write_site
from ..league.stats import counted_texts, season_stats
from .league import _Table, _Uplink, _wait, bot_game
from .mosquitto import LocalBroker, free_port
from .season_check import order_group, pl_update, stats_of

__all__ = ["main", "run"]

NAME = "liga"
RULES = "players=4 target=15 flor=on"
FAR = datetime.date(2100, 1, 1)  # the desk's today: every matchday open


def pair_game(seed: int) -> tuple[str, int, tuple[int, int]]:
    """A real four-seat bot game's record: text, winner, score."""
    return bot_game(seed, RULES)


def _season(small: bool) -> Season:
    per = 2 if small else 3
    names = ["norte", "sur", "oeste"]
    clubs = tuple(Club(f"club-{g}{i}", f"Club {g.capitalize()} {i}")
                  for g in names for i in range(1, per + 1))  # fmt: skip
    group = {g: tuple(c.id for c in clubs if c.id.startswith(f"club-{g}")) for g in names}
    primera = Division("primera", "Primera", (
        Group("norte", "Grupo Norte", group["norte"]), Group("sur", "Grupo Sur", group["sur"])),
        final_size=2 if small else 4)  # fmt: skip
    oeste = Group("oeste", "Grupo Oeste", group["oeste"])
    ascenso = Division("ascenso", "Ascenso", (oeste,), final_size=2, final=FinalFormat.GROUP,
                       final_venue=group["oeste"][0])  # fmt: skip
    rosters = tuple(
        Roster(c.id, tuple(RosterPlayer(f"{c.id[5:]}-j{k}", f"Jugador {k} de {c.name}")
                           for k in range(1, 5)))
        for c in clubs
    )
    return Season(NAME, 2027, clubs, (primera, ascenso), LeagueRules.from_text(3, RULES),
                  datetime.date(2027, 3, 6), rosters=rosters)  # fmt: skip


def _lineups(season: Season, matches: Sequence[LeagueMatch]) -> Season:
    """Each club names a pair for each new match: players 1-2 home, 3-4 away, and the
    first match of Primera has a confirmed substitution (and an unconfirmed one)."""
    lineups = list(season.lineups)
    subs = list(season.substitutions)
    named = {(x.match, x.club) for x in lineups}
    for m in matches:
        for club, pair in ((m.home, (1, 2)), (m.away, (3, 4))):
            if (m.id, club) not in named:
                ids = tuple(f"{club[5:]}-j{k}" for k in pair)
                lineups.append(Lineup(m.id, club, ids))
    first = next((m for m in matches if m.id.startswith("primera-norte-f01")), None)
    if first is not None and not subs:
        subs.append(Substitution(first.id, first.home, 2, f"{first.home[5:]}-j1",
                                 f"{first.home[5:]}-j3", confirmed=True))  # fmt: skip
        subs.append(Substitution(first.id, first.away, 2, f"{first.away[5:]}-j3",
                                 f"{first.away[5:]}-j1", confirmed=False))  # fmt: skip
    return Season(season.league, season.number, season.clubs, season.divisions, season.rules,
                  season.first_date, season.days_between, season.roster_size, season.rosters,
                  tuple(lineups), tuple(subs), season.movement)  # fmt: skip


def _who(season: Season, m: LeagueMatch, chico: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Who sat at the table for chico ``chico``: the pairs named, each confirmed change
    from its chico on (the simulation's own reading, as the table's players were told)."""
    sides = []
    for club in (m.home, m.away):
        lineup = next(x for x in season.lineups if x.match == m.id and x.club == club)
        pair = list(lineup.players)
        for s in season.substitutions:
            if s.match == m.id and s.club == club and s.confirmed and chico >= s.from_chico:
                pair = [s.into if p == s.out else p for p in pair]
        sides.append(tuple(pair))
    return sides[0], sides[1]


def _wait_count(desk: LeagueDesk, sent: int) -> None:
    _wait("the desk's count", lambda: len(desk.snapshot().counted) >= sent, 90)


def run(out: Callable[[str], None] = print, *, small: bool = False,
        pages: Path | None = None) -> bool:  # fmt: skip
    """The whole season with its faults; True when every check holds; ``pages``: the
    league's public pages written there (:mod:`..league.season_web`)."""
    season = _season(small)
    parent = Path(tempfile.mkdtemp(prefix="truco-season-sim-"))
    parent.chmod(0o711)
    root = parent / "liga"
    started: list[LocalBroker] = []
    links: dict[str, _Uplink] = {}
    tables: dict[tuple[str, str], _Table] = {}
    desk: LeagueDesk | None = None
    desk_dir = parent / "league-desk"
    try:
        central_port = free_port()
        venues = [c.id for c in season.clubs]
        added = {
            v: add_venue(root, v, ["mesa01", "mesa02"], ["desk"], league=NAME,
                         central=f"127.0.0.1:{central_port}", port=free_port(),
                         restart_timeout=(1, 1))
            for v in venues
        }
        secret = bytes.fromhex(
            next(s for s in (root / "secret.key").read_text().split("\n") if s and s[0] != "#")
        )
        any_added = added[venues[0]]
        central = LocalBroker(central_port, workdir=parent / "central",
                              config=any_added.central_conf)  # fmt: skip
        central.start()
        started.append(central)
        brokers: dict[str, LocalBroker] = {}

        def start_venue(v: str, tries: int = 5) -> None:
            """``v``'s broker on its port, through its own uplink; on a port another
            process of this machine took meanwhile, again on another one."""
            for attempt in range(tries):
                a = added[v] if attempt == 0 else add_venue(
                    root, v, ["mesa01", "mesa02"], ["desk"], port=free_port(),
                    restart_timeout=(1, 1))  # fmt: skip
                added[v] = a
                if v not in links:
                    links[v] = _Uplink(central_port)
                conf = a.venue_conf.read_text(encoding="utf-8").replace(
                    f"address 127.0.0.1:{central_port}\n", f"address 127.0.0.1:{links[v].port}\n"
                )
                a.venue_conf.write_text(conf, encoding="utf-8")
                broker = LocalBroker(a.port, workdir=parent / v, config=a.venue_conf)
                try:
                    broker.start()
                except RuntimeError:
                    broker.close()
                    continue
                brokers[v] = broker
                started.append(broker)
                return
            raise RuntimeError(f"{v}: its broker never started")

        for v in venues:
            start_venue(v)

        def bridges_up() -> bool:
            for v in venues:
                process = brokers[v].process
                if process is not None and process.poll() is not None:  # its port was taken
                    started.remove(brokers[v])
                    brokers[v].close()
                    start_venue(v)
            log = central.log.read_text(errors="replace")
            return all(f"as {venue_account(v)} " in log for v in venues)

        _wait("the bridges", bridges_up, timeout=60)

        now: list[Season] = [season]  # the season as the organiser has it (pairs named)

        def open_desk(played: dict[str, tuple[Chico, ...]]) -> LeagueDesk:
            def publish() -> object:  # the public pages, from the desk's own export
                assert pages is not None
                count = d.snapshot()
                texts = counted_texts(desk_dir, count)
                return write_site(pages, [SeasonRecord(now[0], count.played, texts)])

            d = LeagueDesk(season_league(season, played), secret, desk_dir, host="127.0.0.1",
                           port=central_port, ca_file=any_added.central_ca,
                           username=DESK_ACCOUNT, password=any_added.desk_password(),
                           today=lambda: FAR, phases=lambda p: season_league(now[0], p),
                           publish=publish if pages is not None else None)  # fmt: skip
            d.start()
            _wait("the league desk", d.subscribed.is_set)
            return d

        for v in venues:
            for t in ("mesa01", "mesa02"):
                tables[(v, t)] = _Table(season_league(season, {}), secret, added[v], t)

        truth: dict[str, list[tuple[str, int, tuple[int, int]]]] = {}
        seeds = iter(range(100, 10_000))
        sent = 0
        restarts = 0
        desk_restarts = 0
        cut = 0
        phases = 0
        desk = open_desk({})
        while True:
            count = desk.snapshot()
            known = season_matches(season, count.played)
            todo = [m for m in known if m.id not in truth]
            if not todo:
                break
            phases += 1
            if phases == 2:  # the league desk restarts (from its journal) as the final begins
                desk.stop()
                desk = open_desk(dict(count.played))
                desk_restarts += 1
            season = _lineups(season, todo)
            now[0] = season
            for day in sorted({m.matchday for m in todo}):
                faulty = day == 1
                hosts = list(dict.fromkeys(m.venue for m in todo if m.matchday == day))
                if faulty:  # two venues' internet goes down for their matches
                    for v in hosts[1:3]:
                        links[v].cut()
                        cut += 1
                used: dict[str, int] = {}
                for m in (m for m in todo if m.matchday == day):
                    k = used.get(m.venue, 0) + 1
                    used[m.venue] = k
                    table = tables[(m.venue, f"mesa{k:02d}")]
                    won = [0, 0]
                    n = 0
                    while max(won) < season.rules.to_win:
                        n += 1
                        text, winner, score = pair_game(next(seeds))
                        table.send(m.id, n, text, winner, score)
                        sent += 1
                        truth.setdefault(m.id, []).append((text, winner, score))
                        won[winner] += 1
                        if faulty and m.venue == hosts[2] and n == 1 and not restarts:
                            brokers[m.venue].stop()  # its broker restarts, uplink down
                            brokers[m.venue].start()
                            restarts += 1
                if faulty:
                    time.sleep(0.3)
                    for v in hosts[1:3]:
                        links[v].restore()
                _wait_count(desk, sent)
        count = desk.snapshot()
        if pages is not None:
            desk.export()  # the desk writes its pages on each export; once more at the end
            out(f"pages={pages}")
        return _judge(season, count, truth, desk_dir, out, sent=sent, cut=cut,
                      restarts=restarts, desk_restarts=desk_restarts, phases=phases)  # fmt: skip
    except RuntimeError:
        for b in started:
            out(f"log {b.dir.name}: "
                + b.log.read_text(errors="replace")[-1500:].replace("\n", " | "))  # fmt: skip
        raise
    finally:
        if desk is not None:
            desk.stop()
        for each in tables.values():
            each.close()
        for link in links.values():
            link.close()
        for b in reversed(started):
            b.close()
        shutil.rmtree(parent, ignore_errors=True)


def _judge(season: Season, count: object, truth: dict[str, list[tuple[str, int, tuple[int, int]]]],
           desk_dir: Path, out: Callable[[str], None], **figures: int) -> bool:  # fmt: skip
    from ..league.collect import Collected

    assert isinstance(count, Collected)
    played = {k: tuple(Chico(w, s) for _, w, s in v) for k, v in truth.items()}
    checks: dict[str, bool] = {}
    checks["nothing_lost"] = dict(count.played) == played and not count.flags
    matches = season_matches(season, count.played)
    by_id = {m.id: m for m in matches}
    order = [c.id for c in season.clubs]

    def results(ids: Sequence[str]) -> list[tuple[str, str, list[tuple[int, int, int]]]]:
        return [(by_id[i].home, by_id[i].away, [(w, s[0], s[1]) for _, w, s in truth[i]])
                for i in ids]  # fmt: skip

    ok_groups = True
    their_order: dict[str, tuple[str, ...]] = {}
    for d in season.divisions:
        places: list[tuple[int, int, int, int, int, int, str]] = []
        for g in d.groups:
            ids = [i for i in truth if i.startswith(f"{d.id}-{g.id}-")]
            mine = order_group([c for c in order if c in g.clubs], results(ids))
            theirs = group_standings(season, d, g, count.played)
            ok_groups &= [x.club for x in mine] == [s.entrant for s in theirs]
            ok_groups &= all(
                (x.won, x.chicos_for, x.chicos_against, x.tantos_for, x.tantos_against)
                == (s.won, s.games_won, s.games_lost, s.points_for, s.points_against)
                for x, s in zip(mine, theirs, strict=True))  # fmt: skip
            for rank, x in enumerate(mine, start=1):
                places.append((rank, -x.won, -(x.chicos_for - x.chicos_against),
                               -(x.tantos_for - x.tantos_against), -x.tantos_for,
                               order.index(x.club), x.club))  # fmt: skip
            out(f"group={d.id}/{g.id} " + " ".join(
                f"{x.club}:{x.won}/{x.chicos_for}-{x.chicos_against}" for x in mine))  # fmt: skip
        places.sort()
        seeds = [p[-1] for p in places[: d.final_size]]
        rest = [p[-1] for p in places[d.final_size:]]
        finals = [i for i in truth if i.startswith(f"{d.id}-final-")]

        def winner_of(i: str) -> str:
            wins = [0, 0]
            for chico in truth[i]:
                wins[chico[1]] += 1
            return by_id[i].home if wins[0] > wins[1] else by_id[i].away

        if d.final is FinalFormat.GROUP:
            top = [x.club for x in order_group(seeds, results(finals))]
        else:  # knockout: seed 1 meets the last; who went further first, then by seed
            alive = list(seeds)
            bracket = [alive[0], alive[-1]] if len(alive) == 2 else [
                alive[0], alive[3], alive[1], alive[2]]  # fmt: skip
            went = {c: 0 for c in seeds}
            rnd = bracket
            while len(rnd) > 1:
                nxt = []
                for a, b in zip(rnd[::2], rnd[1::2], strict=True):
                    i = next(x for x in finals if {by_id[x].home, by_id[x].away} == {a, b})
                    w = winner_of(i)
                    went[w] += 1
                    nxt.append(w)
                rnd = nxt
            top = sorted(seeds, key=lambda c: (-went[c], seeds.index(c)))
        mine_order = tuple(top + rest)
        their_order[d.id] = division_order(season, d, count.played) or ()
        ok_groups &= mine_order == their_order[d.id]
        out(f"division={d.id} order={','.join(mine_order)}")
    checks["standings_equal"] = ok_groups
    up_down = []
    for upper, lower in zip(season.divisions, season.divisions[1:], strict=False):
        k = season.movement
        up_down += [(c, upper.id, lower.id) for c in their_order[upper.id][-k:]]
        up_down += [(c, lower.id, upper.id) for c in their_order[lower.id][:k]]
    moved = movements(season, count.played) or ()
    checks["promotion_equal"] = [(m.club, m.from_division, m.to_division) for m in moved] == up_down
    for m in moved:
        out(f"moves={m.club} {m.from_division}->{m.to_division}")

    # ratings: every chico in date order, who sat as the simulation seated them
    mine_r: dict[str, tuple[float, float]] = {}
    for i in sorted(truth, key=lambda i: (by_id[i].date, i)):
        for n, chico in enumerate(truth[i], start=1):
            home, away = _who(season, by_id[i], n)
            first = chico[1] == 0
            pl_update(mine_r, home if first else away, away if first else home)
    theirs_r = rate(season_chicos(season, count.played))
    checks["ratings_equal"] = set(mine_r) == set(theirs_r) and all(
        abs(mine_r[p][0] - theirs_r[p].mu) < 1e-9 and abs(mine_r[p][1] - theirs_r[p].sigma) < 1e-9
        for p in mine_r)  # fmt: skip
    best = max(theirs_r.values(), key=lambda r: r.shown)
    out(f"players_rated={len(theirs_r)} best={best.player} rating={best.shown:.3f}")

    mine_s: dict[str, dict[str, int]] = {}
    for i, chicos in truth.items():
        for n, (text, _, _) in enumerate(chicos, start=1):
            home, away = _who(season, by_id[i], n)
            seats = {2 * k: p for k, p in enumerate(home)} | {2 * k + 1: p
                                                              for k, p in enumerate(away)}
            for p, s in stats_of(text, seats).items():
                acc = mine_s.setdefault(p, dict.fromkeys(s, 0))
                for key, v in s.items():
                    acc[key] += v
    theirs_s = season_stats(season, matches, counted_texts(desk_dir, count))
    checks["stats_equal"] = set(mine_s) == set(theirs_s) and all(
        {k: v for k, v in theirs_s[p].as_dict().items()
         if k not in ("player", "points_per_hand")} == mine_s[p] for p in mine_s)  # fmt: skip
    total = {k: sum(s[k] for s in mine_s.values()) for k in ("hands", "truco_calls", "flores",
                                                             "mazos", "envidos_won")}  # fmt: skip
    out(" ".join(f"{k}={v}" for k, v in figures.items())
        + f" counted={len(count.counted)} repeats={count.repeats}")
    out("totals " + " ".join(f"{k}={v}" for k, v in total.items()))
    out(" ".join(f"{k}={'yes' if v else 'no'}" for k, v in checks.items()))
    return all(checks.values())


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="league --season")
    p.add_argument("--small", action="store_true")
    p.add_argument("--pages", type=Path, default=None)
    args = p.parse_args(argv)
    try:
        ok = run(small=args.small, pages=args.pages)
    except (RuntimeError, OSError) as e:
        print(f"season sim: {e}", file=sys.stderr)
        return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
