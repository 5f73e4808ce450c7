"""Timing loops shared by the benchmark scripts: best-of-N over a list, and each of N calls.

Imported as ``bench_timing`` from the script's own folder (``python benchmarks/x.py``), not as
``benchmarks.timing``: a package named ``benchmarks`` in the venv's site-packages shadows this folder.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def timed(fn: Callable[[T], object], items: Sequence[T], repeat: int) -> float:
    """Best wall time of ``repeat`` passes over ``items`` (after a warm-up pass over the first 50)."""
    for x in items[:50]:
        fn(x)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for x in items:
            fn(x)
        best = min(best, time.perf_counter() - t0)
    return best


def call_times(
    fn: Callable[[], object], repeat: int, clock: Callable[[], float] = time.perf_counter, warm: bool = False
) -> list[float]:
    """The ``clock`` time of each of ``repeat`` calls of ``fn`` (after one untimed call when ``warm``)."""
    if warm:
        fn()
    out = []
    for _ in range(repeat):
        t = clock()
        fn()
        out.append(clock() - t)
    return out
