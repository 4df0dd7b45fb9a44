"""Durability pinned at the system call (issue 26): the checks of ``durability.py`` pass
as the code is, and each durability call of ``SITES`` deleted in turn fails one."""

from __future__ import annotations

from pathlib import Path

import pytest

from .durability import CHECKS, SITES, Site, failing_checks


@pytest.mark.parametrize("name", list(CHECKS))
def test_durable_at_the_system_call(tmp_path: Path, name: str) -> None:
    CHECKS[name](tmp_path)


@pytest.mark.parametrize("site", SITES, ids=[s.name for s in SITES])
def test_deleting_a_durability_call_fails_a_check(tmp_path: Path, site: Site) -> None:
    assert failing_checks(site, tmp_path), f"deleting {site.name} fails no check"
