"""Evaluation toolkit: reranking measures with significance, parameter sweeps, answer assessment.

Reproduces the evaluations of Demner-Fushman & Lin (2007), sections 7, 8 and 10:

- :mod:`ebm.evaluation.trec` reads and writes TREC qrels and runs (trec_eval's ranking order);
- :mod:`ebm.evaluation.measures` holds P@10, MAP, MRR and TDRR, one module each;
- :mod:`ebm.evaluation.relevance` turns graded judgments into lenient / strict relevance;
- :mod:`ebm.evaluation.significance` is the Wilcoxon signed-rank test with the paper's marks;
- :mod:`ebm.evaluation.report` builds the tables (per query, mean, per task, pairwise);
- :mod:`ebm.evaluation.sweep` is the grid engine for the score weights (Figure 3);
- :mod:`ebm.evaluation.assess` makes and scores blinded answer-assessment sheets (section 10).
"""

from ebm.evaluation.relevance import threshold_for
from ebm.evaluation.report import Report, build_report
from ebm.evaluation.scores import RunScores, score_run
from ebm.evaluation.trec import Qrels, Run, read_qrels, read_run, write_run

__all__ = [
    "Qrels",
    "Report",
    "Run",
    "RunScores",
    "build_report",
    "read_qrels",
    "read_run",
    "score_run",
    "threshold_for",
    "write_run",
]
