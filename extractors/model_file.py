"""Trained models shipped as compact gzip JSON (the outcome model, the problem ranker)."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from typing import Any

from ebm.errors import DataError


def save_json_gz(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` byte-identically for identical data (sorted keys, no name or time in the
    gzip header), so a retrained model only shows in git when it changed."""
    text = json.dumps(data, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    with (
        open(path, "wb") as raw,
        gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0, compresslevel=9) as gz,
    ):
        gz.write(text.encode("utf-8"))


def load_json_gz(path: Path, what: str, script: str) -> dict[str, Any]:
    """The JSON object of a model file; ``DataError`` naming the file when it is missing or
    unreadable (``script`` is what rebuilds it)."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError as exc:
        raise DataError(f"{what} missing: {path} (run {script})") from exc
    except (OSError, EOFError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: unreadable {what} ({exc})") from exc
    if not isinstance(data, dict):
        raise DataError(f"{path}: unreadable {what} (not a JSON object)")
    return data


def sigmoid(x: float) -> float:
    """The logistic function, without overflow for large |x|."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)
