"""TextPipeline on real MEDLINE abstracts: sections, positions, tokens, abbreviations, offline."""

from __future__ import annotations

from pathlib import Path

import pytest

from ebm.citation import AbstractSection, Citation
from ebm.medline.reader import read_citations
from ebm.text.abbreviations import expand_abbreviations, long_form_at
from ebm.text.document import Document, UnprocessableText
from ebm.text.pipeline import TextPipeline, position_of


@pytest.fixture(scope="module")
def medline(shared: Path) -> list[Citation]:
    return list(read_citations(shared / "medline" / "medline16n0902.xml.gz"))


@pytest.fixture(scope="module")
def pipeline() -> TextPipeline:
    return TextPipeline()


def _check_invariants(doc: Document) -> None:
    assert [s.index for s in doc.sentences] == list(range(len(doc.sentences)))
    for s in doc.sentences:
        assert doc.text[s.start : s.end] == s.text and s.text == s.text.strip()
        toks = doc.sentence_tokens(s)
        assert all(t.sentence == s.index for t in toks)
        assert all(s.start <= t.start < t.end <= s.end for t in toks)
    # every non-space character belongs to exactly one token
    covered = sum(t.end - t.start for t in doc.tokens)
    assert covered == sum(1 for c in doc.text if not c.isspace())
    for t in doc.tokens:
        assert doc.text[t.start : t.end] == t.text


def test_structured_abstracts_keep_labels_and_categories(
    medline: list[Citation], pipeline: TextPipeline
) -> None:
    structured = [c for c in medline if c.abstract and len(c.abstract) > 1]
    assert len(structured) > 100
    for c in structured:
        doc = pipeline.process(c)
        _check_invariants(doc)
        assert doc.pmid == c.pmid
        assert doc.sentences[0].section_label == "TITLE" and doc.sentences[0].position == "title"
        body = [s for s in doc.sentences if s.section_index >= 0]
        # sentences never cross sections and follow them in order
        assert [s.section_index for s in body] == sorted(s.section_index for s in body)
        for s in body:
            sec = c.abstract[s.section_index]
            assert s.section_label == sec.label and s.nlm_category == sec.nlm_category
            assert s.text in sec.text
        # each non-empty section starts a sentence and ends one
        for k, sec in enumerate(c.abstract):
            in_sec = [s for s in body if s.section_index == k]
            assert bool(in_sec) == bool(sec.text.strip())
            if in_sec:
                assert sec.text.strip().startswith(in_sec[0].text)
                assert sec.text.strip().endswith(in_sec[-1].text)


def test_unstructured_positions(medline: list[Citation], pipeline: TextPipeline) -> None:
    plain = [c for c in medline if c.abstract and len(c.abstract) == 1 and c.abstract[0].label is None]
    assert len(plain) > 50
    for c in plain:
        doc = pipeline.process(c)
        _check_invariants(doc)
        body = [s for s in doc.sentences if s.section_index >= 0]
        assert all(s.section_label is None for s in body)
        assert [s.position for s in body] == [position_of(i, len(body)) for i in range(len(body))]
        if len(body) >= 5:
            assert [s.position for s in body[:2]] == ["first", "first"]
            assert [s.position for s in body[-2:]] == ["last", "last"]
            assert {s.position for s in body[2:-2]} == {"middle"}


def test_position_of() -> None:
    assert [position_of(i, 1) for i in range(1)] == ["first"]
    assert [position_of(i, 2) for i in range(2)] == ["first", "last"]
    assert [position_of(i, 3) for i in range(3)] == ["first", "first", "last"]
    assert [position_of(i, 6) for i in range(6)] == ["first", "first", "middle", "middle", "last", "last"]


def test_abbreviations_on_real_abstract(medline: list[Citation], pipeline: TextPipeline) -> None:
    # PMID with "Mismatch negativity (MMN)" defined in METHODS and used again in CONCLUSIONS
    c = next(c for c in medline if c.abstract and "Mismatch negativity (MMN)" in (c.abstract_text or ""))
    doc = pipeline.process(c)
    assert doc.abbreviations["MMN"].lower() == "mismatch negativity"
    uses = expand_abbreviations(doc)
    assert len(uses) >= 2
    for start, end, long_form in uses:
        assert doc.span_text(start, end) == "MMN" or long_form != "Mismatch negativity"
        assert long_form_at(doc, start, end) == long_form
    defs = [a for a in doc.abbreviation_spans if a.definition]
    assert len(defs) == 1 and doc.span_text(defs[0].start, defs[0].end) == "MMN"
    assert len(expand_abbreviations(doc, include_definitions=True)) == len(uses) + 1


def test_abbreviations_defined_across_sections(pipeline: TextPipeline) -> None:
    doc = pipeline.process_text(
        "Xylitol for prevention of acute otitis media.",
        "Acute otitis media (AOM) is common in day care. We gave xylitol. AOM occurred in 12% of children.",
    )
    assert doc.abbreviations == {"AOM": "Acute otitis media"}
    (use,) = expand_abbreviations(doc)
    assert doc.span_text(use.start, use.end) == "AOM" and doc.tokens[use.start].sentence == 3
    assert long_form_at(doc, use.start, use.end) == "Acute otitis media"
    assert long_form_at(doc, use.start + 1, use.end + 1) is None


def test_empty_and_missing_parts(pipeline: TextPipeline) -> None:
    doc = pipeline.process(Citation(pmid="1", title=None, abstract=None))
    assert doc.text == "" and doc.sentences == [] and doc.tokens == []
    doc = pipeline.process_text("Only a title.", None)
    assert [s.position for s in doc.sentences] == ["title"]
    doc = pipeline.process_text(None, "One sentence. Two sentences.")
    assert [s.index for s in doc.sentences] == [0, 1] and doc.sentences[0].position == "first"


def test_a_text_beyond_spacys_limit_is_a_clear_error(pipeline: TextPipeline) -> None:
    """A 2 MB abstract (spaCy's E088) names the PMID and the sizes, in one line."""
    huge = "Fever was treated. " * 110_000
    with pytest.raises(UnprocessableText) as err:
        pipeline.process(Citation(pmid="123", title="Big", abstract=(AbstractSection(huge),)))
    msg = str(err.value)
    assert msg.startswith("PMID 123: title and abstract of 2,090,005 characters exceed") and "\n" not in msg
