"""Findings extractor: what a trial found for the question's intervention vs comparison on an outcome.

Given a citation's text (a ``Document`` or a plain string) and the frame's intervention,
comparison (may be empty: placebo, usual care or the other arm) and outcome (may be empty: then
the outcomes the abstract reports), ``extract_findings`` returns the sentences that report the
comparison, best first, each with the direction of the effect *with respect to the
intervention* (``higher`` / ``lower`` / ``no_difference``), its significance, the numbers it
gives (``extractors.numbers``) and a confidence.

Two small models, both trained on the Evidence Inference 2.0 train split and tuned on its
validation split (``scripts/train_findings.py``; shipped as ``ebm/data/models/findings.json.gz``):

- a sentence ranker: logistic regression over dense features of each sentence — how much of the
  outcome, intervention and comparison it mentions (words, and concepts when a concept matcher or
  the document's concepts are given), results cues (p values, percentages, "significantly",
  "than", "no difference"), section and position, and the outcome-sentence ensemble's
  probability as a prior when the caller has it. One weight set per combination of "outcome
  given" and "prior given";
- a direction classifier: multinomial logistic regression over the sentence's words and bigrams
  with the intervention, comparison and outcome mentions masked (``__i__``, ``__c__``, ``__o__``),
  the order in which intervention and comparison appear crossed with direction cue words
  ("lower", "reduced", "increased" ...: "A was lower than B" flips when the question's
  intervention is B), p-value and confidence-interval features. Trained on every doctor's
  evidence text and on its mirror image (intervention and comparison swapped, label flipped).

Scoring is plain Python over the shipped weights: no scikit-learn at run time.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ebm.errors import DataError, InputError
from ebm.text.document import Document
from ebm.text.roles import sentence_role
from ebm.text.sentences import split_spans
from extractors.model_file import load_json_gz, save_json_gz, sigmoid
from extractors.numbers import p_significant, parse_numbers

if TYPE_CHECKING:
    from ebm.concepts.matcher import ConceptMatcher

MODEL_FORMAT = "ebm-findings-model"
MODEL_VERSION = 1
MODEL_FILE = "models/findings.json.gz"
OUTCOME_WORDS_FILE = "models/findings.outcome_words.tsv"

DIRECTIONS = ("higher", "lower", "no_difference")

# Words that carry no identity for an intervention, comparison or outcome phrase.
PHRASE_STOPWORDS = frozenset(
    """a an the of in on with and or to for by at from as vs versus compared than use using
    patient patients group groups treatment treated receiving received who were was is are be
    mean total number after before during baseline change changes level levels rate rates
    score scores value values dose doses daily day days week weeks month months year years
    plus alone only other usual its their this that these those per between within""".split()
)
# What the comparison is when the frame has none: the control arm under its usual names.
DEFAULT_COMPARATOR = frozenset(
    "placebo control controls usual standard sham vehicle conventional routine untreated".split()
)
# Words that name an arm whatever the frame calls it ("the control group", "the intervention group").
ARM_WORDS = {
    "control": "c",
    "controls": "c",
    "placebo": "c",
    "sham": "c",
    "intervention": "i",
    "experimental": "i",
}
# Direction cue words (by key, see ``_key``), crossed with the order of I and C.
DIRECTION_CUES = frozenset(
    _w[:6]
    for _w in """higher lower increase increased increases decrease decreased decreases reduced
    reduce reduces reduction greater less fewer more improved improvement improve worse better
    shorter longer faster slower lowered raised rise fall fell declined elevated superior
    inferior enhanced attenuated prolonged diminished augmented larger smaller""".split()
)
NO_DIFFERENCE_CUES = re.compile(
    r"\b(no (?:statistically )?significant|not (?:statistically )?significant|did not (?:significantly )?"
    r"(?:differ|change|affect|alter|improve|reduce|increase)|similar|comparable|no difference|"
    r"no differences|not differ|were not different|was not different|non-?significant|n\.?s\.?\b)",
    re.IGNORECASE,
)
COMPARISON_CUES = re.compile(
    r"\b(than|versus|vs\.?|compared|comparison|between|differ\w*|relative to|whereas)\b", re.IGNORECASE
)
SIGNIFICANT_CUE = re.compile(r"\bsignifican\w*", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z]+|\d+(?:[.,]\d+)?")
# A sentence's section group by its role (``ebm.text.roles``): the aims are background here;
# an unstructured sentence (role from its place) has none.
SECTION_GROUPS = {
    "title": "title",
    "results": "results",
    "conclusions": "conclusions",
    "methods": "methods",
    "background": "background",
    "objective": "background",
    "other": "other",
}


def _key(word: str) -> str:
    """Matching key of a word: lower case, cut to six characters (reduces inflection:
    'temperatures' ~ 'temperature'); numbers as written."""
    w = word.lower()
    return w if w[0].isdigit() else w[:6]


def phrase_keys(phrase: str) -> frozenset[str]:
    """The content-word keys of an intervention, comparison or outcome phrase."""
    return frozenset(
        _key(m.group())
        for m in _TOKEN.finditer(phrase or "")
        if m.group().lower() not in PHRASE_STOPWORDS and (len(m.group()) > 1 or m.group().isdigit())
    )


# --- the question -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    """The frame's intervention, comparison and outcome as matching keys (and concept IDs)."""

    intervention: str
    comparison: str
    outcome: str
    i_keys: frozenset[str]
    c_keys: frozenset[str]
    o_keys: frozenset[str]
    i_cuis: frozenset[str] = frozenset()
    c_cuis: frozenset[str] = frozenset()
    o_cuis: frozenset[str] = frozenset()

    @cached_property
    def roles(self) -> dict[str, str]:
        """Word key -> role, intervention before comparison before outcome; direction words
        have none (they stay visible even inside a phrase: "stress reduction")."""
        out: dict[str, str] = {}
        for role, keys in (("o", self.o_keys), ("c", self.c_keys), ("i", self.i_keys)):
            out.update(dict.fromkeys(keys, role))
        return {k: r for k, r in out.items() if k not in DIRECTION_CUES}

    def without_outcome(self) -> Question:
        """The same question with no outcome (the sentences then rank as reports of any outcome)."""
        return replace(self, outcome="", o_keys=frozenset(), o_cuis=frozenset())


