"""Fitting EBM+ weights on judged questions, and an honest estimate of how well they carry over.

Coordinate ascent on mean average precision (Metzler & Croft 2007): the weight of one feature
at a time is set to the grid value that maximises MAP over the training questions, the others
held, in passes until none improves. The first feature (the retrieval score) keeps weight 1:
rankings do not change when every weight is multiplied by the same positive number. MAP is
computed exactly as ``ebm eval`` does it (trec_eval's tie order, ``ebm.evaluation.sweep``), so
what is maximised is the reported measure itself; the paper (section 8) notes that likelihood
methods optimise another objective ("metric divergence").

Fitting and reporting on the same questions overstates the gain. ``cross_validate`` refits the
weights with each question left out (or on k folds) and scores the left-out question with the
weights fitted without it: the mean of those held-out figures estimates how the procedure does
on new questions of the same kind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ebm.errors import InputError
from ebm.evaluation.measures import MEASURES
from ebm.evaluation.sweep import evaluate_settings
from ebm.evaluation.trec import Qrels

# Non-negative: each feature is evidence *for* a candidate (a match, a retrieval score), so a
# negative weight could only fit quirks of the training questions; fewer settings also overfit
# less (measured on the development questions: leave-one-out MAP 0.831 against 0.819 with
# negative values allowed, same features).
GRID = (0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
MAX_PASSES = 6
_MAP = [m for m in MEASURES if m.name == "MAP"]


@dataclass(frozen=True)
class Question:
    """One judged question: its candidates and their feature matrix (candidates x features)."""

    qid: str
    docnos: Sequence[str]
    features: np.ndarray


@dataclass(frozen=True)
class Fit:
    names: tuple[str, ...]
    weights: np.ndarray
    value: float  # training MAP
    passes: int

    def as_dict(self) -> dict[str, float]:
        return {n: float(w) for n, w in zip(self.names, self.weights, strict=True)}


def mean_map(
    questions: Sequence[Question], qrels: Qrels, threshold: int, weight_rows: np.ndarray
) -> np.ndarray:
    """MAP of each weight vector (rows of ``weight_rows``) over ``questions``."""
    per_question = [(q.qid, q.docnos, weight_rows @ q.features.T) for q in questions]
    return evaluate_settings(per_question, qrels, threshold, _MAP)["MAP"]


def fit(
    questions: Sequence[Question],
    names: Sequence[str],
    qrels: Qrels,
    threshold: int = 2,
    grid: Sequence[float] = GRID,
    start: Mapping[str, float] | None = None,
) -> Fit:
    """Coordinate ascent from ``start`` (default: retrieval alone) over ``grid``."""
    if not questions:
        raise InputError("no questions to fit on")
    k = len(names)
    w = np.zeros(k)
    w[0] = 1.0
    for i, n in enumerate(names):
        if start and n in start:
            w[i] = start[n]
    best = float(mean_map(questions, qrels, threshold, w[None, :])[0])
    passes = 0
    while passes < MAX_PASSES:
        passes += 1
        improved = False
        for j in range(1, k):
            rows = np.repeat(w[None, :], len(grid), axis=0)
            rows[:, j] = grid
            values = mean_map(questions, qrels, threshold, rows)
            i = int(np.argmax(values))  # the first grid value among equals
            if values[i] > best + 1e-12:
                best, w = float(values[i]), rows[i].copy()
                improved = True
        if not improved:
            break
    return Fit(tuple(names), w, best, passes)


@dataclass(frozen=True)
class CrossValidation:
    folds: list[tuple[list[str], Fit]]  # held-out qids and the fit made without them
    held_out_scores: dict[str, np.ndarray]  # qid -> scores of its candidates by its fold's weights

    def weights_for(self, qid: str) -> dict[str, float]:
        for held, f in self.folds:
            if qid in held:
                return f.as_dict()
        raise KeyError(qid)


def cross_validate(
    questions: Sequence[Question],
    names: Sequence[str],
    qrels: Qrels,
    threshold: int = 2,
    folds: int | None = None,
    grid: Sequence[float] = GRID,
) -> CrossValidation:
    """Leave-one-question-out (``folds`` None) or k-fold (questions dealt round-robin in the
    given order): each question is scored with weights fitted on the other folds only."""
    qs = list(questions)
    k = len(qs) if folds is None else folds
    if not 2 <= k <= len(qs):
        raise InputError(f"cross-validation needs 2..{len(qs)} folds, got {k}")
    groups = [qs[i::k] for i in range(k)]
    out_folds: list[tuple[list[str], Fit]] = []
    scores: dict[str, np.ndarray] = {}
    for held in groups:
        held_ids = {q.qid for q in held}
        f = fit([q for q in qs if q.qid not in held_ids], names, qrels, threshold, grid)
        out_folds.append(([q.qid for q in held], f))
        for q in held:
            scores[q.qid] = q.features @ f.weights
    return CrossValidation(out_folds, scores)


@dataclass(frozen=True)
class NestedCrossValidation:
    held_out_scores: dict[str, np.ndarray]  # qid -> its candidates' scores by the chosen set's fit
    chosen: dict[str, str]  # qid -> the feature set chosen without it
    inner_map: dict[str, dict[str, float]]  # qid -> set -> inner cross-validated MAP


def nested_cross_validate(
    sets: Mapping[str, tuple[Sequence[str], Sequence[Question]]],
    qrels: Qrels,
    threshold: int = 2,
    inner_folds: int = 5,
    grid: Sequence[float] = GRID,
) -> NestedCrossValidation:
    """Choosing among feature sets by cross-validation is fitting too: this estimates the whole
    procedure. For each question left out, every set is cross-validated (``inner_folds``) on the
    other questions, the best (the first listed among equals) is fitted on them all and scores
    the left-out question. ``sets``: name -> (feature names, questions with those features, all
    sets listing the same questions in the same order)."""
    names = list(sets)
    if not names:
        raise InputError("no feature sets to choose from")
    qids = [q.qid for q in sets[names[0]][1]]
    for n in names:
        if [q.qid for q in sets[n][1]] != qids:
            raise InputError(f"feature set {n!r} lists other questions")
    scores: dict[str, np.ndarray] = {}
    chosen: dict[str, str] = {}
    inner: dict[str, dict[str, float]] = {}
    for i, qid in enumerate(qids):
        values: dict[str, float] = {}
        for n in names:
            features, qs = sets[n]
            train = [q for q in qs if q.qid != qid]
            cv = cross_validate(
                train, features, qrels, threshold, folds=min(inner_folds, len(train)), grid=grid
            )
            held = [Question(q.qid, q.docnos, cv.held_out_scores[q.qid][:, None]) for q in train]
            values[n] = float(mean_map(held, qrels, threshold, np.ones((1, 1)))[0])
        best = max(names, key=lambda n: (values[n], -names.index(n)))
        features, qs = sets[best]
        f = fit([q for q in qs if q.qid != qid], features, qrels, threshold, grid)
        scores[qid] = qs[i].features @ f.weights
        chosen[qid] = best
        inner[qid] = values
    return NestedCrossValidation(scores, chosen, inner)
