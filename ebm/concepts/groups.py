"""Semantic groups: the coarse concept classes the extractors ask for (never tree letters).

Codes are those of the UMLS Semantic Groups (McCray, Burgun & Bodenreider 2001) plus GRUP,
split off LIVB for persons and population groups (the paper's "GROUP"). MeSH descriptors get
groups from their tree numbers (``rules/semantic_groups.tsv``); UMLS concepts from their
semantic types (``rules/umls_semantic_groups.tsv``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from ebm.errors import InputError
from ebm.rules.table import Table, choice, load, text

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


GROUP_COLUMNS = (
    text("key", help="a tree-number prefix, descriptor UI or semantic type"),
    choice("group", tuple(GROUP_NAMES), help="a semantic group code"),
    text("note", required=False, help="a note"),
)


def _group_rows(table: Table, key_ok: re.Pattern[str], key_what: str) -> dict[str, str]:
    """key -> group of rows ``KEY<TAB>GROUP[<TAB>note]``; errors name the file and line."""
    out: dict[str, str] = {}
    seen: dict[str, int] = {}
    for row in table:
        key = row["key"]
        if not key_ok.match(key):
            raise InputError(f"{table.where(row)}: {key!r} is not {key_what}")
        if key in seen:
            raise InputError(f"{table.where(row)}: {key!r} already given on line {seen[key]}")
        seen[key] = row.line
        out[key] = row["group"]
    return out


class MeshGroups:
    """Tree-number prefix -> group, longest prefix wins."""

    def __init__(self, by_key: dict[str, str]) -> None:
        self.by_key = by_key

    @classmethod
    def from_table(cls, table: Table) -> MeshGroups:
        return cls(
            _group_rows(
                table,
                re.compile(f"{_TREE_PREFIX.pattern}|{_DESCRIPTOR_UI.pattern}"),
                "a MeSH tree-number prefix (e.g. C, F03, F04.754) or descriptor UI",
            )
        )

    @classmethod
    def load(cls, path: Path) -> MeshGroups:
        return cls.from_table(load(path, GROUP_COLUMNS))

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

    def __init__(self, by_tui: dict[str, str]) -> None:
        self.by_tui = by_tui

    @classmethod
    def from_table(cls, table: Table) -> UmlsGroups:
        return cls(_group_rows(table, _TUI, "a UMLS semantic type id (T + 3 digits)"))

    @classmethod
    def load(cls, path: Path) -> UmlsGroups:
        return cls.from_table(load(path, GROUP_COLUMNS))

    def group(self, tui: str) -> str | None:
        return self.by_tui.get(tui)
