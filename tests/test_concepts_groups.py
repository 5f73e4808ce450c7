"""Semantic groups from MeSH tree numbers and UMLS semantic types (rules/ tables)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ebm.concepts.groups import GROUP_NAMES, MeshGroups, UmlsGroups
from ebm.errors import InputError
from ebm.mesh import mesh
from ebm.resources import shipped_rules_dir


def mesh_groups() -> MeshGroups:
    return MeshGroups.load(shipped_rules_dir() / "semantic_groups.tsv")


def umls_groups() -> UmlsGroups:
    return UmlsGroups.load(shipped_rules_dir() / "umls_semantic_groups.tsv")


@pytest.mark.parametrize(
    ("name", "groups"),
    [
        ("Otitis Media", ("DISO",)),
        ("Depressive Disorder", ("DISO",)),  # F03
        ("Amoxicillin", ("CHEM",)),
        ("Tonsillectomy", ("PROC",)),
        ("Stents", ("DEVI",)),  # E07
        ("Patients", ("GRUP",)),  # M01
        ("Infant", ("GRUP",)),
        ("Humans", ("LIVB",)),  # B01: an organism, not a population group
        ("Psychotherapy", ("PROC",)),  # F04.754 beats F04
        ("Female", ("PHYS",)),  # no tree numbers: a UI row
        ("Body Weight", ("PHYS",)),  # C23 and G07, overridden by its UI row
        ("Pain", ("DISO", "PHYS")),  # C23 and F02/G11: two groups
    ],
)
def test_mesh_descriptors_get_groups_from_their_trees(name: str, groups: tuple[str, ...]) -> None:
    d = mesh().by_name(name)
    assert d is not None, name
    assert mesh_groups().groups(d.ui, d.tree_numbers) == groups


def test_every_mesh_descriptor_has_a_group() -> None:
    g = mesh_groups()
    missing = [d.name for d in mesh().descriptors.values() if not g.groups(d.ui, d.tree_numbers)]
    assert missing == []


def test_umls_table_is_the_semantic_groups_table_with_group_types_split_off(shared: Path) -> None:
    table = umls_groups()
    rows = [line.split("|") for line in (shared / "mesh" / "SemGroups.txt").read_text().splitlines() if line]
    assert len(table.by_tui) == len(rows)
    for group, _name, tui, type_name in rows:
        expected = "GRUP" if type_name.endswith("Group") else group
        assert table.group(tui) == expected, (tui, type_name)
    assert table.group("T016") == "LIVB"  # Human stays a living being


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "groups.tsv"
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# ok\nC\tDISO\nD\tCHEMICAL\n", "groups.tsv:3: column 'group': 'CHEMICAL' is not one of"),
        ("C\tDISO\nC01.x\tDISO\n", "groups.tsv:2: 'C01.x' is not a MeSH tree-number prefix"),
        ("C\tDISO\n\nC\tCHEM\n", "groups.tsv:3: 'C' already given on line 1"),
        ("C DISO\n", "groups.tsv:1: column 'group' is missing"),
    ],
)
def test_mesh_table_errors_name_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        MeshGroups.load(_write(tmp_path, text))


def test_umls_table_rejects_a_bad_tui(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"groups.tsv:2: 'X047' is not a UMLS semantic type id"):
        UmlsGroups.load(_write(tmp_path, "T047\tDISO\nX047\tDISO\n"))


def test_edited_table_changes_groups(tmp_path: Path) -> None:
    g = MeshGroups.load(_write(tmp_path, "C\tDISO\nC04\tPHEN\n"))
    neoplasms = mesh().by_name("Breast Neoplasms")
    assert neoplasms is not None
    assert "PHEN" in g.groups(neoplasms.ui, neoplasms.tree_numbers)
    assert set(GROUP_NAMES) >= {"DISO", "CHEM", "PROC", "GRUP", "LIVB"}
