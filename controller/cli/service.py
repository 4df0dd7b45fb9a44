"""``truco-table run --config``: the table service, with the tournament's link attached
when its configuration file has a ``[tournament]`` section.

This is the one place above both sides: the table (:mod:`controller.table.daemon`) runs
the service and knows nothing of tournaments; the tournament's table side
(:mod:`controller.tournament.table`) publishes a service's events and records. Here the
daemon is handed a :data:`~controller.table.daemon.LoadLink` that reads the
``[tournament]`` section, applies the tournament's refereeing profile when it asks for
it, and connects the publisher once the service is up.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..table.config import TableConfig
from ..table.daemon import run_service
from ..table.service import ServiceConfig, TableService

if TYPE_CHECKING:  # the publisher (MQTT, TLS) loads only on a tournament's table
    from ..tournament.table.link import TournamentSettings

__all__ = ["TournamentLink", "run_table", "tournament_link"]

log = logging.getLogger("truco-table")


@dataclass(frozen=True, slots=True)
class TournamentLink:
    """A table's link to its tournament, as the daemon attaches it (a ``ServiceLink``)."""

    settings: TournamentSettings

    def service_config(self, config: ServiceConfig) -> ServiceConfig:
        if self.settings.profile != "tournament":  # profile = "house": the bar's own rules
            return config
        from ..tournament.table.profile import tournament_service_config

        return tournament_service_config(config)

    def attach(self, service: TableService, state_dir: Path) -> Callable[[], None]:
        from ..tournament.table.link import connect_table

        publisher = connect_table(service, self.settings, state_dir)
        log.info(
            "la mesa publica al torneo %s como la mesa %s en %s:%d",
            self.settings.name,
            self.settings.table_id,
            self.settings.broker_host,
            self.settings.broker_port,
        )
        return publisher.close


def tournament_link(config_path: Path, config: TableConfig) -> TournamentLink | None:
    """The link the ``[tournament]`` section describes; ``None`` without one.
    ``ValueError`` on bad settings (the daemon says so and exits 2)."""
    if not config.tournament:
        return None
    from ..tournament.table.link import load_tournament_settings

    settings = load_tournament_settings(config_path)
    return None if settings is None else TournamentLink(settings)


def run_table(config_path: Path) -> int:
    """The real table from its configuration file (the daemon's exit status)."""
    return run_service(config_path, tournament_link)
