"""Training of the outcome extractor's ensemble (scikit-learn), producing an ``OutcomeModel``.

Input: processed abstracts with one 0/1 label per sentence, each marked gold (EvidenceOutcomes:
a sentence is positive when it contains an annotated outcome span) or weak (structured
abstracts: positive in RESULTS/CONCLUSIONS, headings removed). The text classifiers (unigram
and n-gram naive Bayes, semantic naive Bayes) learn from both; the position and length
classifiers and the stacking regression only from gold abstracts, since they encode where gold
outcome statements are and how the base scores relate to them.

Stacking (Ting & Witten 1999, as in the paper): base classifiers are fitted on k-1 folds of the
gold abstracts (plus all weak ones) and score the k-th; a least-squares linear regression
(``LinearRegression``) of the gold labels on those held-out scores gives the weights. The base
classifiers of the final model are then refitted on everything. Folds are by abstract and
seeded, so a seed gives the same model.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import KFold
from sklearn.naive_bayes import MultinomialNB

from ebm.text.document import Document
from extractors.outcome import CLASSIFIERS, NaiveBayes, OutcomeModel, Stacker
from extractors.outcome_cues import CueTable
from extractors.outcome_features import (
    abstract_length,
    ngram_features,
    position_keys,
    unstructured_position_keys,
    words,
)


@dataclass
class Example:
    """One processed abstract with sentence labels (and, optionally, semantic features)."""

    doc: Document
    labels: Sequence[int]
    gold: bool
    semantic: list[list[str]] | None = None  # per sentence, from outcome_features.semantic_features
    _tokens: list[list[str]] | None = field(default=None, repr=False)

    @property
    def tokens(self) -> list[list[str]]:
        if self._tokens is None:
            self._tokens = [words(s.text) for s in self.doc.sentences]
        return self._tokens


@dataclass(frozen=True)
class TrainingConfig:
    alpha: float = 1.0  # naive Bayes additive smoothing
    min_df: int = 2  # a word must occur in this many training sentences
    ig_features: int = 2000  # n-grams kept by information gain before the odds-ratio filter
    position_smoothing: float = 2.0  # pseudo-counts pulling a position estimate to the base rate
    length_cap: int = 25
    weak_text: bool = True  # weakly labelled abstracts train the text classifiers
    weak_semantic: bool = True
    folds: int = 5
    exclude_ngrams: frozenset[str] = frozenset()  # e.g. disease names (the paper removed them)


# --- base classifiers ------------------------------------------------------------------------


def _analyzer(x: list[str]) -> list[str]:
    return x


def fit_naive_bayes(docs: Sequence[list[str]], y: Sequence[int], alpha: float, min_df: int) -> NaiveBayes:
    """Multinomial naive Bayes on feature lists, reduced to log-odds weights."""
    vec = CountVectorizer(analyzer=_analyzer, min_df=min_df, lowercase=False)
    X = vec.fit_transform(docs)
    nb = MultinomialNB(alpha=alpha).fit(X, np.asarray(y))
    return _nb_weights(nb, vec.get_feature_names_out())


def _nb_weights(nb: MultinomialNB, names: Sequence[str]) -> NaiveBayes:
    pos = int(np.flatnonzero(nb.classes_ == 1)[0])
    neg = 1 - pos
    delta = nb.feature_log_prob_[pos] - nb.feature_log_prob_[neg]
    bias = float(nb.class_log_prior_[pos] - nb.class_log_prior_[neg])
    return NaiveBayes(bias, {str(n): float(d) for n, d in zip(names, delta, strict=True)})


def information_gain(X: sparse.csr_matrix, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Information gain and odds ratio (positive class) of binary features ``X`` for labels ``y``.

    Yang & Pedersen (1997) for the gain; Mladenic & Grobelnik (1999) for the odds ratio, with
    0.5 added to each cell so that features seen in one class only stay finite.
    """
    Xb = (X > 0).astype(np.float64).tocsc()
    n = float(len(y))
    n_pos = float(y.sum())
    n_neg = n - n_pos
    a = np.asarray(Xb[y == 1].sum(axis=0)).ravel()  # feature present, positive
    b = np.asarray(Xb[y == 0].sum(axis=0)).ravel()  # present, negative
    c = n_pos - a  # absent, positive
    d = n_neg - b  # absent, negative

    def h(p: np.ndarray) -> np.ndarray:
        p = np.clip(p, 1e-12, 1 - 1e-12)
        return -(p * np.log2(p) + (1 - p) * np.log2(1 - p))

    present = a + b
    absent = c + d
    h_c = h(np.array(n_pos / n))
    cond = (present / n) * h(a / np.maximum(present, 1)) + (absent / n) * h(c / np.maximum(absent, 1))
    ig = h_c - cond
    odds_ratio = ((a + 0.5) * (d + 0.5)) / ((b + 0.5) * (c + 0.5))
    return ig, odds_ratio


