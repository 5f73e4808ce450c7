"""Train the study-design model (extractors/design.py) on the training split only.

    python scripts/build_design_corpus.py          # -> build/design_corpus.jsonl.gz
    python scripts/train_design.py                 # -> ebm/data/models/design.npz

Multinomial logistic regression on sublinear tf-idf word uni/bigrams (+ title words) and the
hand cue features, balanced class weights; the regularisation C and the cue feature value are
chosen by 3-fold cross-validation on the training split (weighted log loss), the temperature on the same
out-of-fold logits, and the log prior from the indexed records of the training split.
Everything is seeded; the evaluation splits are never read.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from build_design_corpus import DEFAULT_OUT as CORPUS  # noqa: E402
from build_design_corpus import read_corpus  # noqa: E402

from extractors.design import (  # noqa: E402
    CUES,
    DESIGN_CLASSES,
    MODEL_FILE,
    DesignModel,
    save_design_model,
    text_features,
)

SEED = 13
MAX_FEATURES = 40000
MIN_DF = 2
C_GRID = (1.0, 4.0)
CUE_GRID = (1.0, 3.0)  # the value of a present cue feature: larger = the cues less regularised
ABSENT_BIAS = -30.0  # a class with no training record is never predicted


def build_vocabulary(docs: list[Counter[str]]) -> tuple[dict[str, int], np.ndarray]:
    df: Counter[str] = Counter()
    for d in docs:
        df.update(d.keys())
    kept = sorted((f for f, n in df.items() if n >= MIN_DF), key=lambda f: (-df[f], f))[:MAX_FEATURES]
    kept.sort()
    n = len(docs)
    idf = [math.log((1 + n) / (1 + df[f])) + 1.0 for f in kept]
    cues = ["cue:" + name for name, _, _ in CUES]
    vocab = {f: i for i, f in enumerate(kept + cues)}
    return vocab, np.asarray(idf + [0.0] * len(cues))


def matrix(model: DesignModel, records: list[dict[str, Any]]) -> sparse.csr_matrix:
    rows, cols, vals = [], [], []
    for i, r in enumerate(records):
        idx, val = model.vectorize(r["title"], r["abstract"])
        rows.extend([i] * len(idx))
        cols.extend(idx.tolist())
        vals.extend(val.tolist())
    return sparse.csr_matrix((vals, (rows, cols)), shape=(len(records), len(model.vocabulary)))


def shell_model(vocab: dict[str, int], idf: np.ndarray, cue: float) -> DesignModel:
    """A model with no weights yet, for its ``vectorize``."""
    k = len(DESIGN_CLASSES)
    return DesignModel(
        DESIGN_CLASSES, vocab, idf, np.zeros((len(vocab), k)), np.zeros(k), 1.0, np.zeros(k), cue
    )


def balanced_weights(y: np.ndarray, k: int) -> np.ndarray:
    counts = np.bincount(y, minlength=k).astype(float)
    w = len(y) / (np.count_nonzero(counts) * np.maximum(counts, 1))
    return np.asarray(w[y])


def weighted_log_loss(z: np.ndarray, y: np.ndarray, w: np.ndarray, t: float) -> float:
    s = z / t
    s = s - s.max(axis=1, keepdims=True)
    logp = s - np.log(np.exp(s).sum(axis=1, keepdims=True))
    return float(-(w * logp[np.arange(len(y)), y]).sum() / w.sum())


def fit(x: sparse.csr_matrix, y: np.ndarray, w: np.ndarray, c: float) -> LogisticRegression:
    clf = LogisticRegression(C=c, max_iter=2000, random_state=SEED)
    clf.fit(x, y, sample_weight=w)
    return clf


def full_logits(clf: LogisticRegression, x: sparse.csr_matrix, k: int) -> np.ndarray:
    z = np.full((x.shape[0], k), ABSENT_BIAS)
    z[:, clf.classes_] = clf.decision_function(x)
    return z


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--out", type=Path, default=ROOT / "ebm" / "data" / MODEL_FILE)
    args = ap.parse_args(argv)

    train = read_corpus(args.corpus, {"train"})
    classes = DESIGN_CLASSES
    k = len(classes)
    y = np.asarray([classes.index(r["label"]) for r in train])
    docs = [text_features(r["title"], r["abstract"]) for r in train]
    vocab, idf = build_vocabulary(docs)
    w = balanced_weights(y, k)
    print(f"{len(train)} training records, {len(vocab)} features", file=sys.stderr)

    folds = list(StratifiedKFold(3, shuffle=True, random_state=SEED).split(np.zeros(len(y)), y))
    best: tuple[float, float, float, np.ndarray] | None = None
    for cue in CUE_GRID:
        x = matrix(shell_model(vocab, idf, cue), train)
        for c in C_GRID:
            oof = np.zeros((len(y), k))
            for tr, te in folds:
                clf = fit(x[tr], y[tr], w[tr], c)
                oof[te] = full_logits(clf, x[te], k)
            loss = weighted_log_loss(oof, y, w, 1.0)
            print(f"cue {cue:g}, C={c:g}: out-of-fold weighted log loss {loss:.4f}", file=sys.stderr)
            if best is None or loss < best[0]:
                best = (loss, c, cue, oof)
    assert best is not None
    _, c, cue, oof = best
    temps = np.exp(np.linspace(math.log(0.25), math.log(4.0), 41))
    t = float(min(temps, key=lambda t: weighted_log_loss(oof, y, w, float(t))))

    indexed = Counter(r["label"] for r in train if r["indexed"])
    prior = np.asarray([indexed.get(cl, 0) + 1.0 for cl in classes])
    log_prior = np.log(prior / prior.sum())

    clf = fit(matrix(shell_model(vocab, idf, cue), train), y, w, c)
    weights = np.zeros((len(vocab), k))
    bias = np.full(k, ABSENT_BIAS)
    weights[:, clf.classes_] = clf.coef_.T
    bias[clf.classes_] = clf.intercept_
    model = DesignModel(classes, vocab, idf, weights, bias, t, log_prior, cue)
    save_design_model(args.out, model)
    print(
        f"cue {cue:g}, C={c:g}, temperature {t:.3f}; wrote {args.out} ({args.out.stat().st_size:,} bytes)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
