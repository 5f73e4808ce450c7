"""The rankers ``ebm ask`` can order candidates by: the paper's, and EBM+ (beyond the paper).

- ``ebm-plus`` (the default): a weighted sum of per-question features of each candidate (below),
  the weights fitted on the development questions by coordinate ascent on MAP
  (``ebm.scoring.fit``, ``scripts/eval_rankers.py``) and shipped in
  ``ebm/data/ebm_plus_weights.toml``; an edited copy can be given (``--ranker-weights``).
- ``paper-ebm``: the paper's S_EBM = l1 S_PICO + l2 S_SoE + (1 - l1 - l2) S_task (alias ``ebm``).
- ``combination``: the paper's alpha norm(S_EBM) + (1 - alpha) norm(S_term) (alias ``combo``).
- ``term``: the paper's term-based reranker.
- ``retrieval``: the order the source returned (BM25 for the local store, PubMed's relevance).

EBM+ features (``FEATURES``), each visible in the output:

- ``retrieval``: the source's score for the candidate (the local store's BM25; without one, the
  retrieval rank), min-max scaled over the candidates;
- ``lexical``: BM25 of the question's words over the candidates (``ebm.scoring.lexical``), scaled;
- ``problem``, ``intervention``, ``population``, ``co_problems``, ``outcome``: S_match parts
  (``ebm.scoring.topical``), already in [0, 1];
- ``term``: S_term, scaled; ``task``: S_task, scaled; ``soe``: S_SoE, scaled; ``pico``: the
  paper's S_PICO, scaled (to compare it with S_match).

Min-max scaling is per question (constant values give 0), so a feature weighs the same whatever
its raw range on one question. Ties keep the retrieval order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ebm.errors import InputError
from ebm.scoring.combine import ALPHA, minmax
from ebm.scoring.ebm_score import EbmScore, Weights
from ebm.scoring.feature_weights import FeatureWeights
from ebm.scoring.lexical import LexicalScore
from ebm.scoring.ranker_prior import PriorWeights, prior_formula, prior_parts, shipped_prior_weights
from ebm.scoring.term import TermScore
from ebm.scoring.topical import TopicalScore

DEFAULT_RANKER = "ebm-plus"
WEIGHTS_FILE = "ebm_plus_weights.toml"


@dataclass(frozen=True)
class CandidateScores:
    """Everything any ranker may use about one candidate of one question."""

    pmid: str
    ebm: EbmScore
    term: TermScore
    match: TopicalScore
    lexical: LexicalScore
    retrieval: float  # the source's score, or derived from the retrieval rank (higher is better)
    retrieval_rank: int  # 1-based position in the retrieved list
    # issue 14: the findings for the frame's I vs C on O (``ebm.answer.frame_findings``) and the
    # question-aware S_outcome (best finding's confidence; None: the frame has no intervention)
    findings: tuple[Any, ...] = ()
    s_outcome_question: float | None = None


# A question's candidates as columns: column name -> one value per candidate (retrieval order).
# ``ebm ask`` builds them from ``CandidateScores`` (:func:`candidate_columns`); ``ebm bench`` reads
# the same columns from its components file, so both rank with the functions below.
Columns = Mapping[str, Sequence[float]]
MATCH_PARTS = ("problem", "intervention", "population", "co_problems", "outcome")


def candidate_columns(cands: Sequence[CandidateScores]) -> dict[str, list[float]]:
    """Every column a ranker reads, for one question's candidates."""
    cols: dict[str, list[float]] = {
        "pico": [c.ebm.pico.total for c in cands],
        "soe": [c.ebm.soe.total for c in cands],
        "task": [c.ebm.task.total for c in cands],
        "term": [c.term.score for c in cands],
        "lexical": [float(c.lexical.score) for c in cands],
        "retrieval": [float(c.retrieval) for c in cands],
    }
    for part in MATCH_PARTS:
        cols[f"match.{part}"] = [float(c.match.value(part)) for c in cands]
    # question-aware S_outcome where the frame has an intervention, else the question-blind
    # outcome part (EBM-prior's "findings" feature)
    cols["findings"] = [
        c.s_outcome_question if c.s_outcome_question is not None else float(c.match.value("outcome"))
        for c in cands
    ]
    return cols


@dataclass(frozen=True)
class Feature:
    name: str
    description: str
    column: str  # the column of :func:`candidate_columns` it reads
    scaled: bool  # min-max over the question's candidates (else used as it is, in [0, 1])


