"""Learned choice of the primary problem among the problems the rules find.

``extract_problems`` ranks every disorder by discourse prominence; MeSH indexers, whose major
topic is the ground truth of the paper's evaluation (section 5.4), also weigh what kind of
disorder it is and how a disorder is usually treated as a topic. This ranker keeps the rules'
list of problems and picks the primary one with a logistic regression over features of each
candidate: its rule score and rank in the three scopes (title, title + first two sentences,
whole abstract), where it is first named, how often, its kind weight, whether an ancestor or a
descendant of it was found too, its MeSH branch, and a prior: how often the descriptor, when
found in a training abstract, was indexed as a major topic (smoothed towards the base rate).

The model is a small gzip JSON file (``ebm/data/models/problem_ranker.json.gz``) of plain
weights and the prior table, written by ``scripts/train_problem_ranker.py`` from the bundled
citations with real major-topic flags and even PMIDs (odd PMIDs are held out for evaluation).
Scoring needs no scikit-learn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ebm.concepts.annotate import Concept
from ebm.errors import DataError
from ebm.mesh import MeshVocabulary
from ebm.paths import package_data
from ebm.text.document import Document
from extractors.candidate import Candidate
from extractors.model_file import load_json_gz, save_json_gz, sigmoid
from extractors.problem import (
    DISORDER_TREES,
    Scope,
    extract_problems_by_scope,
    is_ancestor,
)
from extractors.tree_weights import TreeWeights

MODEL_FORMAT = "ebm-problem-ranker"
MODEL_VERSION = 1
MODEL_FILE = "models/problem_ranker.json.gz"
# Features of a candidate besides its MeSH branches ("branch:C04") and the prior.
BASE_FEATURES = (
    "log_score",  # log(1 + rule score), whole abstract
    "score_ratio",  # rule score / the top rule score
    "inverse_rank",  # 1 / (1 + rule rank)
    "rule_top",  # the rules' primary problem
    "first_sentence",  # index of its first mention / number of sentences
    "in_title",  # first named in the title
    "log_reasons",  # log(1 + number of scored mentions and reasons)
    "title_top",  # the rules' primary problem from the title alone
    "title2_top",  # ... from the title and the first two sentences
    "title_score",  # rule score in the title (0 when not named there)
    "title2_score",  # rule score in the title and first two sentences
    "kind",  # kind weight (rules/problem_kinds.tsv): generic kinds weigh less
    "ancestor_found",  # an ancestor of another problem found
    "descendant_found",  # a descendant of another problem found
)
PRIOR_FEATURES = ("prior_log_odds", "log_found")


@dataclass(frozen=True)
class RankedProblems:
    """The rules' problems with the features the ranker reads, one dict per candidate."""

    candidates: list[Candidate]  # best first by the rules (whole abstract)
    features: list[dict[str, float]]
    by_scope: dict[Scope, list[Candidate]]  # the rules' ranking in each scope ("all" = candidates)


def _branches(ui: str, voc: MeshVocabulary) -> set[str]:
    d = voc.get(ui)
    return {t[:3] for t in d.tree_numbers if t.startswith(DISORDER_TREES)} if d else set()


def problem_features(
    doc: Document,
    concepts: list[Concept],
    *,
    vocabulary: MeshVocabulary,
    kinds: TreeWeights,
) -> RankedProblems:
    """The rule-ranked problems of the whole abstract and each one's features (no prior:
    the prior belongs to a trained ranker)."""
    voc = vocabulary
    by_scope = extract_problems_by_scope(doc, concepts, vocabulary=voc, kinds=kinds)
    found = by_scope["all"]
    in_scope = {
        scope: {c.concepts[0]: (rank, c.score) for rank, c in enumerate(by_scope[scope])}
        for scope in ("title", "title+2")
    }
    top = found[0].score if found else 1.0
    n_sentences = max(len(doc.sentences), 1)
    uis = [c.concepts[0] for c in found]
    out: list[dict[str, float]] = []
    for rank, c in enumerate(found):
        ui = c.concepts[0]
        title = in_scope["title"].get(ui)
        title2 = in_scope["title+2"].get(ui)
        kind = kinds.weight(ui, voc)
        f = {
            "log_score": math.log1p(c.score),
            "score_ratio": c.score / top if top > 0 else 0.0,
            "inverse_rank": 1.0 / (1 + rank),
            "rule_top": float(rank == 0),
            "first_sentence": c.sentence / n_sentences,
            "in_title": float(doc.sentences[c.sentence].position == "title"),
            "log_reasons": math.log1p(len(c.evidence)),
            "title_top": float(title is not None and title[0] == 0),
            "title2_top": float(title2 is not None and title2[0] == 0),
            "title_score": title[1] if title else 0.0,
            "title2_score": title2[1] if title2 else 0.0,
            "kind": kind[0] if kind else 1.0,
            "ancestor_found": float(any(is_ancestor(ui, o, voc) for o in uis)),
            "descendant_found": float(any(is_ancestor(o, ui, voc) for o in uis)),
        }
        for b in _branches(ui, voc):
            f[f"branch:{b}"] = 1.0
        out.append(f)
    return RankedProblems(found, out, by_scope)


