"""The one wiring (build_hardware) from the shipped configuration, on mock parts and the Pi's."""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path

import pytest

from controller.engine import Card, HouseRules
from controller.hal.events import ButtonHeld, ButtonPressed, NodeConnected, TagArrived, TagLeft
from controller.hal.factory import HARDWARE_ENV, NoDisplay, PiHardware, factory_named
from controller.hal.gpio_pad import DEFAULT_PINS
from controller.hal.mock import MockDeck, MockHardware
from controller.hal.node_display import NodeDisplay
from controller.hal.wiring import build_hardware
from controller.table.config import load_config
from controller.table.mock_table import MockTable
from tests.helpers import wait_until

ROOT = Path(__file__).resolve().parents[2]


def shipped_config(tmp_path: Path, topology: str = "nodes", players: int = 4) -> Path:
    """systemd/table.toml next to the shipped pin maps, as the install puts them: the
    owner sets players (and for a two-seat GPIO table the pin map), and deletes nothing."""
    for name in ("pinmap.toml", "pinmap-mux.toml", "pinmap-gpio.toml"):
        shutil.copy(ROOT / "hardware" / name, tmp_path / name)
    text = (ROOT / "systemd" / "table.toml").read_text()
    assert text.count("players = 4") == 1 and text.count('pinmap = "pinmap.toml"') == 1
    text = text.replace("players = 4", f"players = {players}")
    if topology == "gpio":
        text = text.replace('pinmap = "pinmap.toml"', 'pinmap = "pinmap-gpio.toml"')
    path = tmp_path / "table.toml"
    path.write_text(text)
    return path


def wait_for(events: list[tuple[int, object]], predicate: object) -> None:
    assert wait_until(lambda: predicate in events), f"{predicate} not in {events}"


def test_the_shipped_pin_map_wires_a_node_per_seat(tmp_path: Path) -> None:
    config = load_config(shipped_config(tmp_path))
    parts = MockHardware()
    hw = build_hardware(config, parts)
    # the shipped pin map hangs each seat's panel on its node: a NodeDisplay, driven by
    # the mock node (none on the Pi's bus)
    assert len(hw.displays) == 4 and not parts.displays
    assert all(isinstance(display, NodeDisplay) for display in hw.displays)
    events: list[tuple[int, object]] = []
    hw.start(lambda seat, event: events.append((seat, event)))
    try:
        assert sorted(hw.links) == [0, 1, 2, 3] and not hw.pads and not hw.readers
        # each seat's node is the one with the pin map's serial number
        assert [parts.nodes[s].serial for s in range(4)] == [n.serial for n in config.nodes]
        assert all(
            link.heartbeat_timeout == config.heartbeat_timeout_s for link in hw.links.values()
        )
        for seat in range(4):
            wait_for(events, (seat, NodeConnected(parts.nodes[seat].path)))
        assert wait_until(
            lambda: all(d.port.ready for d in hw.displays if isinstance(d, NodeDisplay))
        ), "the nodes did not report their panels"
        parts.nodes[2].press("truco")
        wait_for(events, (2, ButtonPressed("truco")))
    finally:
        hw.close()
    assert all(not link.connected for link in hw.links.values())


def test_the_shipped_pin_map_wires_two_gpio_seats(tmp_path: Path) -> None:
    config = load_config(shipped_config(tmp_path, "gpio", players=2))
    parts = MockHardware()
    hw = build_hardware(config, parts)
    events: list[tuple[int, object]] = []
    hw.start(lambda seat, event: events.append((seat, event)))
    try:
        assert not hw.links and sorted(hw.pads) == sorted(hw.readers) == [0, 1]
        assert hw.pads[1].pins == DEFAULT_PINS[1]
        assert [r.name for r in hw.readers.values()] == ["/dev/spidev0.0", "/dev/spidev0.1"]
        hw.poll()  # the readers open: their shared reset line (reader_reset_pin = 25) goes high
        assert parts.pin_factory.pin(25).state and all(r.ok for r in hw.readers.values())
        mazo = parts.pin_factory.pin(DEFAULT_PINS[0]["mazo"])
        mazo.drive_low()
        parts.now += config.hold_s + 0.05
        hw.poll()
        mazo.drive_high()
        parts.now += 0.05
        hw.poll()
        assert events == [(0, ButtonHeld("mazo"))]
        uid = MockDeck().uid(Card.from_str("7E"))
        from controller.hal.mock_mfrc522 import SimTag

        parts.spi[1].put(SimTag(uid))
        for _ in range(3):
            hw.poll()
            parts.now += 0.05
        parts.spi[1].put()
        for _ in range(20):
            hw.poll()
            parts.now += 0.05
        assert events[1:] == [(1, TagArrived(uid)), (1, TagLeft(uid))]
    finally:
        hw.close()


