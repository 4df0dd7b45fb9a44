"""The tournament refereeing profile, and a table's ``[tournament]`` settings."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from controller.engine import Action, Claims, Falta, HouseRules
from controller.table.mock_table import MockTable
from controller.table.service import ServiceConfig
from controller.tournament.desk.records import rules_problems
from controller.tournament.table.link import load_tournament_settings
from controller.tournament.table.profile import (
    REFUSAL_MARK,
    UNDO_MARK,
    profile_problems,
    tournament_profile,
    tournament_service_config,
)
from controller.tournament.table.publisher import TablePublisher
from controller.tournament.wire.topics import decode
from controller.transcript import parse, replay


def test_the_profile_imposes_declared_claims_and_no_implicit_quiero() -> None:
    friendly = HouseRules(
        players=4, target=15, flor=True, falta=Falta.MALAS_BUENAS, implicit_quiero=True
    )
    strict = tournament_profile(friendly)
    assert strict.claims is Claims.DECLARED and strict.implicit_quiero is False
    assert (strict.players, strict.target, strict.flor, strict.falta) == (
        4,
        15,
        True,
        Falta.MALAS_BUENAS,
    )
    assert profile_problems(strict) == []
    assert len(profile_problems(friendly)) == 2
    config = tournament_service_config(ServiceConfig(friendly))
    assert config.record_refusals and config.rules == strict


def test_pica_pica_is_the_tournaments_choice_at_six_and_off_elsewhere() -> None:
    """RULES.md section 13: the profile keeps a tournament's pica_pica at tables of six
    and writes it off at tables of two or four, where it never applies."""
    for on in (True, False):
        six = tournament_profile(HouseRules(players=6, pica_pica=on))
        assert six.pica_pica is on and profile_problems(six) == []
    for players in (2, 4):
        strict = tournament_profile(HouseRules(players=players, pica_pica=True))
        assert strict.pica_pica is False and "pica_pica=off" in strict.to_line()
        assert profile_problems(strict) == []
    wanted = HouseRules(players=6, pica_pica=True)
    assert rules_problems(tournament_profile(wanted), wanted) == []
    assert rules_problems(tournament_profile(HouseRules(players=6)), wanted) == [
        "pica_pica=off (the tournament plays pica_pica=on)"
    ]
    # a record of four that says pica_pica=on played the very game of pica_pica=off
    four = HouseRules(players=4, claims=Claims.DECLARED)
    assert rules_problems(dataclasses.replace(four, pica_pica=True), four) == []
    assert rules_problems(four, HouseRules(players=4, pica_pica=True)) == []


def test_a_pica_pica_game_under_the_profile(tmp_path: Path) -> None:
    """Six seats under the profile, a pica-pica hand: points told in the seat's pica
    (claims declared), a refusal in another pica written into the record, which
    replays to the same picas' points."""
    from controller.engine import Card
    from controller.table.store import plain

    rules = tournament_profile(HouseRules(players=6, pica_pica=True))
    deal = {0: "7E 6E 1C", 1: "7O 5O 3B", 2: "6C 3C 11O", 3: "5C 4C 2O", 4: "1B 2B 12E"}
    deal[5] = "7B 6B 10E"
    hands = {s: tuple(Card.from_str(c) for c in t.split()) for s, t in deal.items()}
    # a game resumed at 5-0 (a record's score line): its first hand is a pica-pica one
    (tmp_path / "current.truco").write_text(f"{rules.to_line()}\nscore 5 0\n", encoding="utf-8")
    with MockTable(rules, state_dir=tmp_path) as mock:
        mock.service.config = tournament_service_config(mock.service.config)
        mock.deal(hands)
        assert mock.game.pica_pica
        for text in ("0 envido", "3 quiero", "0 declare 33"):
            assert mock.act(Action.from_str(text)) is None
        assert mock.act(Action.from_str("4 play 1B")) is not None  # seat 1 leads pica 1
        assert mock.act(Action.from_str("3 son-buenas")) is None
        record = plain((tmp_path / "current.truco").read_text(encoding="utf-8"))
    assert record.startswith(rules.to_line() + "\nscore 5 0\n")
    assert f"{REFUSAL_MARK}4 play 1B (not_your_turn)" in record
    game = replay(parse(record)).game
    awards = game.hands[-1].awards
    assert [(a.team, a.points, a.pica) for a in awards] == [(0, 2, 0)]
    assert game.score == (7, 0)


