"""Outcome extractor: the probability that each sentence of an abstract states an outcome.

An ensemble as in Demner-Fushman & Lin (2007, section 5.7): six base classifiers score every
sentence and a least-squares linear regression, fitted on held-out folds of the training data
(stacking), combines them:

- ``cues``: cue-phrase rules (``rules/outcome_cues.tsv``, see ``extractors.outcome_cues``)
- ``unigram``: multinomial naive Bayes on the sentence's words
- ``ngram``: naive Bayes on unigrams and bigrams chosen by information gain, keeping only
  positive predictors (odds ratio > 1)
- ``position``: maximum-likelihood estimate from the sentence's position (section and place in
  it for structured abstracts, distance from the end otherwise)
- ``length``: add-one smoothed probability that an abstract of that many sentences contains an
  outcome statement (the same for every sentence of an abstract: it moves the probability, not
  the ranking)
- ``semantic``: naive Bayes on the semantic groups of the sentence's concepts, with markers for
  a concept that is the primary problem or an intervention (the paper's boost). It needs the
  concept annotations; without them the model uses the stacking weights fitted without it.

The trained model is a small gzip JSON file (``ebm/data/models/outcome.json.gz``) of plain
weights, written by ``scripts/train_outcome_model.py``; scoring needs no scikit-learn.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat
from pathlib import Path
from typing import Any

from ebm.errors import DataError
from ebm.paths import package_data
from ebm.text.document import Document
from extractors.model_file import load_json_gz, save_json_gz, sigmoid
from extractors.outcome_cues import CueMatch, CueTable
from extractors.outcome_features import (
    ConceptLike,
    abstract_length,
    position_keys,
    semantic_features,
    tokenize,
    words,
)

CLASSIFIERS = ("cues", "unigram", "ngram", "position", "length", "semantic")
MODEL_FORMAT = "ebm-outcome-model"
MODEL_VERSION = 1
MODEL_FILE = "models/outcome.json.gz"


@dataclass(frozen=True)
class NaiveBayes:
    """A two-class naive Bayes reduced to log-odds: ``bias + sum(weights[f] for f in features)``.

    For a multinomial model the features are counted with repeats (a word twice counts twice);
    absent features contribute nothing, exactly as in scikit-learn's ``MultinomialNB``.
    """

    bias: float
    weights: dict[str, float]

    def log_odds(self, features: Iterable[str]) -> float:
        return self.bias + sum(map(self.weights.get, features, repeat(0.0)))

    def probability(self, features: Iterable[str]) -> float:
        return sigmoid(self.log_odds(features))

    @cached_property
    def _bigram_heads(self) -> frozenset[str]:
        return frozenset(k.split(" ", 1)[0] for k in self.weights if " " in k)

    def ngram_probability(self, tokens: Sequence[str]) -> float:
        """``probability(ngram_features(tokens))``, without building the bigrams no weight has."""
        w = self.weights
        # distinct tokens in text order, not set order: the float sum must not depend on the
        # process's string hash seed (annotations stored by Dask workers equal question-time ones)
        total = self.bias + sum(map(w.get, dict.fromkeys(tokens), repeat(0.0)))
        heads = self._bigram_heads
        seen: set[str] = set()
        for a, b in zip(tokens, tokens[1:], strict=False):
            if a in heads:
                key = f"{a} {b}"
                if key not in seen:
                    seen.add(key)
                    total += w.get(key, 0.0)
        return sigmoid(total)

    def to_json(self) -> dict[str, Any]:
        return {"bias": self.bias, "weights": self.weights}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> NaiveBayes:
        return cls(float(d["bias"]), {str(k): float(v) for k, v in d["weights"].items()})


@dataclass(frozen=True)
class Stacker:
    """``intercept + sum(weights[k] * score_k)``: the least-squares combination."""

    intercept: float
    weights: dict[str, float]

    def combine(self, scores: dict[str, float]) -> float:
        return self.intercept + sum(w * scores[k] for k, w in self.weights.items())


@dataclass(frozen=True)
class OutcomeEvidence:
    """Why a sentence got its probability."""

    scores: dict[str, float]  # each base classifier's score (the semantic one only with concepts)
    stacked: float  # the linear combination before clipping to [0, 1]
    weights: dict[str, float]  # the stacking weights used (with "intercept")
    position: str  # the position classifier's key (see outcome_features.position_keys)
    cues: tuple[CueMatch, ...]  # cue phrases found in the sentence

    def to_dict(self) -> dict[str, Any]:
        return {
            "scores": {k: round(v, 4) for k, v in self.scores.items()},
            "stacked": round(self.stacked, 4),
            "weights": {k: round(v, 4) for k, v in self.weights.items()},
            "position": self.position,
            "cues": [{"cue": c.cue, "text": c.text, "weight": c.weight} for c in self.cues],
        }


@dataclass(frozen=True)
class OutcomeCandidate:
    """A sentence of the document scored as an outcome statement."""

    sentence: int  # index into Document.sentences
    start: int  # character offsets into Document.text
    end: int
    text: str
    probability: float  # the stacked score clipped to [0, 1]
    evidence: OutcomeEvidence

    def to_dict(self) -> dict[str, Any]:
        return {
            "sentence": self.sentence,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "probability": round(self.probability, 4),
            "evidence": self.evidence.to_dict(),
        }


@dataclass
class OutcomeModel:
    """The trained ensemble (base classifiers' parameters and stacking weights)."""

    unigram: NaiveBayes
    ngram: NaiveBayes
    position: dict[str, float]
    position_default: float
    length: dict[int, float]
    length_default: float
    length_cap: int  # abstracts longer than this share the last length entry
    stack: Stacker  # over the five text/position/length classifiers
    semantic: NaiveBayes | None = None
    stack_semantic: Stacker | None = None  # over all six, when trained with concepts
    meta: dict[str, Any] = field(default_factory=dict)

    # --- scoring ---------------------------------------------------------------------------

    def length_score(self, n: int) -> float:
        return self.length.get(min(n, self.length_cap), self.length_default)

    def base_scores(
        self,
        doc: Document,
        cues: CueTable,
        concepts: Iterable[ConceptLike] | None = None,
        primary_problem: str | None = None,
        interventions: Iterable[str] = (),
    ) -> list[tuple[dict[str, float], str, list[CueMatch]]]:
        """Per sentence: the base classifiers' scores, the position key and the cues found
        (``cues``: rules/outcome_cues.tsv)."""
        keys = position_keys(doc)
        length = self.length_score(abstract_length(doc))
        sem = (
            semantic_features(doc, concepts, primary_problem, interventions)
            if concepts is not None and self.semantic is not None
            else None
        )
        out = []
        for i, s in enumerate(doc.sentences):
            tk = tokenize(s.text)
            toks = words(tk)
            cue_score, found = cues.score(s.text, tk)
            scores = {
                "cues": cue_score,
                "unigram": self.unigram.probability(toks),
                "ngram": self.ngram.ngram_probability(toks),
                "position": self.position.get(keys[i], self.position_default),
                "length": length,
            }
            if sem is not None and self.semantic is not None:
                scores["semantic"] = self.semantic.probability(sem[i])
            out.append((scores, keys[i], found))
        return out

    def score(
        self,
        doc: Document,
        cues: CueTable,
        concepts: Iterable[ConceptLike] | None = None,
        primary_problem: str | None = None,
        interventions: Iterable[str] = (),
    ) -> list[OutcomeCandidate]:
        """Every sentence of ``doc`` (title included) as a candidate, best first.

        ``concepts``: the document's concept annotations (``ebm.concepts``), with the CUI of the
        primary problem and of the interventions when known; without concepts the semantic
        classifier is left out and the stacking weights fitted without it are used.
        """
        concepts = list(concepts) if concepts is not None else None
        use_semantic = concepts is not None and self.semantic is not None and self.stack_semantic is not None
        stacker = self.stack_semantic if use_semantic and self.stack_semantic else self.stack
        weights = {"intercept": stacker.intercept, **stacker.weights}
        out = []
        for s, (scores, key, found) in zip(
            doc.sentences,
            self.base_scores(doc, cues, concepts if use_semantic else None, primary_problem, interventions),
            strict=True,
        ):
            stacked = stacker.combine(scores)
            out.append(
                OutcomeCandidate(
                    s.index,
                    s.start,
                    s.end,
                    s.text,
                    min(1.0, max(0.0, stacked)),
                    OutcomeEvidence(scores, stacked, weights, key, tuple(found)),
                )
            )
        # best first; among equals the later sentence (outcomes close abstracts)
        out.sort(key=lambda c: (-c.evidence.stacked, -c.sentence))
        return out

    # --- serialisation ---------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "format": MODEL_FORMAT,
            "version": MODEL_VERSION,
            "classifiers": {
                "unigram": self.unigram.to_json(),
                "ngram": self.ngram.to_json(),
                "position": {"table": self.position, "default": self.position_default},
                "length": {
                    "table": {str(k): v for k, v in sorted(self.length.items())},
                    "default": self.length_default,
                    "cap": self.length_cap,
                },
                "semantic": self.semantic.to_json() if self.semantic else None,
            },
            "stack": {"intercept": self.stack.intercept, "weights": self.stack.weights},
            "stack_semantic": (
                {"intercept": self.stack_semantic.intercept, "weights": self.stack_semantic.weights}
                if self.stack_semantic
                else None
            ),
            "meta": self.meta,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any], source: str = "outcome model") -> OutcomeModel:
        if d.get("format") != MODEL_FORMAT:
            raise DataError(f"{source}: not an outcome model (format {d.get('format')!r})")
        if d.get("version") != MODEL_VERSION:
            raise DataError(f"{source}: model version {d.get('version')!r}, this ebm reads {MODEL_VERSION}")
        try:
            c = d["classifiers"]
            stack_sem = d.get("stack_semantic")
            return cls(
                unigram=NaiveBayes.from_json(c["unigram"]),
                ngram=NaiveBayes.from_json(c["ngram"]),
                position={str(k): float(v) for k, v in c["position"]["table"].items()},
                position_default=float(c["position"]["default"]),
                length={int(k): float(v) for k, v in c["length"]["table"].items()},
                length_default=float(c["length"]["default"]),
                length_cap=int(c["length"]["cap"]),
                stack=Stacker(float(d["stack"]["intercept"]), _weights(d["stack"]["weights"])),
                semantic=NaiveBayes.from_json(c["semantic"]) if c.get("semantic") else None,
                stack_semantic=(
                    Stacker(float(stack_sem["intercept"]), _weights(stack_sem["weights"]))
                    if stack_sem
                    else None
                ),
                meta=dict(d.get("meta") or {}),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise DataError(f"{source}: malformed outcome model ({exc!r})") from exc

    def save(self, path: Path) -> None:
        """Write the model as compact gzip JSON, byte-identical for identical models (no name or
        time in the gzip header)."""
        save_json_gz(path, self.to_json())


def _weights(d: dict[str, Any]) -> dict[str, float]:
    unknown = set(d) - set(CLASSIFIERS)
    if unknown:
        raise ValueError(f"unknown classifiers {sorted(unknown)}")
    return {str(k): float(v) for k, v in d.items()}


def shipped_model_path() -> Path:
    """Where the package ships its trained model."""
    return package_data(MODEL_FILE)


def load_model(path: Path) -> OutcomeModel:
    """Read a model file (``shipped_model_path()``: the one shipped in the package)."""
    data = load_json_gz(path, "outcome model", "scripts/train_outcome_model.py")
    return OutcomeModel.from_json(data, str(path))


def extract_outcomes(
    doc: Document,
    concepts: Sequence[ConceptLike] | None = None,
    primary_problem: str | None = None,
    interventions: Iterable[str] = (),
    *,
    model: OutcomeModel,
    cues: CueTable,
) -> list[OutcomeCandidate]:
    """Every sentence of ``doc`` scored as an outcome statement, most probable first."""
    return model.score(doc, cues, concepts, primary_problem, interventions)