OutcomeWords = Mapping[str, frozenset[str]]  # word key -> keys of the words reporting it


def load_outcome_words(path: Path) -> dict[str, frozenset[str]]:
    """The outcome-words table (``ebm/data/models/findings.outcome_words.tsv``): per line a word
    or phrase, a tab, the related words separated by commas; ``#`` comments. Errors name the
    file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise DataError(f"outcome words table missing: {path}") from exc
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text ({exc})") from exc
    out: dict[str, set[str]] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            raise DataError(f"{path}:{n}: expected WORD<TAB>RELATED, RELATED..., got {len(fields)} fields")
        heads = phrase_keys(fields[0])
        related = frozenset(k for w in fields[1].split(",") for k in phrase_keys(w))
        if not heads or not related:
            raise DataError(f"{path}:{n}: an empty word or related-words list")
        for h in heads:
            out.setdefault(h, set()).update(related - {h})
    return {k: frozenset(v) for k, v in out.items()}


def make_question(
    intervention: str,
    comparison: str = "",
    outcome: str = "",
    matcher: ConceptMatcher | None = None,
    outcome_words: OutcomeWords | None = None,
) -> Question:
    """Keys of the three phrases; words both arms share (``ibuprofen 10 mg`` vs ``ibuprofen 5 mg``)
    identify neither. With a matcher, also the concepts each phrase names; with
    ``outcome_words``, the outcome also by the words abstracts report it with."""
    if not (intervention or "").strip():
        raise InputError("a finding needs an intervention (the frame has none)")
    ik, ck, ok = phrase_keys(intervention), phrase_keys(comparison), phrase_keys(outcome)
    if outcome_words and ok:
        ok = ok.union(*(outcome_words.get(k, frozenset()) for k in ok))
    if not ck:
        ck = frozenset(_key(w) for w in DEFAULT_COMPARATOR)
    shared = ik & ck
    ik, ck = ik - shared, ck - shared
    ok = ok - ik - ck
    ic = cc = oc = frozenset[str]()
    if matcher is not None:
        ic = frozenset(m.cui for m in matcher.match(intervention))
        cc = frozenset(m.cui for m in matcher.match(comparison)) if comparison else frozenset()
        oc = frozenset(m.cui for m in matcher.match(outcome)) if outcome else frozenset()
        ic, cc = ic - cc, cc - ic
        oc = oc - ic - cc
    return Question(intervention, comparison or "", outcome or "", ik, ck, ok, ic, cc, oc)


# --- sentences and their roles -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Unit:
    """One sentence of the text: its place, section group and position."""

    index: int
    start: int
    end: int
    text: str
    section: str  # results / conclusions / methods / background / title / other / none
    position: str  # title / first / middle / last


def _position(i: int, n: int) -> str:
    if n >= 2 and i == n - 1:
        return "last"
    if i < 2:
        return "first"
    return "last" if i >= n - 2 else "middle"


def units_of(text_or_document: str | Document) -> tuple[str, list[Unit]]:
    """The text and its sentences: a ``Document``'s own, or a plain string split by the
    project's sentence splitter (offsets into the string as given)."""
    if isinstance(text_or_document, Document):
        doc = text_or_document
        out = []
        for s in doc.sentences:
            role = sentence_role(s)
            sec = SECTION_GROUPS[role.role] if role.structured or role.role == "title" else "none"
            out.append(Unit(s.index, s.start, s.end, s.text, sec, s.position))
        return doc.text, out
    if not isinstance(text_or_document, str):
        raise InputError(f"findings need a text or a Document, not {type(text_or_document).__name__}")
    text = text_or_document
    spans = split_spans(text, 0, len(text))
    n = len(spans)
    return text, [Unit(i, a, b, text[a:b], "none", _position(i, n)) for i, (a, b) in enumerate(spans)]


