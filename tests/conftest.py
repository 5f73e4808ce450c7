"""Shared test set-up: no network but loopback, paths to ../shared data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests import netguard

netguard.install()

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("EBM_SHARED", ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def shared() -> Path:
    """The ../shared data directory (CI clones the repo beside it)."""
    if not (SHARED / "data").is_dir():
        pytest.fail(f"shared data not found at {SHARED} (set EBM_SHARED)")
    return SHARED / "data"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never touch the user's real data directory unless they set EBM_HOME themselves."""
    if "EBM_TEST_HOME" not in os.environ:
        os.environ["EBM_TEST_HOME"] = str(tmp_path_factory.mktemp("ebm_home"))
    monkeypatch.setenv("EBM_HOME", os.environ["EBM_TEST_HOME"])
