"""Semantic groups: the coarse concept classes the extractors ask for (never tree letters).

Codes are those of the UMLS Semantic Groups (McCray, Burgun & Bodenreider 2001) plus GRUP,
split off LIVB for persons and population groups (the paper's "GROUP"). MeSH descriptors get
groups from their tree numbers (``rules/semantic_groups.tsv``); UMLS concepts from their
semantic types (``rules/umls_semantic_groups.tsv``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ebm.errors import DataError
from ebm.paths import rules_dir

DISORDERS = "DISO"
CHEMICALS = "CHEM"
PROCEDURES = "PROC"
ANATOMY = "ANAT"
LIVING_BEINGS = "LIVB"
PERSONS = "GRUP"
PHYSIOLOGY = "PHYS"
PHENOMENA = "PHEN"
GENES = "GENE"
DEVICES = "DEVI"
ACTIVITIES = "ACTI"
CONCEPTS = "CONC"
OCCUPATIONS = "OCCU"
ORGANIZATIONS = "ORGA"
GEOGRAPHY = "GEOG"
OBJECTS = "OBJC"

GROUP_NAMES: dict[str, str] = {
    DISORDERS: "Disorders",
    CHEMICALS: "Chemicals & Drugs",
    PROCEDURES: "Procedures",
    ANATOMY: "Anatomy",
    LIVING_BEINGS: "Living Beings",
    PERSONS: "Persons & Population Groups",
    PHYSIOLOGY: "Physiology",
    PHENOMENA: "Phenomena",
    GENES: "Genes & Molecular Sequences",
    DEVICES: "Devices",
    ACTIVITIES: "Activities & Behaviors",
    CONCEPTS: "Concepts & Ideas",
    OCCUPATIONS: "Occupations",
    ORGANIZATIONS: "Organizations",
    GEOGRAPHY: "Geographic Areas",
    OBJECTS: "Objects",
}

_TREE_PREFIX = re.compile(r"^[A-Z](\d{2}(\.\d{3})*)?$")
_DESCRIPTOR_UI = re.compile(r"^D\d{6,9}$")
_TUI = re.compile(r"^T\d{3}$")


@dataclass(frozen=True)
class _Row:
    key: str
    group: str
    line: int


def _read_table(path: Path, key_ok: re.Pattern[str], key_what: str) -> list[_Row]:
    """Rows ``KEY<TAB>GROUP[<TAB>note]``; errors name the file and line."""
    if not path.exists():
        raise DataError(f"semantic group table missing: {path}")
    rows: list[_Row] = []
    seen: dict[str, int] = {}
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split("\t")]
        if len(fields) < 2:
            raise DataError(f"{path}:{n}: expected KEY<TAB>GROUP, got {raw!r}")
        key, group = fields[0], fields[1]
        if not key_ok.match(key):
            raise DataError(f"{path}:{n}: {key!r} is not {key_what}")
        if group not in GROUP_NAMES:
            raise DataError(f"{path}:{n}: unknown semantic group {group!r} (known: {', '.join(GROUP_NAMES)})")
        if key in seen:
            raise DataError(f"{path}:{n}: {key!r} already given on line {seen[key]}")
        seen[key] = n
        rows.append(_Row(key, group, n))
    if not rows:
        raise DataError(f"{path}: no rows")
    return rows


class MeshGroups:
    """Tree-number prefix -> group, longest prefix wins."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or rules_dir() / "semantic_groups.tsv"
        rows = _read_table(
            self.path,
            re.compile(f"{_TREE_PREFIX.pattern}|{_DESCRIPTOR_UI.pattern}"),
            "a MeSH tree-number prefix (e.g. C, F03, F04.754) or descriptor UI",
        )
        self.by_key = {r.key: r.group for r in rows}

    def group_of_tree(self, tree_number: str) -> str | None:
        t = tree_number
        while True:
            if t in self.by_key:
                return self.by_key[t]
            if "." in t:
                t = t.rsplit(".", 1)[0]
            elif len(t) > 1:
                t = t[0]
            else:
                return None

    def groups(self, ui: str, tree_numbers: Iterable[str]) -> tuple[str, ...]:
        """Groups of a descriptor, in the order of its tree numbers, without repeats; a row
        for the descriptor's UI overrides its tree numbers."""
        if ui in self.by_key:
            return (self.by_key[ui],)
        out: list[str] = []
        for t in tree_numbers:
            g = self.group_of_tree(t)
            if g and g not in out:
                out.append(g)
        return tuple(out)


class UmlsGroups:
    """UMLS semantic type (TUI) -> group."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or rules_dir() / "umls_semantic_groups.tsv"
        rows = _read_table(self.path, _TUI, "a UMLS semantic type id (T + 3 digits)")
        self.by_tui = {r.key: r.group for r in rows}

    def group(self, tui: str) -> str | None:
        return self.by_tui.get(tui)


@cache
def mesh_groups() -> MeshGroups:
    return MeshGroups()


@cache
def umls_groups() -> UmlsGroups:
    return UmlsGroups()
