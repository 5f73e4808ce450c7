"""Retrieval measures, one module each, as ir_measures declares them.

Every measure takes one query's ranking as relevance flags in rank order (``rels[i]`` is true
when the document at rank ``i + 1`` is relevant) and ``num_rel``, the number of relevant documents
in the qrels for that query (retrieved or not). Each has a plain form (one query, a clear
reference) and a vectorised form over any leading axes (``rels`` of shape ``(..., depth)``,
rankings shorter than ``depth`` padded with ``False`` at the end), used by the parameter sweeps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ebm.errors import InputError

PlainFn = Callable[[Sequence[bool], int], float]
BatchFn = Callable[[np.ndarray, "np.ndarray | int"], np.ndarray]


@dataclass(frozen=True)
class Measure:
    name: str  # the name of its mean over queries, as the paper's tables label it ("MAP")
    description: str
    plain: PlainFn
    batch: BatchFn
    ir_measures: str | None  # the ir_measures equivalent, "{rel}" standing for the threshold

    def __call__(self, rels: Sequence[bool], num_rel: int) -> float:
        return self.plain(rels, num_rel)

    def ir_measure(self, threshold: int) -> str | None:
        return self.ir_measures.format(rel=threshold) if self.ir_measures else None


from ebm.evaluation.measures.average_precision import MAP  # noqa: E402
from ebm.evaluation.measures.precision_at_k import P10, precision_measure  # noqa: E402
from ebm.evaluation.measures.reciprocal_rank import MRR  # noqa: E402
from ebm.evaluation.measures.tdrr import TDRR  # noqa: E402

# The paper's four measures, in its column order.
MEASURES: tuple[Measure, ...] = (P10, MAP, MRR, TDRR)


def by_name(name: str) -> Measure:
    """A measure by name, case-insensitive: P@10 (any P@k), MAP, MRR, TDRR."""
    wanted = name.strip().upper()
    for measure in MEASURES:
        if measure.name.upper() == wanted:
            return measure
    if wanted.startswith("P@") and wanted[2:].isdigit() and int(wanted[2:]) > 0:
        return precision_measure(int(wanted[2:]))
    known = ", ".join(m.name for m in MEASURES)
    raise InputError(f"unknown measure {name!r}; known: {known} (or P@k for any k)")


__all__ = ["MAP", "MEASURES", "MRR", "P10", "TDRR", "Measure", "by_name", "precision_measure"]
