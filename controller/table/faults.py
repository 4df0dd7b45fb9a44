"""What is wrong with each seat's hardware, said where the owner and the players look.

``SeatWatch`` sees the events of every seat before the table does and keeps, per seat,
the faults a player cannot fix (docs/bares/problemas.md):

* the card reader does not answer (the node's ``HELLO`` names no chip, its heartbeat
  says ``NONE``),
* a button is stuck down (the node's ``STUCK``, until its ``FREED``),
* the panel does not answer (the node's ``PANEL ... MISSING``),
* the node says it is another seat than the pin map's (its ``HELLO``: serial numbers
  swapped in pinmap.toml, or a box on the wrong seat),
* a card of another deck, or of none enrolled, was read (kept for ``CARD_FAULT_S``).

Each fault is said three ways, once: a lasting line on the seat's panel that the deal
does not hide (``Table.seat_alerts``: ``SIN LECTOR: AVISÁ AL ENCARGADO``; a panel that
does not answer is said on the other seats), one journal warning in Spanish when it
starts (and one line when it ends), and an entry in the service's status file
(``SeatStatus``) that ``truco-table doctor`` turns into a ``MAL`` line saying what to check.

The seat test (``truco-table doctor --asientos``, the guide's step 6.3) is kept here
too: while it is on, a button or a card plays nothing; the seat shows its name
(``BOTÓN: TRUCO``, ``7 DE ESPADA``), the journal logs it at INFO and the status file
keeps what each seat last heard.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..hal.events import (
    ButtonHeld,
    ButtonPressed,
    ButtonStuck,
    Heartbeat,
    Hello,
    LinkEvent,
    NodeConnected,
    NodeDisconnected,
    PanelReport,
    TagArrived,
    TagConflict,
    TagLeft,
)
from ..notices import Notice, PanelMissingAt, SeatFault, SeatTest, TableNotice
from ..render.notices import card_name

if TYPE_CHECKING:
    from .hardware import SeatStatus
    from .table import Table

__all__ = ["CARD_FAULT_S", "SEAT_TEST_S", "SeatWatch"]

log = logging.getLogger("truco-table")

#: a card of another deck stays a fault this long after it was read (the owner takes
#: it out of the table; the doctor says it meanwhile)
CARD_FAULT_S = 600.0
#: the seat test ends by itself this long after it was turned on (a test forgotten on
#: never keeps a table from playing)
SEAT_TEST_S = 900.0
#: what an MFRC522 answers when no chip is on the bus (MISO low or floating high)
_NO_CHIP = (0x00, 0xFF)

#: each fault's journal warning (its start) and what to check, in the owner's words
_WARNINGS: dict[SeatFault, str] = {
    SeatFault.READER_MISSING: (
        "asiento {seat}: el lector de cartas no contesta: revisá sus seis cables a la "
        "Pico (SDA a GP17, SCK a GP18, MOSI a GP19, MISO a GP16, RST a GP20, 3.3V al 3V3 "
        "y GND) y corré truco-table doctor"
    ),
    SeatFault.PAD_STUCK: (
        "asiento {seat}: el botón {detail} está apretado hace más de 10 s (trabado, o su "
        "cable toca GND): destrabalo o revisá su cable; mientras tanto ese botón no anda"
    ),
    SeatFault.WRONG_SEAT: (
        "asiento {seat}: el nodo {detail}: en pinmap.toml los números de serie de los "
        "asientos están cambiados (o la cajita está en otro asiento); poné cada número de "
        "serie bajo su asiento y reiniciá con sudo systemctl restart truco-table"
    ),
    SeatFault.OTHER_DECK: (
        "asiento {seat}: leyó una carta {detail}: sacala de esta mesa (cada mesa juega "
        "con las 40 cartas de un mazo registrado)"
    ),
}


class SeatWatch:
    """Every seat's faults and the seat test (see the module docstring)."""

    def __init__(
        self,
        players: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        deck_of: Callable[[bytes], object | None] | None = None,
        lookup: Callable[[bytes], object] | None = None,
    ) -> None:
        self.players = players
        self.clock = clock
        self.deck_of = deck_of
        self.lookup = lookup
        #: the status file the doctor reads (the daemon sets it; None: none written)
        self.status: SeatStatus | None = None
        #: what each seat's panel shows for it (``Table.seat_alerts`` is this list)
        self.alerts: list[Notice | None] = [None] * players
        self.faults: list[dict[SeatFault, str]] = [{} for _ in range(players)]
        self.panel_missing: set[int] = set()
        self._card_until: list[float | None] = [None] * players
        #: the seat test: on until this time (``time.monotonic``), None: off
        self.test_until: float | None = None
        #: shows a seat test's line on a seat (the service's: ``Table.tell``)
        self.tell: Callable[[int, Notice], None] | None = None
        #: shows a line on every seat for a while (a second service stopped)
        self.tell_all: Callable[[Notice], None] | None = None
        #: told when something is to end at a time (the service's timer heap then calls
        #: ``tick`` at that time); None: the owner calls ``tick`` as it likes
        self.wake_at: Callable[[float], None] | None = None

    def attach(self, table: Table) -> None:
        """A new table (a game restored or started): its seats show this watch's lines
        and tell it of the cards they refuse."""
        if len(table.seat_alerts) == len(self.alerts):
            table.seat_alerts = self.alerts
        table.on_foreign_card = self.refused_card

    # ---------------------------------------------------------------- the events

    def event(self, seat: int, event: LinkEvent) -> tuple[bool, bool]:
        """Looks at one event before the table does. Returns (changed, taken): whether
        a panel's line changed, and whether the event is the watch's alone (the seat
        test's buttons and cards, a stuck button's report)."""
        if type(event) in _PLAYED and self.test_until is None:  # most events: at once
            return _NOTHING
        if not 0 <= seat < self.players:
            return _NOTHING
        if isinstance(event, Heartbeat):
            return self._set(seat, SeatFault.READER_MISSING, None if event.reader_ok else ""), False
        if isinstance(event, Hello):
            changed = self._set(
                seat,
                SeatFault.READER_MISSING,
                "" if event.reader_version in _NO_CHIP else None,
            )
            wrong = None
            if event.seat is not None and event.seat != seat:
                wrong = (
                    f"{event.serial} dice que es del asiento {event.seat} y el mapa de pines "
                    f"lo pone en el asiento {seat}"
                )
            return self._set(seat, SeatFault.WRONG_SEAT, wrong) or changed, False
        if isinstance(event, ButtonStuck):
            return self._set(seat, SeatFault.PAD_STUCK, event.name if event.stuck else None), True
        if isinstance(event, PanelReport):
            return self._panel(seat, event.ok), False
        if isinstance(event, NodeDisconnected):
            # what the node said goes with it (its panel, reader, buttons are unknown
            # until it is back); the seat shows its node unplugged meanwhile
            changed = self._panel(seat, True)
            for fault in (SeatFault.READER_MISSING, SeatFault.PAD_STUCK, SeatFault.WRONG_SEAT):
                changed = self._set(seat, fault, None, quiet=True) or changed
            return changed, False
        if isinstance(event, NodeConnected):
            return False, False
        if self.testing():
            if isinstance(event, ButtonPressed | ButtonHeld):
                self._heard(seat, SeatTest(button=event.name), f"botón {event.name}")
                return True, True
            if isinstance(event, TagArrived):
                card = self.lookup(event.uid) if self.lookup is not None else None
                said = str(card) if card is not None else None
                if said is None:
                    self._heard(seat, None, f"etiqueta {event.uid.hex().upper()} (desconocida)")
                    return True, False  # the table says "carta desconocida"
                self._heard(
                    seat,
                    SeatTest(card=card),  # type: ignore[arg-type]
                    f"carta {card_name(said)} ({event.uid.hex().upper()})",
                )
                return True, True
        return False, False

    def refused_card(self, seat: int, uid: bytes, other_deck: bool) -> None:
        """The table refused a card at ``seat``: of another deck, or of none enrolled
        (the table redraws the seat: its refusal is shown)."""
        if not 0 <= seat < self.players:
            return
        tag = uid.hex().upper()
        deck = self.deck_of(uid) if self.deck_of is not None else None
        name = getattr(deck, "name", None)
        if other_deck and name is not None:
            detail = f"del mazo «{name}», no del que se está jugando (etiqueta {tag})"
        elif other_deck:
            detail = f"de otro mazo (etiqueta {tag})"
        else:
            detail = f"que no está en ningún mazo registrado (etiqueta {tag})"
        until = self._card_until[seat] = self.clock() + CARD_FAULT_S
        if self.wake_at is not None:
            self.wake_at(until)
        self._set(seat, SeatFault.OTHER_DECK, detail)

    def tick(self) -> bool:
        """Ends what time ends (a card fault's hold, the seat test); True when a panel's
        line changed."""
        now = self.clock()
        changed = False
        for seat, until in enumerate(self._card_until):
            if until is not None and now >= until:
                self._card_until[seat] = None
                changed = self._set(seat, SeatFault.OTHER_DECK, None) or changed
        if self.test_until is not None and now >= self.test_until:
            self.set_test(False)
            changed = True
        return changed

    def second_run(self, pid: int) -> None:
        """A second ``truco-table run`` on this table stopped at the lock (it dropped
        this word in the control folder): said in the journal, on the seats, and to the
        doctor for a while."""
        log.warning(
            "otro truco-table run (proceso %d) quiso arrancar esta misma mesa y se paró "
            "sin tocar nada: la mesa ya anda como servicio; para probar a mano, pará antes "
            "el servicio con sudo systemctl stop truco-table",
            pid,
        )
        if self.tell_all is not None:
            self.tell_all(TableNotice.SECOND_RUN)
        if self.status is not None:
            self.status.second_run(pid)

    # ---------------------------------------------------------------- the seat test

    def testing(self) -> bool:
        return self.test_until is not None

    def set_test(self, on: bool) -> None:
        """Turn the seat test on (for ``SEAT_TEST_S`` at most) or off."""
        was = self.testing()
        self.test_until = self.clock() + SEAT_TEST_S if on else None
        if self.test_until is not None and self.wake_at is not None:
            self.wake_at(self.test_until)
        if on and not was:
            log.info(
                "prueba de asientos: cada botón y cada carta muestran su nombre en su "
                "asiento y no juegan (hasta que termine truco-table doctor --asientos)"
            )
        elif was and not on:
            log.info("prueba de asientos terminada: la mesa juega otra vez")
        if self.status is not None:
            self.status.set_test(on)

    def _heard(self, seat: int, shown: SeatTest | None, said: str) -> None:
        log.info("prueba: asiento %d: %s", seat, said)
        if shown is not None and self.tell is not None:
            self.tell(seat, shown)
        if self.status is not None:
            self.status.heard(seat, said)

    # ---------------------------------------------------------------- the faults

    def _set(self, seat: int, fault: SeatFault, detail: str | None, *, quiet: bool = False) -> bool:
        faults = self.faults[seat]
        if detail is None:
            if fault not in faults:
                return False
            del faults[fault]
            if not quiet:
                log.info("asiento %d: %s", seat, _ENDED[fault])
        else:
            if faults.get(fault) == detail:
                return False
            if fault not in faults:  # once, when it starts (not at every heartbeat)
                log.warning(_WARNINGS[fault].format(seat=seat, detail=detail))
            faults[fault] = detail
        self._write(seat)
        return self._show()

    def _panel(self, seat: int, ok: bool) -> bool:
        if ok == (seat not in self.panel_missing):
            return False
        if ok:
            self.panel_missing.discard(seat)
            log.info("asiento %d: la pantalla contesta otra vez", seat)
        else:
            self.panel_missing.add(seat)
            log.warning(
                "asiento %d: la pantalla no contesta: revisá sus cuatro cables a la Pico "
                "(GND, VCC al 3V3, SCL a GP1, SDA a GP0) y su dirección, y corré "
                "truco-table doctor",
                seat,
            )
        return self._show()

    def _show(self) -> bool:
        """Each seat's line: its own first fault, else another seat's missing panel."""
        changed = False
        missing = sorted(self.panel_missing)
        for seat in range(self.players):
            faults = self.faults[seat]
            shown: Notice | None = next((f for f in SeatFault if f in faults), None)
            if shown is None:
                others = [s for s in missing if s != seat]
                shown = PanelMissingAt(others[0]) if others else None
            if shown != self.alerts[seat]:
                self.alerts[seat] = shown
                changed = True
        return changed

    def _write(self, seat: int) -> None:
        if self.status is not None:
            self.status.faults(seat, {f.value: d for f, d in self.faults[seat].items()})

    def snapshot(self) -> dict[int, dict[str, Any]]:
        """Each seat's faults (for tests and the status file)."""
        return {s: {f.value: d for f, d in self.faults[s].items()} for s in range(self.players)}


#: a player's events, which only the seat test takes
_PLAYED = frozenset({ButtonPressed, ButtonHeld, TagArrived, TagLeft, TagConflict})
_NOTHING = (False, False)

#: the journal's line when a fault ends
_ENDED: dict[SeatFault, str] = {
    SeatFault.READER_MISSING: "el lector de cartas contesta otra vez",
    SeatFault.PAD_STUCK: "el botón trabado se soltó",
    SeatFault.WRONG_SEAT: "el nodo es el de este asiento",
    SeatFault.OTHER_DECK: "ya no se leyó ninguna carta de otro mazo",
}
