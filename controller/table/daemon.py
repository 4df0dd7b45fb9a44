"""``truco-table run``: the table service, on real hardware or on mock hardware.

Started by systemd (``systemd/truco-table.service``, ``Type=notify``): logs go to
standard error, which the journal keeps; ``READY=1`` is sent once the hardware is up and
the game restored; the watchdog is pinged from the event loop at half of
``WatchdogSec``; SIGTERM stops the loop, closes the links and syncs the record.

Exit status: 0 stopped by a signal; 2 a bad configuration, deck registry or tournament
settings; 3 the hardware cannot start (``HARDWARE_EXIT``: no GPIO pin factory, a pin or
device another program holds). Each is one line on standard error (the journal), and the
unit does not restart on 2 or 3 (``RestartPreventExitStatus``): only a fix can help.
Nodes, readers and panels that are missing are not start failures: the table starts
and takes them when they appear.

A layer above the table may attach a link to the service (a :class:`ServiceLink`, read
from the same configuration file by a :data:`LoadLink`): the tournament's, which
``controller.cli.service`` wires in. The table itself never imports the tournament.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ..hal.factory import HARDWARE_ENV, factory_named
from ..hal.wiring import HardwareStartError, build_hardware
from .answers import ANSWERS_FILE
from .config import ConfigError, TableConfig, load_config
from .cpu import keep_loop_on
from .hardware import HARDWARE_EXIT, SeatStatus
from .lock import TableLock, TableLocked
from .notify import Notifier
from .service import ServiceConfig, TableService, freeze_heap

__all__ = ["LoadLink", "ServiceLink", "configure_logging", "run_service", "watchdog_interval"]

log = logging.getLogger("truco-table")


class ServiceLink(Protocol):
    """What a layer above the table attaches to its service (e.g. a tournament's link)."""

    def service_config(self, config: ServiceConfig) -> ServiceConfig:
        """The service's configuration as the link needs it (e.g. a stricter profile)."""
        ...

    def attach(self, service: TableService, state_dir: Path) -> Callable[[], None]:
        """Attach to the started service; returns what closes the link at shutdown."""
        ...


LoadLink = Callable[[Path, TableConfig], ServiceLink | None]
"""Reads a link's settings from the table's configuration file (``None``: no link);
raises ``ValueError`` on bad settings (the daemon exits 2, one line)."""


def configure_logging(verbose: bool = False) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )


def watchdog_interval() -> float | None:
    """Half of systemd's watchdog period (``WATCHDOG_USEC``), if it set one for us."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        return max(0.05, int(usec) / 2e6)
    except ValueError:
        return None


def stop_on_signals() -> threading.Event:
    stop = threading.Event()

    def handler(signum: int, frame: object) -> None:
        log.info("señal %d: la mesa se detiene", signum)
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    return stop


def run_service(config_path: Path, load_link: LoadLink | None = None) -> int:
    """The real table, from its configuration file, with the link ``load_link`` reads."""
    configure_logging()
    try:
        config = load_config(config_path)
    except ConfigError as e:
        print(f"truco-table: la configuración tiene un error: {e}", file=sys.stderr)
        return 2
    lock = TableLock(config.state_dir)
    try:
        lock.acquire()  # one service per table: a second run stops here, touching nothing
    except TableLocked as e:
        print(f"truco-table: {e}", file=sys.stderr)
        _tell_the_running_one(config)
        return 2
    except OSError as e:
        print(
            f"truco-table: no puedo usar la carpeta de la partida {config.state_dir}: "
            f"{e.strerror or e}. Revisá state_dir en {config_path}.",
            file=sys.stderr,
        )
        return 2
    try:
        return _run_locked(config_path, config, load_link)
    finally:
        lock.release()


def _tell_the_running_one(config: TableConfig) -> None:
    """The running service is told (a command in its control folder, never its record
    or status): its journal and the doctor say that a second one was started."""
    from .commands import drop_command

    # another user's folder: this run's own line says it all
    with contextlib.suppress(OSError, ValueError):
        drop_command(config.state_dir, "second-run", str(os.getpid()))


def _start_broadcast(service: TableService, config: TableConfig) -> list[Callable[[], None]]:
    """The table's own broadcast and TV pages (``[broadcast]``); a port that cannot be
    opened is said in the journal, and the table referees on without them."""
    from .broadcast import TableBroadcast

    assert config.broadcast is not None
    broadcast = TableBroadcast(config.broadcast)
    broadcast.attach(service)
    try:
        server = broadcast.serve()
    except OSError as e:
        log.error(
            "la transmisión no puede abrir el puerto %d: %s (la mesa sigue sin ella)",
            config.broadcast.port,
            e.strerror or e,
        )
        return []
    log.info("transmisión y TV en el puerto %d", server.server_address[1])

    def close() -> None:
        server.shutdown()
        server.server_close()

    return [close]


def _run_locked(config_path: Path, config: TableConfig, load_link: LoadLink | None) -> int:
    from ..hal.deck import DeckError, WatchedRegistry

    try:
        registry = WatchedRegistry(config.decks)  # a deck enrolled later is used at once
    except DeckError as e:
        print(f"truco-table: bad deck registry: {e}", file=sys.stderr)
        return 2
    if not registry.names:
        log.warning(
            "no hay ningún mazo registrado en %s: todas las cartas van a ser desconocidas "
            "(registrá uno con `truco-table enroll`)",
            config.decks,
        )
    link = None
    if load_link is not None:
        try:
            link = load_link(config_path, config)
        except ValueError as e:
            print(f"truco-table: la configuración tiene un error: {e}", file=sys.stderr)
            return 2
    try:
        factory = factory_named()  # the Pi's own, or TRUCO_TABLE_HARDWARE=mock
    except ValueError as e:
        print(f"truco-table: {HARDWARE_ENV}: {e}", file=sys.stderr)
        return 2
    status = SeatStatus(config.status_file)
    hardware = build_hardware(config, factory, status)
    service_config = ServiceConfig(
        config.rules,
        config.deal_reading,
        config.state_dir,
        watchdog_s=watchdog_interval(),
        new_game_after_s=config.new_game_after_s,
        next_deal_after_s=config.next_deal_after_s,
        archive=config.archive,
        # the answers to ``truco-table control`` beside the seats' status: in memory
        control_answers=(
            config.status_file.with_name(ANSWERS_FILE) if config.status_file is not None else None
        ),
    )
    if link is not None:
        service_config = link.service_config(service_config)
    service = TableService(
        service_config,
        registry.lookup,
        hardware.displays,
        notifier=Notifier.from_environment(),
        deck_of=lambda uid: registry.registry.deck_of(uid),  # follows a reloaded registry
    )
    service.watch.status = status  # each seat's faults, for the doctor
    try:
        hardware.start(service.post, service.bus)  # the nodes are read in the loop's wait
    except HardwareStartError as e:
        # one line in the journal, and an exit status systemd does not restart on
        print(f"truco-table: the hardware cannot start: {e}", file=sys.stderr)
        service.close()
        return HARDWARE_EXIT
    closers: list[Callable[[], None]] = [hardware.close]
    if link is not None:
        closers.append(link.attach(service, config.state_dir))
    if config.broadcast is not None:
        closers += _start_broadcast(service, config)
    stop = stop_on_signals()
    try:
        service.ready()
        freeze_heap()  # the start-up heap out of the collector's full passes
        service.collector.enable()  # its passes on the table's quiet turns
        keep_loop_on(config.loop_cpu)  # this thread is the loop's (controller.table.cpu)
        service.run(stop.is_set)
    finally:
        for close in closers:
            close()
        service.close()
    return 0