class Tagged(NamedTuple):
    tokens: list[str]  # as written
    starts: list[int]  # offsets into the sentence
    roles: list[str]  # "i", "c", "o" or ""


ConceptSpans = Sequence[tuple[int, int, str]]  # (start, end, cui), offsets into the sentence


def tag(sentence: str, q: Question, concepts: ConceptSpans = ()) -> Tagged:
    """Each token of ``sentence`` with its role: a word of the intervention, comparison or
    outcome phrase (by key), or inside a concept of one of them."""
    ms = list(_TOKEN.finditer(sentence))
    toks = [m.group() for m in ms]
    starts = [m.start() for m in ms]
    lut = q.roles
    roles = []
    for w in toks:
        lw = w.lower()
        role = lut.get(lw if lw[0].isdigit() else lw[:6], "")
        if role:
            if lw in PHRASE_STOPWORDS:
                role = ""
        elif lw in ARM_WORDS:
            role = ARM_WORDS[lw]
        roles.append(role)
    for a, b, cui in concepts:
        r = "i" if cui in q.i_cuis else "c" if cui in q.c_cuis else "o" if cui in q.o_cuis else ""
        if r:
            for j, s in enumerate(starts):
                if a <= s < b and not roles[j]:
                    roles[j] = r
    return Tagged(toks, starts, roles)


def masked(t: Tagged, swap: bool = False) -> list[str]:
    """The sentence's words with each run of intervention / comparison / outcome words as one
    ``__i__`` / ``__c__`` / ``__o__`` and numbers as ``__n__`` (``swap`` exchanges I and C)."""
    out: list[str] = []
    for w, r in zip(t.tokens, t.roles, strict=True):
        if r:
            if swap and r in "ic":
                r = "c" if r == "i" else "i"
            tok = f"__{r}__"
            if out and out[-1] == tok:
                continue
        elif w[0].isdigit():
            tok = "__n__"
        else:
            tok = w.lower()
        out.append(tok)
    return out


def _order(seq: list[str]) -> str:
    i = seq.index("__i__") if "__i__" in seq else -1
    c = seq.index("__c__") if "__c__" in seq else -1
    if i >= 0 and c >= 0:
        return "ic" if i < c else "ci"
    return "i" if i >= 0 else "c" if c >= 0 else "none"


REFERENCE_MARKERS = frozenset("than compared versus vs relative over against".split())


def polarity(seq: list[str]) -> str:
    """Which arm the sentence measures against: ``normal`` when the comparison is the reference
    ("I lowered X compared with C", "X was lower with I"), ``flipped`` when the intervention is
    ("C had higher X than I"), ``none`` without an arm. The reference is the arm that follows
    "than / compared (with) / versus" within six words; without such a marker, the arm named
    second (or the missing one)."""
    for j, w in enumerate(seq):
        if w in REFERENCE_MARKERS:
            for x in seq[j + 1 : j + 7]:
                if x == "__c__":
                    return "normal"
                if x == "__i__":
                    return "flipped"
    order = _order(seq)
    if order in ("ic", "i"):
        return "normal"
    if order in ("ci", "c"):
        return "flipped"
    return "none"


