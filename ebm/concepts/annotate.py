"""Concepts over a processed ``Document``: what the extractors consume.

``annotate(doc)`` matches each sentence separately (a term never crosses a sentence), then:
- abbreviations defined in the text: every occurrence of a short form ("AOM") gets the
  concept of its long form ("acute otitis media"), replacing whatever the short form alone
  would match; a short form whose long form names no concept matches nothing;
- negation: each concept is flagged when under a NegEx trigger (``ebm.text.negation``);
- each concept carries its sentence index, section label, NLM category and position.

Typical use by an extractor::

    from ebm.concepts import annotate, DISORDERS
    doc = resources.pipeline.process(citation)
    concepts = annotate(doc, resources.matcher, resources.negation)
    problems = [c for c in concepts if DISORDERS in c.groups and not c.negated]
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ebm.concepts.matcher import ConceptMatch, ConceptMatcher
from ebm.text.document import Document

if TYPE_CHECKING:
    from ebm.text.negation import NegationDetector


@dataclass(frozen=True)
class Concept:
    start: int  # character offsets into Document.text
    end: int
    text: str  # as written (the short form for an abbreviation)
    cui: str  # MeSH descriptor UI (or UMLS CUI)
    name: str  # preferred name
    groups: tuple[str, ...]  # semantic groups, e.g. ("DISO",)
    similarity: float
    negated: bool
    sentence: int  # index into Document.sentences (0 = title when there is one)
    section: str | None  # section label ("TITLE", "METHODS", ...) or None if unstructured
    nlm_category: str | None
    position: str  # title / first / middle / last
    token_start: int  # token range in Document.tokens
    token_end: int
    long_form: str | None = None  # set when matched through an abbreviation's long form
    alternatives: tuple[str, ...] = ()
    nested: bool = False  # inside a longer match (only from a matcher built with nested=True)

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "cui": self.cui,
            "name": self.name,
            "groups": list(self.groups),
            "similarity": round(self.similarity, 3),
            "negated": self.negated,
            "sentence": self.sentence,
            "section": self.section,
            "nlm_category": self.nlm_category,
            "position": self.position,
            "long_form": self.long_form,
            "alternatives": list(self.alternatives),
            "nested": self.nested,
        }


def _long_form_match(matcher: ConceptMatcher, long_form: str) -> ConceptMatch | None:
    """The concept a long form names: the match covering it, else its longest match."""
    found = [m for m in matcher.match(long_form) if not m.nested]
    if not found:
        return None
    return max(found, key=lambda m: (m.end - m.start, m.start))


def annotate(
    doc: Document,
    matcher: ConceptMatcher,
    negation: NegationDetector | None,
    abbreviations: bool = True,
) -> list[Concept]:
    """Concept mentions of ``doc`` in text order (see module docstring).

    ``negation``: a ``NegationDetector`` (``Resources.negation``), or None to skip.
    """
    starts = [t.start for t in doc.tokens]

    def token_range(a: int, b: int) -> tuple[int, int]:
        i = max(bisect.bisect_right(starts, a) - 1, 0)
        j = bisect.bisect_left(starts, b)
        return i, max(j, i + 1)

    # (start, end, match, long form) in document offsets
    found: list[tuple[int, int, ConceptMatch, str | None]] = []
    for s in doc.sentences:
        for m in matcher.match(s.text):
            found.append((s.start + m.start, s.start + m.end, m, None))

    if abbreviations and doc.abbreviation_spans:
        cache: dict[str, ConceptMatch | None] = {}
        replaced: list[tuple[int, int]] = []
        added: list[tuple[int, int, ConceptMatch, str | None]] = []
        for a in doc.abbreviation_spans:
            if a.end > len(doc.tokens) or a.start >= a.end:
                continue
            a0, a1 = doc.tokens[a.start].start, doc.tokens[a.end - 1].end
            if a.long_form not in cache:
                cache[a.long_form] = _long_form_match(matcher, a.long_form)
            lf = cache[a.long_form]
            replaced.append((a0, a1))
            if lf is not None:
                added.append((a0, a1, lf, a.long_form))
        # Drop matches inside a short form (the short form's own reading), keep the rest.
        found = [f for f in found if not any(a0 <= f[0] and f[1] <= a1 for a0, a1 in replaced)]
        found.extend(added)
        found.sort(key=lambda f: (f[0], -f[1]))
        # A long form's concept never overlaps another match (short forms are single tokens
        # or tight spans), but keep the output non-overlapping in any case.
        kept: list[tuple[int, int, ConceptMatch, str | None]] = []
        last_end = -1
        for f in found:
            if f[2].nested:
                kept.append(f)
                continue
            if f[0] < last_end:
                continue
            kept.append(f)
            last_end = f[1]
        found = [
            f
            for f in kept
            if not f[2].nested or any(o[0] <= f[0] and f[1] <= o[1] and not o[2].nested for o in kept)
        ]

    out: list[Concept] = []
    for start, end, m, long_form in found:
        t0, t1 = token_range(start, end)
        sent = doc.sentences[doc.tokens[t0].sentence] if doc.tokens else None
        if sent is None:
            continue
        neg = bool(negation.negated(doc, t0, t1)) if negation is not None else False
        out.append(
            Concept(
                start=start,
                end=end,
                text=doc.text[start:end],
                cui=m.cui,
                name=m.name,
                groups=m.groups,
                similarity=m.similarity,
                negated=neg,
                sentence=sent.index,
                section=sent.section_label,
                nlm_category=sent.nlm_category,
                position=sent.position,
                token_start=t0,
                token_end=t1,
                long_form=long_form,
                alternatives=m.alternatives,
                nested=m.nested,
            )
        )
    return out


def concepts_in_group(concepts: list[Concept], group: str, include_negated: bool = False) -> list[Concept]:
    """The concepts of one semantic group (e.g. ``DISORDERS``), negated ones left out by default."""
    return [c for c in concepts if group in c.groups and (include_negated or not c.negated)]