def test_refusals_and_the_referees_undo_stay_in_the_record(tmp_path: Path) -> None:
    rules = tournament_profile(HouseRules())
    hands = {0: ("1E", "7O", "4C"), 1: ("1B", "3C", "12O")}
    from controller.engine import Card

    with MockTable(rules, state_dir=tmp_path) as mock:
        service = mock.service
        service.config = dataclasses.replace(service.config, record_refusals=True)
        publisher = TablePublisher(
            "mesa01", "127.0.0.1", 1, outbox_dir=tmp_path / "outbox", tournament="t"
        )
        publisher.attach(service)
        mock.deal({s: tuple(Card.from_str(c) for c in cs) for s, cs in hands.items()})
        mano = mock.game.turn
        assert mano is not None
        other = 1 - mano
        wrong = Action.from_str(f"{other} play {hands[other][0]}")
        first = Action.from_str(f"{mano} play {hands[mano][1]}")
        then = Action.from_str(f"{mano} play {hands[mano][2]}")
        assert mock.act(wrong) is not None  # out of turn: refused
        assert mock.act(first) is None
        assert service.command("undo")
        assert mock.act(then) is None
        on_disk = (tmp_path / "current.truco").read_text(encoding="utf-8")
        publisher.close(timeout=0.1)
    assert f"{REFUSAL_MARK}{wrong} (not_your_turn)" in on_disk
    assert f"{UNDO_MARK}{first}" in on_disk
    game = replay(parse(on_disk)).game
    assert [str(a) for a in game.hand_actions] == [str(then)]
    kinds = [decode(e.payload) for e in publisher.outbox]
    assert [p["kind"] for p in kinds if p] == [
        "state",
        "deal",
        "refusal",
        "action",
        "undo",
        "action",
    ]
    undo = next(p for p in kinds if p and p["kind"] == "undo")
    assert undo["text"] == f"{UNDO_MARK}{first}" and undo["action"] == str(first)


def test_tournament_settings(tmp_path: Path) -> None:
    (tmp_path / "t.key").write_text("00" * 16 + "\n")
    (tmp_path / "t.key").chmod(0o600)  # a table refuses a key others can read
    config = tmp_path / "table.toml"
    config.write_text(
        "[table]\nplayers = 2\n\n"
        "[tournament]\n"
        'name = "clausura"\ntable_id = "mesa07"\nbroker = "192.168.1.10:1884"\n'
        'key_file = "t.key"\nkey_id = "clausura-key"\n'
    )
    settings = load_tournament_settings(config)
    assert settings is not None
    assert (settings.name, settings.table_id) == ("clausura", "mesa07")
    assert (settings.broker_host, settings.broker_port) == ("192.168.1.10", 1884)
    assert settings.key is not None and settings.key.key_id == "clausura-key"
    assert settings.profile == "tournament" and settings.keepalive_s == 5
    assert "00" not in repr(settings)  # the key never shows

    (tmp_path / "plain.toml").write_text("[table]\nplayers = 2\n")
    assert load_tournament_settings(tmp_path / "plain.toml") is None
    for bad in ('table_id = "mesa 7"', 'profile = "strict"', "keepalive_s = 0", "colour = 1"):
        (tmp_path / "bad.toml").write_text(
            f'[tournament]\nname = "x"\ntable_id = "m"\nbroker = "h"\n{bad}\n'
        )
        with pytest.raises(ValueError):
            load_tournament_settings(tmp_path / "bad.toml")


def test_connect_table(tmp_path: Path) -> None:
    from controller.tournament.sim.mosquitto import free_port
    from controller.tournament.table.link import TournamentSettings, connect_table

    settings = TournamentSettings("clausura", "mesa07", "127.0.0.1", free_port())
    with MockTable(tournament_profile(HouseRules()), state_dir=tmp_path) as mock:
        publisher = connect_table(mock.service, settings, tmp_path)
        try:
            assert publisher.outbox.dir == tmp_path / "outbox" / "clausura"
            assert publisher.prefix == "truco/clausura/tables/mesa07"
            first = decode(next(iter(publisher.outbox)).payload)
            assert first is not None and first["kind"] == "state"
        finally:
            publisher.close(timeout=0.1)
