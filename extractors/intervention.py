"""Intervention (and comparison) extractor (Demner-Fushman & Lin 2007, section 5.5).

Interventions are concepts of the semantic groups that can treat, prevent or diagnose:
drugs and chemicals, therapeutic and diagnostic procedures, health care activities and
devices. Interventions and comparisons share these groups, so all interventions under study
are returned, best first. A mention weighs more in the title, the aims and methods, and in a
sentence with a cue phrase ("randomized to receive", "this study examines",
``rules/intervention_cues.tsv``); drugs (descriptors with a pharmacological action) and
therapeutic procedures weigh more than other chemicals (often measured outcomes such as
glucose) and investigative techniques.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from ebm.concepts.annotate import Concept
from ebm.mesh import MeshVocabulary, mesh
from ebm.paths import rules_dir
from ebm.text.document import Document, Sentence
from extractors.candidate import Candidate
from extractors.cues import WeightedCue, best_cue, load_weighted_cues

INTERVENTION_GROUPS = ("CHEM", "PROC", "DEVI")

# Kind weights by MeSH tree prefix: what kind of intervention a concept is.
_KIND_WEIGHTS: tuple[tuple[str, float, str], ...] = (
    ("E05", 0.0, "investigative technique (study method, not an intervention)"),
    ("E02", 1.0, "therapeutic procedure"),
    ("E03", 1.0, "anesthesia and analgesia"),
    ("E04", 1.0, "surgical procedure"),
    ("E06", 0.9, "dental procedure"),
    ("E01", 0.8, "diagnostic procedure"),
    ("E07", 0.8, "device"),
    ("D27", 1.0, "drug class"),
    ("D26", 1.0, "pharmaceutical preparation"),
    ("D20", 1.0, "complex mixture (vaccines, extracts)"),
    ("N02", 0.8, "health care activity"),
)
OTHER_CHEMICAL = 0.5
OTHER_PROCEDURE = 0.6
GENERIC = 0.1

_SECTION_WEIGHT = [
    (re.compile(r"OBJECTIVE|AIM|PURPOSE|INTERVENTION|TREATMENT", re.I), 1.5),
    (re.compile(r"METHOD|DESIGN|PATIENT|PARTICIPANT|SUBJECT|SETTING", re.I), 1.3),
    (re.compile(r"BACKGROUND|INTRODUCTION|CONTEXT", re.I), 1.0),
    (re.compile(r"RESULT|FINDING", re.I), 0.6),
    (re.compile(r"CONCLUSION|INTERPRETATION|DISCUSSION", re.I), 0.8),
]


@cache
def intervention_cues(path: Path | None = None) -> list[WeightedCue]:
    return load_weighted_cues(path or rules_dir() / "intervention_cues.tsv")


def kind_weight(cui: str, vocabulary: MeshVocabulary) -> tuple[float, str]:
    """How much a concept looks like an intervention, from its tree numbers."""
    d = vocabulary.get(cui)
    if d is None:  # a UMLS CUI: no MeSH trees to go by
        return 1.0, "intervention group"
    if d.tree_numbers and all("." not in t for t in d.tree_numbers):
        # A category root ("Therapeutics" for "therapy", "Diagnosis"): names no intervention.
        return GENERIC, "category root (too generic)"
    best: tuple[float, str] | None = None
    for t in d.tree_numbers:
        for prefix, w, why in _KIND_WEIGHTS:
            if t.startswith(prefix) and (best is None or w > best[0]):
                best = (w, why)
    if cui in vocabulary.pharm_actions and (best is None or best[0] < 1.0):
        best = (1.0, "drug (has a pharmacological action)")
    if best is not None:
        return best
    if any(t.startswith("D") for t in d.tree_numbers):
        return OTHER_CHEMICAL, "chemical without a pharmacological action"
    return OTHER_PROCEDURE, "other procedure"


def position_weight(sentence: Sentence) -> tuple[float, str]:
    if sentence.position == "title":
        return 2.0, "title"
    label = sentence.nlm_category or sentence.section_label
    if label:
        for pattern, w in _SECTION_WEIGHT:
            if pattern.search(label):
                return w, f"section {label}"
        return 1.0, f"section {label}"
    if sentence.position == "first":
        return 1.4, "first two sentences"
    if sentence.position == "last":
        return 0.8, "last sentences"
    return 1.0, "body"


def extract_interventions(
    doc: Document,
    concepts: list[Concept],
    vocabulary: MeshVocabulary | None = None,
    cues: list[WeightedCue] | None = None,
) -> list[Candidate]:
    """All interventions under study, best first; each candidate's span is its best mention."""
    voc = vocabulary or mesh()
    cues = intervention_cues() if cues is None else cues
    sentence_cue = {s.index: best_cue(cues, s.text) for s in doc.sentences}
    totals: dict[str, float] = {}
    best: dict[str, tuple[float, Concept]] = {}
    reasons: dict[str, list[str]] = {}
    for c in concepts:
        # Negation is ignored on purpose: "with or without streptokinase" names an intervention.
        if not any(g in c.groups for g in INTERVENTION_GROUPS):
            continue
        kw, kind = kind_weight(c.cui, voc)
        if kw <= 0:
            continue
        s = doc.sentences[c.sentence]
        pw, where = position_weight(s)
        cue = sentence_cue.get(c.sentence)
        cw = cue.weight if cue else 1.0
        w = kw * pw * cw
        totals[c.cui] = totals.get(c.cui, 0.0) + w
        if c.cui not in best or w > best[c.cui][0]:
            best[c.cui] = (w, c)
        why = f"{c.text!r} in {where} x{pw:g}, {kind} x{kw:g}"
        if cue:
            why += f", cue {cue.phrase!r} x{cw:g}"
        reasons.setdefault(c.cui, []).append(why)
    ranked = sorted(totals, key=lambda cui: (-totals[cui], best[cui][1].start))
    return [
        Candidate(
            text=best[cui][1].text,
            start=best[cui][1].start,
            end=best[cui][1].end,
            score=totals[cui],
            sentence=best[cui][1].sentence,
            concepts=(cui,),
            names=(best[cui][1].name,),
            evidence=tuple(reasons[cui]),
        )
        for cui in ranked
    ]
