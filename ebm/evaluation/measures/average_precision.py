"""Average precision (trec_eval ``map``): the mean over *all* relevant documents of the precision
at the rank where each is retrieved; a relevant document never retrieved contributes 0. MAP is
its mean over queries. A query with no relevant document scores 0, as in trec_eval.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ebm.evaluation.measures import Measure


def average_precision(rels: Sequence[bool], num_rel: int) -> float:
    if num_rel <= 0:
        return 0.0
    found = 0
    total = 0.0
    for rank, flag in enumerate(rels, start=1):
        if flag:
            found += 1
            total += found / rank
    return total / num_rel


def average_precision_batch(rels: np.ndarray, num_rel: np.ndarray | int) -> np.ndarray:
    rels = np.asarray(rels, dtype=bool)
    ranks = np.arange(1, rels.shape[-1] + 1)
    precision = np.cumsum(rels, axis=-1) / ranks
    total = np.where(rels, precision, 0.0).sum(axis=-1)
    num_rel = np.asarray(num_rel, dtype=float)
    return np.divide(total, num_rel, out=np.zeros(np.broadcast(total, num_rel).shape), where=num_rel > 0)


MAP = Measure(
    name="MAP",
    description="mean average precision",
    plain=average_precision,
    batch=average_precision_batch,
    ir_measures="AP(rel={rel})",
)
