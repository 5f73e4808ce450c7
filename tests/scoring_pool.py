"""Real citations of the bundled corpus for the scoring and ``ebm ask`` tests, chosen by their
fields (publication types, MeSH headings, words) through the local store's own query engine,
and one annotator shared by the test modules (building it loads the text pipeline, ~5 s).

The pool for the "done when" checks is about myocardial ischaemia:
- ``rct``: a randomized controlled trial indexed with Myocardial Ischemia as a main theme whose
  abstract studies tracheal extubation;
- ``case_report``: a case report indexed with Myocardial Ischemia as a main theme;
- ``genomics``: a molecular-biology paper (Molecular Sequence Data, Amino Acid Sequence) that
  mentions ischaemia, with no clinical-trial or case-report publication type;
- ``diagnostic``: a diagnostic-accuracy study (Myocardial Ischemia/diagnosis, Sensitivity and
  Specificity) whose title is about diagnosing.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path

from ebm.citation import Citation
from ebm.concepts.matcher import DictionaryMatcher
from ebm.mesh import mesh as shipped_mesh
from ebm.store import MedlineStore
from ebm.store.default import DB_FILE, build_default_store
from extractors.annotate import Annotator

CLINICAL_PT = {"Randomized Controlled Trial", "Clinical Trial", "Case Reports", "Controlled Clinical Trial"}


def test_home() -> Path:
    """The tests' EBM_HOME (set up by tests/conftest.py; module fixtures run before the
    function-scoped fixture that points EBM_HOME at it, so paths are made explicit here)."""
    return Path(os.environ["EBM_TEST_HOME"])


@functools.cache
def store() -> MedlineStore:
    """The default store of the bundled corpus in the tests' EBM_HOME (built on first use)."""
    path = test_home() / DB_FILE
    if not path.exists():
        build_default_store(path, quiet=True, vocabulary=shipped_mesh)
    return MedlineStore(path, vocabulary=shipped_mesh)


def resources():  # -> ebm.resources.Resources
    """Needs the concept index: request the ``concept_index`` fixture first."""
    from tests.conftest import shipped_resources

    return shipped_resources(test_home() / "concepts")


def matcher() -> DictionaryMatcher:
    return resources().matcher


@functools.cache
def annotator() -> Annotator:
    return Annotator(resources())


def headings(c: Citation) -> dict[str, tuple[bool, set[str]]]:
    """Descriptor name -> (main theme, qualifier names)."""
    return {h.descriptor_name: (h.is_major, {q.name for q in h.qualifiers}) for h in c.mesh_headings or ()}


def main_theme(c: Citation, descriptor: str) -> bool:
    return headings(c).get(descriptor, (False, set()))[0]


def pub_types(c: Citation) -> set[str]:
    return {p.name for p in c.publication_types or ()}


def select(query: str, keep: Callable[[Citation], bool], what: str) -> list[Citation]:
    s = store()
    found = [c for c in s.fetch(list(s.search(query, limit=500).pmids)) if keep(c)]
    assert found, f"no {what} in the bundled corpus for {query!r}"
    return found


def text(c: Citation) -> str:
    return f"{c.title or ''} {c.abstract_text or ''}".casefold()


@functools.cache
def ischemia_pool() -> dict[str, Citation]:
    rct = select(
        '"myocardial ischemia"[majr] AND "randomized controlled trial"[pt]',
        lambda c: (
            "Randomized Controlled Trial" in pub_types(c)
            and main_theme(c, "Myocardial Ischemia")
            and "extubation" in text(c)
        ),
        "randomized trial of extubation in myocardial ischaemia",
    )
    case = select(
        '"myocardial ischemia"[majr] AND "case reports"[pt]',
        lambda c: "Case Reports" in pub_types(c) and main_theme(c, "Myocardial Ischemia"),
        "case report on myocardial ischaemia",
    )
    genomics = select(
        '"molecular sequence data"[mh] AND "amino acid sequence"[mh] AND (ischemia[tiab] OR ischemic[tiab])',
        lambda c: (
            {"Molecular Sequence Data", "Amino Acid Sequence"} <= set(headings(c))
            and c.publication_types is not None
            and not pub_types(c) & CLINICAL_PT
        ),
        "genomics paper mentioning ischaemia",
    )
    diagnostic = select(
        '"myocardial ischemia"[majr] AND "sensitivity and specificity"[mh]',
        lambda c: (
            "diagnosis" in headings(c).get("Myocardial Ischemia", (False, set()))[1]
            and "Sensitivity and Specificity" in headings(c)
            and "diagnos" in (c.title or "").casefold()
        ),
        "diagnostic-accuracy study of myocardial ischaemia",
    )
    return {"rct": rct[0], "case_report": case[0], "genomics": genomics[0], "diagnostic": diagnostic[0]}