@dataclass(frozen=True)
class NgramSelection:
    features: list[str]
    ig: dict[str, float]
    odds_ratio: dict[str, float]


def select_ngrams(
    docs: Sequence[list[str]], y: Sequence[int], k: int, min_df: int, exclude: frozenset[str]
) -> NgramSelection:
    """Top ``k`` n-grams by information gain, then only positive predictors (odds ratio > 1)."""
    vec = CountVectorizer(analyzer=_analyzer, min_df=min_df, lowercase=False, binary=True)
    X = vec.fit_transform(docs)
    names = vec.get_feature_names_out()
    ig, odds = information_gain(X, np.asarray(y))
    # stable order: gain, then name, so that ties never depend on hash order
    order = sorted(range(len(names)), key=lambda i: (-ig[i], names[i]))
    chosen = [i for i in order if names[i] not in exclude][:k]
    keep = [i for i in chosen if odds[i] > 1.0]
    return NgramSelection(
        [str(names[i]) for i in keep],
        {str(names[i]): float(ig[i]) for i in keep},
        {str(names[i]): float(odds[i]) for i in keep},
    )


def fit_position(examples: Sequence[Example], smoothing: float) -> tuple[dict[str, float], float]:
    """P(outcome | position key), smoothed towards the base rate; gold abstracts only.

    Structured abstracts also count once more under their headless keys (``U:``), so the
    estimates for unstructured abstracts rest on every gold abstract.
    """
    pos: Counter[str] = Counter()
    tot: Counter[str] = Counter()
    for ex in examples:
        key_lists = [position_keys(ex.doc)]
        if any(k.startswith("S:") for k in key_lists[0]):
            key_lists.append(unstructured_position_keys(ex.doc))
        for keys in key_lists:
            for k, label in zip(keys, ex.labels, strict=True):
                tot[k] += 1
                pos[k] += label
    n_pos = sum(int(sum(ex.labels)) for ex in examples)
    n = sum(len(ex.labels) for ex in examples)
    base = n_pos / n if n else 0.0
    table = {k: (pos[k] + smoothing * base) / (tot[k] + smoothing) for k in sorted(tot)}
    return table, base


def fit_length(examples: Sequence[Example], cap: int) -> tuple[dict[int, float], float]:
    """Add-one smoothed P(abstract contains an outcome statement | its length in sentences)."""
    has: Counter[int] = Counter()
    tot: Counter[int] = Counter()
    for ex in examples:
        n = min(abstract_length(ex.doc), cap)
        tot[n] += 1
        has[n] += int(any(ex.labels))
    table = {n: (has[n] + 1) / (tot[n] + 2) for n in sorted(tot)}
    return table, 0.5  # an unseen length: add-one smoothing of no observation


@dataclass
class BaseModels:
    unigram: NaiveBayes
    ngram: NaiveBayes
    ngram_selection: NgramSelection
    position: dict[str, float]
    position_default: float
    length: dict[int, float]
    length_default: float
    semantic: NaiveBayes | None


def fit_base(examples: Sequence[Example], config: TrainingConfig) -> BaseModels:
    gold = [ex for ex in examples if ex.gold]
    text_ex = [ex for ex in examples if ex.gold or config.weak_text]
    toks = [t for ex in text_ex for t in ex.tokens]
    y = [int(v) for ex in text_ex for v in ex.labels]
    unigram = fit_naive_bayes(toks, y, config.alpha, config.min_df)
    ngram_docs = [ngram_features(t) for t in toks]
    selection = select_ngrams(ngram_docs, y, config.ig_features, config.min_df, config.exclude_ngrams)
    chosen = set(selection.features)
    ngram = fit_naive_bayes([[f for f in d if f in chosen] for d in ngram_docs], y, config.alpha, 1)
    position, position_default = fit_position(gold, config.position_smoothing)
    length, length_default = fit_length(gold, config.length_cap)
    semantic = None
    sem_ex = [ex for ex in examples if ex.semantic is not None and (ex.gold or config.weak_semantic)]
    if sem_ex and len(sem_ex) == len([ex for ex in examples if ex.gold or config.weak_semantic]):
        sdocs = [f for ex in sem_ex for f in ex.semantic or []]
        sy = [int(v) for ex in sem_ex for v in ex.labels]
        semantic = fit_naive_bayes(sdocs, sy, config.alpha, 1)
    return BaseModels(unigram, ngram, selection, position, position_default, length, length_default, semantic)


def _as_model(base: BaseModels, config: TrainingConfig) -> OutcomeModel:
    return OutcomeModel(
        unigram=base.unigram,
        ngram=base.ngram,
        position=base.position,
        position_default=base.position_default,
        length=base.length,
        length_default=base.length_default,
        length_cap=config.length_cap,
        stack=Stacker(0.0, {}),
        semantic=base.semantic,
    )


