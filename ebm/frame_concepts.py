"""The slots of a PICO frame as concepts, found by the same concept layer as abstracts.

Each slot string goes through the concept matcher (``ebm.concepts``) that annotates the
citations, so a frame's "otitis media" and an abstract's "AOM" meet on one concept ID
(Demner-Fushman & Lin 2007, section 6.1: matching on concept IDs "abstracts away from
terminological variation"). A slot keeps the concepts of the kinds it is about when it has
any (problems: disorders; interventions and comparisons: chemicals, procedures, devices) and
all its concepts otherwise; its words are kept too, for the partial string match of the
problem score and for the term-based reranker.

Concepts that say nothing about a question are dropped from every slot (and listed in the
slot's ``dropped``): "patients" and "humans", which nearly every abstract's population
contains, and MeSH category roots such as Diagnosis or Therapeutics (every tree number at the
top level), which name a kind of thing rather than one. Measured on the development pools of
``../shared/data/bench``: with "Patients" kept, 26% of the non-relevant candidates got the
population point against 7% of the relevant ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ebm.concepts.groups import CHEMICALS, DEVICES, DISORDERS, PROCEDURES
from ebm.concepts.matcher import ConceptMatcher
from ebm.frame import Frame
from ebm.mesh import MeshVocabulary

# Semantic groups a slot is about; other concepts in its text ("leg" in "leg cramps") are
# dropped when at least one concept of these groups is found.
SLOT_GROUPS: dict[str, tuple[str, ...]] = {
    "problem": (DISORDERS,),
    "co_problems": (DISORDERS,),
    "intervention": (CHEMICALS, PROCEDURES, DEVICES),
    "comparison": (CHEMICALS, PROCEDURES, DEVICES),
    "population": (),  # any: age groups, persons, disorders ("children with asthma")
    "outcome": (),
}
# Patients, Humans: in nearly every abstract, so no evidence of a matching population.
GENERIC_CONCEPTS = frozenset({"D010361", "D006801"})


@dataclass(frozen=True)
class SlotConcept:
    """One concept found in one value of a frame slot."""

    slot: str  # problem, co_problems, population, intervention, comparison, outcome
    value: str  # the slot value (the physician's words) it was found in
    text: str  # the words that matched
    cui: str
    name: str
    groups: tuple[str, ...]
    alternatives: tuple[str, ...] = ()  # other concept IDs the same words name equally well

    @property
    def ids(self) -> frozenset[str]:
        """Every concept ID this mention may stand for."""
        return frozenset((self.cui, *self.alternatives))

    def label(self) -> str:
        return f"{self.name} ({self.cui})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "slot": self.slot,
            "value": self.value,
            "text": self.text,
            "cui": self.cui,
            "name": self.name,
            "groups": list(self.groups),
            "alternatives": list(self.alternatives),
        }


@dataclass(frozen=True)
class SlotValue:
    """One value of a slot (a list slot has several) and the concepts found in it."""

    slot: str
    value: str
    concepts: tuple[SlotConcept, ...]
    dropped: tuple[SlotConcept, ...] = ()  # found but too generic to score (see GENERIC_CONCEPTS)

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "concepts": [c.to_dict() for c in self.concepts],
            "dropped": [c.to_dict() for c in self.dropped],
        }


@dataclass(frozen=True)
class FrameConcepts:
    """A frame with each slot value mapped to concepts."""

    frame: Frame
    problem: SlotValue | None
    co_problems: tuple[SlotValue, ...]
    population: tuple[SlotValue, ...]
    intervention: tuple[SlotValue, ...]
    comparison: tuple[SlotValue, ...]
    outcome: SlotValue | None

    def slot(self, name: str) -> tuple[SlotValue, ...]:
        v = getattr(self, name)
        if v is None:
            return ()
        return v if isinstance(v, tuple) else (v,)

    def concepts(self, *slots: str) -> list[SlotConcept]:
        """The distinct concepts (by ID) of the given slots, in frame order."""
        out: list[SlotConcept] = []
        seen: set[str] = set()
        for name in slots:
            for value in self.slot(name):
                for c in value.concepts:
                    if c.cui not in seen:
                        seen.add(c.cui)
                        out.append(c)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {name: [v.to_dict() for v in self.slot(name)] for name in SLOT_GROUPS}


def generic(cui: str, vocabulary: MeshVocabulary | None) -> bool:
    """Too generic to score: Patients, Humans, or a MeSH category root."""
    if cui in GENERIC_CONCEPTS:
        return True
    d = vocabulary.get(cui) if vocabulary is not None else None
    return bool(d and d.tree_numbers and all("." not in t for t in d.tree_numbers))


def slot_concepts(
    slot: str, value: str, matcher: ConceptMatcher, vocabulary: MeshVocabulary | None = None
) -> SlotValue:
    """The concepts ``matcher`` finds in one slot value, kept as ``SLOT_GROUPS`` says."""
    found = [
        SlotConcept(slot, value, m.text, m.cui, m.name, tuple(m.groups), tuple(m.alternatives))
        for m in matcher.match(value)
        if not m.nested
    ]
    dropped = [c for c in found if generic(c.cui, vocabulary)]
    found = [c for c in found if not generic(c.cui, vocabulary)]
    wanted = SLOT_GROUPS.get(slot, ())
    if wanted:
        preferred = [c for c in found if any(g in c.groups for g in wanted)]
        found = preferred or found
    unique: list[SlotConcept] = []
    for c in found:
        if all(u.cui != c.cui for u in unique):
            unique.append(c)
    return SlotValue(slot, value, tuple(unique), tuple(dropped))


def frame_concepts(frame: Frame, matcher: ConceptMatcher, vocabulary: MeshVocabulary) -> FrameConcepts:
    """Map every slot of ``frame`` to concepts with ``matcher`` (the abstracts' matcher);
    ``vocabulary`` tells category roots."""

    def one(slot: str, value: str) -> SlotValue:
        return slot_concepts(slot, value, matcher, vocabulary)

    def many(slot: str) -> tuple[SlotValue, ...]:
        return tuple(one(slot, v) for v in getattr(frame, slot))

    return FrameConcepts(
        frame=frame,
        problem=one("problem", frame.problem) if frame.problem else None,
        co_problems=many("co_problems"),
        population=many("population"),
        intervention=many("intervention"),
        comparison=many("comparison"),
        outcome=one("outcome", frame.outcome) if frame.outcome else None,
    )
