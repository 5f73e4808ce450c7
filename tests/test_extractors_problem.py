"""Problem extractor on real abstracts of the bundled corpus, checked against their MeSH major topics."""

from __future__ import annotations

from pathlib import Path

import pytest

from ebm.citation import Citation
from ebm.concepts.annotate import Concept, annotate
from ebm.concepts.matcher import DictionaryMatcher
from ebm.errors import InputError
from ebm.medline import iter_bundled
from ebm.mesh import mesh
from ebm.text.document import Document
from ebm.text.pipeline import default_pipeline
from extractors.problem import SCOPES, extract_problems, is_ancestor, is_disorder
from extractors.tree_weights import load_tree_weights

PMIDS = {"7028532", "3503390", "16691061", "9626910", "3926042", "15897310"}


@pytest.fixture(scope="module")
def citations() -> dict[str, Citation]:
    found = {c.pmid: c for c in iter_bundled() if c.pmid in PMIDS}
    assert set(found) == PMIDS
    return found


@pytest.fixture(scope="module")
def processed(concept_index: Path, citations: dict[str, Citation]):
    matcher = DictionaryMatcher(concept_index)
    pipeline = default_pipeline()
    out: dict[str, tuple[Document, list[Concept]]] = {}
    for pmid, c in citations.items():
        doc = pipeline.process(c)
        out[pmid] = (doc, annotate(doc, matcher))
    return out


def major(c: Citation) -> set[str]:
    """The citation's major-topic disorders (the problem evaluation's ground truth)."""
    return {
        h.descriptor_ui
        for h in c.mesh_headings or ()
        if h.is_major and h.descriptor_ui and is_disorder(h.descriptor_ui, mesh())
    }


def test_primary_problem_from_the_title(processed) -> None:
    doc, concepts = processed["7028532"]  # "... a new psychoactive drug, in the treatment of depression."
    for scope in SCOPES:
        top = extract_problems(doc, concepts, scope=scope)[0]
        assert (top.text, top.concepts) == ("depression", ("D003866",))  # Depressive Disorder
    assert extract_problems(doc, concepts)[0].evidence[0] == "'depression' in title (+3)"


def test_site_and_histology_compose_the_indexed_neoplasm(processed, citations) -> None:
    # "recurrent gastric carcinoma": the matcher finds Carcinoma; MeSH indexes Stomach Neoplasms.
    doc, concepts = processed["3503390"]
    top = extract_problems(doc, concepts, scope="title")[0]
    assert top.concepts == ("D013274",) and top.names == ("Stomach Neoplasms",)
    assert top.text == "gastric carcinoma"
    assert "composed from Carcinoma" in top.evidence[0]
    assert major(citations["3503390"]) == {"D013274"}


def test_agent_infected_adjective(processed) -> None:
    doc, concepts = processed["16691061"]  # "... microbicide in HIV-infected women."
    top = extract_problems(doc, concepts, scope="title")[0]
    assert (top.text, top.concepts) == ("HIV-infected", ("D015658",))  # HIV Infections


def test_virus_infection_names_the_disease(processed) -> None:
    doc, concepts = processed["9626910"]  # "Hepatitis C virus infection and heart diseases"
    found = extract_problems(doc, concepts, scope="title")
    assert [c.names[0] for c in found] == ["Hepatitis C", "Heart Diseases"]
    assert found[0].text == "Hepatitis C virus infection"


def test_specific_disorder_takes_its_ancestors_score(processed, citations) -> None:
    # "Relief of pain by infusion of morphine after operation": title says pain, the body says
    # postoperative pain, the indexers chose Pain, Postoperative.
    doc, concepts = processed["3926042"]
    assert extract_problems(doc, concepts, scope="title")[0].names == ("Pain",)
    top = extract_problems(doc, concepts, scope="all")[0]
    assert top.names == ("Pain, Postoperative",)
    assert "D010149" in major(citations["3926042"])
    assert any("MeSH ancestor Pain" in e for e in top.evidence)
    assert is_ancestor("D010146", "D010149", mesh())
    assert not is_ancestor("D010149", "D010146", mesh())


def test_scope_limits_the_mentions(processed) -> None:
    doc, concepts = processed["15897310"]
    for scope in SCOPES:
        for c in extract_problems(doc, concepts, scope=scope):
            pos = doc.sentences[c.sentence].position
            assert scope == "all" or pos in (("title",) if scope == "title" else ("title", "first"))


def test_negated_mentions_do_not_count(processed) -> None:
    for doc, concepts in processed.values():
        negated = {c.cui for c in concepts if c.negated} - {c.cui for c in concepts if not c.negated}
        assert not negated & {p.concepts[0] for p in extract_problems(doc, concepts)}


def test_bad_kind_table_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "problem_kinds.tsv"
    bad.write_text("ROOT\t0.3\nC23.550\t0.6\nC99.999\t1\n", encoding="utf-8")
    with pytest.raises(
        InputError, match=r"problem_kinds\.tsv:3: no MeSH 2024 descriptor has tree number C99\.999"
    ):
        load_tree_weights(bad)
    bad.write_text("D999999\t1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"problem_kinds\.tsv:1: D999999 is not a MeSH 2024 descriptor UI"):
        load_tree_weights(bad)
    bad.write_text("C23\tmuch\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"problem_kinds\.tsv:1: column 'weight'"):
        load_tree_weights(bad)
