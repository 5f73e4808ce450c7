"""The MeSH 2024 descriptor vocabulary shipped in ``ebm/data/mesh``.

Built by ``scripts/build_mesh_data.py``. Gives descriptors by UI and name, tree numbers,
tree explosion ("X and all its children"), entry terms and pharmacological actions.
"""

from __future__ import annotations

import difflib
import gzip
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

from ebm.errors import DataError
from ebm.paths import package_data


@dataclass(frozen=True)
class Descriptor:
    ui: str
    name: str
    tree_numbers: tuple[str, ...]


@dataclass(frozen=True)
class Term:
    descriptor_ui: str
    text: str
    record_preferred: bool
    concept_preferred: bool
    permuted: bool


def _rows(path: Path) -> Iterator[list[str]]:
    if not path.exists():
        raise DataError(f"MeSH data file missing: {path} (run scripts/build_mesh_data.py)")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            yield line.rstrip("\n").split("\t")


class MeshVocabulary:
    """Descriptor lookups; terms and pharmacological actions load on first use."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or package_data("mesh")
        self.descriptors: dict[str, Descriptor] = {}
        self._by_name: dict[str, str] = {}
        self._by_tree: dict[str, str] = {}
        for ui, name, trees in _rows(self.directory / "descriptors.tsv.gz"):
            d = Descriptor(ui, name, tuple(t for t in trees.split("|") if t))
            self.descriptors[ui] = d
            self._by_name[name.casefold()] = ui
            for t in d.tree_numbers:
                self._by_tree[t] = ui
        self._sorted_trees = sorted(self._by_tree)

    def __contains__(self, ui: str) -> bool:
        return ui in self.descriptors

    def __len__(self) -> int:
        return len(self.descriptors)

    def get(self, ui: str) -> Descriptor | None:
        return self.descriptors.get(ui)

    def by_name(self, name: str) -> Descriptor | None:
        """The descriptor whose preferred name is ``name`` (case-insensitive)."""
        ui = self._by_name.get(name.strip().casefold())
        return self.descriptors[ui] if ui else None

    def by_tree(self, tree_number: str) -> Descriptor | None:
        ui = self._by_tree.get(tree_number)
        return self.descriptors[ui] if ui else None

    def resolve(self, name_or_ui: str) -> Descriptor | None:
        """A descriptor from its UI (``D003937``), preferred name or any entry term."""
        key = name_or_ui.strip()
        if key in self.descriptors:
            return self.descriptors[key]
        d = self.by_name(key)
        if d:
            return d
        uis = self.term_index.get(key.casefold())
        return self.descriptors[uis[0]] if uis else None

    def tree_descendants(self, prefix: str) -> set[str]:
        """UIs of descriptors at tree number ``prefix`` or below it."""
        import bisect

        out: set[str] = set()
        i = bisect.bisect_left(self._sorted_trees, prefix)
        while i < len(self._sorted_trees):
            t = self._sorted_trees[i]
            if t != prefix and not t.startswith(prefix + "."):
                break
            out.add(self._by_tree[t])
            i += 1
        return out

    def explode(self, ui: str) -> set[str]:
        """The descriptor and all its descendants in every tree it appears in."""
        d = self.descriptors.get(ui)
        if d is None:
            return set()
        out = {ui}
        for t in d.tree_numbers:
            out |= self.tree_descendants(t)
        return out

    def suggest(self, name: str, n: int = 3) -> list[str]:
        """Close preferred names, for 'did you mean' messages."""
        names = [d.name for d in self.descriptors.values()]
        return difflib.get_close_matches(name, names, n=n, cutoff=0.75)

    @cached_property
    def terms(self) -> list[Term]:
        return [
            Term(ui, text, "R" in flags, "C" in flags, "P" in flags)
            for ui, text, flags in _rows(self.directory / "terms.tsv.gz")
        ]

    @cached_property
    def term_index(self) -> dict[str, list[str]]:
        """Case-folded entry term -> descriptor UIs."""
        index: dict[str, list[str]] = {}
        for t in self.terms:
            uis = index.setdefault(t.text.casefold(), [])
            if t.descriptor_ui not in uis:
                uis.append(t.descriptor_ui)
        return index

    @cached_property
    def pharm_actions(self) -> dict[str, tuple[str, ...]]:
        acts: dict[str, list[str]] = {}
        for ui, action in _rows(self.directory / "pharm_actions.tsv.gz"):
            acts.setdefault(ui, []).append(action)
        return {k: tuple(v) for k, v in acts.items()}


@cache
def mesh() -> MeshVocabulary:
    """The shipped vocabulary, loaded once per process."""
    return MeshVocabulary()
