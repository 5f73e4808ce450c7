"""Parameter sweeps over precomputed component scores (paper, section 8 and Figure 3).

Weights of the EBM score: S_EBM = l1 S_PICO + l2 S_SoE + (1 - l1 - l2) S_task, every (l1, l2) on a
grid (l1, l2 >= 0, l1 + l2 <= 1). Components are computed once per citation by the scorer and
passed in as arrays; the sweep ranks every question's candidates under every grid setting at
once (one array of shape settings x candidates per question) and evaluates the measures in
vectorised form, so a 0.01 grid (5,151 settings) over 50 questions of 50 candidates takes well
under a second. The same for the term/EBM combination weight: alpha norm(EBM) + (1 - alpha)
norm(term), normalised per question.

Conventions are those of ``ebm ask`` and ``ebm eval``: ranking by score with ties kept in the
candidates' order (the retrieval or pool order, as ``ebm ask`` breaks them; the runs written keep
that order when read back, ``trec.run_from_ranked``), documents not in the qrels not relevant,
MAP's denominator the number of relevant documents in the qrels (retrieved or not). Means are
over the questions passed in (so a sweep on the therapy questions alone averages over those); a
question absent from the qrels has no relevant document and scores 0.

Grid weights are exact fractions i/n, j/n, (n - i - j)/n with n = 1/step (so the third weight is
exactly 0 on the edge l1 + l2 = 1, where 1 - l1 - l2 in floating point may not be). Passing a
setting's three weights (``WeightSurface.best_weights``, ``AlphaCurve.best_weights``) to
:func:`ebm_scores` / :func:`combined_scores` reproduces bit for bit the scores the sweep ranked.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ebm.errors import InputError
from ebm.evaluation.measures import MEASURES, Measure, by_name
from ebm.evaluation.relevance import relevant_docs
from ebm.evaluation.trec import Qrels, Run, run_from_ranked

Normalisation = Literal["minmax", "zscore", "none"]
TIE = 1e-12  # values closer than this count as equal when looking for the best setting


@dataclass(frozen=True)
class ComponentScores:
    """One question's candidates with their three EBM score components."""

    qid: str
    docnos: Sequence[str]
    pico: np.ndarray
    soe: np.ndarray
    task: np.ndarray

    def __post_init__(self) -> None:
        _check(self.qid, self.docnos, {"pico": self.pico, "soe": self.soe, "task": self.task})


@dataclass(frozen=True)
class CombinationScores:
    """One question's candidates with their EBM and term-based scores."""

    qid: str
    docnos: Sequence[str]
    ebm: np.ndarray
    term: np.ndarray

    def __post_init__(self) -> None:
        _check(self.qid, self.docnos, {"ebm": self.ebm, "term": self.term})


def _check(qid: str, docnos: Sequence[str], arrays: dict[str, np.ndarray]) -> None:
    if len(set(docnos)) != len(docnos):
        raise InputError(f"question {qid}: a document appears twice among the candidates")
    for name, values in arrays.items():
        values = np.asarray(values)
        if values.shape != (len(docnos),):
            raise InputError(
                f"question {qid}: {name} scores have shape {values.shape}, expected ({len(docnos)},)"
            )
        if not np.all(np.isfinite(values)):
            raise InputError(f"question {qid}: {name} scores contain NaN or infinite values")


def grid_size(step: float) -> int:
    """n such that step = 1/n; the step must divide 1."""
    if not 0 < step <= 1:
        raise InputError(f"step must be in (0, 1], got {step}")
    n = round(1 / step)
    if not math.isclose(n * step, 1.0, rel_tol=0, abs_tol=1e-9):
        raise InputError(f"step {step} does not divide 1 (use e.g. 0.01, 0.02, 0.05, 0.1)")
    return n


# -- the vectorised core ----------------------------------------------------------------------


def rank_order(scores: np.ndarray) -> np.ndarray:
    """Candidate indices best first for each row of ``scores``: score descending, ties in the
    candidates' order (``ebm.scoring.rankers.rank_columns``'s order)."""
    return np.argsort(-np.atleast_2d(scores), axis=-1, kind="stable")


