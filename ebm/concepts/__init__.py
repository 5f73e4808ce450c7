"""Concept recognition: MeSH (or UMLS) concepts in text, with semantic groups, offline.

For a processed citation (``ebm.text.pipeline``)::

    from ebm.concepts import DISORDERS, annotate, concepts_in_group
    concepts = annotate(doc, resources.matcher, resources.negation)   # list[Concept], text order
    problems = concepts_in_group(concepts, DISORDERS)   # not negated by default

For a bare string (a question, a frame element)::

    resources.matcher.match("acute otitis media")  # list[ConceptMatch] (ebm.resources.Resources)

Both need the index built by ``ebm setup`` (``ebm.concepts.index``); see docs/concepts.md.
"""

from ebm.concepts.annotate import Concept, annotate, concepts_in_group
from ebm.concepts.groups import (
    ACTIVITIES,
    ANATOMY,
    CHEMICALS,
    CONCEPTS,
    DEVICES,
    DISORDERS,
    GENES,
    GEOGRAPHY,
    GROUP_NAMES,
    LIVING_BEINGS,
    OBJECTS,
    OCCUPATIONS,
    ORGANIZATIONS,
    PERSONS,
    PHENOMENA,
    PHYSIOLOGY,
    PROCEDURES,
)
from ebm.concepts.matcher import ConceptMatch, ConceptMatcher

__all__ = [
    "ACTIVITIES",
    "ANATOMY",
    "CHEMICALS",
    "CONCEPTS",
    "DEVICES",
    "DISORDERS",
    "GENES",
    "GEOGRAPHY",
    "GROUP_NAMES",
    "LIVING_BEINGS",
    "OBJECTS",
    "OCCUPATIONS",
    "ORGANIZATIONS",
    "PERSONS",
    "PHENOMENA",
    "PHYSIOLOGY",
    "PROCEDURES",
    "Concept",
    "ConceptMatch",
    "ConceptMatcher",
    "annotate",
    "concepts_in_group",
]
