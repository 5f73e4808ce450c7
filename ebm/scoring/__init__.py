"""The EBM citation scorer (Demner-Fushman & Lin 2007, sections 6-8).

- ``pico``: S_PICO (problem, co-occurring problems, population, intervention, outcome)
- ``soe``: S_SoE (journal, study type, date)
- ``task``: S_task (task indicators among the MeSH terms)
- ``ebm_score``: S_EBM = l1 S_PICO + l2 S_SoE + (1 - l1 - l2) S_task, ``score_citation``
- ``term``: the term-based reranker; ``combine``: 0.8 norm(EBM) + 0.2 norm(term)

Every score keeps its ``Contribution`` records: each rule row (file:line) and extractor
decision that entered it.
"""

from ebm.scoring.combine import ALPHA, combine, minmax
from ebm.scoring.contribution import Contribution
from ebm.scoring.ebm_score import EQUAL, THERAPY_TUNED, EbmScore, ScoringConfig, Weights, score_citation
from ebm.scoring.pico import PicoScore, score_pico
from ebm.scoring.soe import SoeScore, score_soe
from ebm.scoring.task import TaskScore, score_task
from ebm.scoring.term import TermScore, question_terms, term_score

__all__ = [
    "ALPHA",
    "EQUAL",
    "THERAPY_TUNED",
    "Contribution",
    "EbmScore",
    "PicoScore",
    "ScoringConfig",
    "SoeScore",
    "TaskScore",
    "TermScore",
    "Weights",
    "combine",
    "minmax",
    "question_terms",
    "score_citation",
    "score_pico",
    "score_soe",
    "score_task",
    "term_score",
]
