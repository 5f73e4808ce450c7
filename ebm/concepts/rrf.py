"""Write the shipped MeSH 2024 vocabulary as a (tiny) UMLS release: MRCONSO.RRF and MRSTY.RRF.

Concept IDs are MeSH descriptor UIs. Every entry term is an MRCONSO row (SAB ``MSH``) with
the term type MeSH uses in the UMLS: ``MH`` for the descriptor's preferred term, ``PEP`` for
a concept's preferred term, ``ET`` for other entry terms and ``PM`` for permuted terms.
MeSH has no UMLS semantic types, so MRSTY carries the descriptor's semantic groups (from
tree numbers, ``rules/semantic_groups.tsv``) in the TUI column and the group's name in STY;
``ebm.concepts.umls`` reads a group code there as the group itself.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ebm.concepts.groups import GROUP_NAMES, MeshGroups
from ebm.mesh import MeshVocabulary

# MRCONSO.RRF columns, in order (UMLS Reference Manual, 3.3.4).
MRCONSO_COLUMNS = (
    "CUI", "LAT", "TS", "LUI", "STT", "SUI", "ISPREF", "AUI", "SAUI", "SCUI",
    "SDUI", "SAB", "TTY", "CODE", "STR", "SRL", "SUPPRESS", "CVF",
)  # fmt: skip
MRSTY_COLUMNS = ("CUI", "TUI", "STN", "STY", "ATUI", "CVF")


def _row(fields: dict[str, str], columns: tuple[str, ...]) -> str:
    # RRF rows end with a trailing '|'.
    return "|".join(fields.get(c, "") for c in columns) + "|\n"


def write_mesh_rrf(
    out_dir: Path,
    vocabulary: MeshVocabulary,
    groups: MeshGroups,
    progress: Callable[[int], None] | None = None,
) -> tuple[int, int]:
    """Write MRCONSO.RRF and MRSTY.RRF into ``out_dir``; returns (strings, concepts);
    ``groups``: rules/semantic_groups.tsv."""
    vocab = vocabulary
    out_dir.mkdir(parents=True, exist_ok=True)
    n_strings = 0
    with open(out_dir / "MRCONSO.RRF", "w", encoding="utf-8") as f:
        for i, term in enumerate(vocab.terms, start=1):
            if "|" in term.text or "\n" in term.text:
                continue  # cannot be written as an RRF field (none in MeSH 2024)
            if term.record_preferred:
                tty, ts, stt, ispref = "MH", "P", "PF", "Y"
            elif term.permuted:
                tty, ts, stt, ispref = "PM", "S", "VO", "N"
            elif term.concept_preferred:
                tty, ts, stt, ispref = "PEP", "S", "PF", "N"
            else:
                tty, ts, stt, ispref = "ET", "S", "PF", "N"
            ui = term.descriptor_ui
            f.write(
                _row(
                    {
                        "CUI": ui, "LAT": "ENG", "TS": ts, "STT": stt, "ISPREF": ispref,
                        "AUI": f"A{i:08d}", "SDUI": ui, "SAB": "MSH", "TTY": tty, "CODE": ui,
                        "STR": term.text, "SRL": "0", "SUPPRESS": "N", "CVF": "",
                    },
                    MRCONSO_COLUMNS,
                )
            )  # fmt: skip
            n_strings += 1
            if progress and i % 10_000 == 0:
                progress(10_000)
    n_concepts = 0
    with open(out_dir / "MRSTY.RRF", "w", encoding="utf-8") as f:
        for d in vocab.descriptors.values():
            n_concepts += 1
            for g in groups.groups(d.ui, d.tree_numbers):
                f.write(_row({"CUI": d.ui, "TUI": g, "STY": GROUP_NAMES[g]}, MRSTY_COLUMNS))
    return n_strings, n_concepts
