"""The table's side of the desk's assignment: kept across power cuts, bound to the games
started under it, sealed into their records, shown on the seats (no broker here: the
assignments are handed in as the network thread hands them; see venue/test_assignment
for the real Mosquitto)."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

from controller.engine import Claims, HouseRules
from controller.render.screen import MatchCard, screen_texts
from controller.table.run_mock import MockRun
from controller.table.screens import screen_for
from controller.table.service import RESULT_HOLD_S, Accepted, Finished, NewGame, Refused
from controller.tournament.sim.mosquitto import free_port
from controller.tournament.table.match import ASSIGNMENT_FILE, GameMatch, TableMatches
from controller.tournament.table.publisher import TablePublisher
from controller.tournament.wire.keys import table_key
from controller.tournament.wire.messages import Assignment, signed_assignment
from controller.tournament.wire.seal import TournamentKey, verify
from controller.tournament.wire.topics import decode, tournament_prefix

from ...table.panel_text import PanelDisplay
from ..conftest import KEY

RULES = "table players=2 target=15 flor=off falta=to_win mazo_envido_point=on claims=declared"
MESA = table_key(KEY, "copa", "mesa01")
QUARTER = Assignment(
    "mesa01", 10, "r3-m2", "Cuartos de final", "Los del Fondo", "La Barra", 1, 3,
    (("Ana", "Beto"), ("Carla", "Dani")),
)  # fmt: skip


def publisher(folder: Path, key: TournamentKey | None = MESA, **kw: Any) -> TablePublisher:
    """A table's publisher whose broker is not there."""
    return TablePublisher(
        "mesa01", "127.0.0.1", free_port(), outbox_dir=folder / "outbox", tournament="copa",
        key=key, **kw,
    )  # fmt: skip


def assign(pub: TablePublisher, a: Assignment, key: TournamentKey = MESA) -> None:
    """What paho's thread does with an assignment the broker delivers."""
    topic, data = signed_assignment(key.key, tournament_prefix("copa"), a)
    pub._on_assignment(topic, data)


def payloads(pub: TablePublisher) -> list[dict[str, Any]]:
    out = []
    for entry in pub.outbox:
        p = decode(entry.payload)
        assert p is not None
        out.append(p)
    return out


def play_game(pub: TablePublisher, winner: int = 0) -> dict[str, Any]:
    """One short game through the publisher; its record's payload."""
    pub.on_event(Accepted("hand", (0, 0), 1))
    pub.on_event(Accepted("1 mazo", (1, 0), 1))
    pub.on_event(Finished(f"{RULES}\nhand\n1 mazo\n", winner, (15, 0)))
    pub.on_event(NewGame(RULES))
    return [p for p in payloads(pub) if p["kind"] == "record"][-1]


# ---------------------------------------------------------------------------- the book


def test_a_game_is_bound_when_it_starts_and_its_chico_is_played_once(tmp_path: Path) -> None:
    book = TableMatches(tmp_path, "mesa01", fallback="config-match")
    assert book.start(1) == GameMatch("config-match")  # no desk yet: the configuration's
    assert not (tmp_path / ASSIGNMENT_FILE).exists()
    assert book.take(QUARTER)
    assert book.card() == MatchCard(
        "Cuartos de final", "Los del Fondo", "La Barra", 1, 3, (("Ana", "Beto"), ("Carla", "Dani"))
    )
    assert book.start(2) == GameMatch("r3-m2", 1)
    book.abandon(2)  # given up: chico 1 is still to play
    assert book.start(3) == GameMatch("r3-m2", 1)
    assert book.finish(3) == GameMatch("r3-m2", 1)
    assert book.card() is None  # chico 1 played: nothing to show until the desk says
    assert book.waits()  # the seats say so
    assert book.start(4) == GameMatch()  # a second game for chico 1 is for no match
    again = TableMatches(tmp_path, "mesa01", fallback="config-match")  # after a power cut
    assert again.assignment == QUARTER and again.played == {("r3-m2", 1)}
    assert again.of(3) == GameMatch("r3-m2", 1) and again.of(4) == GameMatch()
    assert again.start(5) == GameMatch()
    assert again.take(dataclasses.replace(QUARTER, n=11, chico=2))
    card = again.card()
    assert card is not None and card.follows  # the table played chico 1: "PRÓXIMO"
    assert not again.waits()
    assert again.start(5) == GameMatch("r3-m2", 2)
    assert again.take(Assignment("mesa01", 12, None))  # the table is free
    assert again.card() is None and again.start(6) == GameMatch()
    assert again.of(5) == GameMatch("r3-m2", 2)  # a game keeps the match it started for


def test_an_unreadable_file_is_said_in_spanish(tmp_path: Path) -> None:
    (tmp_path / ASSIGNMENT_FILE).mkdir()  # a folder where the file should be
    book = TableMatches(tmp_path, "mesa01")
    assert book.damage == (
        f"no puedo leer {tmp_path / ASSIGNMENT_FILE}: es una carpeta, no un archivo: "
        "nombrá el archivo"
    )
    assert book.assignment is None


