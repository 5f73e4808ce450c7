"""From graded judgments to binary relevance: lenient, strict or any threshold.

Grades (paper, section 7): 3 contains answer, 2 relevant, 1 partially relevant, 0 not relevant.
Lenient credits 3 and 2, strict only 3. As trec_eval's ``-l`` (relevance level), a document is
relevant when its grade is at least the threshold; a document absent from the qrels is not
relevant.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from ebm.errors import InputError

Level = Literal["lenient", "strict"]

CONTAINS_ANSWER = 3
RELEVANT = 2
PARTIALLY_RELEVANT = 1
NOT_RELEVANT = 0

LEVELS: dict[str, int] = {"lenient": RELEVANT, "strict": CONTAINS_ANSWER}


def threshold_for(level: str | None = None, threshold: int | None = None) -> int:
    """The minimum relevant grade: an explicit ``threshold`` wins, else the named level (lenient)."""
    if threshold is not None:
        if threshold < 1:
            # With 0 every judged document, even "not relevant", would count as relevant.
            raise InputError(f"relevance threshold must be at least 1, got {threshold}")
        return threshold
    if level is None:
        return LEVELS["lenient"]
    try:
        return LEVELS[level]
    except KeyError:
        raise InputError(f"unknown relevance level {level!r}; use one of {', '.join(LEVELS)}") from None


def level_name(threshold: int) -> str:
    """'lenient' / 'strict' for the paper's thresholds, else 'grade >= N'."""
    for name, value in LEVELS.items():
        if value == threshold:
            return name
    return f"grade >= {threshold}"


def relevant_docs(judged: Mapping[str, int], threshold: int) -> frozenset[str]:
    """The documents of one query whose grade reaches ``threshold``."""
    return frozenset(docno for docno, grade in judged.items() if grade >= threshold)
