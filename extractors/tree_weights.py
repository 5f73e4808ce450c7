"""Weights of MeSH descriptors by tree prefix: the kind tables of the extractors.

A table (``rules/intervention_kinds.tsv``, ``rules/problem_kinds.tsv``) has rows ``TERM<TAB>WEIGHT``:

- a tree number (``E02.319``, or a category letter ``D``): that node and everything below it;
- a descriptor UI (``D004358``): that descriptor only, overriding its trees;
- ``PA``: any descriptor with a pharmacological action (a drug) weighs at least this;
- ``ROOT``: a category root (a descriptor whose trees are all top-level, such as "Therapeutics"
  or "Neoplasms"): too generic to name anything; overrides its trees.

A descriptor takes, for each of its tree numbers, the weight of the longest matching tree row
(the table's ``default`` when no row matches that tree), and the largest over its trees. A table
loaded with ``categories`` looks only at the trees under those prefixes (the problem table: C and
F03, so that Pain's trees among physiological phenomena do not count).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ebm.errors import InputError
from ebm.mesh import MeshVocabulary
from ebm.rules.table import Table, load, number, text

COLUMNS = (
    text("term", help="a MeSH tree number, a descriptor UI, PA or ROOT"),
    number("weight", minimum=0, maximum=2, help="0 to 2"),
)
_TREE = re.compile(r"^[A-Z](\d{2}(\.\d{3})*)?$")
_UI = re.compile(r"^D\d{6}(\d{3})?$")

Weight = tuple[float, str]  # (weight, why)


@dataclass
class TreeWeights:
    trees: dict[str, Weight]  # tree prefix -> weight
    descriptors: dict[str, Weight]  # descriptor UI -> weight
    drug: Weight | None = None  # the PA row
    root: Weight | None = None  # the ROOT row
    default: Weight = (0.0, "no row")
    categories: tuple[str, ...] = ()  # tree prefixes that count (empty: all)
    _memo: dict[str, Weight] = field(default_factory=dict, repr=False)

    def weight(self, ui: str, vocabulary: MeshVocabulary) -> Weight | None:
        """(weight, why) of a MeSH descriptor; None when ``ui`` is no MeSH descriptor (a UMLS CUI)."""
        if ui in self._memo:
            return self._memo[ui]
        d = vocabulary.get(ui)
        if d is None:
            return None
        found = self.default
        if ui in self.descriptors:
            found = self.descriptors[ui]
        elif self.root is not None and d.tree_numbers and all("." not in t for t in d.tree_numbers):
            found = self.root
        else:
            best: Weight | None = None
            for t in d.tree_numbers:
                if self.categories and not t.startswith(self.categories):
                    continue
                parts = t.split(".")
                here = self.default
                for k in range(len(parts), -1, -1):
                    prefix = ".".join(parts[:k]) if k else t[0]
                    if prefix in self.trees:
                        here = self.trees[prefix]
                        break
                if best is None or here[0] > best[0]:
                    best = here
            if self.drug and ui in vocabulary.pharm_actions and (best is None or self.drug[0] > best[0]):
                best = self.drug
            found = best or self.default
        self._memo[ui] = found
        return found


def tree_weights_from_table(
    table: Table, default: float = 0.0, categories: tuple[str, ...] = ()
) -> TreeWeights:
    """The weights of a table; ``InputError`` naming file and line for a malformed row (MeSH
    names are checked by ``tree_weight_problems``)."""
    out = TreeWeights({}, {}, default=(default, "no row"), categories=categories)
    for row in table:
        term, w = row["term"], row["weight"]
        why = (row.comment or "").strip() or term
        if term == "PA":
            out.drug = (w, why)
        elif term == "ROOT":
            out.root = (w, why)
        elif _UI.match(term):
            out.descriptors[term] = (w, why)
        elif _TREE.match(term):
            out.trees[term] = (w, why)
        else:
            raise InputError(
                f"{table.where(row)}: {term!r} is neither a tree number (E02.319), a descriptor UI "
                "(D004358), PA nor ROOT"
            )
    return out


def tree_weight_problems(table: Table, vocabulary: MeshVocabulary) -> list[str]:
    """``file:line: message`` for each row naming a descriptor or tree number MeSH lacks."""
    out = []
    for row in table:
        term = row["term"]
        if _UI.match(term) and term not in vocabulary:
            out.append(f"{table.where(row)}: {term} is not a MeSH 2024 descriptor UI")
        elif _TREE.match(term) and len(term) > 1 and not vocabulary.tree_descendants(term):
            out.append(f"{table.where(row)}: no MeSH 2024 descriptor has tree number {term}")
    return out


def load_tree_weights(
    path: Path,
    vocabulary: MeshVocabulary,
    default: float = 0.0,
    categories: tuple[str, ...] = (),
) -> TreeWeights:
    """Read and check a table; ``InputError`` naming file and line for a bad row."""
    table = load(path, COLUMNS)
    problems = tree_weight_problems(table, vocabulary)
    if problems:
        raise InputError(problems[0])
    return tree_weights_from_table(table, default, categories)
