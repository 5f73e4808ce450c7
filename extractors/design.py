"""Study design from the title and abstract text alone (issue 13).

A multinomial logistic regression over tf-idf word uni- and bigrams of title + abstract,
title words as their own features, and a few hand cue features ("randomi[sz]ed", "meta-
analysis", "we report a case", design words in the title) that carry the rare designs the
distant labels barely cover. No MeSH and no publication types are features, so in-process
records (not yet indexed) get a design too.

The model is plain arrays (``ebm/data/models/design.npz``: vocabulary, idf, weights, class
names, temperature and log prior; no pickled objects), trained by ``scripts/train_design.py``
on the file ``scripts/build_design_corpus.py`` derives from ../shared.

Probabilities: the classifier is trained with balanced class weights, its logits scaled by a
temperature fitted on out-of-fold predictions, then shifted by the log class prior of
indexed MEDLINE records (the training half), so a probability reads as "in MEDLINE".
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ebm.citation import Citation
from ebm.errors import DataError

# Stable class names (the JSON interface and the rules table use them).
DESIGN_CLASSES: tuple[str, ...] = (
    "randomized_controlled_trial",
    "systematic_review",
    "non_randomized_trial",
    "cohort",
    "case_control",
    "cross_sectional",
    "case_report",
    "diagnostic_accuracy",
    "narrative_review",
    "guideline",
    "animal_or_in_vitro",
    "other",
)

MODEL_FILE = "models/design.npz"  # in ebm/data (``ebm.resources.MODEL_FILES["design"]``)

_TOKEN = re.compile(r"[a-z][a-z0-9\-]*|\d+")

# Hand cues: name -> (pattern, where). Where: "text" (title + abstract) or "title".
CUES: tuple[tuple[str, str, str], ...] = (
    ("randomized", r"\brandomi[sz](?:ed|ation|ing|e)\b", "text"),
    ("randomly_assigned", r"\brandomly (?:assigned|allocated|divided|selected)\b", "text"),
    ("placebo", r"\bplacebo\b", "text"),
    ("double_blind", r"\b(?:double|single|triple)[- ]blind", "text"),
    ("trial_registration", r"\b(?:NCT\d{8}|ISRCTN\d+|clinicaltrials\.gov|trial registration)\b", "text"),
    ("rct_title", r"\brandomi[sz]ed\b.{0,60}\btrial\b", "title"),
    ("meta_analysis", r"\bmeta-?analys[ie]s\b", "text"),
    ("systematic_review", r"\bsystematic(?:ally)? (?:review|search|literature)", "text"),
    ("searched_databases", r"\b(?:medline|pubmed|embase|cochrane|cinahl|web of science)\b", "text"),
    ("sr_title", r"\b(?:systematic review|meta-?analys[ie]s)\b", "title"),
    (
        "case_report",
        r"\b(?:we (?:report|describe|present) (?:a|an|the|two|three)\b|case report|a case of)",
        "text",
    ),
    (
        "year_old",
        r"\b\d+[- ](?:year|month|week|day)[- ]old (?:man|woman|boy|girl|male|female|patient|infant|child)",
        "text",
    ),
    ("case_title", r"\b(?:case reports?|a case of|report of (?:a|two|three) cases?|case series)\b", "title"),
    ("cohort", r"\bcohort\b", "text"),
    ("prospective", r"\bprospective(?:ly)?\b", "text"),
    ("retrospective", r"\bretrospective(?:ly)?\b", "text"),
    ("follow_up", r"\bfollow(?:ed)?[- ]up\b", "text"),
    ("hazard_ratio", r"(?i:\bhazard ratios?\b)|\bHR\b", "text"),
    ("case_control", r"\bcase[- ]control\b|\bmatched controls?\b", "text"),
    ("odds_ratio", r"(?i:\bodds ratios?\b)|\bOR\b", "text"),
    ("cross_sectional", r"\bcross[- ]sectional\b|\bsurvey\b|\bquestionnaire\b|\bprevalence\b", "text"),
    (
        "diagnostic",
        r"(?i:\bsensitivity\b.{0,80}\bspecificity\b|\breceiver operating|\bpredictive value)|\bROC\b|\bAUC\b",
        "text",
    ),
    ("review", r"\b(?:this|we) review\b|\breview(?:s|ed)? (?:the|recent|current)\b|\boverview\b", "text"),
    ("review_title", r"\breview\b|\bupdate\b|\boverview\b|\bperspective\b", "title"),
    ("guideline", r"\bguidelines?\b|\brecommendations?\b|\bconsensus\b|\bposition statement\b", "text"),
    ("guideline_title", r"\bguidelines?\b|\bconsensus\b|\brecommendations?\b|\bstatement\b", "title"),
    (
        "animal",
        r"\b(?:rats?|mice|murine|mouse|dogs?|rabbits?|pigs?|piglets?|sheep|monkeys?|primates?|zebrafish|"
        r"hamsters?|guinea pigs?|rodents?|cats?|canine|porcine|bovine|ovine|wistar|sprague[- ]dawley)\b",
        "text",
    ),
    (
        "in_vitro",
        r"\bin vitro\b|\bcell lines?\b|\bcultured\b|\bcells were\b|\bknockout\b|\btransgenic\b",
        "text",
    ),
    ("animal_title", r"\b(?:rats?|mice|murine|mouse|dogs?|rabbits?|pigs?|in vitro|cells?)\b", "title"),
    (
        "patients",
        r"\b(?:patients|participants|subjects|volunteers|children|women|men|adults|infants)\b",
        "text",
    ),
    (
        "nonrandomized",
        r"\bnon-?randomi[sz]ed\b|\bsingle[- ]arm\b|\bopen[- ]label\b|\bphase (?:i|ii|1|2)\b",
        "text",
    ),
)
_CASE_SENSITIVE = {"hazard_ratio", "odds_ratio", "diagnostic"}  # "OR", "HR", "ROC" as abbreviations only
# Case-insensitive cues are matched, without re.I (slow), against the lower-cased text; a cue
# with a case-insensitive part "(?i:...)" is split into that part (lower-cased text) and the rest.
_CUES: tuple[tuple[str, re.Pattern[str], str, bool], ...] = tuple(
    part
    for name, rx, where in CUES
    for part in (
        [(name, re.compile(rx.lower()), where, True)]
        if name not in _CASE_SENSITIVE
        else [
            (name, re.compile(m.group(1).lower()), where, True)
            for m in [re.match(r"\(\?i:(.*?)\)\|(.*)$", rx)]
            if m is not None
        ]
        + [(name, re.compile(re.sub(r"^\(\?i:.*?\)\|", "", rx)), where, False)]
    )
)


# A literal every match of a (lower-case) cue contains: a cheap test before the regex search.
_ANCHORS = {
    "randomized": "randomi",
    "randomly_assigned": "randomly",
    "placebo": "placebo",
    "double_blind": "blind",
    "meta_analysis": "analys",
    "systematic_review": "systematic",
    "cohort": "cohort",
    "prospective": "prospective",
    "retrospective": "retrospective",
    "follow_up": "follow",
    "case_control": "control",
    "year_old": "old",
    "hazard_ratio": "hazard",
    "odds_ratio": "odds",
    "review": "view",  # review, overview
}


def text_features(title: str, abstract: str) -> Counter[str]:
    """Counts of word uni/bigrams of title + abstract and of title unigrams (``t:``)."""
    feats: Counter[str] = Counter()
    t_tokens = _TOKEN.findall(title.lower())
    tokens = t_tokens + ["|"] + _TOKEN.findall(abstract.lower())
    for i, tok in enumerate(tokens):
        if tok == "|":
            continue
        feats[tok] += 1
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if nxt and nxt != "|":
            feats[tok + " " + nxt] += 1
    for tok in t_tokens:
        feats["t:" + tok] += 1
    return feats


def cue_features(title: str, abstract: str) -> list[str]:
    """Names (``cue:...``) of the hand cues present."""
    full = title + "\n" + abstract
    texts = {
        (True, False): full.lower(),
        (False, False): full,
        (True, True): title.lower(),
        (False, True): title,
    }
    found = set()
    for name, rx, where, low in _CUES:
        text = texts[low, where == "title"]
        anchor = _ANCHORS.get(name) if low else None
        if (anchor is None or anchor in text) and rx.search(text):
            found.add(name)
    return ["cue:" + name for name, _, _ in CUES if name in found]


@dataclass(frozen=True)
class DesignPrediction:
    label: str
    probability: float
    probabilities: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "probability": round(self.probability, 4),
            "probabilities": {k: round(v, 4) for k, v in self.probabilities.items()},
        }


@dataclass(frozen=True)
class DesignModel:
    classes: tuple[str, ...]
    vocabulary: dict[str, int]
    idf: np.ndarray  # (F,) idf of each feature; cue features have idf 0 (not in the tf-idf block)
    weights: np.ndarray  # (F, K)
    bias: np.ndarray  # (K,)
    temperature: float
    log_prior: np.ndarray  # (K,) added after the temperature (0 when the model is balanced)
    cue_value: float = 1.0  # a present cue's feature value (the tf-idf block has unit norm)

    def logits(self, title: str, abstract: str) -> np.ndarray:
        idx, val = self.vectorize(title, abstract)
        z = val @ self.weights[idx] if len(idx) else np.zeros(len(self.classes))
        return np.asarray((z + self.bias) / self.temperature + self.log_prior, dtype=np.float64)

    def vectorize(self, title: str, abstract: str) -> tuple[np.ndarray, np.ndarray]:
        """Feature indices and values: l2-normalised sublinear tf-idf, then cues at ``cue_value``
        (a larger value is weaker regularisation of the few hand cues)."""
        voc = self.vocabulary
        pairs = [(j, n) for f, n in text_features(title, abstract).items() if (j := voc.get(f)) is not None]
        idx = np.fromiter((j for j, _ in pairs), dtype=np.int64, count=len(pairs))
        tf = np.fromiter((n for _, n in pairs), dtype=np.float64, count=len(pairs))
        val = (1.0 + np.log(tf)) * self.idf[idx]
        norm = float(np.sqrt(val @ val)) or 1.0
        cues = [j for c in cue_features(title, abstract) if (j := voc.get(c)) is not None]
        idx = np.concatenate([idx, np.asarray(cues, dtype=np.int64)])
        val = np.concatenate([val / norm, np.full(len(cues), self.cue_value)])
        return idx, val

    def predict(self, title: str | None, abstract: str | None) -> DesignPrediction:
        z = self.logits(title or "", abstract or "")
        p = np.exp(z - z.max())
        p /= p.sum()
        k = int(p.argmax())
        probs = {c: float(p[i]) for i, c in enumerate(self.classes)}
        return DesignPrediction(self.classes[k], float(p[k]), probs)


def has_text(title: str | None, abstract: str | None) -> bool:
    """Whether there is any text to read (a word character in the title or abstract)."""
    return any(ch.isalnum() for ch in (title or "") + (abstract or ""))


def predict_design(model: DesignModel, title: str | None, abstract: str | None) -> DesignPrediction | None:
    """The design the text suggests, or None (abstain) when there is no title or abstract text:
    the model's prior alone (e.g. 'narrative_review, 0.53' for an empty record) is no prediction."""
    if not has_text(title, abstract):
        return None
    return model.predict(title, abstract)