_FEATURES = (
    ("retrieval", "the source's retrieval score (BM25) or rank, scaled", "retrieval", True),
    ("lexical", "BM25 of the question's words over the candidates, scaled", "lexical", True),
    ("problem", "frame problem among the extracted problems (MeSH tree, prominence)", "match.problem", False),
    ("intervention", "frame interventions, comparisons mentioned (MeSH tree)", "match.intervention", False),
    ("population", "frame population concepts mentioned (MeSH tree)", "match.population", False),
    ("co_problems", "frame co-occurring problems mentioned (MeSH tree)", "match.co_problems", False),
    ("outcome", "best outcome sentence about the problem or intervention", "match.outcome", False),
    ("term", "S_term (the paper's term-based reranker), scaled", "term", True),
    ("task", "S_task (task indicators in MeSH), scaled", "task", True),
    ("soe", "S_SoE (journal, study type, date), scaled", "soe", True),
    ("pico", "the paper's S_PICO, scaled (for comparisons)", "pico", True),
)
FEATURES: dict[str, Feature] = {f[0]: Feature(*f) for f in _FEATURES}


def feature_values(
    cands: Sequence[CandidateScores] | Columns, names: Sequence[str] | None = None
) -> dict[str, list[float]]:
    """Each feature's value for each candidate of one question, scaled as ``FEATURES`` says
    (from the candidates, or from their columns)."""
    cols = cands if isinstance(cands, Mapping) else candidate_columns(cands)
    out = {}
    for name in names or FEATURES:
        f = FEATURES[name]
        raw = [float(v) for v in cols[f.column]]
        out[name] = minmax(raw) if f.scaled else raw
    return out


class PlusWeights(FeatureWeights):
    """EBM+ weights by feature name (TOML: a ``[weights]`` table), and where they came from."""

    TABLE = "weights"
    LABEL = "EBM+"
    KNOWN = FEATURES
    ALLOW_EMPTY = False


@cache
def shipped_weights() -> PlusWeights:
    return PlusWeights.read_shipped(WEIGHTS_FILE, "scripts/eval_rankers.py --fit --write")


@dataclass(frozen=True)
class RankerSettings:
    weights: Weights = field(default_factory=Weights)  # the paper's l1, l2 (paper-ebm, combination)
    alpha: float = ALPHA  # norm(S_EBM) weight in the combination
    plus: PlusWeights | None = None  # EBM+ weights (default: the shipped ones)
    l3: float | None = None  # S_task weight when given exactly (a sweep's grid value), else weights.l3
    prior: PriorWeights | None = None  # EBM-prior bonus weights (default: the shipped ones)

    def ebm_weights(self) -> tuple[float, float, float]:
        w = self.weights
        return w.l1, w.l2, w.l3 if self.l3 is None else self.l3

    def plus_weights(self) -> PlusWeights:
        return self.plus if self.plus is not None else shipped_weights()

    def prior_weights(self) -> PriorWeights:
        return self.prior if self.prior is not None else shipped_prior_weights()


@dataclass(frozen=True)
class Ranking:
    """Scores of one question's candidates by one ranker, with the additive parts of each."""

    ranker: str
    scores: list[float]
    parts: list[dict[str, float]]  # per candidate: what each feature or component added
    order: list[int]  # candidate indices, best first (ties: retrieval order)
    description: str


# -- the rankers ---------------------------------------------------------------------------------

Parts = list[dict[str, float]]  # per candidate: what each feature or component adds to its score


def _plus_parts(cols: Columns, settings: RankerSettings) -> Parts:
    weights = settings.plus_weights().weights
    values = feature_values(cols, list(weights))
    return [{k: weights[k] * values[k][i] for k in weights} for i in range(_size(cols))]


def _plus_formula(settings: RankerSettings) -> str:
    pw = settings.plus_weights()
    terms = " + ".join(f"{v:g} {k}" for k, v in pw.weights.items() if v)
    return f"EBM+ = {terms} (features scaled per question; weights: {pw.source})"


def _ebm_parts(cols: Columns, settings: RankerSettings) -> Parts:
    # the scorer's arithmetic (EbmScore.total: l1 PICO + l2 SoE + l3 task, in that order), so the
    # sum of the parts is S_EBM bit for bit
    l1, l2, l3 = settings.ebm_weights()
    return [
        {"pico": l1 * p, "soe": l2 * s, "task": l3 * t}
        for p, s, t in zip(cols["pico"], cols["soe"], cols["task"], strict=True)
    ]


def _ebm_formula(settings: RankerSettings) -> str:
    l1, l2, l3 = settings.ebm_weights()
    return f"S_EBM = {l1:.2g} PICO + {l2:.2g} SoE + {l3:.2g} task"


def _combination_parts(cols: Columns, settings: RankerSettings) -> Parts:
    a = settings.alpha
    ebm = [sum(p.values()) for p in _ebm_parts(cols, settings)]
    e, t = minmax(ebm), minmax([float(v) for v in cols["term"]])  # as ebm.scoring.combine
    return [{"ebm": a * e[i], "term": (1 - a) * t[i]} for i in range(len(e))]


def _combination_formula(settings: RankerSettings) -> str:
    a = settings.alpha
    return f"{a:g} EBM + {1 - a:g} term, each normalised; {_ebm_formula(settings).replace('S_EBM', 'EBM')}"


def _term_parts(cols: Columns, settings: RankerSettings) -> Parts:
    return [{"term": float(v)} for v in cols["term"]]