def direction_features(sentence: str, t: Tagged, swap: bool = False) -> list[str]:
    """Sparse features of the direction classifier (see the module doc)."""
    seq = masked(t, swap)
    order = _order(seq)
    pol = polarity(seq)
    feats = [f"u:{w}" for w in seq]
    feats += [f"b:{a} {b}" for a, b in zip(seq, seq[1:], strict=False)]
    feats.append(f"ord:{order}")
    feats.append(f"pol:{pol}")
    for j, w in enumerate(seq):
        k = w[:6]
        if k in DIRECTION_CUES:
            feats.append(f"oc:{order}:{k}")
            feats.append(f"pc:{pol}:{k}")
            if j + 1 < len(seq):
                feats.append(f"pb:{pol}:{k} {seq[j + 1][:6]}")
            if j:
                feats.append(f"pb:{pol}:{seq[j - 1][:6]} {k}")
    nums = parse_numbers(sentence)
    sig = p_significant(nums)
    feats.append("p:none" if sig is None else "p:sig" if sig else "p:ns")
    ci = nums.get("ci")
    if ci:
        kind = nums.get("effect", {}).get("kind")
        pivot = 0.0 if kind in ("MD", "SMD", "RD", "ARR") else 1.0
        if ci["low"] <= pivot <= ci["high"]:
            feats.append("ci:cross")
        else:
            feats.append("ci:above" if ci["low"] > pivot else "ci:below")
    if NO_DIFFERENCE_CUES.search(sentence):
        feats.append("cue:nodiff")
        feats.append(f"cue:nodiff:{order}")
    return feats


def sentence_facts(unit: Unit, t: Tagged) -> dict[str, float]:
    """The ranker features of a sentence that do not depend on the question (computed once per
    sentence however many rankers score it)."""
    text = unit.text
    nums = parse_numbers(text)
    return {
        "p": 1.0 if "p" in nums else 0.0,
        "pct": 1.0 if "percentages" in nums else 0.0,
        "effect_ci": 1.0 if ("effect" in nums or "ci" in nums) else 0.0,
        "digits": 1.0 if any(w[0].isdigit() for w in t.tokens) else 0.0,
        "significant": 1.0 if SIGNIFICANT_CUE.search(text) else 0.0,
        "nodiff": 1.0 if NO_DIFFERENCE_CUES.search(text) else 0.0,
        "compare": 1.0 if COMPARISON_CUES.search(text) else 0.0,
        "dircue": 1.0 if any(w[:6].lower() in DIRECTION_CUES for w in t.tokens) else 0.0,
        "len": math.log1p(len(t.tokens)) / 4.0,
        f"sec:{unit.section}": 1.0,
        f"pos:{unit.position}": 1.0,
    }


def coverage(t: Tagged, role: str, keys: frozenset[str]) -> float:
    """Share of a phrase's words the sentence has in that role (a long phrase needs at most
    four); 0.5 for a mention found by concept only."""
    if not keys:
        return 0.0
    found = {_key(w) for w, r in zip(t.tokens, t.roles, strict=True) if r == role}
    hit = len(found & keys) / min(len(keys), 4)
    return min(1.0, hit) if hit else (0.5 if role in t.roles else 0.0)


