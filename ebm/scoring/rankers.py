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

import math
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ebm.errors import DataError, InputError
from ebm.scoring.combine import ALPHA, minmax
from ebm.scoring.ebm_score import EbmScore, Weights
from ebm.scoring.lexical import LexicalScore
from ebm.scoring.term import TermScore
from ebm.scoring.topical import TopicalScore

DEFAULT_RANKER = "ebm-plus"
RANKERS = ("ebm-plus", "paper-ebm", "combination", "term", "retrieval")
ALIASES = {"ebm": "paper-ebm", "combo": "combination", "plus": "ebm-plus"}
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


@dataclass(frozen=True)
class Feature:
    name: str
    description: str
    value: Callable[[CandidateScores], float]
    scaled: bool  # min-max over the question's candidates (else used as it is, in [0, 1])


def _match(part: str) -> Callable[[CandidateScores], float]:
    return lambda c: c.match.value(part)


_FEATURES = (
    ("retrieval", "the source's retrieval score (BM25) or rank, scaled", lambda c: c.retrieval, True),
    ("lexical", "BM25 of the question's words over the candidates, scaled", lambda c: c.lexical.score, True),
    (
        "problem",
        "frame problem among the extracted problems (MeSH tree, prominence)",
        _match("problem"),
        False,
    ),
    ("intervention", "frame interventions, comparisons mentioned (MeSH tree)", _match("intervention"), False),
    ("population", "frame population concepts mentioned (MeSH tree)", _match("population"), False),
    ("co_problems", "frame co-occurring problems mentioned (MeSH tree)", _match("co_problems"), False),
    ("outcome", "best outcome sentence about the problem or intervention", _match("outcome"), False),
    ("term", "S_term (the paper's term-based reranker), scaled", lambda c: c.term.score, True),
    ("task", "S_task (task indicators in MeSH), scaled", lambda c: c.ebm.task.total, True),
    ("soe", "S_SoE (journal, study type, date), scaled", lambda c: c.ebm.soe.total, True),
    ("pico", "the paper's S_PICO, scaled (for comparisons)", lambda c: c.ebm.pico.total, True),
)
FEATURES: dict[str, Feature] = {name: Feature(name, *rest) for name, *rest in _FEATURES}


def canonical(name: str) -> str:
    """The ranker's canonical name (``InputError`` for an unknown one)."""
    key = name.strip().casefold()
    key = ALIASES.get(key, key)
    if key not in RANKERS:
        known = ", ".join([*RANKERS, *ALIASES])
        raise InputError(f"unknown ranker {name!r} (choose from {known})")
    return key


def feature_values(
    cands: Sequence[CandidateScores], names: Sequence[str] | None = None
) -> dict[str, list[float]]:
    """Each feature's value for each candidate of one question, scaled as ``FEATURES`` says."""
    out = {}
    for name in names or FEATURES:
        f = FEATURES[name]
        raw = [float(f.value(c)) for c in cands]
        out[name] = minmax(raw) if f.scaled else raw
    return out


@dataclass(frozen=True)
class PlusWeights:
    """EBM+ weights by feature name, and where they came from."""

    weights: Mapping[str, float]
    source: str = "built in"
    note: str = ""

    def __post_init__(self) -> None:
        for name, w in self.weights.items():
            if name not in FEATURES:
                raise InputError(
                    f"{self.source}: unknown EBM+ feature {name!r} (known: {', '.join(FEATURES)})"
                )
            if not math.isfinite(w):
                raise InputError(f"{self.source}: weight of {name!r} is not a finite number")

    @classmethod
    def read(cls, path: str | Path) -> PlusWeights:
        """A TOML file with a ``[weights]`` table (feature = weight) and an optional ``note``."""
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(f"ranker weights file not found: {path}") from None
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise InputError(f"{path}: not a TOML weights file: {exc}") from None
        table = data.get("weights")
        if not isinstance(table, dict) or not table:
            raise InputError(f"{path}: no [weights] table (feature = weight)")
        weights = {}
        for name, w in table.items():
            if isinstance(w, bool) or not isinstance(w, int | float):
                raise InputError(f"{path}: weight of {name!r} must be a number, not {w!r}")
            weights[name] = float(w)
        return cls(weights, str(path), str(data.get("note", "")))

    def to_toml(self, note: str = "") -> str:
        lines = [f"# {line}".rstrip() for line in (note or self.note).splitlines()]
        lines += ["", "[weights]"]
        lines += [f"{name} = {w!r}" for name, w in self.weights.items()]
        return "\n".join(lines) + "\n"