def score_matrix(
    model: OutcomeModel, examples: Sequence[Example], cues: CueTable
) -> tuple[np.ndarray, list[str]]:
    """Base scores of every sentence of ``examples``: rows = sentences, columns = classifiers."""
    names = [c for c in CLASSIFIERS if c != "semantic" or model.semantic is not None]
    rows: list[list[float]] = []
    for ex in examples:
        sem = ex.semantic if model.semantic is not None else None
        for i, (scores, _, _) in enumerate(model.base_scores(ex.doc, cues)):
            if sem is not None and model.semantic is not None:
                scores["semantic"] = model.semantic.probability(sem[i])
            rows.append([scores[c] for c in names])
    return np.asarray(rows, dtype=np.float64).reshape(-1, len(names)), names


def fit_stacker(X: np.ndarray, y: np.ndarray, names: Sequence[str]) -> Stacker:
    """Least-squares weights (with intercept) of the labels on the base scores."""
    lr = LinearRegression().fit(X, y)
    return Stacker(float(lr.intercept_), {n: float(w) for n, w in zip(names, lr.coef_, strict=True)})


@dataclass
class TrainingResult:
    model: OutcomeModel
    oof_scores: np.ndarray  # held-out base scores of the gold sentences (stacking input)
    oof_labels: np.ndarray
    names: list[str]
    selection: NgramSelection


def train(
    examples: Sequence[Example],
    seed: int,
    config: TrainingConfig | None = None,
    *,
    cues: CueTable,
    progress: Callable[[str], None] | None = None,
) -> TrainingResult:
    """Fit the ensemble: out-of-fold stacking over the gold abstracts, then refit on all."""
    config = config or TrainingConfig()
    gold = [ex for ex in examples if ex.gold]
    weak = [ex for ex in examples if not ex.gold]
    if len(gold) < config.folds:
        raise ValueError(f"stacking needs at least {config.folds} gold abstracts, got {len(gold)}")
    kf = KFold(n_splits=config.folds, shuffle=True, random_state=seed)
    blocks: list[tuple[np.ndarray, np.ndarray]] = []
    names: list[str] = []
    for f, (tr, te) in enumerate(kf.split(np.arange(len(gold)))):
        if progress:
            progress(f"fold {f + 1}/{config.folds}")
        base = fit_base([gold[i] for i in tr] + weak, config)
        model = _as_model(base, config)
        held = [gold[i] for i in te]
        X, names = score_matrix(model, held, cues)
        blocks.append((X, np.asarray([v for ex in held for v in ex.labels], dtype=np.float64)))
    X = np.vstack([b[0] for b in blocks])
    y = np.concatenate([b[1] for b in blocks])
    five = [n for n in names if n != "semantic"]
    stack = fit_stacker(X[:, [names.index(n) for n in five]], y, five)
    stack_sem = fit_stacker(X, y, names) if "semantic" in names else None
    if progress:
        progress("refit on all training abstracts")
    base = fit_base(list(examples), config)
    model = _as_model(base, config)
    model.stack = stack
    model.stack_semantic = stack_sem
    return TrainingResult(model, X, y, names, base.ngram_selection)


def round_model(model: OutcomeModel, digits: int = 6) -> OutcomeModel:
    """Round every parameter to ``digits`` significant digits (a compact, stable file)."""

    def r(x: float) -> float:
        return float(f"{x:.{digits}g}")

    def nb(m: NaiveBayes | None) -> NaiveBayes | None:
        return None if m is None else NaiveBayes(r(m.bias), {k: r(v) for k, v in sorted(m.weights.items())})

    def st(s: Stacker | None) -> Stacker | None:
        return None if s is None else Stacker(r(s.intercept), {k: r(v) for k, v in s.weights.items()})

    uni, ngr, stack = nb(model.unigram), nb(model.ngram), st(model.stack)
    assert uni is not None and ngr is not None and stack is not None
    return OutcomeModel(
        unigram=uni,
        ngram=ngr,
        position={k: r(v) for k, v in sorted(model.position.items())},
        position_default=r(model.position_default),
        length={k: r(v) for k, v in sorted(model.length.items())},
        length_default=r(model.length_default),
        length_cap=model.length_cap,
        stack=stack,
        semantic=nb(model.semantic),
        stack_semantic=st(model.stack_semantic),
        meta=model.meta,
    )


def describe(result: TrainingResult) -> dict[str, Any]:
    """Training facts worth keeping in the model's metadata."""
    counts: defaultdict[str, int] = defaultdict(int)
    for v in result.oof_labels:
        counts["positive" if v else "negative"] += 1
    return {
        "stacking_sentences": dict(counts),
        "ngram_features": len(result.selection.features),
        "top_ngrams": result.selection.features[:40],
    }
