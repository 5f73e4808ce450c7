"""Features of the outcome-sentence classifiers, shared by training and run time.

Everything here is a plain function of a ``Document`` (and, for the semantic classifier, of
the concepts found in it), so that the training script and the shipped model see exactly the
same inputs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ebm.text.document import Document, Sentence

# Tokens: numbers ("0.477", ".05", "1,000"), runs of word characters joined by - . / '
# ("well-tolerated", "clinicaltrials.gov", "mg/kg", "hba1c"), single other characters ("<", "%").
_TOKEN = re.compile(r"\d+(?:[.,·]\d+)*|[.,·]\d+|\w+(?:[-./']\w+)*|[^\w\s]")
NUMBER = "<num>"  # every number, in features and in cue phrases
_DIGITS = frozenset("0123456789")
# Punctuation kept as a word: the signs of results statements ("p < 0.05", "12.4%").
_SIGNS = frozenset("<>=≤≥±%")


@dataclass(frozen=True)
class Tokens:
    """A sentence tokenised once for all classifiers."""

    text: str  # the sentence as written
    spans: list[tuple[int, int]]  # character offsets of each token in ``text``
    norm: list[str]  # lower-cased tokens, numbers as ``<num>``


def tokenize(text: str) -> Tokens:
    lowered = text.lower()
    # lower() changes the length of a few characters ("İ"); then offsets come from the original
    matches = list(_TOKEN.finditer(lowered if len(lowered) == len(text) else text))
    norm = [
        NUMBER if (t := m.group())[0] in _DIGITS or (len(t) > 1 and t[0] in ".,·") else t.lower()
        for m in matches
    ]
    return Tokens(text, [m.span() for m in matches], norm)


def words(tokens: Tokens | str) -> list[str]:
    """The naive Bayes features of a sentence: its tokens without punctuation (signs kept)."""
    if isinstance(tokens, str):
        tokens = tokenize(tokens)
    return [t for t in tokens.norm if t[0].isalnum() or t in _SIGNS or t == NUMBER]


def unigram_features(tokens: Sequence[str]) -> list[str]:
    return list(tokens)


def ngram_features(tokens: Sequence[str]) -> list[str]:
    """Unigrams and bigrams (joined by a space), each once: presence, not frequency."""
    seen = dict.fromkeys(tokens)
    for a, b in zip(tokens, tokens[1:], strict=False):
        seen[f"{a} {b}"] = None
    return list(seen)


# --- phrase count (the denominator of the cue classifier) ------------------------------------

# Approximation of MetaMap's phrase chunking, enough for the cue classifier's denominator:
# prepositions open a phrase that goes on; conjunctions, auxiliaries, relatives and numbers are
# phrases by themselves; signs after a number belong to it.
_PREPOSITIONS = frozenset(
    """
    in of with to for on at by from than versus vs between among after before during within
    without per over under into through throughout across against compared
    """.split()
)
_SINGLE = frozenset(
    """
    and or but nor was were is are be been being had has have did does do will would could
    should may might which that who whom whose when while whereas although because since if
    """.split()
) | {NUMBER}
_ATTACHED = frozenset("%<>=≤≥±")


def phrase_count(tokens: Sequence[str]) -> int:
    """Approximate number of MetaMap phrases in a sentence (at least 1).

    "The dropout rate due to adverse events was 12.4% in the moxonidine and 9.8% in the
    nitrendipine group" -> 8, as in the paper's example.
    """
    n = 0
    open_phrase = False
    for t in tokens:
        if t in _ATTACHED:
            continue
        if t in _SINGLE:
            n += 1
            open_phrase = False
        elif t in _PREPOSITIONS or not open_phrase:
            n += 1
            open_phrase = True
    return max(n, 1)


# --- position and length ---------------------------------------------------------------------

STRUCTURED_CATEGORIES = ("BACKGROUND", "OBJECTIVE", "METHODS", "RESULTS", "CONCLUSIONS", "UNASSIGNED")
_FROM_END_MAX = 6  # sentences counted from the end of an unstructured abstract


def position_keys(doc: Document) -> list[str]:
    """One discrete position per sentence (the position classifier's only feature).

    - the title: ``T``
    - a sentence of a structured abstract (its section has an NLM category): ``S:<category>:<where>``
      with where = first / mid / last sentence of its section (``only`` for one-sentence sections)
      and a ``+`` suffix for sections after which no other RESULTS/CONCLUSIONS section follows
      (the last results/conclusions block carries the take-home message)
    - otherwise (unstructured, or a section without a category), counted from the end of the
      abstract: ``U:e1`` .. ``U:e6`` for the last six sentences, else the quarter of the
      abstract it lies in, ``U:q0`` .. ``U:q3``.
    """
    abstract = [s for s in doc.sentences if s.section_index >= 0]
    n = len(abstract)
    by_section: dict[int, list[Sentence]] = {}
    for s in abstract:
        by_section.setdefault(s.section_index, []).append(s)
    keys: list[str] = []
    j = 0
    for s in doc.sentences:
        if s.section_index < 0:
            keys.append("T")
            continue
        cat = s.nlm_category
        if cat in STRUCTURED_CATEGORIES:
            members = by_section[s.section_index]
            i = members.index(s)
            where = (
                "only"
                if len(members) == 1
                else "first"
                if i == 0
                else "last"
                if i == len(members) - 1
                else "mid"
            )
            keys.append(f"S:{cat}:{where}")
        else:
            from_end = n - j
            keys.append(f"U:e{from_end}" if from_end <= _FROM_END_MAX else f"U:q{min(3, 4 * j // n)}")
        j += 1
    return keys


def unstructured_position_keys(doc: Document) -> list[str]:
    """Position keys as if the abstract had no headings (used to train the ``U:`` entries)."""
    abstract_n = sum(1 for s in doc.sentences if s.section_index >= 0)
    keys: list[str] = []
    j = 0
    for s in doc.sentences:
        if s.section_index < 0:
            keys.append("T")
            continue
        from_end = abstract_n - j
        keys.append(f"U:e{from_end}" if from_end <= _FROM_END_MAX else f"U:q{min(3, 4 * j // abstract_n)}")
        j += 1
    return keys


def abstract_length(doc: Document) -> int:
    """Number of abstract sentences (the title excluded): the length classifier's feature."""
    return sum(1 for s in doc.sentences if s.section_index >= 0)


# --- semantic classifier input ---------------------------------------------------------------


class ConceptLike(Protocol):
    """What the semantic classifier needs of a concept annotation (``ebm.concepts`` provides it)."""

    @property
    def cui(self) -> str: ...

    @property
    def groups(self) -> tuple[str, ...]: ...

    @property
    def sentence(self) -> int: ...

    @property
    def negated(self) -> bool: ...


PROBLEM = "@problem"  # a concept that is the citation's primary problem
INTERVENTION = "@intervention"  # a concept that is one of the citation's interventions


def semantic_features(
    doc: Document,
    concepts: Iterable[ConceptLike],
    primary_problem: str | None = None,
    interventions: Iterable[str] = (),
) -> list[list[str]]:
    """Per sentence, the semantic groups of its concepts (``G:DISO``...) and the boost markers.

    A concept that is the primary problem or an intervention adds ``@problem`` /
    ``@intervention``: the paper's boost, with a learned weight.
    """
    inter = set(interventions)
    out: list[list[str]] = [[] for _ in doc.sentences]
    for c in concepts:
        if not 0 <= c.sentence < len(out):
            continue
        feats = out[c.sentence]
        for g in c.groups:
            feats.append(f"G:{g}")
        if primary_problem is not None and c.cui == primary_problem:
            feats.append(PROBLEM)
        if c.cui in inter:
            feats.append(INTERVENTION)
    return out
