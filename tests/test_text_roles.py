"""The one sentence-role classifier (``ebm.text.roles``) on real abstracts: labelled sections of
the bundled corpus, MEDLINE sections with NLM categories, and unstructured abstracts."""

from __future__ import annotations

from pathlib import Path

import pytest

from ebm.medline.reader import read_citations
from ebm.text.document import Sentence
from ebm.text.pipeline import TextPipeline
from ebm.text.roles import ROLES, facet_of_label, role_of_label, sentence_role
from extractors.findings import units_of
from extractors.intervention import position_class
from tests.conftest import bundled_citations


@pytest.fixture(scope="module")
def pipeline() -> TextPipeline:
    return TextPipeline()


def roles(pipeline: TextPipeline, citation) -> list[tuple[str | None, str, str, str | None]]:  # type: ignore[no-untyped-def]
    doc = pipeline.process(citation)
    out = []
    for s in doc.sentences:
        r = sentence_role(s)
        out.append((s.section_label, r.role, r.source, r.facet))
    return out


def test_labels_without_categories(pipeline: TextPipeline) -> None:
    # PICO-data record: printed labels, no NLM categories
    got = roles(pipeline, bundled_citations({"1621668"})["1621668"])
    by_label = {label: (role, source, facet) for label, role, source, facet in got}
    assert got[0][1:3] == ("title", "title")
    assert by_label["OBJECTIVE"] == ("objective", "label", None)
    assert by_label["PARTICIPANTS"] == ("methods", "label", "participants")
    assert by_label["INTERVENTIONS"] == ("methods", "label", "interventions")
    # results before methods: the measurements section reports results
    assert by_label["MEASUREMENTS/MAIN RESULTS"] == ("results", "label", "outcomes")
    assert by_label["CONCLUSION"] == ("conclusions", "label", None)


def test_categories_win_over_label_words(shared: Path, pipeline: TextPipeline) -> None:
    """MEDLINE XML: NlmCategory decides; the label only adds the facet."""
    path = shared / "medline" / "pmparser-samples" / "pubmed26n1334-sample.xml.gz"
    seen = 0
    for c in read_citations(path):
        doc = pipeline.process(c)
        for s in doc.sentences:
            r = sentence_role(s)
            if s.nlm_category in ("BACKGROUND", "OBJECTIVE", "METHODS", "RESULTS", "CONCLUSIONS"):
                assert (r.role, r.source) == (s.nlm_category.lower(), "category")
                assert r.heading == s.section_label and r.facet == facet_of_label(s.section_label)
                seen += 1
            assert r.role in ROLES
    assert seen > 50


def test_unstructured_roles_come_from_the_place(pipeline: TextPipeline) -> None:
    got = roles(pipeline, bundled_citations({"7028532"})["7028532"])
    assert all(label is None for label, *_ in got[1:]) and all(src == "position" for _, _, src, _ in got[1:])
    assert [r for _, r, _, _ in got] == [
        "title",
        "objective",
        "objective",
        *["body"] * 6,
        "conclusions",
        "conclusions",
    ]


def test_label_precedence() -> None:
    assert role_of_label(None) is None and facet_of_label(None) is None
    assert role_of_label("PATIENTS AND METHODS") == "methods"
    assert facet_of_label("PATIENTS AND METHODS") == "participants"
    assert role_of_label("BACKGROUND AND AIMS") == "objective"
    assert role_of_label("MAIN OUTCOME MEASURES") == "methods"
    assert role_of_label("INTERPRETATION") == "conclusions"
    assert role_of_label("TRIAL REGISTRATION") == "other"
    # UNASSIGNED names no role: the label's words decide
    s = Sentence(3, 0, 1, "x", "RESULTS AND DISCUSSION", "UNASSIGNED", "middle", 1)
    assert (sentence_role(s).role, sentence_role(s).source) == ("results", "label")
    # a category without a printed label is shown as the category
    s = Sentence(3, 0, 1, "x", None, "METHODS", "middle", 1)
    assert (sentence_role(s).role, sentence_role(s).heading) == ("methods", "METHODS")


def test_extractors_read_the_same_roles(pipeline: TextPipeline) -> None:
    """Intervention positions and findings' section groups are functions of the one role."""
    for c in bundled_citations({"1621668", "7028532", "23782653"}).values():
        doc = pipeline.process(c)
        _, units = units_of(doc)
        for s, u in zip(doc.sentences, units, strict=True):
            r = sentence_role(s)
            if r.structured:
                assert u.section == {"objective": "background"}.get(r.role, r.role)
            else:
                assert u.section in ("title", "none")
            assert position_class(s) in (
                "title",
                "aims",
                "methods",
                "background",
                "results",
                "conclusions",
                "other section",
                "first two sentences",
                "last sentences",
                "body",
            )