def test_a_damaged_file_is_kept_aside_and_the_journal_still_counts(tmp_path: Path) -> None:
    (tmp_path / ASSIGNMENT_FILE).write_bytes(b'{"v": 1, "assignment": {"table": "mes')
    book = TableMatches(tmp_path, "mesa01")
    assert book.damage is not None and book.assignment is None
    assert book.damage.startswith(f"{tmp_path / ASSIGNMENT_FILE} está dañado (")
    assert book.damage.endswith("): lo guardo aparte y espero a la mesa de control")
    assert (tmp_path / f"{ASSIGNMENT_FILE}.damaged").exists()
    (tmp_path / ASSIGNMENT_FILE).write_text(
        json.dumps(
            {
                "v": 1,
                "assignment": QUARTER.payload() | {"table": "mesa02"},
                "games": {},
                "played": [],
            }
        )
    )
    assert TableMatches(tmp_path, "mesa01").assignment is None  # another table's file


# ---------------------------------------------------------------------------- the publisher


def test_each_record_is_sealed_with_its_games_match_and_chico(tmp_path: Path) -> None:
    pub = publisher(tmp_path, match="r1-m4")
    first = play_game(pub)
    assert first["match"] == "r1-m4" and "chico" not in first  # no desk: the fallback
    assign(pub, QUARTER)
    taken = payloads(pub)[-1]
    assert taken["kind"] == "assigned" and taken["assigned"] == 10
    assert (taken["match"], taken["chico"]) == ("r3-m2", 1)
    second = play_game(pub)
    assert (second["match"], second["chico"]) == ("r3-m2", 1)
    verdict = verify(second["record"], MESA.key)
    assert verdict.ok and verdict.match == "r3-m2" and verdict.game_id == "mesa01-g002"
    third = play_game(pub)  # the desk said nothing new: chico 1 is not played twice
    assert "match" not in third and verify(third["record"], MESA.key).match == "-"
    pub.close(timeout=0.1)


def test_forged_and_replayed_assignments_change_nothing(tmp_path: Path) -> None:
    pub = publisher(tmp_path)
    assign(pub, QUARTER)
    before = (pub.matches.assignment, len(pub.outbox))
    assign(pub, dataclasses.replace(QUARTER, n=11, match="r3-m9"), table_key(KEY, "copa", "x"))
    assign(pub, dataclasses.replace(QUARTER, n=9, chico=2))  # an older one, replayed
    topic, data = signed_assignment(MESA.key, tournament_prefix("copa"), QUARTER)
    pub._on_assignment(topic, data.replace(b'"chico":1', b'"chico":2'))  # changed in transit
    pub._on_assignment(topic.replace("mesa01", "mesa02"), data)
    assert pub.refused_assignments == 4
    pub._on_assignment(topic, data)  # the retained one again, at a reconnection
    assert pub.refused_assignments == 4
    assert (pub.matches.assignment, len(pub.outbox)) == before
    pub.close(timeout=0.1)


def test_a_refusal_before_the_first_deal_does_not_start_the_game(tmp_path: Path) -> None:
    pub = publisher(tmp_path)
    assign(pub, QUARTER)
    pub.on_event(Refused(1, "1 play 5C", "hand_over"))  # a card tapped before the deal
    pub.close(timeout=0.1)
    again = publisher(tmp_path)  # the power went before the deal
    record = play_game(again)
    assert (record["match"], record["chico"]) == ("r3-m2", 1)
    again.close(timeout=0.1)


def test_a_power_cut_after_the_record_still_counts_the_chico(tmp_path: Path) -> None:
    pub = publisher(tmp_path)
    assign(pub, QUARTER)
    play_game(pub)
    pub.close(timeout=0.1)
    path = tmp_path / "outbox" / ASSIGNMENT_FILE
    state = json.loads(path.read_text())
    path.write_text(json.dumps(state | {"played": []}))  # as if the cut came before its save
    again = publisher(tmp_path)
    assert again.matches.played == {("r3-m2", 1)}  # from the journal's record
    assert "match" not in play_game(again)
    again.close(timeout=0.1)


# ---------------------------------------------------------------------------- the seats


def mock_run(state: Path) -> MockRun:
    rules = HouseRules(players=4, target=15, claims=Claims.DECLARED)
    return MockRun(rules, seed=3, human=None, state_dir=state)


def seat_texts(run: MockRun) -> list[tuple[str, ...]]:
    return [screen_texts(screen_for(run.table, seat)) for seat in range(run.rules.players)]


