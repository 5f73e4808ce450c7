"""Baseline orders of a fixed candidate pool: the pool's own order and PubMed's classic date order.

Date order sorts each question's pool newest first by publication year; citations of unknown year
go last; citations of the same year (or both unknown) keep their pool order. On the bench
development split this reproduces the published "date order, newest first" baseline
(tests/test_evaluation_bench.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from ebm.evaluation.trec import Run, run_from_rankings


def pool_order(pool: Run, name: str = "pool") -> Run:
    """The pool as ranked by trec_eval (score, then docno descending), rescored 1..n."""
    return run_from_rankings(name, {qid: pool.ranking(qid) for qid in pool.results})


def date_order(pool: Run, years: Mapping[str, int | None], name: str = "date") -> Run:
    """The pool newest first by year (unknown last), pool order within a year."""

    def key(item: tuple[int, str]) -> tuple[int, int, int]:
        position, docno = item
        year = years.get(docno)
        return (1, 0, position) if year is None else (0, -year, position)

    return run_from_rankings(
        name,
        {qid: [d for _, d in sorted(enumerate(pool.ranking(qid)), key=key)] for qid in pool.results},
    )
