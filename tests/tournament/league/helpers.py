"""A small league to test with: clubs c1..cK, entrants e01..eNN spread over them."""

from __future__ import annotations

import datetime
import functools

from controller.tournament.competition.model import Entrant, Player
from controller.tournament.league.model import Club, League, LeagueRules


def make_league(entrants: int, clubs: int = 3, best_of: int = 3) -> League:
    club_list = tuple(Club(f"c{k}", f"Club {k}") for k in range(1, clubs + 1))
    people = tuple(
        Entrant(
            f"e{i:02d}",
            f"Equipo {i}",
            (Player(f"A{i}"), Player(f"B{i}")),
            club=club_list[(i - 1) % clubs].id,
        )
        for i in range(1, entrants + 1)
    )
    return League(
        "liga",
        club_list,
        people,
        LeagueRules.from_text(best_of, "players=4 target=30"),
        datetime.date(2027, 3, 6),
        7,
    )


@functools.cache
def bot_game() -> str:
    """A real, finished game (players=2 target=15): a bot game's record, made once."""
    from controller.engine import HouseRules
    from controller.table.run_mock import MockRun

    run = MockRun(HouseRules(target=15), seed=3, human=None)
    try:
        run.play_out()
        return run.mock.service.transcript()
    finally:
        run.close()


def two_venue_league(
    clubs: tuple[str, str] = ("c1", "c2"), first_date: datetime.date = datetime.date(2027, 3, 6)
) -> League:
    """Four single players at two venues (e01, e03 at the first), best of 3, target 15."""
    return League(
        "liga",
        tuple(Club(c, f"Sede {c}") for c in clubs),
        tuple(
            Entrant(f"e0{i}", f"Equipo {i}", (Player(f"P{i}"),), club=clubs[0 if i % 2 else 1])
            for i in range(1, 5)
        ),
        LeagueRules.from_text(3, "players=2 target=15"),
        first_date,
    )


def record_payload(
    league: League,
    secret: bytes,
    venue: str,
    table: str,
    match: str | None,
    *,
    seq: int = 7,
    game_number: int = 1,
    chico: int = 1,
) -> tuple[str, bytes]:
    """``(topic at the venue, payload)`` of ``table``'s sealed record of the bot game, as
    the table publishes it (its mac over the venue's topic)."""
    from controller.tournament.league.keys import venue_table_key
    from controller.tournament.wire.messages import signed
    from controller.tournament.wire.seal import seal
    from controller.transcript import parse, replay

    key = venue_table_key(secret, league.name, venue, table)
    game = f"{table}-g{game_number:03d}"
    text = bot_game()
    played = replay(parse(text)).game
    sealed = seal(
        text, key, key_id=f"{league.name}:{table}", game_id=game,
        tournament=league.name, table=table, match=match,
    )  # fmt: skip
    topic = f"truco/{league.name}/tables/{table}/records/{game}"
    payload = {
        "v": 1, "table": table, "seq": seq, "ts": 2000.0, "kind": "record", "game": game,
        "winner": played.winner, "score": list(played.score), "hand": played.hand_number,
        "sealed": True, "key_id": f"{league.name}:{table}", "error": None, "record": sealed,
        "match": match, "chico": chico,
    }  # fmt: skip
    return topic, signed(key, topic, payload)


def game_payloads(
    league: League,
    secret: bytes,
    venue: str,
    table: str,
    match: str | None,
    *,
    seq: int = 1,
    game_number: int = 1,
    chico: int = 1,
    ts: float = 2000.0,
) -> list[tuple[str, bytes]]:
    """The bot game as ``table`` plays it at ``venue``: its events (the game begun, each
    hand with its deal, each action, the game won) from ``seq`` on, then its sealed
    record (:func:`record_payload`), each ``(topic at the venue, payload)`` signed with
    the table's key. The league desk counts a record only with its game's events."""
    from controller.tournament.league.keys import venue_table_key
    from controller.tournament.wire.messages import Event, EventKind, signed
    from controller.transcript import parse, replay

    key = venue_table_key(secret, league.name, venue, table)
    game = f"{table}-g{game_number:03d}"
    text = bot_game()
    played = replay(parse(text)).game
    topic = f"truco/{league.name}/tables/{table}/events"
    out: list[tuple[str, bytes]] = []

    def event(kind: EventKind, body: str, **fields: object) -> None:
        n = seq + len(out)
        message = Event(table, n, ts + n, kind, game, text=body, **fields)  # type: ignore[arg-type]
        out.append((topic, signed(key, topic, message.payload())))

    event(EventKind.NEW_GAME, text.split("\n", 1)[0], rules=text.split("\n", 1)[0])
    hand = 0
    lines = [ln.split("#", 1)[0].strip() for ln in text.split("\n")]
    lines = [ln for ln in lines if ln and not ln.startswith(("table", "score "))]
    i = 0
    while i < len(lines):
        line = lines[i]
        if line == "hand" or line.startswith("dealer "):
            hand += 1
            group = [line]
            while i + 1 < len(lines) and (
                lines[i + 1].startswith("deal ") or (group[-1].startswith("dealer ")
                                                      and lines[i + 1] == "hand")
            ):  # fmt: skip
                i += 1
                group.append(lines[i])
            shown = [g for g in group if not g.startswith("deal ")]
            event(EventKind.DEAL, "\n".join(shown), hand=hand, dealt=len(group) - len(shown))
        else:
            event(EventKind.ACTION, line, hand=hand)
        i += 1
    assert played.winner is not None
    event(EventKind.FINISHED, f"gana el equipo {played.winner}", winner=played.winner,
          score=played.score, hand=hand)  # fmt: skip
    out.append(
        record_payload(
            league,
            secret,
            venue,
            table,
            match,
            seq=seq + len(out),
            game_number=game_number,
            chico=chico,
        )  # fmt: skip
    )
    return out
