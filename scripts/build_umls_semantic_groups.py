"""Derive ``rules/umls_semantic_groups.tsv`` (UMLS TUI -> semantic group) from SemGroups.txt.

The UMLS Semantic Groups table (``GROUP|Name|TUI|Type``) is copied as ``TUI<TAB>GROUP<TAB>type``,
with one change documented in the output: the semantic type Group (T096) and its children
go to GRUP (persons / population groups) instead of LIVB, as in ``rules/semantic_groups.tsv``.

Usage: python scripts/build_umls_semantic_groups.py [--shared ../shared]
       [--out rules/umls_semantic_groups.tsv]
"""

from __future__ import annotations

import argparse
from pathlib import Path

# Group (T096) and its children in the UMLS Semantic Network.
PERSON_GROUP_TUIS = {"T096", "T097", "T098", "T099", "T100", "T101"}

HEADER = """\
# UMLS semantic type (TUI) -> semantic group, for `ebm setup --umls DIR`.
# Derived by scripts/build_umls_semantic_groups.py from the UMLS Semantic Groups table
# (SemGroups.txt, McCray et al. 2001). Format: TUI <TAB> GROUP <TAB> semantic type name.
# One change from the original: Group (T096) and its children (T097-T101) are GRUP
# (persons / population groups) instead of LIVB, matching rules/semantic_groups.tsv.
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = Path(__file__).resolve().parents[1]
    ap.add_argument("--shared", type=Path, default=root.parent / "shared")
    ap.add_argument("--out", type=Path, default=root / "rules" / "umls_semantic_groups.tsv")
    args = ap.parse_args()
    rows = []
    for line in (args.shared / "data" / "mesh" / "SemGroups.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        group, _name, tui, type_name = line.split("|")
        rows.append((tui, "GRUP" if tui in PERSON_GROUP_TUIS else group, type_name))
    rows.sort()
    args.out.write_text(HEADER + "".join("\t".join(r) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} semantic types -> {args.out}")


if __name__ == "__main__":
    main()
