"""The rhetorical role of a sentence (title, background, objective, methods, results,
conclusions), structured abstract or not: ONE classifier every extractor reads.

Precedence (first that applies):

1. the title is ``title``;
2. a section with an NLM category (``NlmCategory``: BACKGROUND, OBJECTIVE, METHODS, RESULTS,
   CONCLUSIONS) takes that role: NLM normalised the printed label, so "PATIENTS AND
   METHODS" is methods and "INTERPRETATION" conclusions, whatever words the label uses;
3. a printed label without a usable category (none, or UNASSIGNED) takes the role its words
   name (``_LABEL_ROLES``, first match: "MEASUREMENTS AND MAIN RESULTS" is results, "AIMS"
   objective, "PATIENTS" methods); a label naming none of them is ``other``;
4. an abstract without labels (unstructured) takes a role from the sentence's place: the first
   two sentences ``objective`` (where aims are stated), the last two ``conclusions``, the rest
   ``body``; ``SentenceRole.structured`` is False, so extractors can weigh a guessed role
   differently from a labelled one.

Besides the role, ``facet`` names what a printed label says more finely than the role
(participants, interventions, outcomes, design): "PATIENTS" and "INTERVENTIONS" are both
methods by role, but a population extractor trusts the first more. The facet comes only from the
label's words (it is None without a label).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ebm.text.document import Sentence

__all__ = [
    "CATEGORY_ROLES",
    "ROLES",
    "Role",
    "SentenceRole",
    "facet_of_label",
    "role_of_label",
    "sentence_role",
]

Role = Literal["title", "background", "objective", "methods", "results", "conclusions", "other", "body"]
ROLES: tuple[Role, ...] = (
    "title",
    "background",
    "objective",
    "methods",
    "results",
    "conclusions",
    "other",
    "body",
)

# The NLM categories that name a role (UNASSIGNED names none: the label decides).
CATEGORY_ROLES: dict[str, Role] = {
    "BACKGROUND": "background",
    "OBJECTIVE": "objective",
    "METHODS": "methods",
    "RESULTS": "results",
    "CONCLUSIONS": "conclusions",
}

# A printed label's words, in order (the first match wins): results before methods, so that
# "MEASUREMENTS AND MAIN RESULTS" is results; objective before background, so that
# "BACKGROUND AND AIMS" is objective... only when NLM gave no category (it says BACKGROUND).
_LABEL_ROLES: tuple[tuple[re.Pattern[str], Role], ...] = (
    (re.compile(r"RESULT|FINDING", re.I), "results"),
    (re.compile(r"CONCLU|INTERPRET|DISCUSSION|IMPLICATION", re.I), "conclusions"),
    (re.compile(r"OBJECTIVE|AIM|PURPOSE|GOAL", re.I), "objective"),
    (
        re.compile(
            r"METHOD|DESIGN|SETTING|MATERIAL|PATIENT|PARTICIPANT|SUBJECT|POPULATION|SAMPLE|"
            r"INTERVENTION|TREATMENT|MEASURE|OUTCOME",
            re.I,
        ),
        "methods",
    ),
    (re.compile(r"BACKGROUND|INTRODUCTION|CONTEXT|RATIONALE", re.I), "background"),
)

Facet = Literal["participants", "interventions", "outcomes", "design"]
_LABEL_FACETS: tuple[tuple[re.Pattern[str], Facet], ...] = (
    (re.compile(r"PARTICIPANT|PATIENT|SUBJECT|POPULATION|SAMPLE", re.I), "participants"),
    (re.compile(r"INTERVENTION|TREATMENT", re.I), "interventions"),
    (re.compile(r"OUTCOME|MEASURE", re.I), "outcomes"),
    (re.compile(r"METHOD|DESIGN|SETTING|MATERIAL", re.I), "design"),
)

Source = Literal["title", "category", "label", "position"]


@dataclass(frozen=True, slots=True)
class SentenceRole:
    role: Role
    source: Source  # what decided the role (the precedence step)
    heading: str | None  # the printed label (else the NLM category) shown in explanations
    facet: Facet | None = None  # what the printed label names more finely (participants, ...)

    @property
    def structured(self) -> bool:
        """Whether a heading (label or category) gave the role, not the sentence's place."""
        return self.source in ("category", "label")

    def why(self) -> str:
        """Where the sentence stands, for an extractor's evidence ("section PATIENTS", ...)."""
        if self.source == "title":
            return "title"
        if self.heading is not None:
            return f"section {self.heading}"
        return {"objective": "first two sentences", "conclusions": "last sentences"}.get(self.role, "body")


def role_of_label(label: str | None) -> Role | None:
    """The role a printed label's words name (None without a label, ``other`` for none)."""
    if not label:
        return None
    for pattern, role in _LABEL_ROLES:
        if pattern.search(label):
            return role
    return "other"


def facet_of_label(label: str | None) -> Facet | None:
    """What a printed label names more finely than its role ("PATIENTS": participants)."""
    if not label:
        return None
    for pattern, facet in _LABEL_FACETS:
        if pattern.search(label):
            return facet
    return None


def sentence_role(sentence: Sentence) -> SentenceRole:
    """The sentence's role by the precedence of the module docstring."""
    if sentence.position == "title":
        return SentenceRole("title", "title", None)
    label = sentence.section_label
    category = sentence.nlm_category
    heading = label or (category if category and category != "UNASSIGNED" else None)
    facet = facet_of_label(label)
    by_category = CATEGORY_ROLES.get(category or "")
    if by_category is not None:
        return SentenceRole(by_category, "category", heading, facet)
    by_label = role_of_label(label)
    if by_label is not None:
        return SentenceRole(by_label, "label", heading, facet)
    if sentence.position == "first":
        return SentenceRole("objective", "position", None)
    if sentence.position == "last":
        return SentenceRole("conclusions", "position", None)
    return SentenceRole("body", "position", None)
