"""Problem extractor on real abstracts of the bundled corpus, checked against their MeSH major topics."""

from __future__ import annotations

from pathlib import Path

import pytest

from ebm.citation import Citation
from ebm.concepts.annotate import Concept
from ebm.errors import InputError
from ebm.text.document import Document
from extractors.problem import SCOPES, is_ancestor, is_disorder
from extractors.tree_weights import load_tree_weights
from tests.conftest import bundled_citations
from tests.tiny import annotate, default_pipeline, default_problem_kinds, extract_problems, resources

PMIDS = {
    "7028532",
    "3503390",
    "16691061",
    "9626910",
    "3926042",
    "15897310",
    "1376306",
    "404962",
    "1541306",
    "10235220",
    "1778354",
    "6496450",
    "8519720",
    "17445928",
    "23392460",
}


@pytest.fixture(scope="module")
def citations() -> dict[str, Citation]:
    return bundled_citations(PMIDS)


@pytest.fixture(scope="module")
def processed(tiny_resources: object, citations: dict[str, Citation]):
    matcher = None
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
        if h.is_major and h.descriptor_ui and is_disorder(h.descriptor_ui, resources().vocabulary)
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
    # Title: "Induction chemotherapy in head and neck cancer"; the first sentences name the
    # "squamous cell carcinoma of the oropharynx" (composed with the site that follows it).
    doc, concepts = processed["1376306"]
    assert extract_problems(doc, concepts, scope="title")[0].names == ("Head and Neck Neoplasms",)
    top = extract_problems(doc, concepts, scope="all")[0]
    assert top.names == ("Oropharyngeal Neoplasms",)
    assert top.text == "squamous cell carcinoma of the oropharynx"
    assert any("MeSH ancestor Head and Neck Neoplasms" in e for e in top.evidence)
    assert "D009959" in major(citations["1376306"])
    assert is_ancestor("D010146", "D010149", resources().vocabulary)  # Pain > Pain, Postoperative
    assert not is_ancestor("D010149", "D010146", resources().vocabulary)


def test_descendant_named_less_prominently_keeps_its_own_score(processed, citations) -> None:
    # Title: "... therapy for purulent meningitis"; "bacterial meningitis" only in the body:
    # the title's disorder stays first (the indexers chose Meningitis).
    doc, concepts = processed["404962"]
    found = extract_problems(doc, concepts)
    assert found[0].names == ("Meningitis",)
    bacterial = next(c for c in found if c.names == ("Meningitis, Bacterial",))
    assert not any("ancestor" in e for e in bacterial.evidence)
    assert major(citations["404962"]) == {found[0].concepts[0]}
    # The trade-off, measured on the development half: "Relief of pain by infusion of morphine
    # after operation" names postoperative pain only in the body, and MeSH indexes it.
    doc, concepts = processed["3926042"]
    assert extract_problems(doc, concepts)[0].names == ("Pain",)
    assert "D010149" in major(citations["3926042"])


@pytest.mark.parametrize(
    ("pmid", "text", "name"),
    [
        # MeSH's inverted form "Malaria, Falciparum"; "severe" left out
        ("1541306", "falciparum malaria", "Malaria, Falciparum"),
        # a word between left out: "chronic hepatitis B"
        ("10235220", "chronic anti-HBe-positive hepatitis B", "Hepatitis B, Chronic"),
        # a parenthesis stepped over
        ("1778354", "type 2 (non-insulin-dependent) diabetes mellitus", "Diabetes Mellitus, Type 2"),
        # the site after the disorder
        ("17445928", "squamous cell cancer of the esophagus", "Esophageal Neoplasms"),
        # the agent's strain dropped: MeSH has "HIV infection"
        ("23392460", "HIV-1 infection", "HIV Infections"),
        # the treatment names the problem, the word before it the time: after an operation
        ("8519720", "post-thoracotomy analgesia", "Pain, Postoperative"),
        # the paper's example of an implicit problem: a vaccine trial
        ("6496450", "hepatitis B vaccine", "Hepatitis B"),
    ],
)
def test_composed_and_implied_problems(processed, citations, pmid: str, text: str, name: str) -> None:
    doc, concepts = processed[pmid]
    top = extract_problems(doc, concepts, scope="title")[0]
    assert (top.text, top.names) == (text, (name,))
    assert top.concepts[0] in major(citations[pmid])


def test_implied_problem_weighs_less(processed) -> None:
    doc, concepts = processed["6496450"]
    top = extract_problems(doc, concepts, scope="title")[0]
    assert top.evidence[0] == "'hepatitis B vaccine' in title (+2.4), prevented by Hepatitis B Vaccines"


def test_kind_weight_counts_only_disorder_trees() -> None:
    voc, kinds = resources().vocabulary, default_problem_kinds()
    mi = voc.by_name("Myocardial Infarction")  # a pathologic process (C23.550) and a heart disease (C14)
    pain = voc.by_name("Pain")  # a sign (C23.888) and a sensation (F02, G11: not disorder trees)
    assert mi is not None and pain is not None
    assert kinds.weight(mi.ui, voc) == (1.0, "no row")
    assert kinds.weight(pain.ui, voc) == (0.8, "signs and symptoms")


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
        load_tree_weights(bad, resources().vocabulary)
    bad.write_text("D999999\t1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"problem_kinds\.tsv:1: D999999 is not a MeSH 2024 descriptor UI"):
        load_tree_weights(bad, resources().vocabulary)
    bad.write_text("C23\tmuch\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"problem_kinds\.tsv:1: column 'weight'"):
        load_tree_weights(bad, resources().vocabulary)
