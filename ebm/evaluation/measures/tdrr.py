"""Total document reciprocal rank (paper, section 7): the sum of the reciprocal ranks of *all*
relevant documents retrieved (relevant at ranks 2 and 5 gives 1/2 + 1/5 = 0.7). The paper's TDRR
figures are its mean over queries. It has no trec_eval or ir_measures counterpart.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ebm.evaluation.measures import Measure


def total_document_reciprocal_rank(rels: Sequence[bool], num_rel: int) -> float:
    del num_rel
    return sum(1.0 / rank for rank, flag in enumerate(rels, start=1) if flag)


def total_document_reciprocal_rank_batch(rels: np.ndarray, num_rel: np.ndarray | int) -> np.ndarray:
    del num_rel
    rels = np.asarray(rels, dtype=bool)
    return np.where(rels, 1.0 / np.arange(1, rels.shape[-1] + 1), 0.0).sum(axis=-1)


TDRR = Measure(
    name="TDRR",
    description="total document reciprocal rank: sum of 1/rank over relevant documents",
    plain=total_document_reciprocal_rank,
    batch=total_document_reciprocal_rank_batch,
    ir_measures=None,
)
