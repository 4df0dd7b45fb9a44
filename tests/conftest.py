"""Settings and fixtures every test shares (plain helpers are in tests/helpers.py).

Hypothesis's per-example deadline (200 ms by default) is a timing assertion:
on a loaded two-core CI machine one example in thousands takes longer and the
whole run fails as "Flaky" although the property held. Speed is measured in
``bench/``, never in tests, so the deadline is off for the whole suite.
"""

from __future__ import annotations

import pytest
from hypothesis import settings

from tests.helpers import LinkEvents

settings.register_profile("truco-table", deadline=None)
settings.load_profile("truco-table")


@pytest.fixture
def events() -> LinkEvents:
    """A seat link's ``on_event``, collecting what it reports (hal, firmware)."""
    return LinkEvents()