def test_the_seats_show_the_match_until_the_game_starts_and_after_a_restart(
    tmp_path: Path,
) -> None:
    run = mock_run(tmp_path)
    pub = publisher(tmp_path)
    pub.attach(run.mock.service)
    shown = run.mock.service._shown
    assign(pub, dataclasses.replace(QUARTER, chico=2))
    assert all("CHICO 2 DE 3" not in (c.texts if c else ()) for c in shown)  # not yet drawn
    run.mock.pump(0.5)  # the loop's next turn draws what the network thread handed over
    for seat, content in enumerate(shown):
        assert content is not None and content.card, seat
        assert content.texts[6] == "CHICO 2 DE 3"
        # the seat's own team is the inverted name (the last line may carry a notice:
        # "lector conectado" as the mock nodes come up)
        assert [line.inverted for line in content.card].index(True) == 2 + 2 * (seat % 2)
    run.close()
    pub.close(timeout=0.1)
    run = mock_run(tmp_path)  # the power came back: the table still knows its match
    pub = publisher(tmp_path)
    pub.attach(run.mock.service)
    assert all(texts[0] == "CUARTOS DE FINAL" for texts in seat_texts(run))
    run.deal()  # the first deal read: the game's own screens
    assert all("CUARTOS DE FINAL" not in texts for texts in seat_texts(run))
    run.play_out()
    run.mock.service.new_game()
    assert all(texts[0] != "CUARTOS DE FINAL" for texts in seat_texts(run))  # chico 2 played
    record = [p for p in payloads(pub) if p["kind"] == "record"][-1]
    assert (record["match"], record["chico"]) == ("r3-m2", 2)
    run.close()
    pub.close(timeout=0.1)


def test_between_chicos_the_seats_show_the_result_then_what_comes_next(tmp_path: Path) -> None:
    """Read back from the panels' pixels: the won chico's result for RESULT_HOLD_S, then
    the next chico of the match once the desk assigns it ("PRÓXIMO"), or the wait for
    the organiser while it has not (or the match is over)."""
    run = mock_run(tmp_path)
    service = run.mock.service
    panels = [PanelDisplay() for _ in service.displays]
    service.displays = list(panels)  # frames in the seat nodes' page layout
    later = [0.0]
    service.clock = lambda: time.monotonic() + later[0]
    pub = publisher(tmp_path)
    pub.attach(service)
    run.mock.pump(0.0)
    service.redraw(force=True)
    waiting = ("", "", "", "ESPERANDO AL", "ORGANIZADOR", "", "", "")
    # a tournament table, no match yet (the last line may carry "lector conectado")
    assert all(p.card()[:7] == waiting[:7] for p in panels)
    assign(pub, QUARTER)
    run.mock.pump(0.5)
    assert all(p.card()[6] == "CHICO 1 DE 3" for p in panels)
    run.play_out()
    run.mock.pump(0.0)
    won = ["FIN: GANAMOS" if s % 2 == run.game.winner else "FIN: PERDIMOS" for s in range(4)]
    ours = [run.game.score[s % 2] for s in range(4)]
    theirs = [run.game.score[1 - s % 2] for s in range(4)]
    result = [f"{w[5:]} {o} A {t}" for w, o, t in zip(won, ours, theirs, strict=True)]
    later[0] += RESULT_HOLD_S - 1
    run.mock.pump(0.0)
    assert [p.text().split(" | ")[1] for p in panels] == won  # the result, still
    later[0] += 1
    run.mock.pump(0.0)
    for seat, panel in enumerate(panels):  # the desk has not said what comes next
        assert panel.card() == (result[seat], *waiting[1:]), seat
    assign(pub, dataclasses.replace(QUARTER, n=11, chico=2))
    run.mock.pump(0.5)
    for seat, panel in enumerate(panels):
        other = "LA BARRA" if seat % 2 == 0 else "LOS DEL FONDO"
        assert panel.card() == (
            result[seat], "", "PRÓXIMO: CHICO 2 DE 3", "CONTRA", other, "",
            "CUARTOS DE FINAL", "",
        ), seat  # fmt: skip
    service.new_game()  # the referee starts chico 2: its card, until its first deal
    assert all(p.card()[6] == "CHICO 2 DE 3" for p in panels)
    assign(pub, Assignment("mesa01", 12, None))  # the desk moves the match: the table is free
    run.mock.pump(0.5)
    assert all(p.card() == waiting for p in panels)
    run.close()
    pub.close(timeout=0.1)


def test_a_table_left_to_its_configured_match_does_not_wait_for_the_desk(
    tmp_path: Path,
) -> None:
    run = mock_run(tmp_path)
    pub = publisher(tmp_path, match="config-match")
    pub.attach(run.mock.service)
    assert all("ESPERANDO AL" not in texts for texts in seat_texts(run))
    run.close()
    pub.close(timeout=0.1)


def test_a_disk_that_refuses_the_file_does_not_stop_the_table(tmp_path: Path) -> None:
    book = TableMatches(tmp_path / "gone", "mesa01")
    (tmp_path / "gone").write_text("a file where the folder should be")
    assert book.take(QUARTER) and book.unsaved is not None
    assert book.start(1) == GameMatch("r3-m2", 1)  # played from memory
    assert book.finish(1) == GameMatch("r3-m2", 1) and book.card() is None
    (tmp_path / "gone").unlink()
    book.abandon(1)  # the next change writes it all
    assert book.unsaved is None
    assert TableMatches(tmp_path / "gone", "mesa01").played == {("r3-m2", 1)}