def save_design_model(path: Path, model: DesignModel) -> None:
    """Plain arrays only (loads with ``allow_pickle=False``); weights as float16 to stay small."""
    terms = sorted(model.vocabulary, key=model.vocabulary.__getitem__)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        np.savez_compressed(
            f,
            classes=np.array(model.classes),
            terms=np.array(terms),
            idf=model.idf.astype(np.float32),
            weights=model.weights.astype(np.float16),
            bias=model.bias.astype(np.float32),
            temperature=np.array([model.temperature], dtype=np.float32),
            log_prior=model.log_prior.astype(np.float32),
            cue_value=np.array([model.cue_value], dtype=np.float32),
        )


def load_design_model(path: Path) -> DesignModel:
    """The shipped model; ``DataError`` naming the file when missing or unreadable."""
    try:
        with np.load(path, allow_pickle=False) as z:
            classes = tuple(str(c) for c in z["classes"])
            terms = z["terms"].tolist()
            model = DesignModel(
                classes=classes,
                vocabulary={t: i for i, t in enumerate(terms)},
                idf=z["idf"].astype(np.float64),
                weights=z["weights"].astype(np.float32),
                bias=z["bias"].astype(np.float64),
                temperature=float(z["temperature"][0]),
                log_prior=z["log_prior"].astype(np.float64),
                cue_value=float(z["cue_value"][0]),
            )
    except FileNotFoundError as exc:
        raise DataError(f"design model missing: {path} (run scripts/train_design.py)") from exc
    except (OSError, KeyError, ValueError) as exc:
        raise DataError(f"{path}: unreadable design model ({exc})") from exc
    unknown = set(classes) - set(DESIGN_CLASSES)
    if unknown or model.weights.shape != (len(terms), len(classes)):
        raise DataError(f"{path}: design model does not match this version (classes {sorted(unknown)})")
    return model


