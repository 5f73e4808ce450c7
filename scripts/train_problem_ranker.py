"""Train the primary-problem ranker and write the model shipped in ebm/data/models.

Training data: the bundled citations with real MeSH major-topic disorders
(``problem_corpus.problem_citations``) whose PMID is even; odd PMIDs are held out for
``scripts/eval_extractors.py`` and never read here. Each problem the rules find
(``extractors.problem_ranker.problem_features``) is an example, positive when it is one of the
citation's major-topic disorders.

The prior feature (how often a descriptor found in an abstract is indexed as its major topic)
is computed out of fold while fitting: each citation's prior comes from the other four folds
(seeded split by PMID), so the regression learns how much a prior from *other* abstracts is
worth. The shipped prior table is then counted over all training citations. The regression is
scikit-learn's L2 logistic regression. Same data, same seed -> byte-identical model.

Usage:
  ebm setup --no-quickumls                      # once: the concept index
  python scripts/train_problem_ranker.py        # --out PATH, --seed N, --c C, --smoothing S
  python scripts/train_problem_ranker.py --without-prior --out /tmp/no-prior.json.gz   # ablation
  python scripts/eval_extractors.py --only problem --problem-ranker /tmp/no-prior.json.gz
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from problem_corpus import problem_citations  # noqa: E402

from ebm.concepts.annotate import annotate  # noqa: E402
from ebm.errors import EbmError  # noqa: E402
from ebm.paths import package_data  # noqa: E402
from extractors.problem_ranker import (  # noqa: E402
    MODEL_FILE,
    PRIOR_FEATURES,
    ProblemRanker,
    RankedProblems,
    prior_features,
    problem_features,
)

DEFAULT_SEED = 2007
FOLDS = 5

Example = tuple[str, RankedProblems, set[str]]  # PMID, rule-ranked problems with features, gold


def fold_of(pmid: str, seed: int) -> int:
    return int(hashlib.sha256(f"{seed}:{pmid}".encode()).hexdigest(), 16) % FOLDS


def count_priors(examples: list[Example]) -> dict[str, tuple[int, int]]:
    """Descriptor -> (training abstracts whose problems include it, of them major topic)."""
    found: Counter[str] = Counter()
    major: Counter[str] = Counter()
    for _, ranked, gold in examples:
        for c in ranked.candidates:
            found[c.concepts[0]] += 1
            major[c.concepts[0]] += c.concepts[0] in gold
    return {ui: (found[ui], major[ui]) for ui in found}


def base_rate(prior: dict[str, tuple[int, int]]) -> float:
    total = sum(f for f, _ in prior.values())
    return sum(m for _, m in prior.values()) / total if total else 0.5


def rows(examples: list[Example], prior: dict[str, tuple[int, int]], smoothing: float):  # noqa: ANN201
    """Feature dicts and labels of every candidate of ``examples``, priors from ``prior``."""
    rate = base_rate(prior)
    for _, ranked, gold in examples:
        for c, f in zip(ranked.candidates, ranked.features, strict=True):
            found, major = prior.get(c.concepts[0], (0, 0))
            yield {**f, **prior_features(found, major, rate, smoothing)}, c.concepts[0] in gold


def train(
    examples: list[Example], seed: int, c: float, smoothing: float, with_prior: bool = True
) -> ProblemRanker:
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    X: list[dict[str, float]] = []
    y: list[bool] = []
    for k in range(FOLDS):
        held = [e for e in examples if fold_of(e[0], seed) == k]
        prior = count_priors([e for e in examples if fold_of(e[0], seed) != k])
        for f, label in rows(held, prior, smoothing):
            X.append(f if with_prior else {n: v for n, v in f.items() if n not in PRIOR_FEATURES})
            y.append(label)
    vec = DictVectorizer(sparse=False, sort=True)
    matrix = vec.fit_transform(X)
    model = LogisticRegression(C=c, max_iter=5000, random_state=seed).fit(matrix, y)
    weights = {
        name: round(float(w), 6) for name, w in zip(vec.get_feature_names_out(), model.coef_[0], strict=True)
    }
    prior = count_priors(examples)
    return ProblemRanker(
        bias=round(float(model.intercept_[0]), 6),
        weights=weights,
        prior=prior,
        base_rate=round(base_rate(prior), 6),
        smoothing=smoothing,
        meta={
            "trained_on": "bundled citations with real major-topic disorders, even PMIDs",
            "citations": len(examples),
            "candidates": len(X),
            "seed": seed,
            "C": c,
            "folds": FOLDS,
            "prior": with_prior,
        },
    )


def accuracy(examples: list[Example], ranker: ProblemRanker | None) -> float:
    """Share of citations whose primary problem (rules' first, or the ranker's) is major."""
    ok = 0
    for _, ranked, gold in examples:
        chosen = ranker.choose(ranked) if ranker else ((0, 1.0) if ranked.candidates else None)
        ok += chosen is not None and ranked.candidates[chosen[0]].concepts[0] in gold
    return 100.0 * ok / max(len(examples), 1)


def cross_validate(
    examples: list[Example], seed: int, c: float, smoothing: float, with_prior: bool = True
) -> tuple[float, float]:
    """Accuracy of the rules and of the ranker on each fold of the training citations, the
    ranker trained on the other folds (priors included): the figure to choose features by,
    without looking at the held-out half."""
    rules = learned = 0.0
    for k in range(FOLDS):
        held = [e for e in examples if fold_of(e[0], seed + 1) == k]
        rest = [e for e in examples if fold_of(e[0], seed + 1) != k]
        ranker = train(rest, seed, c, smoothing, with_prior)
        rules += accuracy(held, None) * len(held)
        learned += accuracy(held, ranker) * len(held)
    return rules / len(examples), learned / len(examples)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=package_data(MODEL_FILE))
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--c", type=float, default=1.0, help="inverse L2 strength of the regression")
    ap.add_argument("--smoothing", type=float, default=5.0, help="pseudo-counts of the prior")
    ap.add_argument(
        "--cv", action="store_true", help="also print cross-validated accuracy on the training half"
    )
    ap.add_argument(
        "--without-prior", action="store_true", help="no prior features (an ablation; not for shipping)"
    )
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    try:
        from ebm.resources import Resources

        res = Resources.load()
        pipeline, matcher = res.pipeline, res.matcher
        kinds = res.value("problem_kinds")
        examples: list[Example] = []
        for citation, gold in problem_citations():
            if int(citation.pmid) % 2:
                continue  # odd PMIDs: held out for evaluation
            doc = pipeline.process(citation)
            examples.append(
                (
                    citation.pmid,
                    problem_features(
                        doc, annotate(doc, matcher, res.negation), vocabulary=res.vocabulary, kinds=kinds
                    ),
                    gold,
                )
            )
        if args.cv:
            rules, learned = cross_validate(
                examples, args.seed, args.c, args.smoothing, not args.without_prior
            )
            print(
                f"{FOLDS}-fold cross-validation on the training citations: "
                f"rules {rules:.1f} %, ranker {learned:.1f} %"
            )
        ranker = train(examples, args.seed, args.c, args.smoothing, with_prior=not args.without_prior)
    except EbmError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    ranker.save(args.out)
    print(
        f"{len(examples)} training citations, {ranker.meta['candidates']} candidates, "
        f"{len(ranker.prior)} descriptors in the prior; primary problem a major topic on the training "
        f"citations (in sample): rules {accuracy(examples, None):.1f} %, "
        f"ranker {accuracy(examples, ranker):.1f} %"
    )
    print(f"wrote {args.out} in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
