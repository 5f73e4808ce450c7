"""Wilcoxon signed-rank test between two systems' per-query scores, with the paper's marks.

The paper (section 7) marks significance at the 1% level with a filled triangle and at the 5% level
with a hollow one, pointing in the direction of the change, and a difference that is not
significant with a circle. Test: ``scipy.stats.wilcoxon``, two-sided, zero differences discarded
(Wilcoxon's original treatment, scipy's default), p-value by scipy's default method (exact for
small samples without ties, else the normal approximation). When every difference is zero there
is nothing to test and p is 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ebm.errors import InputError

Direction = Literal["up", "down", "none"]

# Differences smaller than this are rounding noise, not a change in ranking quality.
ZERO = 1e-12

MARKS = {
    ("up", 1): "▲",
    ("down", 1): "▼",
    ("up", 5): "△",
    ("down", 5): "▽",
}
NOT_SIGNIFICANT = "°"
ASCII_MARKS = {("up", 1): "++", ("down", 1): "--", ("up", 5): "+", ("down", 5): "-"}
ASCII_NOT_SIGNIFICANT = "ns"


@dataclass(frozen=True)
class Comparison:
    """System ``b`` against system ``a`` on the same queries."""

    n: int  # paired queries
    nonzero: int  # queries whose scores differ
    p_value: float
    direction: Direction  # of the mean difference b - a

    @property
    def level(self) -> int | None:
        """1 or 5 (percent) when significant at that level, else None."""
        if self.direction == "none":
            return None
        if self.p_value < 0.01:
            return 1
        if self.p_value < 0.05:
            return 5
        return None

    def mark(self, ascii_only: bool = False) -> str:
        level = self.level
        if level is None:
            return ASCII_NOT_SIGNIFICANT if ascii_only else NOT_SIGNIFICANT
        return (ASCII_MARKS if ascii_only else MARKS)[self.direction, level]

    @property
    def label(self) -> str:
        """A stable name for JSON: 'up1', 'down5', 'ns'."""
        level = self.level
        return "ns" if level is None else f"{self.direction}{level}"


def wilcoxon(a: ArrayLike, b: ArrayLike) -> Comparison:
    """Two-sided Wilcoxon signed-rank test of ``b`` against ``a`` (paired by position)."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise InputError(f"paired scores must have the same length (got {x.shape} and {y.shape})")
    diff = y - x
    diff[np.abs(diff) < ZERO] = 0.0
    nonzero = int(np.count_nonzero(diff))
    mean = float(diff.mean()) if diff.size else 0.0
    direction: Direction = "up" if mean > ZERO else "down" if mean < -ZERO else "none"
    if nonzero == 0:
        return Comparison(n=int(diff.size), nonzero=0, p_value=1.0, direction=direction)
    result = stats.wilcoxon(diff[diff != 0.0], zero_method="wilcox", alternative="two-sided")
    p_value = float(result.pvalue)
    if not np.isfinite(p_value):  # scipy gives nan for degenerate inputs: nothing to conclude
        p_value = 1.0
    return Comparison(n=int(diff.size), nonzero=nonzero, p_value=p_value, direction=direction)


def relative_change(base: float, value: float) -> float | None:
    """(value - base) / base, or None when the base is 0 (the paper prints no percentage then)."""
    if abs(base) < ZERO:
        return None
    return (value - base) / base