def design_model_path() -> Path:
    """Where the shipped model is (for the CLI/app layer; library code takes a model)."""
    from ebm.paths import package_data

    return package_data(MODEL_FILE)


# --- design from the indexer's publication types and headings ------------------------------
# The distant labels of the training corpus and the "publication types" source of design_json:
# one mapping, so the two cannot drift apart. Names are matched case-insensitively.

RCT_PT = {"randomized controlled trial", "pragmatic clinical trial", "equivalence trial"}
SR_PT = {"meta-analysis", "systematic review", "network meta-analysis"}
GUIDE_PT = {
    "practice guideline",
    "guideline",
    "consensus development conference",
    "consensus development conference, nih",
}
NRT_PT = {
    "controlled clinical trial",
    "clinical trial",
    "clinical trial, phase i",
    "clinical trial, phase ii",
    "clinical trial, phase iii",
    "clinical trial, phase iv",
    "adaptive clinical trial",
    "non-randomized controlled trial",
}
VET_PT = {
    "randomized controlled trial, veterinary",
    "clinical trial, veterinary",
    "observational study, veterinary",
}
REVIEW_PT = {
    "review",
    "editorial",
    "letter",
    "comment",
    "news",
    "historical article",
    "biography",
    "personal narrative",
    "interview",
    "lecture",
    "introductory journal article",
}
CASE_PT = {"case reports"}
COHORT_MH = {
    "cohort studies",
    "prospective studies",
    "retrospective studies",
    "longitudinal studies",
    "follow-up studies",
}
DIAG_MH = {
    "sensitivity and specificity",
    "roc curve",
    "predictive value of tests",
    "false positive reactions",
    "false negative reactions",
}