def ranker_features(
    unit: Unit,
    t: Tagged,
    q: Question,
    best_o: float,
    prior: float | None,
    facts: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Dense features of the sentence ranker for one sentence (``best_o``: the largest outcome
    coverage of any sentence of the text; ``facts``: ``sentence_facts`` when already known)."""
    f = dict(facts if facts is not None else sentence_facts(unit, t))
    o = coverage(t, "o", q.o_keys) if q.outcome else 0.0
    i = coverage(t, "i", q.i_keys)
    c = coverage(t, "c", q.c_keys)
    f["o"] = o
    f["o_best"] = 1.0 if q.outcome and o > 0 and o >= best_o else 0.0
    f["o_gap"] = (best_o - o) if q.outcome else 0.0
    f["i"] = i
    f["c"] = c
    f["i_and_c"] = 1.0 if i > 0 and c > 0 else 0.0
    if q.outcome:
        f["o_x_p"] = o * (f["p"] + f["significant"] + f["nodiff"])
        f["o_x_dircue"] = o * f["dircue"]
    if prior is not None:
        f["prior"] = prior
    return f


# --- the model ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ranker:
    intercept: float
    weights: dict[str, float]

    def log_odds(self, feats: Mapping[str, float]) -> float:
        w = self.weights
        return self.intercept + sum(w.get(k, 0.0) * v for k, v in feats.items())


def ranker_key(outcome: bool, prior: bool) -> str:
    return ("outcome" if outcome else "no-outcome") + ("+prior" if prior else "")


@dataclass
class FindingsModel:
    """Sentence rankers (by ``ranker_key``) and the direction classifier."""

    rankers: dict[str, Ranker]
    classes: tuple[str, ...]
    bias: list[float]
    weights: dict[str, list[float]]
    min_confidence: float = 0.2  # a sentence below this probability is not reported
    # share of the outcome-free probability a sentence keeps when the question has an outcome
    # (chosen on validation: top-1 92.0 -> 91.2 %, the fever trial's results found)
    outcome_free_weight: float = 0.5
    meta: dict[str, Any] = field(default_factory=dict)

    def direction(self, feats: Sequence[str]) -> dict[str, float]:
        """Class probabilities (softmax over the linear scores)."""
        scores = list(self.bias)
        w = self.weights
        for f in sorted(set(feats)):  # a fixed order: the same sums in every process
            v = w.get(f)
            if v is not None:
                for j, x in enumerate(v):
                    scores[j] += x
        m = max(scores)
        e = [math.exp(s - m) for s in scores]
        z = sum(e)
        return {c: x / z for c, x in zip(self.classes, e, strict=True)}

    def to_json(self) -> dict[str, Any]:
        return {
            "format": MODEL_FORMAT,
            "version": MODEL_VERSION,
            "rankers": {k: {"intercept": r.intercept, "weights": r.weights} for k, r in self.rankers.items()},
            "direction": {"classes": list(self.classes), "bias": self.bias, "weights": self.weights},
            "min_confidence": self.min_confidence,
            "outcome_free_weight": self.outcome_free_weight,
            "meta": self.meta,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any], source: str = "findings model") -> FindingsModel:
        if d.get("format") != MODEL_FORMAT:
            raise DataError(f"{source}: not a findings model (format {d.get('format')!r})")
        if d.get("version") != MODEL_VERSION:
            raise DataError(f"{source}: model version {d.get('version')!r}, this ebm reads {MODEL_VERSION}")
        try:
            rankers = {
                str(k): Ranker(float(r["intercept"]), {str(f): float(v) for f, v in r["weights"].items()})
                for k, r in d["rankers"].items()
            }
            dr = d["direction"]
            classes = tuple(str(c) for c in dr["classes"])
            if set(classes) != set(DIRECTIONS):
                raise ValueError(f"classes {classes}")
            weights = {str(f): [float(x) for x in v] for f, v in dr["weights"].items()}
            if any(len(v) != len(classes) for v in weights.values()):
                raise ValueError("a weight row has the wrong length")
            return cls(
                rankers=rankers,
                classes=classes,
                bias=[float(x) for x in dr["bias"]],
                weights=weights,
                min_confidence=float(d.get("min_confidence", 0.2)),
                outcome_free_weight=float(d.get("outcome_free_weight", 0.5)),
                meta=dict(d.get("meta") or {}),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise DataError(f"{source}: malformed findings model ({exc!r})") from exc

    def save(self, path: Path) -> None:
        save_json_gz(path, self.to_json())


def load_findings_model(path: Path) -> FindingsModel:
    """Read a findings model file (``ebm.paths.package_data(MODEL_FILE)`` is the shipped one)."""
    return FindingsModel.from_json(
        load_json_gz(path, "findings model", "scripts/train_findings.py"), str(path)
    )


# --- extraction ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One evidence sentence and what it says about intervention vs comparison on an outcome."""

    outcome: str  # the frame's outcome, or the outcome phrase the sentence names
    direction: str  # "higher" | "lower" | "no_difference", with respect to the intervention
    significant: bool
    sentence: str
    start: int  # character offsets into the text given (``text[start:end] == sentence``)
    end: int
    numbers: dict[str, Any]
    confidence: float  # probability that the sentence reports the comparison
    sentence_index: int = -1  # index of the sentence (Document.sentences for a Document)
    probabilities: dict[str, float] = field(default_factory=dict)  # per direction
    # False when the frame has an outcome the sentence does not name: ``outcome`` is then the
    # outcome the sentence reports ("temperature decrement" for a frame's "reducing fever")
    on_frame_outcome: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "direction": self.direction,
            "significant": self.significant,
            "sentence": self.sentence,
            "start": self.start,
            "end": self.end,
            "numbers": self.numbers,
            "confidence": round(self.confidence, 4),
        }


