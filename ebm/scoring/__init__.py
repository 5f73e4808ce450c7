"""The EBM citation scorer (Demner-Fushman & Lin 2007, sections 6-8) and EBM+ (beyond the paper).

The paper's scorer, kept as it is (ranker ``paper-ebm``):

- ``pico``: S_PICO (problem, co-occurring problems, population, intervention, outcome)
- ``soe``: S_SoE (journal, study type, date)
- ``task``: S_task (task indicators among the MeSH terms)
- ``ebm_score``: S_EBM = l1 S_PICO + l2 S_SoE + (1 - l1 - l2) S_task, ``score_citation``
- ``term``: the term-based reranker; ``combine``: 0.8 norm(EBM) + 0.2 norm(term)

EBM+ (the default ranker of ``ebm ask``):

- ``hierarchy``: how two MeSH concepts relate through the trees (same, narrower, broader, sibling)
- ``topical``: S_match, PICO matching over all problems and all concept mentions, by hierarchy
- ``lexical``: BM25 of the question's words among the candidates
- ``rankers``: every ranker, EBM+'s features and weights; ``fit``: weights by coordinate ascent
  on MAP, with cross-validation

Every score keeps its ``Contribution`` records: each rule row (file:line) and extractor
decision that entered it.
"""

from ebm.scoring.combine import ALPHA, combine, minmax
from ebm.scoring.contribution import Contribution
from ebm.scoring.ebm_score import EQUAL, THERAPY_TUNED, EbmScore, ScoringConfig, Weights, score_citation
from ebm.scoring.lexical import LexicalScore, lexical_scores
from ebm.scoring.pico import PicoScore, score_pico
from ebm.scoring.rankers import DEFAULT_RANKER, RANKERS, CandidateScores, PlusWeights, RankerSettings, rank
from ebm.scoring.soe import SoeScore, score_soe
from ebm.scoring.task import TaskScore, score_task
from ebm.scoring.term import TermScore, question_terms, term_score
from ebm.scoring.topical import TopicalScore, score_topical

__all__ = [
    "ALPHA",
    "DEFAULT_RANKER",
    "EQUAL",
    "RANKERS",
    "THERAPY_TUNED",
    "CandidateScores",
    "Contribution",
    "EbmScore",
    "LexicalScore",
    "PicoScore",
    "PlusWeights",
    "RankerSettings",
    "ScoringConfig",
    "SoeScore",
    "TaskScore",
    "TermScore",
    "TopicalScore",
    "Weights",
    "combine",
    "lexical_scores",
    "minmax",
    "question_terms",
    "rank",
    "score_citation",
    "score_pico",
    "score_soe",
    "score_task",
    "score_topical",
    "term_score",
]
