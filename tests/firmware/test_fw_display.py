"""Protocol 4's display updates on the node, on CPython: DACK on request, HB's written.

(The same behaviour is checked on the real MicroPython by mpy/fw_checks.py's protocol 4
checks, which run here too, and by test_fw_display_on_micropython.py with the Pi's own
writer.)  The panel is the SSD1306 model of fake_oled.py.
"""

from __future__ import annotations

import random

import pytest
from fw_checks import BAD_ACK_ARGS, PanelNode, _update
from hypothesis import given
from hypothesis import strategies as st
from seatnode import display, protocol


@pytest.mark.parametrize("mode", BAD_ACK_ARGS)
def test_a_fifth_argument_other_than_ack_or_dash_is_malformed(mode: str) -> None:
    with pytest.raises(protocol.ProtocolError) as caught:
        display.check("DU", ["7", "1", "47", "FULL", mode])
    assert caught.value.reason == "malformed"


@given(
    st.text(
        st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="*"),
        min_size=1,
        max_size=32,
    ).filter(lambda text: text not in ("ACK", "-"))
)
def test_any_other_fifth_argument_is_malformed_on_the_wire(mode: str) -> None:
    node = PanelNode(4)
    node.write(0, b"\x01" * 9, full=True)
    errors = node.app.rx_errors
    node.send(b"\n" + protocol.encode(5, "DU", ["1", "1", "47", "DIFF", mode]))
    assert node.app.rx_errors == errors + 1
    assert node.app.block_wanted == 0  # no block expected: the lines after it are lines
    assert node.app.display.written == 0


@pytest.mark.parametrize(("ack", "full"), [("ACK", True), ("ACK", False), ("-", True)])
def test_the_header_says_whether_the_update_is_acknowledged(ack: str, full: bool) -> None:
    kind = "FULL" if full else "DIFF"
    assert display.check("DU", ["65535", "32", "2048", kind, ack]) == (
        65535,
        32,
        2048,
        full,
        ack == "ACK",
    )
    assert display.check("DU", ["65535", "32", "2048", kind]) == (65535, 32, 2048, full, True)


def test_random_updates_are_acknowledged_exactly_when_asked() -> None:
    """Updates of protocol 4 (ACK or -) and 3 in any order, some lost on the way: a DACK
    comes for exactly the ones written that asked for it (or had protocol 3's DU), the
    heartbeat names the last one written while in sync, the glass shows it."""
    rnd = random.Random(4)
    node = PanelNode(4)
    number, synced, shown = 0, False, bytes(9)
    ignored = 0
    for _ in range(300):
        data = bytes(rnd.randrange(256) for _ in range(9))
        full = rnd.random() < (0.2 if synced else 0.5)
        ack = rnd.choice(["ACK", "-", None])
        gap = rnd.random() < 0.1  # the update before this one lost on the way
        if gap:
            number = (number + 1) % 65536
        said = node.write(number, data, full=full, ack=ack)
        if full or (synced and not gap):  # written
            assert said == ([("DACK", [str(number)])] if ack != "-" else []), (number, said)
            synced, shown = True, data
        elif synced:  # a DIFF after a gap: lost
            assert said == [("DLOST", [str(number)])], (number, said)
            synced = False
        else:  # a DIFF while out of sync: ignored (DLOST was said, and repeats by itself)
            assert said == [], (number, said)
            ignored += 1
        assert node.shown() == shown
        beat = node.beat()
        assert beat[3] == (str(number) if synced else "-"), (number, synced, beat)
        number = (number + 1) % 65536
    assert node.app.rx_errors == 0 and node.app.display.lost > 3 and ignored > 3


@pytest.mark.parametrize("panel", [True, False])
def test_panel_without_arguments_asks_for_the_report(panel: bool) -> None:
    """Firmware 0.5.0: a builder's box test (truco-table seat test) asks for the panel's
    report whenever it starts; it changes nothing, and a node without a panel says
    nothing.  With arguments, PANEL still names the panel to drive."""
    node = PanelNode(4, panel=panel)
    node.wire.take()
    node.send(protocol.encode(7, "PANEL"))
    said = node.wire.take()
    assert said == ([("PANEL", ["ssd1306", "3C", "OK"])] if panel else [])
    assert node.app.rx_errors == 0
    node.send(protocol.encode(8, "PANEL", ["ssd1306", "3C", "9"]))
    assert node.app.rx_errors == 1  # a third argument: malformed as before


def test_the_node_says_when_its_next_step_checks_a_block() -> None:
    """Firmware 0.6.1: ``check_next`` is True exactly while the next ``step`` would check
    a block (the node's loop polls the reader first), and a tick without display work
    leaves the update waiting where it was."""
    node = PanelNode(4)
    screen = bytes(i * 5 & 0xFF for i in range(1024))
    link = node.app.display
    assert not link.check_next
    node.now += 1
    node.app.receive(_update(0, 0, screen, full=True, ack="ACK", box=(0, 7, 0, 127)), node.now)
    assert link.check_next and node.wire.take() == []
    for _ in range(3):  # passes without display work: nothing moves
        node.now += 1
        node.app.tick(node.now, False)
        assert link.check_next and node.wire.take() == []
    node.now += 1
    node.app.tick(node.now)  # the check: its panel bytes from the next pass on
    assert not link.check_next and link.pending
    node.settle()
    assert node.wire.take() == [("DACK", ["0"])] and node.model.glass() == screen
    assert not link.check_next and not link.pending
