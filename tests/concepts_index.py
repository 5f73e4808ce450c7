"""A concept index over the full shipped MeSH, built once per test process by ``ebm setup``
(without its QuickUMLS part, which is tested on the small RRF fixture). Several test modules
share it."""

from __future__ import annotations

import atexit
import contextlib
import functools
import io
import os
import shutil
import tempfile
from pathlib import Path

FIXTURE_RRF = Path(__file__).parent / "fixtures" / "umls"


@functools.cache
def mesh_home() -> Path:
    """An EBM_HOME directory whose ``concepts/`` holds the MeSH index, built by ``ebm setup``."""
    from ebm.cli import main

    home = Path(tempfile.mkdtemp(prefix="ebm-concepts-test-"))
    atexit.register(shutil.rmtree, home, True)
    saved = os.environ.get("EBM_HOME")
    os.environ["EBM_HOME"] = str(home)
    try:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["setup", "--no-quickumls", "--quiet"])
        assert code == 0, out.getvalue()
        assert "MeSH 2024: 30,764 concepts" in out.getvalue(), out.getvalue()
    finally:
        if saved is None:
            os.environ.pop("EBM_HOME", None)
        else:
            os.environ["EBM_HOME"] = saved
    return home


def mesh_index() -> Path:
    return mesh_home() / "concepts"