def label_from_index(pts: set[str], mhs: set[str] | None) -> str | None:
    """The design class the indexer's publication types and design headings give, or None.

    Order matters (first match wins): non-human first, then syntheses and guidelines, trials,
    case reports, then the observational designs from MeSH, reviews and opinion last."""
    mh = mhs or set()
    if pts & VET_PT or ("animals" in mh and "humans" not in mh):
        return "animal_or_in_vitro"
    if "in vitro techniques" in mh and "humans" not in mh:
        return "animal_or_in_vitro"
    if pts & SR_PT:
        return "systematic_review"
    if pts & GUIDE_PT:
        return "guideline"
    if pts & RCT_PT:
        return "randomized_controlled_trial"
    if pts & NRT_PT:
        return "non_randomized_trial"
    if pts & CASE_PT:
        return "case_report"
    if mh & DIAG_MH:
        return "diagnostic_accuracy"
    if "case-control studies" in mh:
        return "case_control"
    if "cross-sectional studies" in mh:
        return "cross_sectional"
    if mh & COHORT_MH or "observational study" in pts:
        return "cohort"
    if pts & REVIEW_PT:
        return "narrative_review"
    if mhs and pts:  # indexed, and no design at all: primary research of another kind
        return "other"
    return None


def design_from_index(citation: Citation) -> str | None:
    """The design the citation's publication types (and design headings) name, or None when they
    name none ("Journal Article" only): then the text decides.

    MEDLINE's IndexingMethod (manual / automated / curated) is not carried by ``Citation``;
    publication types are trusted whenever they name a design."""
    pts = {p.name.casefold() for p in citation.publication_types or ()}
    if not pts:
        return None
    mhs = (
        None
        if citation.mesh_headings is None
        else {h.descriptor_name.casefold() for h in citation.mesh_headings}
    )
    label = label_from_index(pts, mhs)
    return None if label == "other" else label


