"""Precision at k (trec_eval ``P_k``): relevant documents among the top k, divided by k.

A ranking shorter than k counts the missing ranks as not relevant (the denominator stays k).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np

from ebm.evaluation.measures import Measure


def precision_at_k(rels: Sequence[bool], num_rel: int, k: int = 10) -> float:
    del num_rel  # precision at a cutoff does not depend on how many relevant documents exist
    return sum(1 for flag in list(rels)[:k] if flag) / k


def precision_at_k_batch(rels: np.ndarray, num_rel: np.ndarray | int, k: int = 10) -> np.ndarray:
    del num_rel
    return np.count_nonzero(np.asarray(rels, dtype=bool)[..., :k], axis=-1) / k


@cache
def precision_measure(k: int) -> Measure:
    """P@k as a measure (cached, so the same k gives the same object)."""
    return Measure(
        name=f"P@{k}",
        description=f"precision at {k} retrieved documents",
        plain=lambda rels, num_rel: precision_at_k(rels, num_rel, k),
        batch=lambda rels, num_rel: precision_at_k_batch(rels, num_rel, k),
        ir_measures=f"P(rel={{rel}})@{k}",
    )


P10 = precision_measure(10)
