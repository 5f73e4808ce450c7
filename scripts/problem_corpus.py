"""The primary-problem ground truth: bundled citations with real MeSH major-topic disorders.

Shared by the problem evaluation (``eval_extractors.py``) and the problem ranker's training
(``train_problem_ranker.py``), so both read the same citations and the same gold.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ebm.citation import Citation  # noqa: E402
from ebm.evaluation.trec import read_run  # noqa: E402
from ebm.medline import iter_bundled  # noqa: E402
from ebm.mesh import mesh  # noqa: E402
from extractors.problem import is_disorder  # noqa: E402


def major_disorders(c: Citation) -> set[str]:
    """The citation's major-topic disorders (any of them counts as the right primary problem).

    Heading names were mapped to MeSH 2024 descriptors when the corpus was built (a name that
    is now an entry term of another descriptor, e.g. "Metabolic Syndrome X", maps to it); a
    heading left without a UI is looked up again here with ``MeshVocabulary.resolve``.
    """
    if not c.mesh_headings or c.extra.get("mesh_major_unknown"):
        return set()
    voc = mesh()
    out: set[str] = set()
    for h in c.mesh_headings:
        if not h.is_major:
            continue
        d = voc.get(h.descriptor_ui) if h.descriptor_ui else voc.resolve(h.descriptor_name)
        if d is not None and is_disorder(d.ui, voc):
            out.add(d.ui)
    return out


def problem_citations() -> list[tuple[Citation, set[str]]]:
    """Bundled citations with a title and real major-topic flags (PubMedQA's are unknown)."""
    out = []
    for c in iter_bundled():
        if "pubmedqa" in (c.source or "") and c.extra.get("mesh_major_unknown", True):
            continue
        gold = major_disorders(c)
        if gold and c.title:
            out.append((c, gold))
    return out


def pool_pmids(path: Path) -> set[str]:
    """PMIDs of a TREC run file (the bench pools); empty when it is missing."""
    if not path.is_file():
        return set()
    return read_run(path).docnos
