"""EBM-prior: the retrieval order with bounded, learned bonuses (issue 15).

score = minmax(retrieval) + sum_k w_k f_k, every feature f_k in [0, 1] (scaled per question
when it is not already), 0 <= w_k <= MAX_BONUS: no single bonus is worth more than the whole
retrieval range of the pool, so a citation the retrieval put last needs several pieces of
evidence to pass the first.

The weights are fitted as a pairwise (RankNet-style) linear model: for each judged question,
every (relevant, not relevant) pair of its candidates, the logistic loss of their score
difference, each question weighing the same however many pairs it has. An L2 penalty on the
bonus weights alone (not on the retrieval coefficient) shrinks the model towards the
retrieval order: with a large penalty it *is* the retrieval order, and a bonus survives only
when the judged pairs keep asking for it. The penalty, like the feature set, is chosen by
cross-validation without the question being scored (``scripts/eval_rankers.py --nested``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from ebm.errors import InputError
from ebm.scoring.combine import minmax
from ebm.scoring.feature_weights import FeatureWeights

PRIOR_WEIGHTS_FILE = "ebm_prior_weights.toml"
MAX_BONUS = 1.0
# a tiny ridge on the retrieval coefficient too: pairs the retrieval order already separates
# would otherwise let the overall scale grow without end (the optimiser then never stops)
SCALE_PENALTY = 1e-5


class MissingColumn(InputError, KeyError):
    """A feature's column was not computed (``ebm bench`` skips a ranker on a ``KeyError``: an
    older components file)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


@dataclass(frozen=True)
class PriorFeature:
    name: str
    column: str  # a column of ``ebm.scoring.rankers.candidate_columns`` or of the evidence columns
    # (``a*b``: the product of two columns)
    scaled: bool  # min-max per question (else already in [0, 1])
    description: str


_PRIOR = (
    ("lexical", "lexical", True, "BM25 of the question's words over the candidates"),
    ("problem", "match.problem", False, "frame problem among the extracted problems (MeSH tree)"),
    ("intervention", "match.intervention", False, "frame interventions and comparisons mentioned"),
    # the rubric's "contains answer" is the problem AND the intervention asked about: a citation
    # matching one of them only is about another question
    ("both", "match.problem*match.intervention", False, "problem match x intervention match"),
    ("population", "match.population", False, "frame population concepts mentioned"),
    ("co_problems", "match.co_problems", False, "frame co-occurring problems mentioned"),
    ("outcome", "match.outcome", False, "best outcome sentence about the problem or intervention"),
    ("findings", "findings", False, "a result reported for the frame's I vs C (findings extractor)"),
    ("design", "design", False, "expected evidence grade (indexer types, else predicted design)"),
    ("sample_size", "sample_size", False, "log10 of the participants, over 4"),
    ("recency", "recency", False, "publication year, 1975-2025 scaled; unknown 0.5"),
    ("task", "task", True, "S_task (task indicators in MeSH), scaled"),
    ("term", "term", True, "S_term, scaled"),
)
PRIOR_FEATURES: dict[str, PriorFeature] = {f[0]: PriorFeature(*f) for f in _PRIOR}


def prior_matrix(cols: Mapping[str, Sequence[float]], names: Sequence[str]) -> np.ndarray:
    """Candidates x (1 + len(names)): scaled retrieval, then each feature as the ranker reads it."""
    out = [minmax([float(v) for v in cols["retrieval"]])]
    for name in names:
        f = PRIOR_FEATURES[name]
        parts = f.column.split("*")
        for c in parts:
            if c not in cols:
                raise MissingColumn(
                    f"ranker ebm-prior: feature {name!r} needs the column {c!r} (not computed)"
                )
        raw = [float(v) for v in cols[parts[0]]]
        for c in parts[1:]:
            raw = [a * float(b) for a, b in zip(raw, cols[c], strict=True)]
        out.append(minmax(raw) if f.scaled else raw)
    return np.column_stack(out)