class ScoredSentence(NamedTuple):
    unit: Unit
    tagged: Tagged
    probability: float
    outcome_coverage: float  # share of the frame outcome's words (or concepts) it names


_SUBJECT_END = re.compile(
    r"\s(?:was|were|is|are|did|had|has|have|showed|decreased|increased|improved|reduced|"
    r"remained|differed|declined|rose|fell)\b",
    re.IGNORECASE,
)


_PHRASE_BOUNDARY = frozenset(
    "than in with compared versus vs and between among after at for by from was were is are "
    "when while during but or to as on".split()
)


def outcome_phrase(sentence: str, q: Question, t: Tagged | None = None) -> str:
    """The frame's outcome; else what the sentence measures: its subject when that names no arm
    ("Mean temperature was lower ..."), else the words after its first direction or
    significance word ("greater temperature decrement and ..."), else "the reported outcome"."""
    if q.outcome:
        return q.outcome
    t = t or tag(sentence, q)
    m = _SUBJECT_END.search(sentence)
    if m:
        head = [w for w, st, r in zip(t.tokens, t.starts, t.roles, strict=True) if st < m.start()]
        arms = any(r in ("i", "c") for st, r in zip(t.starts, t.roles, strict=True) if st < m.start())
        if 1 <= len(head) <= 8 and not arms:
            return sentence[: m.start()].strip(" ,;:(")
    for j, w in enumerate(t.tokens):
        if _key(w) in DIRECTION_CUES or w.lower().startswith("signific"):
            words: list[str] = []
            for x, r in zip(t.tokens[j + 1 :], t.roles[j + 1 :], strict=True):
                if x.lower() in _PHRASE_BOUNDARY or r in ("i", "c") or x[0].isdigit() or len(words) == 5:
                    break
                if not (x.lower().startswith("signific") or x.lower() in ("statistically", "more", "less")):
                    words.append(x)
            if words:
                return " ".join(words)
    return "the reported outcome"


def _states_result(sentence: str) -> bool:
    return bool(NO_DIFFERENCE_CUES.search(sentence) or SIGNIFICANT_CUE.search(sentence)) or any(
        _key(m.group()) in DIRECTION_CUES for m in _TOKEN.finditer(sentence)
    )


def _concept_spans(
    units: Sequence[Unit],
    concepts: Sequence[Any] | None,
    matcher: ConceptMatcher | None,
) -> list[list[tuple[int, int, str]]]:
    """Per sentence, the (start, end, cui) of its concepts relative to the sentence: from the
    document's concepts (objects with ``start``, ``end``, ``cui`` in text offsets) when given,
    else from the matcher."""
    out: list[list[tuple[int, int, str]]] = [[] for _ in units]
    if concepts is not None:
        for c in concepts:
            for j, u in enumerate(units):
                if u.start <= c.start < u.end:
                    out[j].append((c.start - u.start, c.end - u.start, c.cui))
                    break
    elif matcher is not None:
        for j, u in enumerate(units):
            out[j] = [(m.start, m.end, m.cui) for m in matcher.match(u.text)]
    return out