def test_the_pi_factory_opens_panels_only_where_the_pin_map_lists_one(tmp_path: Path) -> None:
    text = shipped_config(tmp_path).read_text()
    (tmp_path / "table.toml").write_text(text.replace("players = 4", "players = 6"))
    pinmap = (tmp_path / "pinmap.toml").read_text()
    (tmp_path / "pinmap.toml").write_text(pinmap[: pinmap.index("[[display.seat]]\nseat = 4")])
    config = load_config(tmp_path / "table.toml")
    hw = build_hardware(config, PiHardware())
    kinds = [type(d) for d in hw.displays]
    # each listed panel on its seat's node (one cable a seat); seats 4 and 5 list none
    assert kinds == [NodeDisplay] * 4 + [NoDisplay] * 2
    hw.close()


@pytest.mark.parametrize("players", [2, 4, 6])
def test_two_four_and_six_seats_from_the_shipped_files_without_deleting(
    tmp_path: Path, players: int
) -> None:
    config = load_config(shipped_config(tmp_path, players=players))
    assert [n.seat for n in config.nodes] == list(range(players))
    assert sorted(config.displays) == list(range(players))
    hw = build_hardware(config, PiHardware())
    assert [type(d) for d in hw.displays] == [NodeDisplay] * players
    hw.close()


def test_the_factory_is_chosen_by_one_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(HARDWARE_ENV, raising=False)
    assert isinstance(factory_named(), PiHardware)
    monkeypatch.setenv(HARDWARE_ENV, "mock")
    mock = factory_named()
    assert isinstance(mock, MockHardware)
    mock.close()
    with pytest.raises(ValueError, match="pi or mock"):
        factory_named("fpga")


def test_the_mock_table_runs_the_same_wiring() -> None:
    with MockTable(HouseRules(players=2), topology="gpio") as mock:
        assert sorted(mock.hardware.pads) == [0, 1] and not mock.hardware.links
        mock.deal({0: tuple(Card.from_str(c) for c in ["7C", "6C", "3E"]),
                   1: tuple(Card.from_str(c) for c in ["2O", "1B", "4B"])})  # fmt: skip
        mock.tap(0, Card.from_str("3E"))
        assert [str(a) for a in mock.game.hand_actions] == ["0 play 3E"]


def test_the_service_refuses_an_unknown_hardware_setting(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    config = shipped_config(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "run", "--config", str(config)],
        env={**os.environ, HARDWARE_ENV: "fpga"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "TRUCO_TABLE_HARDWARE: hardware must be pi or mock, not 'fpga'" in done.stderr


def test_a_stuck_button_on_the_gpio_pad_is_the_node_s_stuck(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 49: a button wired to the Pi held down 10 s (a line shorted to GND) is
    ``SeatFault.PAD_STUCK`` as a node's STUCK is: on the seat's panel, in the status the
    doctor reads, one journal warning; letting it go clears it."""
    from controller.notices import SeatFault
    from controller.render.screen import plain

    from .panel_text import PanelDisplay, panel_text

    panels = [PanelDisplay(pages=False) for _ in range(2)]

    def says(mock: MockTable) -> str:
        mock.pump(0.05)
        return " ".join(p for p in panel_text(panels[0].frame) if p) if panels[0].frame else ""

    with (
        caplog.at_level(logging.INFO),
        MockTable(HouseRules(players=2), topology="gpio", displays=panels) as mock,
    ):
        pad = mock.hardware.pads[0]
        pin = mock.parts.pin_factory.pin(pad.pins["truco"])
        pin.drive_low()
        mock.parts.now += 10.5  # the mock clock: past the hold and the stuck time
        pad.poll()
        deadline = time.monotonic() + 120
        while plain("Botón trabado: avisá") not in says(mock):
            assert time.monotonic() < deadline, says(mock)
        assert mock.service.watch.faults[0] == {SeatFault.PAD_STUCK: "truco"}
        assert mock.service.watch.faults[1] == {}
        pin.drive_high()
        mock.parts.now += 0.1
        pad.poll()
        while SeatFault.PAD_STUCK in mock.service.watch.faults[0]:
            mock.pump(0.05)
            assert time.monotonic() < deadline
    stuck = [r for r in caplog.records if "el botón truco está apretado" in r.getMessage()]
    assert [r.levelno for r in stuck] == [logging.WARNING]
    assert "asiento 0" in stuck[0].getMessage()
