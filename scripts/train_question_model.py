"""Train the question role model (ebm/data/models/question_roles.json.gz) for ``ebm.question``.

    python scripts/train_question_model.py [--shared ../shared] [--out ebm/data/models/question_roles.json.gz]

Data: CLIREC's 423 queries (``../shared/data/clirec/clirec.queries.xml``: keywords + the PICO
fields of a Cochrane review). Queries are split by review (the id before the dot, so that the
sub-questions of one review, which share their keywords, fall on one side) with a fixed seed:
a quarter of the reviews is the TEST part, never trained or tuned on (``clirec_split``);
the model learns from the rest. Each chunk of a keyword query (``ebm.question.analyse``) is
labelled with the gold field it names: the field whose concepts it shares (problem first,
then intervention, comparison, population, outcome), else the field whose words it shares,
else "other". The 23 bench questions are not used here, nor the CLIREC reviews 8 of them were
drawn from (``bench_reviews``).

The model is a multinomial logistic regression (scikit-learn, seeded), stored as plain JSON
weights (no pickle).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ebm.question import (  # noqa: E402
    MODEL_LABELS,
    QuestionCues,
    analyse,
    chunk_features,
    fold,
    load_question_cues,
)

SEED = 16
TEST_FRACTION = 0.25
GOLD_FIELDS = {
    "prob": "problem",
    "int": "intervention",
    "comp": "comparison",
    "pop": "population",
    "out": "outcome",
}
LABEL_ORDER = ("problem", "intervention", "comparison", "population", "outcome")


@dataclass(frozen=True)
class ClirecQuery:
    id: str
    keywords: str
    fields: dict[str, str]  # problem, intervention, comparison, population, outcome -> text

    @property
    def review(self) -> str:
        return self.id.split(".")[0]


def read_clirec(shared: Path) -> list[ClirecQuery]:
    path = shared / "data" / "clirec" / "clirec.queries.xml"
    root = ET.parse(path).getroot()
    out = []
    for q in root.iter("query"):
        fields = {}
        for child in q:
            name = GOLD_FIELDS.get(child.tag)
            if name and child.text and child.text.strip():
                fields[name] = " ".join(child.text.split())
        out.append(ClirecQuery(q.attrib["id"], " ".join(q.attrib["keywords"].split()), fields))
    return out


def bench_reviews(shared: Path) -> set[str]:
    """CLIREC reviews the bench development questions were drawn from (``sources.tsv``): kept
    out of training so that the bench figures do not see their own gold concepts."""
    path = shared / "data" / "bench" / "sources.tsv"
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        cells = line.split("\t")
        if len(cells) > 1 and cells[1].startswith("CLIREC "):
            out.add(cells[1].split()[1].split(".")[0])
    return out


def clirec_split(queries: list[ClirecQuery]) -> tuple[list[ClirecQuery], list[ClirecQuery]]:
    """(train, test): a seeded quarter of the reviews is the test part."""
    reviews = sorted({q.review for q in queries})
    random.Random(SEED).shuffle(reviews)
    test_reviews = set(reviews[: round(len(reviews) * TEST_FRACTION)])
    train = [q for q in queries if q.review not in test_reviews]
    test = [q for q in queries if q.review in test_reviews]
    return train, test


def _stems(text: str) -> set[str]:
    return {fold(w)[:5] for w in re.findall(r"[^\W_]+", text) if len(w) > 2}


def chunk_label(
    chunk_text: str, chunk_ids: set[str], gold_ids: dict[str, set[str]], fields: dict[str, str]
) -> str:
    for name in LABEL_ORDER:
        if chunk_ids & gold_ids.get(name, set()):
            return name
    stems = _stems(chunk_text)
    for name in LABEL_ORDER:
        if name in fields and stems & _stems(fields[name]):
            return name
    return "other"


def training_rows(
    queries: list[ClirecQuery], matcher, vocabulary, cues: QuestionCues
) -> tuple[list[list[str]], list[str]]:
    X: list[list[str]] = []
    y: list[str] = []
    seen: set[tuple[str, str]] = set()
    for q in queries:
        # sub-questions of a review share keywords; one example per (keywords, gold fields)
        key = (q.keywords, json.dumps(q.fields, sort_keys=True))
        if key in seen:
            continue
        seen.add(key)
        gold_ids = {name: {m.cui for m in matcher.match(text)} for name, text in q.fields.items()}
        question, words, _marks, _starts, chunks = analyse(q.keywords, matcher, cues)
        for k, c in enumerate(chunks):
            s, e = c.span(words)
            label = chunk_label(question[s:e], {m.cui for m in c.concepts}, gold_ids, q.fields)
            X.append(chunk_features(chunks, k, vocabulary))
            y.append(label)
    return X, y


def train(X: list[list[str]], y: list[str]) -> dict:
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    vec = DictVectorizer()
    M = vec.fit_transform([dict.fromkeys(f, 1) for f in X])
    clf = LogisticRegression(C=1.0, max_iter=2000, random_state=SEED)
    clf.fit(M, y)
    labels = [str(c) for c in clf.classes_]
    unknown = set(labels) - set(MODEL_LABELS)
    if unknown:
        raise SystemExit(f"unexpected labels {unknown}")
    return {
        "labels": labels,
        "features": list(vec.get_feature_names_out()),
        "coef": [[round(float(x), 5) for x in row] for row in clf.coef_],
        "intercept": [round(float(x), 5) for x in clf.intercept_],
        "info": {
            "trained_on": "CLIREC queries outside the seeded test quarter of reviews",
            "seed": SEED,
            "examples": len(y),
            "label_counts": dict(sorted(Counter(y).items())),
            "script": "scripts/train_question_model.py",
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--out", type=Path, default=ROOT / "ebm" / "data" / "models" / "question_roles.json.gz")
    ap.add_argument("--cues", type=Path, default=ROOT / "rules" / "question_cues.tsv")
    args = ap.parse_args()

    from ebm.resources import Resources

    res = Resources.load()
    matcher, vocabulary = res.matcher, res.vocabulary
    cues = load_question_cues(args.cues)
    train_q, test_q = clirec_split(read_clirec(args.shared))
    held = bench_reviews(args.shared)
    train_q = [q for q in train_q if q.review not in held]
    X, y = training_rows(train_q, matcher, vocabulary, cues)
    model = train(X, y)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(args.out, "wb", mtime=0) as f:
        f.write(json.dumps(model, separators=(",", ":")).encode("utf-8"))
    print(
        f"trained on {len(train_q)} CLIREC queries ({len(y)} chunks: {model['info']['label_counts']}); "
        f"{len(test_q)} test queries kept apart; {len(model['features'])} features -> {args.out}"
    )


if __name__ == "__main__":
    main()
