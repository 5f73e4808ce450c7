"""Concepts over processed Documents: sentences, sections, abbreviations, negation."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from ebm.citation import AbstractSection, Citation
from ebm.concepts import CHEMICALS, DISORDERS, concepts_in_group
from ebm.concepts.matcher import DictionaryMatcher
from ebm.medline.reader import read_citations
from tests.shipped import annotate, default_matcher, default_pipeline


@pytest.fixture(scope="module")
def matcher(concept_index: Path) -> DictionaryMatcher:
    return default_matcher()


def pubtator(shared: Path, split: str) -> dict[str, Citation]:
    """PMID -> title and abstract of a BC5CDR split."""
    name = {"train": "CDR_TrainingSet", "dev": "CDR_DevelopmentSet"}[split]
    out: dict[str, Citation] = {}
    titles: dict[str, str] = {}
    with gzip.open(shared / "concepts" / "bc5cdr" / f"{name}.PubTator.txt.gz", "rt", encoding="utf-8") as f:
        for line in f:
            if "|t|" in line[:20]:
                pmid, _, title = line.rstrip("\n").split("|", 2)
                titles[pmid] = title
            elif "|a|" in line[:20]:
                pmid, _, abstract = line.rstrip("\n").split("|", 2)
                out[pmid] = Citation(pmid=pmid, title=titles[pmid], abstract=(AbstractSection(abstract),))
    return out


def test_structured_abstract_concepts_keep_sentence_and_section(
    shared: Path, matcher: DictionaryMatcher
) -> None:
    citations = read_citations(shared / "medline" / "medline16n0902.xml.gz")
    structured = [c for c in citations if c.abstract and len(c.abstract) >= 3 and c.abstract[0].label][:20]
    assert structured
    seen_sections = set()
    for cit in structured:
        doc = default_pipeline().process(cit)
        concepts = annotate(doc, matcher)
        assert concepts, cit.pmid
        for c in concepts:
            sent = doc.sentences[c.sentence]
            assert doc.text[c.start : c.end] == c.text
            assert sent.start <= c.start and c.end <= sent.end  # never crosses a sentence
            assert c.section == sent.section_label and c.nlm_category == sent.nlm_category
            assert c.position == sent.position
            assert doc.tokens[c.token_start].start <= c.start < doc.tokens[c.token_end - 1].end
            assert c.groups
            seen_sections.add(c.section)
        starts = [c.start for c in concepts]
        assert starts == sorted(starts)
    assert "TITLE" in seen_sections and len(seen_sections) >= 4


def test_short_forms_get_the_long_forms_concept(shared: Path, matcher: DictionaryMatcher) -> None:
    cit = pubtator(shared, "dev")["17366349"]  # "Neuroleptic malignant syndrome (NMS)" ... "NMS"
    doc = default_pipeline().process(cit)
    assert doc.abbreviations.get("NMS", "").lower() == "neuroleptic malignant syndrome"
    nms = [c for c in annotate(doc, matcher) if c.text == "NMS"]
    assert len(nms) >= 3
    assert {(c.cui, c.long_form.lower()) for c in nms} == {("D009459", "neuroleptic malignant syndrome")}


def test_long_form_with_organ_adjective(shared: Path, matcher: DictionaryMatcher) -> None:
    cit = pubtator(shared, "train")["1919871"]  # "Renal papillary necrosis (RPN)"
    doc = default_pipeline().process(cit)
    rpn = [c for c in annotate(doc, matcher) if c.text == "RPN"]
    assert rpn and all(c.cui == "D007681" for c in rpn)  # Kidney Papillary Necrosis


def test_negated_concepts_are_flagged(shared: Path, matcher: DictionaryMatcher) -> None:
    cit = pubtator(shared, "train")["11672959"]  # "... with no evidence of malignancy"
    concepts = annotate(default_pipeline().process(cit), matcher)
    by_text = {c.text: c for c in concepts}
    assert by_text["malignancy"].negated
    assert by_text["malignancy"].cui == "D009369"
    assert not all(c.negated for c in concepts)
    kept = concepts_in_group(concepts, DISORDERS)
    assert kept and not any(c.negated for c in kept)
    assert by_text["malignancy"] in concepts_in_group(concepts, DISORDERS, include_negated=True)


def test_annotate_without_negation_or_abbreviations(shared: Path, matcher: DictionaryMatcher) -> None:
    cit = pubtator(shared, "dev")["17366349"]
    doc = default_pipeline().process(cit)
    plain = annotate(doc, matcher, negation=None, abbreviations=False)
    assert not any(c.negated or c.long_form for c in plain)
    assert not [c for c in plain if c.text == "NMS" and c.cui == "D009459"]


def test_concept_records_serialise(shared: Path, matcher: DictionaryMatcher) -> None:
    cit = pubtator(shared, "train")["227508"]
    concepts = annotate(default_pipeline().process(cit), matcher)
    d = concepts[0].to_dict()
    assert set(d) >= {
        "start",
        "end",
        "text",
        "cui",
        "name",
        "groups",
        "similarity",
        "negated",
        "sentence",
        "section",
    }
    assert any(CHEMICALS in c.groups for c in concepts)
