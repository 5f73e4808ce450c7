"""Intervention extractor on real abstracts of the bundled corpus; its rule tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from ebm.citation import Citation
from ebm.concepts.annotate import Concept
from ebm.errors import InputError
from ebm.medline import iter_bundled
from ebm.resources import shipped_rules_dir as rules_dir
from ebm.text.document import Document
from extractors.cues import best_cue, load_weighted_cues
from extractors.intervention import (
    POSITION_WEIGHTS,
    load_intervention_terms,
    position_class,
)
from tests.tiny import annotate, default_kinds, default_pipeline, extract_interventions, resources

PMIDS = {
    "7028532",
    "8101194",
    "9833745",
    "16124442",
    "17954800",
    "20369616",
    "23782653",
    "9842079",
    "8499152",
    "17477785",
}


@pytest.fixture(scope="module")
def processed(tiny_resources: object) -> dict[str, tuple[Citation, Document, list[Concept]]]:
    matcher = None
    pipeline = default_pipeline()
    out = {}
    for c in iter_bundled():
        if c.pmid in PMIDS:
            doc = pipeline.process(c)
            out[c.pmid] = (c, doc, annotate(doc, matcher))
    assert set(out) == PMIDS
    return out


def top(processed, pmid: str, n: int) -> list[tuple[str, tuple[str, ...]]]:
    _, doc, concepts = processed[pmid]
    return [(c.text, c.concepts) for c in extract_interventions(doc, concepts)[:n]]


def test_drugs_under_comparison(processed) -> None:
    # "Comparison of the effects of terazosin and enalapril on ... blood pressure": terazosin is no
    # MeSH 2024 descriptor here (a supplementary concept): its stem -azosin names it a drug.
    assert top(processed, "8101194", 2) == [("terazosin", ()), ("enalapril", ("D004656",))]
    _, doc, concepts = processed["8101194"]
    first = extract_interventions(doc, concepts)[0]
    assert "drug name (stem -azosin)" in first.evidence[0]
    ranked = [c.text for c in extract_interventions(doc, concepts)]
    assert ranked.index("blood pressure") > 5  # the measured outcome, not an intervention


def test_drug_unknown_to_mesh_found_after_a_cue(processed) -> None:
    # "A controlled trial with diclofensine ...": diclofensine against the reference maprotiline.
    assert top(processed, "7028532", 2) == [("diclofensine", ()), ("maprotiline", ("D008376",))]
    # "remaxol" recurs after cues ("effects of remaxol") and is the intervention of its trial.
    assert top(processed, "20369616", 2) == [("remaxol", ()), ("placebo", ())]


def test_title_drug_and_placebo(processed) -> None:
    assert top(processed, "9833745", 2) == [("mexiletine", ("D008801",)), ("placebo", ())]
    assert [t for t, _ in top(processed, "16124442", 2)] == ["zidovudine", "zalcitabine"]


def test_all_arms_of_a_comparison(processed) -> None:
    # "Chlorhexidine-based antiseptic solution vs alcohol-based povidone-iodine for central venous
    # catheter care": every product compared is returned.
    texts = [t.casefold() for t, _ in top(processed, "17954800", 4)]
    assert {"povidone-iodine", "alcohol", "chlorhexidine"} <= set(texts)


def test_title_phrase_with_an_intervention_head(processed) -> None:
    # "Home-based reach-to-grasp training for people after stroke": no cue, no concept; the
    # title's phrase ending in a head noun names the intervention.
    _, doc, concepts = processed["23782653"]
    best = extract_interventions(doc, concepts)[0]
    assert best.text == "Home-based reach-to-grasp training"
    assert "title phrase, head 'training'" in best.evidence[0]


def test_phrase_after_a_cue_starts_after_a_number(processed) -> None:
    # "[Clinical trial of 2 tobacco use cessation interventions in primary care]"
    _, doc, concepts = processed["9842079"]
    assert "tobacco use cessation interventions" in [c.text for c in extract_interventions(doc, concepts)[:3]]


def test_position_weights(processed) -> None:
    _, doc, _ = processed["23782653"]  # a structured abstract: BACKGROUND, METHODS/DESIGN, DISCUSSION
    classes = [position_class(s) for s in doc.sentences]
    assert classes[0] == "title" and "background" in classes and "methods" in classes
    # The title names the intervention most often, methods sentences least (EBM-NLP half A).
    assert POSITION_WEIGHTS["title"] == max(POSITION_WEIGHTS.values())
    assert POSITION_WEIGHTS["methods"] < POSITION_WEIGHTS["body"] < POSITION_WEIGHTS["aims"]


def test_scores_and_evidence(processed) -> None:
    for _, doc, concepts in processed.values():
        found = extract_interventions(doc, concepts)
        assert [c.score for c in found] == sorted((c.score for c in found), reverse=True)
        for c in found:
            assert doc.text[c.start : c.end] == c.text and c.evidence
            assert c.sentence == doc.sentence_at(c.start).index


def test_kind_weights() -> None:
    kinds, voc = default_kinds(), resources().vocabulary
    assert kinds.weight("D008376", voc)[0] == 1.0  # Maprotiline: a drug
    assert kinds.weight("D001794", voc)[0] < 0.1  # Blood Pressure: measured, not given
    assert kinds.weight("D013812", voc)[0] == 0.1  # Therapeutics ("treatment"): a category root
    assert kinds.weight("D004636", voc)[0] <= 0.1  # Emergency Service, Hospital: a setting
    assert kinds.weight("C0000000", voc) is None  # not MeSH


def test_cue_places() -> None:
    cues = load_weighted_cues(rules_dir() / "intervention_cues.tsv")
    before = [c for c in cues if c.where == "before"]
    after = [c for c in cues if c.where == "after"]
    assert (
        best_cue(before, "patients were randomly assigned to receive either").phrase == "randomly assigned to"
    )
    assert best_cue(before, "randomly assigned to the control arm and then given") is None  # too far
    assert best_cue(after, " or placebo for 12 weeks").phrase == "or placebo"
    assert best_cue(after, " in 12 patients or placebo") is None  # not right after the mention


def test_what_a_study_changes_is_damped(processed) -> None:
    # "Can a home-visit invitation increase Pap smear screening ...?": the smear is the outcome.
    _, doc, concepts = processed["17477785"]
    smear = next(c for c in extract_interventions(doc, concepts) if c.text == "Pap smear")
    title = next(e for e in smear.evidence if "in title" in e)
    assert "outcome cue 'increase' x0.4" in title
    cues = load_weighted_cues(rules_dir() / "intervention_cues.tsv")
    outcome = [c for c in cues if c.where == "outcome"]
    assert best_cue(outcome, "a home-visit invitation increase Pap").phrase == "increase"
    assert best_cue(outcome, "to improve the care of patients with") is None  # too far


def test_capitalised_cue_word_inside_a_name_is_no_cue(processed) -> None:
    # "... patients entering the German Myeloma Treatment Group (GMTG) trial": "Treatment" is part
    # of the group's name, so "entering the German Myeloma" is no phrase before a cue.
    texts = [c.text for c in extract_interventions(*processed["8499152"][1:])]
    assert texts[0] == "induction chemotherapy"
    assert not any("Myeloma" in t for t in texts)


def test_bad_tables_name_file_and_line(tmp_path: Path) -> None:
    cues = tmp_path / "cues.tsv"
    cues.write_text("# c\nrandomized to\t2\tbefore\nversus\t2\tbeside\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"cues\.tsv:3: column 'where'.*before"):
        load_weighted_cues(cues)
    cues.write_text("randomized to\t-1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"cues\.tsv:1: column 'weight': -1 is below the minimum"):
        load_weighted_cues(cues)
    terms = tmp_path / "terms.tsv"
    terms.write_text("stem\tmab\t1\nstem\tpril ace\t1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"terms\.tsv:2: a stem is one word ending"):
        load_intervention_terms(terms)
    terms.write_text("drug\tmab\t1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"terms\.tsv:1: column 'kind'"):
        load_intervention_terms(terms)
