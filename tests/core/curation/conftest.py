"""The curation tests' fixture: an offline call runner (see curation_fixtures)."""

from __future__ import annotations

import pytest
from curation_fixtures import OfflineRunner


@pytest.fixture
def runner() -> OfflineRunner:
    return OfflineRunner()
