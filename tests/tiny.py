"""The helpers of ``tests.shipped`` over the tiny MeSH subset (``tests/fixtures/tiny_mesh``, made
by scripts/build_tiny_mesh.py) and a concept index built from it in a second: unit tests of
extractors and scoring run on these, without the 15-second full index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.resource_helpers import ResourceHelpers


def _resources() -> Any:  # ebm.resources.Resources
    from tests.conftest import tiny

    return tiny()


def _rules(directory: Path) -> Any:
    from ebm.resources import Resources

    r = _resources()
    return Resources.load(directory, vocabulary=r.vocabulary, index_dir=r.index_dir).rules


ResourceHelpers(_resources, _rules).export(globals())  # resources, load_rules, annotate, ... (EXPORTS)


# --- the scoring tests' citations, by PMID ------------------------------------------------------

# The citations tests/scoring_pool.py selects through the store's query engine (the integration
# tests still do: tests/test_scoring_integration.py), fixed here so that unit tests need no store;
# ``pool_citations`` checks each still has the property it was chosen for.
ISCHEMIA_PMIDS = {
    "rct": "9505772",
    "case_report": "15228064",
    "genomics": "25361765",
    "diagnostic": "9070546",
}
SCORING_PMIDS = {
    "nejm_rct": "29768149",  # "randomized controlled trial"[pt] in the N Engl J Med; Asthma/drug therapy
    "animal": "26044300",  # animals[mh] NOT humans[mh], with publication types
    "prevention": "11056317",  # prevention[ti], indexed with /prevention & control
    "pubmedqa": "29112560",  # a PubMedQA record: main-theme flags unknown
    "cough_title": "1721246",  # cough[ti], with an abstract
    "cough_elsewhere": "21434379",  # cough[tiab] NOT cough[ti], Gastroesophageal Reflux[mh]
    "fever": "1621668",  # antipyretic, ibuprofen and acetaminophen in the title
}


def _checks() -> dict[str, Any]:
    from tests.scoring_pool import CLINICAL_PT, headings, main_theme, pub_types, text

    def major(d: str, q: str | None = None) -> Any:
        return lambda c: main_theme(c, d) and (q is None or q in headings(c).get(d, (False, set()))[1])

    return {
        "rct": lambda c: (
            "Randomized Controlled Trial" in pub_types(c)
            and major("Myocardial Ischemia")(c)
            and "extubation" in text(c)
        ),
        "case_report": lambda c: "Case Reports" in pub_types(c) and major("Myocardial Ischemia")(c),
        "genomics": lambda c: (
            {"Molecular Sequence Data", "Amino Acid Sequence"} <= set(headings(c))
            and c.publication_types is not None
            and not pub_types(c) & CLINICAL_PT
        ),
        "diagnostic": lambda c: (
            "diagnosis" in headings(c).get("Myocardial Ischemia", (False, set()))[1]
            and "Sensitivity and Specificity" in headings(c)
            and "diagnos" in (c.title or "").casefold()
        ),
        "nejm_rct": lambda c: (
            "Randomized Controlled Trial" in pub_types(c)
            and c.journal is not None
            and c.journal.medline_ta == "N Engl J Med"
            and major("Asthma", "drug therapy")(c)
        ),
        "animal": lambda c: (
            "Animals" in headings(c) and "Humans" not in headings(c) and c.publication_types is not None
        ),
        "prevention": lambda c: (
            "prevention" in (c.title or "").casefold()
            and any("prevention & control" in q for _, q in headings(c).values())
        ),
        "pubmedqa": lambda c: "Humans" in headings(c) and bool(c.extra.get("mesh_major_unknown")),
        "cough_title": lambda c: "cough" in (c.title or "").casefold() and bool(c.abstract),
        "cough_elsewhere": lambda c: (
            "cough" not in (c.title or "").casefold()
            and "cough" in text(c)
            and "Gastroesophageal Reflux" in headings(c)
        ),
        "fever": lambda c: all(
            w in (c.title or "").casefold() for w in ("antipyretic", "ibuprofen", "acetaminophen")
        ),
    }


_POOL: dict[str, Any] = {}


def pool_citations() -> dict[str, Any]:  # name -> ebm.citation.Citation
    """Every citation of ``ISCHEMIA_PMIDS`` and ``SCORING_PMIDS`` by name, each checked for the
    property it stands for (read from the bundled corpus once)."""
    if not _POOL:
        from tests.conftest import bundled_citations

        names = {**ISCHEMIA_PMIDS, **SCORING_PMIDS}
        found = bundled_citations(set(names.values()))
        checks = _checks()
        for name, pmid in names.items():
            c = found[pmid]
            assert checks[name](c), f"bundled citation {pmid} is no longer the {name!r} example"
            _POOL[name] = c
    return _POOL


def ischemia_pool() -> dict[str, Any]:
    """``tests.scoring_pool.ischemia_pool`` without the store: rct, case_report, genomics, diagnostic."""
    pool = pool_citations()
    return {k: pool[k] for k in ISCHEMIA_PMIDS}


_ANNOTATOR: list[Any] = []


def annotator() -> Any:  # extractors.annotate.Annotator over the tiny resources
    if not _ANNOTATOR:
        from extractors.annotate import Annotator

        _ANNOTATOR.append(Annotator(_resources()))
    return _ANNOTATOR[0]


def vocabulary() -> Any:  # ebm.mesh.MeshVocabulary: the tiny MeSH subset
    return _resources().vocabulary