def _retrieval_parts(cols: Columns, settings: RankerSettings) -> Parts:
    n = _size(cols)
    return [{"retrieval": float(n - i)} for i in range(n)]


def _size(cols: Columns) -> int:
    return len(next(iter(cols.values()))) if cols else 0


@dataclass(frozen=True)
class Ranker:
    """One way to order a question's candidates: what ``ebm ask --ranker``, ``ebm bench`` and the
    web form offer and show."""

    name: str
    aliases: tuple[str, ...]
    label: str  # in words, for the web form and its results page
    help: str  # one clause for ``ebm ask --help``
    parts: Callable[[Columns, RankerSettings], Parts]  # the score of each candidate is their sum
    formula: Callable[[RankerSettings], str]  # the score as a formula with its weights
    bench_run: str  # the name of its run in ``ebm bench``


REGISTRY: dict[str, Ranker] = {
    r.name: r
    for r in (
        Ranker(
            "ebm-plus",
            ("plus",),
            "EBM+ (retrieval score, question words and MeSH matches of the problem and intervention)",
            "retrieval score, question-word BM25 and MeSH-tree PICO matches, weights fitted on the "
            "development questions",
            _plus_parts,
            _plus_formula,
            "ebm-plus",
        ),
        Ranker(
            "ebm-prior",
            ("prior",),
            "EBM-prior (the retrieval order with bounded bonuses for question words and MeSH matches)",
            "the retrieval score plus bounded bonuses (each at most the retrieval range) for "
            "question-word BM25 and MeSH-tree PICO matches, pairwise-fitted with a prior towards "
            "retrieval order (ebm.scoring.ranker_prior)",
            lambda cols, settings: prior_parts(cols, settings.prior_weights()),
            lambda settings: prior_formula(settings.prior_weights()),
            "ebm-prior",
        ),
        Ranker(
            "paper-ebm",
            ("ebm",),
            "the paper's EBM score",
            "the paper's S_EBM = l1 S_PICO + l2 S_SoE + l3 S_task",
            _ebm_parts,
            _ebm_formula,
            "ebm",
        ),
        Ranker(
            "combination",
            ("combo",),
            "the paper's combination: 0.8 EBM + 0.2 term overlap, each normalised",
            "the paper's alpha EBM + (1 - alpha) term, each min-max normalised",
            _combination_parts,
            _combination_formula,
            "combination",
        ),
        Ranker(
            "term",
            (),
            "term overlap",
            "the paper's term-based reranker",
            _term_parts,
            lambda settings: "S_term (question terms weighted by outcome probability)",
            "term",
        ),
        Ranker(
            "retrieval",
            (),
            "the source's retrieval order",
            "the source's order (the pool order in ebm bench)",
            _retrieval_parts,
            lambda settings: "the source's retrieval order",
            "pool",
        ),
    )
}
RANKERS = tuple(REGISTRY)
ALIASES = {alias: r.name for r in REGISTRY.values() for alias in r.aliases}
assert DEFAULT_RANKER in REGISTRY


def canonical(name: str) -> str:
    """The ranker's canonical name (``InputError`` for an unknown one)."""
    key = name.strip().casefold()
    key = ALIASES.get(key, key)
    if key not in REGISTRY:
        known = ", ".join([*RANKERS, *ALIASES])
        raise InputError(f"unknown ranker {name!r} (choose from {known})")
    return key


def ranker(name: str) -> Ranker:
    """The registered ranker of a name or alias."""
    return REGISTRY[canonical(name)]


def choices_help() -> str:
    """Every ranker with its aliases and what it ranks by, for a command's help."""
    items = []
    for r in REGISTRY.values():
        alias = f" (alias {', '.join(r.aliases)})" if r.aliases else ""
        default = " [default]" if r.name == DEFAULT_RANKER else ""
        items.append(f"{r.name}{alias}{default}: {r.help}")
    return "; ".join(items)


def describe(name: str, settings: RankerSettings) -> str:
    return ranker(name).formula(settings)


def rank_columns(
    name: str, cols: Columns, retrieval_ranks: Sequence[int], settings: RankerSettings | None = None
) -> Ranking:
    """Score and order one question's candidates given as columns (in retrieval order); ties keep
    the retrieval order. ``ebm ask`` and ``ebm bench`` both rank through this function."""
    r = ranker(name)
    settings = settings or RankerSettings()
    n = len(retrieval_ranks)
    if any(len(v) != n for v in cols.values()):
        raise InputError(f"ranker {r.name}: columns of unequal length for {n} candidates")
    parts = r.parts(cols, settings)
    scores = [sum(p.values()) for p in parts]
    order = sorted(range(n), key=lambda i: (-scores[i], retrieval_ranks[i], i))
    return Ranking(r.name, scores, parts, order, r.formula(settings))


def rank(name: str, cands: Sequence[CandidateScores], settings: RankerSettings | None = None) -> Ranking:
    """Score and order one question's candidates (given in retrieval order)."""
    return rank_columns(name, candidate_columns(cands), [c.retrieval_rank for c in cands], settings)