def rank_flags(scores: np.ndarray, docnos: Sequence[str], relevant: frozenset[str]) -> np.ndarray:
    """Relevance flags in rank order for each row of ``scores`` (settings x candidates)."""
    order = rank_order(scores)
    is_relevant = np.fromiter((d in relevant for d in docnos), dtype=bool, count=len(docnos))
    return is_relevant[order]


def evaluate_settings(
    per_question: Sequence[tuple[str, Sequence[str], np.ndarray]],
    qrels: Qrels,
    threshold: int,
    measures: Sequence[Measure] = MEASURES,
) -> dict[str, np.ndarray]:
    """Mean of each measure per setting; each question gives (qid, docnos, settings x candidates)."""
    if not per_question:
        raise InputError("no questions to sweep")
    settings = np.atleast_2d(per_question[0][2]).shape[0]
    totals = {m.name: np.zeros(settings) for m in measures}
    for qid, docnos, scores in per_question:
        relevant = relevant_docs(qrels.get(qid, {}), threshold)
        flags = rank_flags(scores, docnos, relevant)
        for m in measures:
            totals[m.name] += m.batch(flags, len(relevant))
    return {name: total / len(per_question) for name, total in totals.items()}


def _best(values: np.ndarray) -> tuple[int, int]:
    """Index of the first best value (in grid order) and how many settings tie with it."""
    top = np.nanmax(values)
    ties = np.flatnonzero(values >= top - TIE)
    return int(ties[0]), len(ties)


# -- weights of the EBM score -----------------------------------------------------------------


@dataclass
class WeightSurface:
    """Mean measures over the (l1, l2) grid; entries with l1 + l2 > 1 are NaN."""

    step: float
    weights: np.ndarray  # the grid values 0, step, ..., 1 (for both l1 and l2)
    values: dict[str, np.ndarray]  # measure -> (n+1, n+1) array indexed [l1 index, l2 index]
    measure: str  # the measure optimised
    best_l1: float
    best_l2: float
    best_l3: float  # exactly (n - i - j) / n
    best_value: float
    ties: int  # settings sharing the best value (the first in grid order is reported)
    qids: list[str] = field(default_factory=list)

    @property
    def best_weights(self) -> tuple[float, float, float]:
        return self.best_l1, self.best_l2, self.best_l3

    def at(self, l1: float, l2: float) -> dict[str, float]:
        n = len(self.weights) - 1
        i, j = round(l1 * n), round(l2 * n)
        if i < 0 or j < 0 or i + j > n or not math.isclose(i / n, l1, abs_tol=1e-9):
            raise InputError(f"({l1}, {l2}) is not a grid setting with step {self.step}")
        return {name: float(v[i, j]) for name, v in self.values.items()}

    def to_dict(self, with_surface: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "step": self.step,
            "measure": self.measure,
            "best": {"l1": self.best_l1, "l2": self.best_l2, "l3": self.best_l3},
            "best_value": self.best_value,
            "best_measures": self.at(self.best_l1, self.best_l2),
            "ties": self.ties,
            "questions": list(self.qids),
        }
        if with_surface:
            data["surface"] = {
                name: [[None if np.isnan(x) else float(x) for x in row] for row in v]
                for name, v in self.values.items()
            }
        return data


