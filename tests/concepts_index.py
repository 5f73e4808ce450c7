"""A concept index over the full shipped MeSH, built once per test process (no QuickUMLS part:
that is tested on the small RRF fixture). Several test modules share it."""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from ebm.concepts.index import build_mesh_index

FIXTURE_RRF = Path(__file__).parent / "fixtures" / "umls"


@functools.cache
def mesh_home() -> Path:
    """An EBM_HOME-style directory whose ``concepts/`` holds the MeSH index."""
    home = Path(tempfile.mkdtemp(prefix="ebm-concepts-test-"))
    atexit.register(shutil.rmtree, home, True)
    build_mesh_index(home / "concepts", with_quickumls=False)
    return home


def mesh_index() -> Path:
    return mesh_home() / "concepts"
