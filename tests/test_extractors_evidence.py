"""Strength of evidence (paper Table 5) on real MEDLINE records of the bundled corpus."""

from __future__ import annotations

import pytest

from ebm.citation import Citation
from extractors.evidence import grade_evidence as grade
from tests.conftest import bundled_citations


def grade_evidence(citation: Citation):  # the shipped study types, names resolved in the tiny MeSH
    from ebm.resources import shipped_rules_dir
    from ebm.rules.tables import load_study_types
    from tests.tiny import vocabulary

    return grade(citation, load_study_types(shipped_rules_dir() / "study_types.tsv"), vocabulary())

PMIDS = {"9505772", "9110943", "21933749", "9482442", "2930949", "19299179"}


@pytest.fixture(scope="module")
def citations() -> dict[str, Citation]:
    return bundled_citations(PMIDS)


@pytest.mark.parametrize(
    ("pmid", "grade", "study_class", "because"),
    [
        ("9505772", "A", "clinical trial", "pt 'Randomized Controlled Trial'"),
        ("9110943", "A", "synthesis", "pt 'Meta-Analysis'"),
        ("21933749", "B", "observational", "mh 'Retrospective Studies'"),
        ("9482442", "C", "observational", "pt 'Case Reports'"),
    ],
)
def test_grades_from_publication_types_and_headings(citations, pmid, grade, study_class, because) -> None:
    ev = grade_evidence(citations[pmid])
    assert (ev.grade, ev.study_class) == (grade, study_class)
    assert any(r.startswith(because) and "study_types.tsv:" in r for r in ev.reasons)
    assert ev.to_dict()["grade"] == grade


def test_a_review_has_no_grade(citations) -> None:
    ev = grade_evidence(citations["2930949"])  # Journal Article, Review
    assert ev.grade is None
    assert ev.reasons == ("no publication type or heading in the study-type table",)


def test_text_only_record_is_unknown_not_graded(citations) -> None:
    c = citations["19299179"]  # BC5CDR: title and abstract only
    assert c.publication_types is None and c.mesh_headings is None
    ev = grade_evidence(c)
    assert (ev.grade, ev.s_study) == (None, 0.0)
    assert "grade unknown" in ev.reasons[0]