def rank_sentences(
    text_or_document: str | Document,
    q: Question,
    model: FindingsModel,
    prior: Mapping[int, float] | None = None,
    concepts: Sequence[Any] | None = None,
    matcher: ConceptMatcher | None = None,
) -> tuple[str, list[ScoredSentence]]:
    """Every sentence with the probability that it reports the comparison, best first.

    With an outcome, a sentence also scores ``model.outcome_free_weight`` times its probability
    as a report of any outcome, so that an outcome worded differently ("reducing fever" in an
    abstract that says "antipyresis") still finds the results; when no sentence names the
    outcome at all, the sentences are ranked as for a question without one."""
    text, units = units_of(text_or_document)
    spans = _concept_spans(units, concepts, matcher) if (concepts is not None or matcher) else None
    tagged = [tag(u.text, q, spans[j] if spans else ()) for j, u in enumerate(units)]
    best_o = 0.0
    if q.outcome:
        best_o = max((coverage(t, "o", q.o_keys) for t in tagged), default=0.0)
        if best_o == 0.0:
            q = q.without_outcome()
    use_prior = prior is not None and ranker_key(bool(q.outcome), True) in model.rankers
    ranker = model.rankers.get(ranker_key(bool(q.outcome), use_prior))
    if ranker is None:
        raise DataError(f"findings model has no ranker {ranker_key(bool(q.outcome), use_prior)!r}")
    free = model.rankers.get(ranker_key(False, use_prior)) if q.outcome else None
    q_free = q.without_outcome()
    scored = []
    for u, t in zip(units, tagged, strict=True):
        p = prior.get(u.index) if (use_prior and prior is not None) else None
        pv = (p or 0.0) if use_prior else None
        facts = sentence_facts(u, t)
        prob = sigmoid(ranker.log_odds(ranker_features(u, t, q, best_o, pv, facts)))
        if free is not None:
            alt = sigmoid(free.log_odds(ranker_features(u, t, q_free, 0.0, pv, facts)))
            prob = max(prob, model.outcome_free_weight * alt)
        cover = coverage(t, "o", q.o_keys) if q.outcome else 0.0
        scored.append(ScoredSentence(u, t, prob, cover))
    # best first; among equals the later sentence (results come late)
    scored.sort(key=lambda s: (-s.probability, -s.unit.index))
    return text, scored


def classify_direction(
    sentence: str, q: Question, model: FindingsModel, t: Tagged | None = None
) -> dict[str, float]:
    """Direction probabilities of one sentence with respect to the question's intervention."""
    return model.direction(direction_features(sentence, t or tag(sentence, q)))


def extract_findings(
    text_or_document: str | Document,
    intervention: str,
    comparison: str,
    outcome: str,
    model: FindingsModel,
    *,
    prior: Mapping[int, float] | None = None,
    concepts: Sequence[Any] | None = None,
    matcher: ConceptMatcher | None = None,
    outcome_words: OutcomeWords | None = None,
    limit: int = 3,
    min_confidence: float | None = None,
) -> list[Finding]:
    """The sentences of the text that report ``intervention`` vs ``comparison`` on ``outcome``
    (empty: the outcomes reported), best first, at most ``limit``, each at least
    ``min_confidence`` (default: the model's) probable.

    ``prior``: the outcome-sentence ensemble's probability per sentence index (a Document's
    ``Annotation.outcomes``); ``concepts``: the document's concepts (``Annotation.concepts``) or
    ``matcher``: a concept matcher, to match the phrases by concept as well as by word;
    ``outcome_words``: ``load_outcome_words(...)``, the words abstracts report an outcome with.
    """
    q = make_question(intervention, comparison, outcome, matcher, outcome_words)
    q_free = q.without_outcome()
    _, scored = rank_sentences(text_or_document, q, model, prior, concepts, matcher)
    floor = model.min_confidence if min_confidence is None else min_confidence
    out: list[Finding] = []
    for s in scored:
        if len(out) >= limit or s.probability < floor:
            break
        if s.unit.section == "title" and not _states_result(s.unit.text):
            continue  # a title names the comparison; it reports a finding only with a result word
        probs = model.direction(direction_features(s.unit.text, s.tagged))
        direction = max(probs, key=lambda k: probs[k])
        # a sentence that does not name the frame's outcome reports another one: say which,
        # and only when it names an arm (else it may compare anything: "penicillin did not ...")
        on_outcome = not q.outcome or s.outcome_coverage > 0
        if not on_outcome and not ({"i", "c"} & set(s.tagged.roles)):
            continue
        out.append(
            Finding(
                outcome=outcome_phrase(s.unit.text, q if on_outcome else q_free, s.tagged),
                direction=direction,
                significant=direction != "no_difference",
                sentence=s.unit.text,
                start=s.unit.start,
                end=s.unit.end,
                numbers=parse_numbers(s.unit.text),
                confidence=s.probability,
                sentence_index=s.unit.index,
                probabilities=probs,
                on_frame_outcome=on_outcome,
            )
        )
    return out
