"""Weighted cue-phrase tables (``PHRASE<TAB>WEIGHT``), validated on load with file and line."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ebm.errors import InputError


@dataclass(frozen=True)
class WeightedCue:
    phrase: str
    weight: float
    pattern: re.Pattern[str]
    line: int


def _pattern(phrase: str) -> re.Pattern[str]:
    words = [r"\w+" if w == "*" else re.escape(w) for w in phrase.split()]
    return re.compile(r"\b" + r"\s+".join(words) + r"\b", re.IGNORECASE)


def load_weighted_cues(path: Path) -> list[WeightedCue]:
    if not path.exists():
        raise InputError(f"cue table not found: {path}")
    cues: list[WeightedCue] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = [c.strip() for c in line.split("#", 1)[0].split("\t")]
        if len(cells) < 2 or not cells[0]:
            raise InputError(f"{path}:{n}: expected PHRASE<TAB>WEIGHT, got {line!r}")
        try:
            weight = float(cells[1])
        except ValueError:
            raise InputError(f"{path}:{n}: weight {cells[1]!r} is not a number") from None
        if weight <= 0:
            raise InputError(f"{path}:{n}: weight must be positive, got {weight}")
        cues.append(WeightedCue(cells[0], weight, _pattern(cells[0]), n))
    return cues


def best_cue(cues: list[WeightedCue], text: str) -> WeightedCue | None:
    """The strongest cue found in ``text``."""
    found = [c for c in cues if c.pattern.search(text)]
    return max(found, key=lambda c: c.weight) if found else None
