"""Where ebm keeps its data: ``--db``/explicit paths, else ``EBM_HOME``, else a per-user dir."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import platformdirs

from ebm.errors import DataError


def data_dir() -> Path:
    """The per-user data directory (``EBM_HOME`` overrides it); ``DataError`` if it is a file."""
    home = os.environ.get("EBM_HOME")
    path = Path(home) if home else Path(platformdirs.user_data_dir("ebm"))
    if path.exists() and not path.is_dir():
        where = f"EBM_HOME={home}" if home else str(path)
        raise DataError(f"{where} is a file, not a directory: point EBM_HOME at a directory (or unset it)")
    return path


def package_data(name: str) -> Path:
    """Path of a file shipped in ``ebm/data``."""
    return Path(str(resources.files("ebm") / "data" / name))

