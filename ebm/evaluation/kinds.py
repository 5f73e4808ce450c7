"""Question kinds by how many citations answer them: a ranker can help one kind and hurt the other.

On the held-out benchmark questions EBM+ gained on questions with many relevant citations and
lost on those with one or two (PubMedQA-derived: the one article that answers). Every per-task
table of the bench is therefore also given per kind.
"""

from __future__ import annotations

from collections.abc import Iterable

from ebm.evaluation.trec import Qrels

FEW, MANY, NONE = "few relevant", "many relevant", "no relevant"
FEW_MAX = 2  # "few": one or two lenient-relevant citations
LENIENT = 2  # grade of a lenient-relevant citation


def relevant_count(qrels: Qrels, qid: str, threshold: int = LENIENT) -> int:
    return sum(1 for grade in qrels.get(qid, {}).values() if grade >= threshold)


def question_kind(qrels: Qrels, qid: str, threshold: int = LENIENT) -> str:
    """``few relevant`` (1-2 lenient-relevant citations), ``many relevant`` (more), or
    ``no relevant``; always counted at the lenient level, whatever level is reported."""
    n = relevant_count(qrels, qid, threshold)
    return NONE if n == 0 else FEW if n <= FEW_MAX else MANY


def kinds_by_query(qrels: Qrels, qids: Iterable[str]) -> dict[str, str]:
    return {q: question_kind(qrels, q) for q in qids}