def human_from_index(citation: Citation) -> bool | None:
    """True/False from the MeSH check tags Humans / Animals when the citation is indexed."""
    if not citation.mesh_headings:
        return None
    names = {h.descriptor_name.casefold() for h in citation.mesh_headings}
    if "humans" in names:
        return True
    if "animals" in names:
        return False
    return None


def design_json(citation: Citation, model: DesignModel) -> dict[str, Any]:
    """The per-record object of ``ebm annotate --file F --json`` (issue 13): ``design`` (from the
    publication types when they name one, else from the text), ``design_from_text`` (the
    classifier's output; None without title or abstract text), ``sample_size`` ({value,
    sentence} or None) and ``human``."""
    from extractors.sample_size import extract_sample_size

    text = predict_design(model, citation.title, citation.abstract_text)
    size = extract_sample_size(citation.abstract_text)
    return {"pmid": citation.pmid, **design_record(citation, text, size, model.classes)}


def design_record(
    citation: Citation,
    text: DesignPrediction | None,
    size: Any,
    classes: tuple[str, ...] = DESIGN_CLASSES,
) -> dict[str, Any]:
    """``design``, ``design_from_text``, ``sample_size`` and ``human`` of ``design_json`` from a
    prediction (None: no text, the classifier abstained) and a sample size (``SampleSize |
    None``) already made (the annotation's)."""
    from_text = None if text is None else {**text.to_dict(), "source": "text"}
    indexed = design_from_index(citation)
    design: dict[str, Any] | None
    if indexed is not None:
        design = {
            "label": indexed,
            "probability": 1.0,
            "probabilities": {c: float(c == indexed) for c in classes},
            "source": "publication types",
        }
    else:
        design = from_text
    human = human_from_index(citation)
    if human is None:
        human = (
            False
            if indexed == "animal_or_in_vitro"
            else None
            if text is None
            else human_from(text, citation.title, citation.abstract_text)
        )
    return {
        "design": design,
        "design_from_text": from_text,
        "sample_size": None if size is None else size.to_dict(),
        "human": human,
    }


# --- human or not --------------------------------------------------------------------------

_HUMAN = re.compile(
    r"\b(?:patients?|participants?|subjects|volunteers?|children|adolescents|women|men|adults|"
    r"infants|neonates|newborns|people|persons|individuals|pregnan\w+|outpatients|inpatients|"
    r"\d+[- ]year[- ]old)\b",
    re.I,
)


def human_from(prediction: DesignPrediction, title: str | None, abstract: str | None) -> bool | None:
    """False for an animal or in-vitro study (p >= 0.5), True when that is unlikely (p < 0.2)
    and the text names people; None otherwise (abstain)."""
    p_animal = prediction.probabilities.get("animal_or_in_vitro", 0.0)
    if p_animal >= 0.5:
        return False
    if p_animal < 0.2 and _HUMAN.search((title or "") + "\n" + (abstract or "")):
        return True
    return None
