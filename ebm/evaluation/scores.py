"""Per-query scores of runs against qrels, with trec_eval's conventions.

- Ranking: score descending, ties by docno descending (see :func:`ebm.evaluation.trec.ranking`).
- A document absent from the qrels is not relevant.
- Queries averaged over: every query in the qrels (trec_eval ``-c``, which is also what
  ir_measures does). A query of the qrels that a run has no results for scores 0 on every
  measure; a query of the qrels without any relevant document at the chosen threshold is kept and
  scores 0 (so strict and lenient figures average over the same queries); a query of the run that
  is not in the qrels is ignored (reported in ``notes``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ebm.evaluation.measures import MEASURES, Measure
from ebm.evaluation.relevance import relevant_docs
from ebm.evaluation.trec import Qrels, Run


def relevance_flags(ranked: Sequence[str], relevant: frozenset[str]) -> list[bool]:
    return [docno in relevant for docno in ranked]


@dataclass
class RunScores:
    """One run's per-query values of each measure, aligned with ``qids``."""

    run: str
    qids: list[str]
    values: dict[str, np.ndarray]  # measure name -> per-query values
    missing: list[str] = field(default_factory=list)  # qrels queries the run has no results for
    ignored: list[str] = field(default_factory=list)  # run queries absent from the qrels

    def mean(self, measure: str, qids: Sequence[str] | None = None) -> float:
        return float(self.select(measure, qids).mean()) if self.qids else 0.0

    def select(self, measure: str, qids: Sequence[str] | None = None) -> np.ndarray:
        values = self.values[measure]
        if qids is None:
            return values
        index = {q: i for i, q in enumerate(self.qids)}
        return values[[index[q] for q in qids]]


def score_run(qrels: Qrels, run: Run, threshold: int, measures: Sequence[Measure] = MEASURES) -> RunScores:
    qids = sorted(qrels)
    values = {m.name: np.zeros(len(qids)) for m in measures}
    for i, qid in enumerate(qids):
        relevant = relevant_docs(qrels[qid], threshold)
        flags = relevance_flags(run.ranking(qid), relevant)
        for m in measures:
            values[m.name][i] = m.plain(flags, len(relevant))
    return RunScores(
        run=run.name,
        qids=qids,
        values=values,
        missing=[q for q in qids if not run.results.get(q)],
        ignored=sorted(q for q in run.results if q not in qrels),
    )