@cache
def shipped_weights() -> PlusWeights:
    from ebm.paths import package_data

    path = package_data(WEIGHTS_FILE)
    if not path.is_file():
        raise DataError(f"EBM+ weights missing: {path} (run scripts/eval_rankers.py --fit --write)")
    return PlusWeights.read(path)


@dataclass(frozen=True)
class RankerSettings:
    weights: Weights = field(default_factory=Weights)  # the paper's l1, l2 (paper-ebm, combination)
    alpha: float = ALPHA  # norm(S_EBM) weight in the combination
    plus: PlusWeights | None = None  # EBM+ weights (default: the shipped ones)

    def plus_weights(self) -> PlusWeights:
        return self.plus if self.plus is not None else shipped_weights()


@dataclass(frozen=True)
class Ranking:
    """Scores of one question's candidates by one ranker, with the additive parts of each."""

    ranker: str
    scores: list[float]
    parts: list[dict[str, float]]  # per candidate: what each feature or component added
    order: list[int]  # candidate indices, best first (ties: retrieval order)
    description: str


def describe(ranker: str, settings: RankerSettings) -> str:
    w = settings.weights
    if ranker == "ebm-plus":
        pw = settings.plus_weights()
        terms = " + ".join(f"{v:g} {k}" for k, v in pw.weights.items() if v)
        return f"EBM+ = {terms} (features scaled per question; weights: {pw.source})"
    if ranker == "paper-ebm":
        return f"S_EBM = {w.l1:.2g} PICO + {w.l2:.2g} SoE + {w.l3:.2g} task"
    if ranker == "combination":
        return (
            f"{settings.alpha:g} EBM + {1 - settings.alpha:g} term, each normalised; "
            f"EBM = {w.l1:.2g} PICO + {w.l2:.2g} SoE + {w.l3:.2g} task"
        )
    if ranker == "term":
        return "S_term (question terms weighted by outcome probability)"
    return "the source's retrieval order"


def rank(ranker: str, cands: Sequence[CandidateScores], settings: RankerSettings | None = None) -> Ranking:
    """Score and order one question's candidates (given in retrieval order)."""
    ranker = canonical(ranker)
    settings = settings or RankerSettings()
    n = len(cands)
    parts: list[dict[str, float]]
    if ranker == "ebm-plus":
        weights = settings.plus_weights().weights
        values = feature_values(cands, [k for k in weights])
        parts = [{k: weights[k] * values[k][i] for k in weights} for i in range(n)]
    elif ranker == "paper-ebm":
        w = settings.weights
        parts = [
            {"pico": w.l1 * c.ebm.pico.total, "soe": w.l2 * c.ebm.soe.total, "task": w.l3 * c.ebm.task.total}
            for c in cands
        ]
    elif ranker == "combination":
        a = settings.alpha
        e = minmax([c.ebm.total for c in cands])
        t = minmax([c.term.score for c in cands])
        parts = [{"ebm": a * e[i], "term": (1 - a) * t[i]} for i in range(n)]
    elif ranker == "term":
        parts = [{"term": c.term.score} for c in cands]
    else:
        parts = [{"retrieval": float(n - i)} for i in range(n)]
    if ranker == "paper-ebm":
        scores = [c.ebm.total for c in cands]  # the scorer's own arithmetic, bit for bit
    elif ranker == "combination":
        scores = [p["ebm"] + p["term"] for p in parts]  # as ebm.scoring.combine
    else:
        scores = [sum(p.values()) for p in parts]
    order = sorted(range(n), key=lambda i: (-scores[i], cands[i].retrieval_rank, i))
    return Ranking(ranker, scores, parts, order, describe(ranker, settings))


def ranking_dict(r: Ranking, i: int) -> dict[str, Any]:
    return {k: round(v, 6) for k, v in r.parts[i].items()}