class PriorWeights(FeatureWeights):
    """Bonus weights by feature name (the retrieval coefficient is 1), and their source."""

    TABLE = "bonus"
    LABEL = "ebm-prior"
    KNOWN = PRIOR_FEATURES
    BOUNDS = (0.0, MAX_BONUS)

    def active(self) -> list[str]:
        return [n for n, w in self.weights.items() if w]


@cache
def shipped_prior_weights() -> PriorWeights:
    return PriorWeights.read_shipped(PRIOR_WEIGHTS_FILE, "scripts/eval_rankers.py --prior --write-prior")


def prior_parts(cols: Mapping[str, Sequence[float]], weights: PriorWeights) -> list[dict[str, float]]:
    """What the retrieval base and each bonus add, per candidate."""
    names = weights.active()
    m = prior_matrix(cols, names)
    w = [weights.weights[n] for n in names]
    return [
        {"retrieval": float(row[0]), **{n: w[j] * float(row[j + 1]) for j, n in enumerate(names)}}
        for row in m
    ]


def prior_formula(weights: PriorWeights) -> str:
    bonus = " + ".join(f"{weights.weights[n]:.2g} {n}" for n in weights.active())
    return f"EBM-prior = retrieval (scaled) + {bonus or '0'} (bonuses in [0, 1]; weights: {weights.source})"


# -- fitting --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairQuestion:
    """One judged question: candidates x (1 + features) as :func:`prior_matrix` builds it, and
    which candidates are relevant."""

    qid: str
    docnos: Sequence[str]
    matrix: np.ndarray
    relevant: np.ndarray  # bool per candidate

    def pair_differences(self) -> np.ndarray:
        rel, non = self.matrix[self.relevant], self.matrix[~self.relevant]
        if not len(rel) or not len(non):
            return np.zeros((0, self.matrix.shape[1]))
        return (rel[:, None, :] - non[None, :, :]).reshape(-1, self.matrix.shape[1])


def pair_question(
    qid: str, docnos: Sequence[str], matrix: np.ndarray, judged: Mapping[str, int], threshold: int
) -> PairQuestion:
    return PairQuestion(qid, docnos, matrix, np.array([judged.get(d, 0) >= threshold for d in docnos]))


def fit_prior(questions: Sequence[PairQuestion], penalty: float, max_bonus: float = MAX_BONUS) -> np.ndarray:
    """Bonus weights (retrieval coefficient 1) minimising the mean over questions of the mean
    pairwise logistic loss, plus ``penalty`` x the squared bonus weights of the unscaled model;
    every coefficient non-negative, each bonus at most ``max_bonus`` times the retrieval one."""
    from scipy.optimize import minimize

    diffs = [d for q in questions if len(d := q.pair_differences())]
    if not diffs:
        raise InputError("no question with both relevant and non-relevant candidates to fit on")
    k = diffs[0].shape[1]
    # all pairs in one matrix, each weighted 1 / (its question's pairs x questions)
    pairs = np.vstack(diffs)
    weight = np.concatenate([np.full(len(d), 1.0 / (len(d) * len(diffs))) for d in diffs])

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        z = pairs @ theta
        total = float(weight @ np.logaddexp(0.0, -z)) + penalty * float(theta[1:] @ theta[1:])
        total += SCALE_PENALTY * float(theta[0] ** 2)
        grad = pairs.T @ (weight * -0.5 * (1.0 - np.tanh(z / 2.0)))  # d/dz log(1 + e^-z) = -1/(1 + e^z)
        grad[1:] += 2.0 * penalty * theta[1:]
        grad[0] += 2.0 * SCALE_PENALTY * theta[0]
        return total, grad

    start = np.zeros(k)
    start[0] = 1.0
    res = minimize(loss, start, jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * k)
    theta = res.x
    if theta[0] <= 1e-9:  # the retrieval score told nothing: keep it as the base all the same
        theta = theta.copy()
        theta[0] = max(float(theta[1:].max(initial=0.0)), 1.0)
    return np.minimum(theta[1:] / theta[0], max_bonus)


