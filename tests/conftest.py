from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared(*parts: str) -> Path:
    """A path under ../shared/data; the test is skipped when that folder is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not available: {'/'.join(parts)}")
    return path


@pytest.fixture(name="shared")
def shared_fixture():
    """The :func:`shared` path helper (skips when ../shared/data is absent)."""
    return shared
