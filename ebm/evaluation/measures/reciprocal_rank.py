"""Reciprocal rank (trec_eval ``recip_rank``): 1 / rank of the first relevant document, 0 when none
is retrieved. MRR is its mean over queries.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ebm.evaluation.measures import Measure


def reciprocal_rank(rels: Sequence[bool], num_rel: int) -> float:
    del num_rel
    for rank, flag in enumerate(rels, start=1):
        if flag:
            return 1.0 / rank
    return 0.0


def reciprocal_rank_batch(rels: np.ndarray, num_rel: np.ndarray | int) -> np.ndarray:
    del num_rel
    rels = np.asarray(rels, dtype=bool)
    first = np.argmax(rels, axis=-1)  # index of the first True (0 when there is none)
    return np.where(rels.any(axis=-1), 1.0 / (first + 1), 0.0)


MRR = Measure(
    name="MRR",
    description="mean reciprocal rank of the first relevant document",
    plain=reciprocal_rank,
    batch=reciprocal_rank_batch,
    ir_measures="RR(rel={rel})",
)