def prior_scores(q: PairQuestion, bonus: np.ndarray) -> np.ndarray:
    return np.asarray(q.matrix @ np.concatenate([[1.0], bonus]))


# -- choosing the feature set and the penalty without the question scored -----------------------

Sets = Mapping[str, Sequence[PairQuestion]]  # set name -> the questions with that set's matrix


def average_precision(scores: np.ndarray, relevant: np.ndarray, n_relevant: int) -> float:
    """AP of one question ranked by ``scores`` (ties: candidate order, i.e. retrieval order)."""
    if n_relevant == 0:
        return 0.0
    order = np.argsort(-scores, kind="stable")
    hits = relevant[order]
    ranks = np.flatnonzero(hits) + 1
    return float(np.sum(np.arange(1, len(ranks) + 1) / ranks) / n_relevant)


def mean_ap(
    questions: Sequence[PairQuestion], scores: Mapping[str, np.ndarray], n_relevant: Mapping[str, int]
) -> float:
    return float(
        np.mean([average_precision(scores[q.qid], q.relevant, n_relevant[q.qid]) for q in questions])
    )


def cv_scores(
    questions: Sequence[PairQuestion],
    penalty: float,
    folds: int,
    extra: Sequence[PairQuestion] = (),
) -> dict[str, np.ndarray]:
    """k-fold (questions dealt round-robin): each scored by weights fitted on the other folds
    (plus ``extra`` questions, never scored)."""
    k = min(folds, len(questions))
    out: dict[str, np.ndarray] = {}
    for i in range(k):
        held = questions[i::k]
        ids = {q.qid for q in held}
        w = fit_prior([*[q for q in questions if q.qid not in ids], *extra], penalty)
        for q in held:
            out[q.qid] = prior_scores(q, w)
    return out


@dataclass(frozen=True)
class NestedPrior:
    held_out_scores: dict[str, np.ndarray]
    chosen: dict[str, tuple[str, float]]  # qid -> (set, penalty) chosen without it
    weights: dict[str, np.ndarray]  # qid -> the bonus weights that scored it


def choose(
    sets: Sets,
    penalties: Sequence[float],
    n_relevant: Mapping[str, int],
    exclude: str | None = None,
    inner_folds: int = 5,
    extra: Mapping[str, Sequence[PairQuestion]] | None = None,
) -> tuple[str, float]:
    """The (set, penalty) with the best inner cross-validated MAP over the questions other than
    ``exclude`` (first listed among equals: smaller sets and penalties come first)."""
    best: tuple[float, str, float] | None = None
    for name, qs in sets.items():
        train = [q for q in qs if q.qid != exclude]
        for pen in penalties:
            scores = cv_scores(train, pen, inner_folds, (extra or {}).get(name, ()))
            value = mean_ap(train, scores, n_relevant)
            if best is None or value > best[0] + 1e-12:
                best = (value, name, pen)
    assert best is not None
    return best[1], best[2]


def nested_prior(
    sets: Sets,
    penalties: Sequence[float],
    n_relevant: Mapping[str, int],
    inner_folds: int = 5,
    extra: Mapping[str, Sequence[PairQuestion]] | None = None,
) -> NestedPrior:
    """Leave one question out; the set and penalty chosen by inner CV on the others, then fitted
    on them all (plus ``extra``), score the left-out question."""
    first = next(iter(sets.values()))
    scores, chosen, weights = {}, {}, {}
    for i, q in enumerate(first):
        name, pen = choose(sets, penalties, n_relevant, q.qid, inner_folds, extra)
        qs = sets[name]
        w = fit_prior([*[x for x in qs if x.qid != q.qid], *(extra or {}).get(name, ())], pen)
        scores[q.qid] = prior_scores(qs[i], w)
        chosen[q.qid] = (name, pen)
        weights[q.qid] = w
    return NestedPrior(scores, chosen, weights)
