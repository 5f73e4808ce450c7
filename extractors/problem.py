"""Problem extractor (Demner-Fushman & Lin 2007, section 5.3).

Every DISORDER concept is a problem; problems are ranked by discourse prominence: mentions in
the title, the introduction/objective section of a structured abstract, or the first two
sentences of an unstructured one weigh more. The top one is the primary problem, the rest
are co-occurring problems. Negated mentions ("no evidence of pneumonia") do not count.
"""

from __future__ import annotations

import re
from typing import Literal

from ebm.concepts.annotate import Concept
from ebm.text.document import Document, Sentence
from extractors.candidate import Candidate

DISORDER = "DISO"
Scope = Literal["title", "title+2", "all"]

TITLE_WEIGHT = 3.0
PROMINENT_WEIGHT = 1.5  # first two sentences, background/objective sections
BODY_WEIGHT = 1.0
_PROMINENT_SECTION = re.compile(r"BACKGROUND|INTRODUCTION|OBJECTIVE|AIM|PURPOSE|CONTEXT", re.I)


def mention_weight(sentence: Sentence) -> tuple[float, str]:
    if sentence.position == "title":
        return TITLE_WEIGHT, "title"
    label = sentence.nlm_category or sentence.section_label
    if label and _PROMINENT_SECTION.search(label):
        return PROMINENT_WEIGHT, f"section {label}"
    if not label and sentence.position == "first":
        return PROMINENT_WEIGHT, "first two sentences"
    return BODY_WEIGHT, "body"


def in_scope(sentence: Sentence, scope: Scope) -> bool:
    if scope == "title":
        return sentence.position == "title"
    if scope == "title+2":
        return sentence.position in ("title", "first")
    return True


def extract_problems(doc: Document, concepts: list[Concept], scope: Scope = "all") -> list[Candidate]:
    """Problems best first: ``[0]`` is the primary problem, the rest co-occurring problems."""
    scores: dict[str, float] = {}
    first: dict[str, Concept] = {}
    reasons: dict[str, list[str]] = {}
    for c in concepts:
        if DISORDER not in c.groups or c.negated:
            continue
        s = doc.sentences[c.sentence]
        if not in_scope(s, scope):
            continue
        w, why = mention_weight(s)
        scores[c.cui] = scores.get(c.cui, 0.0) + w
        first.setdefault(c.cui, c)
        reasons.setdefault(c.cui, []).append(f"{c.text!r} in {why} (+{w:g})")
    # Ties go to the earlier mention: the topic is usually named first.
    ranked = sorted(scores, key=lambda cui: (-scores[cui], first[cui].start))
    return [
        Candidate(
            text=first[cui].text,
            start=first[cui].start,
            end=first[cui].end,
            score=scores[cui],
            sentence=first[cui].sentence,
            concepts=(cui,),
            names=(first[cui].name,),
            evidence=tuple(reasons[cui]),
        )
        for cui in ranked
    ]
