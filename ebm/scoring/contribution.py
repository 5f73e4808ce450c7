"""The record every scoring step leaves behind: what it added to the score and why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Contribution:
    """One rule or extractor decision that entered a score (a note when ``points`` is 0)."""

    component: str  # problem, co-problem, population, intervention, outcome, journal, study, date, task
    points: float
    reason: str
    where: str | None = None  # the rule row (file:line) or the extractor that decided

    def to_dict(self) -> dict[str, Any]:
        return {
            "component": self.component,
            "points": round(self.points, 6),
            "reason": self.reason,
            "where": self.where,
        }

    def __str__(self) -> str:
        at = f"  [{self.where}]" if self.where else ""
        return f"{self.points:+.3g}  {self.component}: {self.reason}{at}"


def total(
    contributions: tuple[Contribution, ...] | list[Contribution], component: str | None = None
) -> float:
    return sum((c.points for c in contributions if component is None or c.component == component), 0.0)
