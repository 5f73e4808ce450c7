"""Derive the compact MeSH 2024 files shipped in ``ebm/data/mesh`` from ../shared/data/mesh.

Writes (all gzip TSV, no header):
- descriptors.tsv.gz: DescriptorUI, DescriptorName, tree numbers joined by '|'
- terms.tsv.gz: DescriptorUI, TermName, flags ('R' record-preferred, 'C' concept-preferred,
  'P' permuted; any combination, '-' for none)
- pharm_actions.tsv.gz: DescriptorUI, PharmActionUI

Usage: python scripts/build_mesh_data.py [--shared ../shared] [--out ebm/data/mesh]
"""

from __future__ import annotations

import argparse
import csv
import gzip
from collections import defaultdict
from pathlib import Path


def read_tsv(path: Path) -> list[dict[str, str]]:
    with gzip.open(path, "rt", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def write_rows(path: Path, rows: list[tuple[str, ...]]) -> None:
    # mtime=0 keeps the output byte-identical across runs.
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=9) as gz:
        for row in rows:
            gz.write(("\t".join(row) + "\n").encode("utf-8"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "ebm" / "data" / "mesh")
    args = ap.parse_args()
    src = args.shared / "data" / "mesh"
    args.out.mkdir(parents=True, exist_ok=True)

    terms = read_tsv(src / "mesh2024_terms.tsv.gz")
    names: dict[str, str] = {}
    ui_by_name: dict[str, str] = {}
    term_rows: list[tuple[str, ...]] = []
    seen: set[tuple[str, str]] = set()
    for t in terms:
        ui = t["DescriptorUI"]
        names[ui] = t["DescriptorName"]
        ui_by_name[t["DescriptorName"]] = ui
        flags = (
            ("R" if t["RecordPreferredTermYN"] == "Y" else "")
            + ("C" if t["ConceptPreferredTermYN"] == "Y" else "")
            + ("P" if t["IsPermutedTermYN"] == "Y" else "")
        ) or "-"
        key = (ui, t["TermName"])
        if key in seen:
            continue
        seen.add(key)
        term_rows.append((ui, t["TermName"], flags))

    trees: dict[str, set[str]] = defaultdict(set)
    for r in read_tsv(src / "mesh2024_trees.tsv.gz"):
        trees[r["DescriptorUI"]].add(r["tree_location"])
        # Top-level descriptors have no row of their own: recover them from their children.
        for name_col, tree_col in (("mesh1", "tree1"), ("mesh2", "tree2")):
            name, tree = r.get(name_col), r.get(tree_col)
            if name and tree and name in ui_by_name:
                trees[ui_by_name[name]].add(tree)

    desc_rows = [(ui, names[ui], "|".join(sorted(trees.get(ui, ())))) for ui in sorted(names)]
    write_rows(args.out / "descriptors.tsv.gz", desc_rows)
    write_rows(args.out / "terms.tsv.gz", term_rows)

    pa = read_tsv(src / "mesh2024_pharm_actions.tsv.gz")
    write_rows(
        args.out / "pharm_actions.tsv.gz",
        sorted({(r["DescriptorUI"], r["PharmActionUI"]) for r in pa}),
    )
    print(
        f"{len(desc_rows)} descriptors, {len(term_rows)} terms, {len(pa)} actions -> {args.out}"
    )


if __name__ == "__main__":
    main()
