"""How closely two MeSH concepts are related through the MeSH trees (beyond the paper).

The paper matches a frame's concept only to the *same* concept ID. A physician asking about
"depression" is also served by a trial of "Depressive Disorder, Major" (a narrower concept),
and partly by one about "Mood Disorders" (the broader one) or "Cyclothymic Disorder" (a sibling).
``relation(frame_ui, other_ui)`` gives the closest link between any tree numbers of the two
descriptors and its strength:

- ``same``: the same descriptor, 1.0;
- ``narrower``: the other concept is below the frame's (any depth), 0.8 (a kind of what was
  asked about is still about it);
- ``broader``: the other concept is above the frame's, 0.5 for the parent, 0.25 for the
  grandparent (0.5 / levels up); never a category root (a tree number without a dot, such as
  C23 "Pathological Conditions, Signs and Symptoms"), which says nothing about the topic;
- ``sibling``: both share a parent that is not a category root, 0.3.

Concept IDs that are not MeSH descriptors (UMLS CUIs) relate only as ``same``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ebm.mesh import MeshVocabulary

SAME = 1.0
NARROWER = 0.8
BROADER = 0.5  # divided by the number of levels up
SIBLING = 0.3


@dataclass(frozen=True)
class Relation:
    kind: str  # same, narrower, broader, sibling
    strength: float
    via: str = ""  # the tree numbers that link them ("C10.597 > C10.597.350")

    def describe(self) -> str:
        return f"{self.kind} ({self.via})" if self.via else self.kind


_SAME = Relation("same", SAME)


def _parent(tree: str) -> str | None:
    return tree.rsplit(".", 1)[0] if "." in tree else None


def tree_relation(frame_trees: tuple[str, ...], other_trees: tuple[str, ...]) -> Relation | None:
    """The strongest link between two sets of tree numbers (None: unrelated)."""
    best: Relation | None = None
    for a in frame_trees:
        for b in other_trees:
            found: Relation | None = None
            if b.startswith(a + "."):
                found = Relation("narrower", NARROWER, f"{a} > {b}")
            elif a.startswith(b + ".") and "." in b:
                up = a.count(".") - b.count(".")
                found = Relation("broader", BROADER / up, f"{a} < {b}")
            else:
                pa, pb = _parent(a), _parent(b)
                if pa is not None and pa == pb and "." in pa:
                    found = Relation("sibling", SIBLING, f"{a} ~ {b}")
            if found is not None and (best is None or found.strength > best.strength):
                best = found
    return best


class Hierarchy:
    """``relation`` over one vocabulary, memoised (the same pairs recur across a pool)."""

    def __init__(self, vocabulary: MeshVocabulary) -> None:
        self.vocabulary = vocabulary
        self._relation = lru_cache(maxsize=200_000)(self._compute)

    def _trees(self, ui: str) -> tuple[str, ...]:
        d = self.vocabulary.get(ui)
        return d.tree_numbers if d is not None else ()

    def _compute(self, frame_ui: str, other_ui: str) -> Relation | None:
        if frame_ui == other_ui:
            return _SAME
        return tree_relation(self._trees(frame_ui), self._trees(other_ui))

    def relation(self, frame_ui: str, other_ui: str) -> Relation | None:
        """How ``other_ui`` (found in a citation) relates to ``frame_ui`` (asked about)."""
        return self._relation(frame_ui, other_ui)

    def best(self, frame_ids: frozenset[str], other_ids: tuple[str, ...] | frozenset[str]) -> Relation | None:
        """The strongest relation between any of the frame's IDs for one concept (its CUI and
        alternatives) and any of ``other_ids``."""
        best: Relation | None = None
        for f in frame_ids:
            for o in other_ids:
                r = self.relation(f, o)
                if r is not None and (best is None or r.strength > best.strength):
                    best = r
                    if r.strength >= SAME:
                        return r
        return best


_hierarchies: dict[int, Hierarchy] = {}


def hierarchy(vocabulary: MeshVocabulary) -> Hierarchy:
    """One memoised ``Hierarchy`` per vocabulary object."""
    h = _hierarchies.get(id(vocabulary))
    if h is None or h.vocabulary is not vocabulary:
        h = _hierarchies[id(vocabulary)] = Hierarchy(vocabulary)
    return h
