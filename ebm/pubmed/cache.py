"""Optional on-disk cache of E-utilities responses (off by default).

Keyed by the utility URL and the request parameters, leaving out ``api_key``, ``tool``
and ``email``: they identify the caller, not the answer, and the key must not depend on
a secret. Requests that create or use a history-server session (``usehistory``,
``WebEnv``) are never cached, because the session they name expires on NCBI's side and a
replayed WebEnv would point at nothing.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlencode

from ebm.paths import data_dir

IDENTITY_PARAMS = frozenset({"api_key", "tool", "email"})
SESSION_PARAMS = frozenset({"usehistory", "WebEnv", "query_key"})
ENV_VAR = "EBM_EUTILS_CACHE"


def cacheable(params: Mapping[str, str]) -> bool:
    return not SESSION_PARAMS.intersection(params)


def cache_key(url: str, params: Mapping[str, str]) -> str:
    kept = sorted((k, v) for k, v in params.items() if k not in IDENTITY_PARAMS)
    return hashlib.sha256(f"{url}\n{urlencode(kept)}".encode()).hexdigest()


class ResponseCache:
    """Response bodies stored as files under ``directory``; ``max_age`` in seconds (None = forever)."""

    def __init__(self, directory: str | os.PathLike[str], max_age: float | None = None) -> None:
        self.directory = Path(directory)
        self.max_age = max_age

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / key

    def get(self, url: str, params: Mapping[str, str]) -> bytes | None:
        if not cacheable(params):
            return None
        path = self._path(cache_key(url, params))
        try:
            if self.max_age is not None and time.time() - path.stat().st_mtime > self.max_age:
                return None
            return path.read_bytes()
        except FileNotFoundError:
            return None

    def put(self, url: str, params: Mapping[str, str], body: bytes) -> None:
        if not cacheable(params):
            return
        path = self._path(cache_key(url, params))
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write then rename, so a concurrent reader never sees half a response.
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(body)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def default_cache_dir() -> Path:
    return data_dir() / "eutils-cache"


def cache_from_env() -> ResponseCache | None:
    """``EBM_EUTILS_CACHE``: a directory, or ``1``/``on`` for ``<data dir>/eutils-cache``; unset = off."""
    value = os.environ.get(ENV_VAR, "").strip()
    if not value or value.lower() in {"0", "off", "no", "false"}:
        return None
    if value.lower() in {"1", "on", "yes", "true"}:
        return ResponseCache(default_cache_dir())
    return ResponseCache(value)
