"""A thread-safe request-rate limiter shared by every E-utilities client in the process.

NCBI counts requests per IP address (or per API key), not per client object or thread,
so all clients talking to the same server with the same key draw from one limiter
(``shared_limiter``). Each caller reserves the next free slot under a lock and then
sleeps outside it, so concurrent threads are spaced out instead of bursting together.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

# NCBI's published limits (requests per second).
RATE_WITHOUT_KEY = 3.0
RATE_WITH_KEY = 10.0
# NCBI counts arrivals: sending at exactly 1/rate lets network jitter put rate+1 requests
# in one second. Bio.Entrez pads its 1/3 s pause to 0.37 s for the same reason.
SAFETY_MARGIN = 1.1


class RateLimiter:
    """At most ``rate`` requests per second, across all threads that share it."""

    def __init__(
        self,
        rate: float,
        *,
        margin: float = SAFETY_MARGIN,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if rate <= 0:
            raise ValueError(f"rate must be positive, got {rate}")
        self.rate = rate
        self.interval = margin / rate
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next_slot = float("-inf")

    def acquire(self) -> float:
        """Block until this caller may send; returns the seconds waited."""
        with self._lock:
            now = self._clock()
            slot = max(now, self._next_slot)
            self._next_slot = slot + self.interval
        wait = slot - now
        if wait > 0:
            self._sleep(wait)
        return wait


_registry: dict[tuple[str, str, float], RateLimiter] = {}
_registry_lock = threading.Lock()


def default_rate(api_key: str | None) -> float:
    return RATE_WITH_KEY if api_key else RATE_WITHOUT_KEY


def shared_limiter(server: str, api_key: str | None, rate: float | None = None) -> RateLimiter:
    """The process-wide limiter for ``server`` (scheme://host:port) and ``api_key``."""
    rate = default_rate(api_key) if rate is None else rate
    key = (server, api_key or "", rate)
    with _registry_lock:
        limiter = _registry.get(key)
        if limiter is None:
            limiter = _registry[key] = RateLimiter(rate)
        return limiter