def prior_features(found: int, major: int, base_rate: float, smoothing: float) -> dict[str, float]:
    """How often a descriptor found in a training abstract was indexed as its major topic,
    smoothed towards the base rate (a descriptor never seen gets the base rate)."""
    p = (major + smoothing * base_rate) / (found + smoothing)
    p = min(max(p, 1e-6), 1 - 1e-6)
    return {"prior_log_odds": math.log(p / (1 - p)), "log_found": math.log1p(found)}


@dataclass(frozen=True)
class ProblemRanker:
    bias: float
    weights: dict[str, float]  # feature name -> weight (absent features count 0)
    prior: dict[str, tuple[int, int]]  # descriptor UI -> (abstracts found in, of them major)
    base_rate: float
    smoothing: float
    meta: dict[str, Any] = field(default_factory=dict)

    def features(self, ui: str, base: dict[str, float]) -> dict[str, float]:
        found, major = self.prior.get(ui, (0, 0))
        return {**base, **prior_features(found, major, self.base_rate, self.smoothing)}

    def log_odds(self, features: dict[str, float]) -> float:
        return self.bias + sum(self.weights.get(k, 0.0) * v for k, v in features.items())

    def choose(self, ranked: RankedProblems) -> tuple[int, float] | None:
        """Index of the primary problem among ``ranked.candidates`` and its probability."""
        if not ranked.candidates:
            return None
        pairs = zip(ranked.candidates, ranked.features, strict=True)
        scores = [self.log_odds(self.features(c.concepts[0], f)) for c, f in pairs]
        best = max(range(len(scores)), key=lambda i: (scores[i], -i))
        return best, sigmoid(scores[best])

    def primary(
        self, doc: Document, concepts: list[Concept], *, vocabulary: MeshVocabulary, kinds: TreeWeights
    ) -> tuple[list[Candidate], Candidate | None]:
        """The rules' problems (whole abstract) and the primary one the ranker picks, its
        evidence extended with why."""
        ranked = problem_features(doc, concepts, vocabulary=vocabulary, kinds=kinds)
        chosen = self.choose(ranked)
        if chosen is None:
            return ranked.candidates, None
        i, p = chosen
        c = ranked.candidates[i]
        found, major = self.prior.get(c.concepts[0], (0, 0))
        why = f"learned ranker: primary problem (p {p:.2f}; rule rank {i + 1} of {len(ranked.candidates)}"
        why += f"; a major topic in {major} of {found} training abstracts naming it)" if found else ")"
        return ranked.candidates, replace(c, evidence=(*c.evidence, why))

    def to_json(self) -> dict[str, Any]:
        return {
            "format": MODEL_FORMAT,
            "version": MODEL_VERSION,
            "bias": self.bias,
            "weights": self.weights,
            "prior": {k: list(v) for k, v in sorted(self.prior.items())},
            "base_rate": self.base_rate,
            "smoothing": self.smoothing,
            "meta": self.meta,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any], source: str = "problem ranker") -> ProblemRanker:
        if d.get("format") != MODEL_FORMAT:
            raise DataError(f"{source}: not a problem ranker (format {d.get('format')!r})")
        if d.get("version") != MODEL_VERSION:
            raise DataError(f"{source}: ranker version {d.get('version')!r}, this ebm reads {MODEL_VERSION}")
        try:
            weights = {str(k): float(v) for k, v in d["weights"].items()}
            known = set(BASE_FEATURES) | set(PRIOR_FEATURES)
            unknown = [k for k in weights if k not in known and not k.startswith("branch:")]
            if unknown:
                raise ValueError(f"unknown features {unknown}")
            prior = {str(k): (int(v[0]), int(v[1])) for k, v in d["prior"].items()}
            return cls(
                float(d["bias"]),
                weights,
                prior,
                float(d["base_rate"]),
                float(d["smoothing"]),
                dict(d.get("meta") or {}),
            )
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise DataError(f"{source}: malformed problem ranker ({exc})") from exc

    def save(self, path: Path) -> None:
        """Compact gzip JSON, byte-identical for identical rankers (no name or time in the header)."""
        save_json_gz(path, self.to_json())


def shipped_problem_ranker_path() -> Path:
    """Where the package ships its trained ranker."""
    return package_data(MODEL_FILE)


def load_problem_ranker(path: Path) -> ProblemRanker:
    """Read a ranker file (``shipped_problem_ranker_path()``: the one shipped in the package)."""
    data = load_json_gz(path, "problem ranker", "scripts/train_problem_ranker.py")
    return ProblemRanker.from_json(data, str(path))