def grid_weights(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Grid indices i, j and weights l1 = i/n, l2 = j/n, l3 = (n-i-j)/n for all i + j <= n."""
    i, j = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    keep = (i + j) <= n
    i, j = i[keep], j[keep]
    return i, j, i / n, j / n, (n - i - j) / n


def ebm_scores(item: ComponentScores, l1: float, l2: float, l3: float | None = None) -> np.ndarray:
    """S_EBM of each candidate for one setting (l3 defaults to 1 - l1 - l2)."""
    l3 = 1 - l1 - l2 if l3 is None else l3
    return (
        l1 * np.asarray(item.pico, float)
        + l2 * np.asarray(item.soe, float)
        + l3 * np.asarray(item.task, float)
    )


def sweep_weights(
    items: Sequence[ComponentScores],
    qrels: Qrels,
    threshold: int,
    step: float = 0.01,
    measure: str = "MAP",
    measures: Sequence[Measure] = MEASURES,
) -> WeightSurface:
    """Every (l1, l2) of the grid; the best setting for ``measure`` (first in grid order on ties)."""
    target = by_name(measure)
    if target.name not in {m.name for m in measures}:
        measures = [*measures, target]
    n = grid_size(step)
    i, j, l1, l2, l3 = grid_weights(n)
    per_question = []
    for item in items:
        pico, soe, task = (np.asarray(a, float) for a in (item.pico, item.soe, item.task))
        # Same arithmetic, in the same order, as ebm_scores: identical floats, identical ties.
        scores = l1[:, None] * pico[None, :] + l2[:, None] * soe[None, :] + l3[:, None] * task[None, :]
        per_question.append((item.qid, item.docnos, scores))
    flat = evaluate_settings(per_question, qrels, threshold, measures)
    values = {}
    for name, v in flat.items():
        grid = np.full((n + 1, n + 1), np.nan)
        grid[i, j] = v
        values[name] = grid
    k, ties = _best(flat[target.name])
    return WeightSurface(
        step=step,
        weights=np.arange(n + 1) / n,
        values=values,
        measure=target.name,
        best_l1=float(l1[k]),
        best_l2=float(l2[k]),
        best_l3=float(l3[k]),
        best_value=float(flat[target.name][k]),
        ties=ties,
        qids=[item.qid for item in items],
    )


def weights_run(
    items: Sequence[ComponentScores], l1: float, l2: float, l3: float | None = None, name: str = "ebm"
) -> Run:
    """The run of S_EBM under one setting, to evaluate or write with ``ebm.evaluation.trec``."""
    return ordered_run(name, [(item.qid, item.docnos, ebm_scores(item, l1, l2, l3)) for item in items])


def ordered_run(name: str, per_question: Sequence[tuple[str, Sequence[str], np.ndarray]]) -> Run:
    """A run ranking each question's candidates as the sweep does (:func:`rank_order`)."""
    ranked = {}
    for qid, docnos, scores in per_question:
        values = np.asarray(scores, dtype=float)
        ranked[qid] = [(docnos[i], float(values[i])) for i in rank_order(values)[0]]
    return run_from_ranked(name, ranked)


def plot_surface(surface: WeightSurface, path: str | Path, measure: str | None = None) -> Path:
    """The measure's surface over (l1, l2) as a 3-D PNG, as the paper's Figure 3."""
    from matplotlib.figure import Figure  # no pyplot: no global backend state, renders with Agg

    name = by_name(measure).name if measure else surface.measure
    if name not in surface.values:
        raise InputError(f"the sweep did not compute {name}")
    n = len(surface.weights) - 1
    i, j, l1, l2, _ = grid_weights(n)
    z = surface.values[name][i, j]
    fig = Figure(figsize=(7, 5.5), dpi=120)
    ax = fig.add_subplot(projection="3d")
    ax.plot_trisurf(l1, l2, z, cmap="viridis", linewidth=0, antialiased=True)
    best = surface.at(surface.best_l1, surface.best_l2)[name]
    ax.scatter([surface.best_l1], [surface.best_l2], [best], color="red", s=30, depthshade=False)
    ax.set_xlabel("λ1 (PICO)")
    ax.set_ylabel("λ2 (strength of evidence)")
    ax.set_zlabel(name, labelpad=8)
    ax.set_title(
        f"{name} over λ1, λ2 ({len(surface.qids)} questions, step {surface.step:g}); "
        f"best {best:.3f} at ({surface.best_l1:g}, {surface.best_l2:g})",
        fontsize=9,
    )
    ax.view_init(elev=25, azim=-135)
    path = Path(path)
    fig.savefig(path, format="png")
    return path


# -- term / EBM combination weight -------------------------------------------------------------


def normalise(scores: np.ndarray, method: Normalisation = "minmax") -> np.ndarray:
    """Per-question normalisation: min-max to [0, 1] (constant scores give 0), z-score, or none."""
    scores = np.asarray(scores, dtype=float)
    if method == "none" or scores.size == 0:
        return scores
    if method == "minmax":
        low, high = scores.min(), scores.max()
        return (scores - low) / (high - low) if high > low else np.zeros_like(scores)
    if method == "zscore":
        sd = scores.std()
        return (scores - scores.mean()) / sd if sd > 0 else np.zeros_like(scores)
    raise InputError(f"unknown normalisation {method!r}; use minmax, zscore or none")


def combined_scores(
    item: CombinationScores, alpha: float, normalisation: Normalisation = "minmax", beta: float | None = None
) -> np.ndarray:
    """alpha norm(EBM) + (1 - alpha) norm(term) for one question (beta overrides 1 - alpha)."""
    beta = 1 - alpha if beta is None else beta
    return alpha * normalise(item.ebm, normalisation) + beta * normalise(item.term, normalisation)


@dataclass
class AlphaCurve:
    step: float
    alphas: np.ndarray
    values: dict[str, np.ndarray]  # measure -> value per alpha
    measure: str
    best_alpha: float
    best_beta: float  # exactly (n - k) / n, the weight of the term score
    best_value: float
    ties: int
    normalisation: str
    qids: list[str] = field(default_factory=list)

    @property
    def best_weights(self) -> tuple[float, float]:
        return self.best_alpha, self.best_beta

    def at(self, alpha: float) -> dict[str, float]:
        k = round(alpha * (len(self.alphas) - 1))
        if not 0 <= k < len(self.alphas) or not math.isclose(self.alphas[k], alpha, abs_tol=1e-9):
            raise InputError(f"{alpha} is not a grid value with step {self.step}")
        return {name: float(v[k]) for name, v in self.values.items()}

    def to_dict(self, with_curve: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "step": self.step,
            "measure": self.measure,
            "normalisation": self.normalisation,
            "best_alpha": self.best_alpha,
            "best_value": self.best_value,
            "best_measures": self.at(self.best_alpha),
            "ties": self.ties,
            "questions": list(self.qids),
        }
        if with_curve:
            data["alphas"] = self.alphas.tolist()
            data["curve"] = {name: v.tolist() for name, v in self.values.items()}
        return data


def sweep_combination(
    items: Sequence[CombinationScores],
    qrels: Qrels,
    threshold: int,
    step: float = 0.01,
    measure: str = "MAP",
    normalisation: Normalisation = "minmax",
    measures: Sequence[Measure] = MEASURES,
) -> AlphaCurve:
    """Every alpha in 0, step, ..., 1 (weight of the EBM score); best first in grid order on ties."""
    target = by_name(measure)
    if target.name not in {m.name for m in measures}:
        measures = [*measures, target]
    n = grid_size(step)
    k = np.arange(n + 1)
    alpha, beta = k / n, (n - k) / n
    per_question = []
    for item in items:
        ebm, term = normalise(item.ebm, normalisation), normalise(item.term, normalisation)
        scores = alpha[:, None] * ebm[None, :] + beta[:, None] * term[None, :]
        per_question.append((item.qid, item.docnos, scores))
    values = evaluate_settings(per_question, qrels, threshold, measures)
    best, ties = _best(values[target.name])
    return AlphaCurve(
        step=step,
        alphas=alpha,
        values=values,
        measure=target.name,
        best_alpha=float(alpha[best]),
        best_beta=float(beta[best]),
        best_value=float(values[target.name][best]),
        ties=ties,
        normalisation=normalisation,
        qids=[item.qid for item in items],
    )


def combination_run(
    items: Sequence[CombinationScores],
    alpha: float,
    normalisation: Normalisation = "minmax",
    name: str = "combination",
    beta: float | None = None,
) -> Run:
    """The run of the combination under one alpha (beta, the term weight, defaults to 1 - alpha)."""
    return ordered_run(
        name, [(item.qid, item.docnos, combined_scores(item, alpha, normalisation, beta)) for item in items]
    )


def plot_curve(curve: AlphaCurve, path: str | Path, measures: Sequence[str] | None = None) -> Path:
    """The measures against alpha as a PNG, the chosen alpha marked."""
    from matplotlib.figure import Figure

    names = [by_name(m).name for m in measures] if measures else list(curve.values)
    fig = Figure(figsize=(7, 4.5), dpi=120)
    ax = fig.add_subplot()
    for name in names:
        ax.plot(curve.alphas, curve.values[name], label=name)
    ax.axvline(curve.best_alpha, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("α (weight of the normalised EBM score)")
    ax.set_ylabel("mean over questions")
    ax.set_title(
        f"term/EBM combination ({len(curve.qids)} questions, {curve.normalisation}); "
        f"best {curve.measure} {curve.best_value:.3f} at α = {curve.best_alpha:g}",
        fontsize=9,
    )
    ax.legend()
    path = Path(path)
    fig.savefig(path, format="png")
    return path
