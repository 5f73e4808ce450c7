"""Weighted cue-phrase tables (``PHRASE<TAB>WEIGHT[<TAB>WHERE]``), validated on load with file and line.

``WHERE`` says what a cue boosts: ``sentence`` (default) every mention in a sentence containing
the phrase; ``before`` a mention that follows the phrase closely ("randomized to receive X");
``after`` a mention closely followed by it ("X or placebo"); ``outcome`` damps a mention that
follows the phrase closely, as ``before`` finds it ("to improve colon cancer screening": what a
study changes or measures is its outcome, not its intervention).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ebm.errors import InputError
from ebm.rules.table import Table, choice, load, number, text

PLACES = ("sentence", "before", "after", "outcome")
CUE_COLUMNS = (
    text("phrase", help="the cue phrase; '*' matches any one word"),
    number("weight", minimum=0.01, help="the factor applied to the scores it boosts"),
    choice("where", PLACES, required=False, default="sentence", help="sentence, before, after or outcome"),
)
# Words allowed between a ``before`` cue and the mention ("randomized to receive either oral X").
GAP_WORDS = 3


@dataclass(frozen=True)
class WeightedCue:
    phrase: str
    weight: float
    pattern: re.Pattern[str]
    line: int
    where: str = "sentence"
    inline: re.Pattern[str] | None = None  # the phrase anywhere, whatever ``where`` says

    def find(self, text: str) -> list[re.Match[str]]:
        return list((self.inline or self.pattern).finditer(text))


def _words(phrase: str) -> str:
    return r"\s+".join(r"[\w-]+" if w == "*" else re.escape(w) for w in phrase.split())


def _pattern(phrase: str, where: str) -> re.Pattern[str]:
    body = _words(phrase)
    if where == "inline":
        return re.compile(rf"(?<![\w-]){body}(?![\w-])", re.IGNORECASE)
    if where in ("before", "outcome"):  # the phrase, then at most GAP_WORDS words, at the end of the text
        return re.compile(rf"(?:^|\W){body}(?:\s+[\w-]+){{0,{GAP_WORDS}}}\s*$", re.IGNORECASE)
    if where == "after":  # the phrase at the start of the text
        return re.compile(rf"^[\s,]*{body}\b", re.IGNORECASE)
    return _pattern(phrase, "inline")


def load_weighted_cues(path: Path) -> list[WeightedCue]:
    """The cues of a table; ``InputError`` naming file and line for a bad row."""
    return weighted_cues_from_table(load(path, CUE_COLUMNS))


def weighted_cues_from_table(table: Table) -> list[WeightedCue]:
    path = table.path
    cues: list[WeightedCue] = []
    for row in table:
        phrase = row["phrase"]
        if not re.search(r"\w", phrase):
            raise InputError(f"{path}:{row.line}: cue phrase {phrase!r} has no word in it")
        where = row["where"]
        cues.append(
            WeightedCue(
                phrase, row["weight"], _pattern(phrase, where), row.line, where, _pattern(phrase, "inline")
            )
        )
    return cues


def best_cue(cues: list[WeightedCue], text: str) -> WeightedCue | None:
    """The strongest cue found in ``text`` (searched with each cue's own anchoring)."""
    best: WeightedCue | None = None
    for c in cues:
        if (best is None or c.weight > best.weight) and c.pattern.search(text):
            best = c
    return best


@dataclass(frozen=True)
class CueSet:
    """Cues searched together: one alternation finds whether any of them occurs at all."""

    cues: tuple[WeightedCue, ...]
    any: re.Pattern[str]

    def best(self, text: str) -> WeightedCue | None:
        """``best_cue`` over the set, answered at once when none of the phrases occurs in ``text``."""
        if not self.cues or not self.any.search(text):
            return None
        return best_cue(list(self.cues), text)

    def positions(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of every occurrence of any phrase, leftmost-longest, not overlapping."""
        return [m.span() for m in self.any.finditer(text)] if self.cues else []


@cache
def cue_set(cues: tuple[WeightedCue, ...]) -> CueSet:
    phrases = sorted({_words(c.phrase) for c in cues}, key=len, reverse=True)
    body = "|".join(phrases) or r"(?!)"
    return CueSet(cues, re.compile(rf"(?<![\w-])(?:{body})(?![\w-])", re.IGNORECASE))
