"""Findings extractor: evidence sentences, direction w.r.t. the intervention, numbers, offsets.

Real inputs: the bundled corpus's fever RCT (PMID 1621668, the reference paper's answer) and the
Evidence Inference 2.0 validation split in ../shared.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from ebm.errors import DataError, InputError
from ebm.paths import package_data
from extractors.findings import (
    DIRECTIONS,
    MODEL_FILE,
    OUTCOME_WORDS_FILE,
    FindingsModel,
    classify_direction,
    extract_findings,
    load_findings_model,
    load_outcome_words,
    make_question,
    masked,
    outcome_phrase,
    polarity,
    tag,
)
from extractors.numbers import p_significant, parse_numbers
from tests.conftest import bundled_citations, load_script

FEVER_RESULT = (
    "Ibuprofen provided greater temperature decrement and longer duration of antipyresis than "
    "acetaminophen when the two drugs were administered in approximately equal doses."
)


@pytest.fixture(scope="module")
def model() -> FindingsModel:
    return load_findings_model(package_data(MODEL_FILE))


@pytest.fixture(scope="module")
def fever_text() -> str:
    c = bundled_citations({"1621668"})["1621668"]
    return " ".join(s.text for s in c.abstract)


# --- numbers --------------------------------------------------------------------------------------


def test_numbers_effect_ci_p_from_validation_sentences() -> None:
    s = (
        "The patients who underwent the TEL regimen had the highest ORR, as shown in Fig. 2 "
        "(OR, 5.359, 95% CI 1.687–17.024, P = 0.004)."
    )
    n = parse_numbers(s)
    assert n["effect"] == {"kind": "OR", "value": 5.359}
    assert n["ci"] == {"level": 95, "low": 1.687, "high": 17.024}
    assert n["p"] == {"relation": "=", "value": 0.004}
    assert p_significant(n) is True
    s = (
        "Cox regression methods did not reveal any effect of the intervention on duration of delirium "
        "(HR 1.2; 95% CI 0.6 to 2.5; p=0.5) or on length of stay (HR 1.08; 95% CI 0.9 to 1.3; p=0.3)."
    )
    n = parse_numbers(s)
    assert n["effect"] == {"kind": "HR", "value": 1.2}
    assert n["ci"] == {"level": 95, "low": 0.6, "high": 2.5}
    assert [p["value"] for p in n["p_values"]] == [0.5, 0.3]
    assert p_significant(n) is False
    n = parse_numbers(
        "Fasting 4 wk insulin was 10% lower after PHSO (p > 0.05) and 22% lower after IE (p < 0.001) "
        "compared to POL."
    )
    assert n["p"] == {"relation": ">", "value": 0.05}
    assert n["percentages"] == [10.0, 22.0]
    assert "effect" not in n and "ci" not in n
    # "or" the word is no odds ratio; a CI level is no percentage
    n = parse_numbers("Daytrip or voucher (RD −0.01; 95% CI-0.07 – 0.06)")
    assert n["effect"] == {"kind": "RD", "value": -0.01}
    assert n["ci"]["low"] == -0.07 and n["ci"]["high"] == 0.06
    assert "percentages" not in n


# --- direction ------------------------------------------------------------------------------------


def test_direction_flips_when_intervention_and_comparison_swap(model: FindingsModel) -> None:
    q = make_question("ibuprofen", "acetaminophen", "temperature decrement")
    fwd = classify_direction(FEVER_RESULT, q, model)
    rev = classify_direction(
        FEVER_RESULT, make_question("acetaminophen", "ibuprofen", "temperature decrement"), model
    )
    assert max(fwd, key=fwd.get) == "higher"
    assert max(rev, key=rev.get) == "lower"
    assert polarity(masked(tag(FEVER_RESULT, q))) == "normal"


def test_no_difference_sentence(model: FindingsModel) -> None:
    s = (
        "Cox regression methods did not reveal any effect of the intervention on duration of delirium "
        "(HR 1.2; 95% CI 0.6 to 2.5; p=0.5) or on length of stay (HR 1.08; 95% CI 0.9 to 1.3; p=0.3)."
    )
    p = classify_direction(
        s, make_question("multicomponent intervention", "usual care", "duration of delirium"), model
    )
    assert max(p, key=p.get) == "no_difference"


def test_fever_rct_findings_offsets_and_direction(model: FindingsModel, fever_text: str) -> None:
    found = extract_findings(fever_text, "ibuprofen", "acetaminophen", "temperature", model)
    assert found, "the fever RCT's result sentence should be found"
    best = found[0]
    assert best.sentence == FEVER_RESULT
    assert fever_text[best.start : best.end] == best.sentence
    assert best.direction == "higher" and best.significant
    assert best.outcome == "temperature"
    assert 0.2 <= best.confidence <= 1.0
    for f in found:
        assert fever_text[f.start : f.end] == f.sentence
        assert f.direction in DIRECTIONS
        assert set(f.to_dict()) == {
            "outcome",
            "direction",
            "significant",
            "sentence",
            "start",
            "end",
            "numbers",
            "confidence",
        }
    swapped = extract_findings(fever_text, "acetaminophen", "ibuprofen", "temperature", model)
    assert swapped[0].sentence == FEVER_RESULT and swapped[0].direction == "lower"


def test_document_offsets_and_frame_outcome_worded_differently(model: FindingsModel) -> None:
    from ebm.text.pipeline import TextPipeline

    doc = TextPipeline().process(bundled_citations({"1621668"})["1621668"])
    # The frame says "reducing fever"; the abstract says "antipyresis" and "temperature".
    found = extract_findings(doc, "acetaminophen", "ibuprofen", "reducing fever", model)
    assert found and found[0].sentence == FEVER_RESULT
    assert doc.text[found[0].start : found[0].end] == FEVER_RESULT
    assert doc.sentences[found[0].sentence_index].text == FEVER_RESULT
    assert found[0].direction == "lower"  # acetaminophen brought temperature down less


def test_outcome_phrase_without_a_frame_outcome() -> None:
    q = make_question("acetaminophen", "ibuprofen", "")
    assert outcome_phrase(FEVER_RESULT, q) == "temperature decrement"
    assert (
        outcome_phrase(
            "All three active treatments produced significant antipyresis compared with placebo.", q
        )
        == "antipyresis"
    )
    s = "The incidence of postoperative nausea was significantly lower in the acetaminophen group (p < 0.05)."
    assert outcome_phrase(s, q) == "The incidence of postoperative nausea"
    assert outcome_phrase(s, make_question("acetaminophen", "", "nausea")) == "nausea"


def test_outcome_words_table_finds_a_frame_outcome_worded_differently(
    model: FindingsModel, fever_text: str
) -> None:
    words = load_outcome_words(package_data(OUTCOME_WORDS_FILE))
    assert {"temper", "antipy", "febril"} <= words["fever"]
    with_words = extract_findings(
        fever_text, "acetaminophen", "ibuprofen", "reducing fever", model, outcome_words=words
    )
    assert with_words[0].sentence == FEVER_RESULT
    assert with_words[0].on_frame_outcome and with_words[0].outcome == "reducing fever"
    assert with_words[0].direction == "lower"
    # without the table the sentence names no frame outcome word: it reports another outcome
    plain = extract_findings(
        fever_text, "acetaminophen", "ibuprofen", "reducing fever", model, min_confidence=0.0
    )
    assert plain[0].sentence == FEVER_RESULT
    assert not plain[0].on_frame_outcome and plain[0].outcome == "temperature decrement"
    assert plain[0].confidence < with_words[0].confidence


def test_outcome_words_table_errors(tmp_path: Path) -> None:
    bad = tmp_path / "words.tsv"
    bad.write_text("# comment\nfever\ttemperature\npain analgesia\n", encoding="utf-8")
    with pytest.raises(DataError, match=f"{bad}:3: expected WORD<TAB>RELATED"):
        load_outcome_words(bad)


def test_no_comparison_and_no_outcome(model: FindingsModel, fever_text: str) -> None:
    found = extract_findings(fever_text, "ibuprofen", "", "", model, min_confidence=0.0, limit=8)
    assert any(
        f.sentence.startswith("All three active treatments produced significant antipyresis") for f in found
    )
    assert all(f.outcome for f in found)


def test_bad_input_and_model_errors(tmp_path: Path, model: FindingsModel) -> None:
    with pytest.raises(InputError, match="intervention"):
        extract_findings("Some text.", "  ", "", "", model)
    bad = tmp_path / "bad.json.gz"
    with gzip.open(bad, "wt") as f:
        json.dump({"format": "something-else"}, f)
    with pytest.raises(DataError, match=str(bad)):
        load_findings_model(bad)
    with pytest.raises(DataError, match="missing"):
        load_findings_model(tmp_path / "none.json.gz")


# --- the validation split (../shared) -----------------------------------------------------------------


@pytest.fixture(scope="module")
def validation(shared: Path) -> tuple[dict, list]:
    bfc = load_script("build_findings_corpus")
    records = bfc.build(shared / "evidence-inference")
    arts = {r["pmcid"]: r for r in records if r["kind"] == "article"}
    prompts = [r for r in records if r["kind"] == "prompt" and r["split"] == "validation"]
    return arts, prompts


def test_direction_on_validation_evidence(validation: tuple[dict, list], model: FindingsModel) -> None:
    """With the doctors' evidence given, macro-F1 over the validation answers (measured 0.76)."""
    tf = load_script("train_findings")
    _, prompts = validation
    gold, pred = [], []
    for p in prompts:
        q = make_question(p["intervention"], p["comparator"], p["outcome"])
        for a in p["answers"]:
            probs = classify_direction(" ".join(a["evidence"].split()), q, model)
            gold.append(a["label"])
            pred.append(max(probs, key=probs.get))
    assert len(gold) > 400
    assert tf.macro_f1(gold, pred) >= 0.72


def test_evidence_sentence_top3_on_validation_abstracts(
    validation: tuple[dict, list], model: FindingsModel
) -> None:
    """The evidence sentence among the first three findings (plain text, no headings; measured ≥ 0.9)."""
    bfc = load_script("build_findings_corpus")
    arts, prompts = validation
    hits = n = 0
    for p in prompts:
        a = arts[p["pmcid"]]
        text = "\n\n".join([a["title"], *(t for _, t in a["sections"])])
        spans = [s for s in (bfc.evidence_span(text, x["evidence"]) for x in p["answers"]) if s]
        if not spans:
            continue
        n += 1
        found = extract_findings(
            text, p["intervention"], p["comparator"], p["outcome"], model, min_confidence=0.0
        )
        hits += any(f.start < b and a_ < f.end for f in found[:3] for a_, b in spans)
    assert n > 100
    assert hits / n >= 0.85


def test_concept_path_with_the_annotation(resources, model: FindingsModel) -> None:
    """As ``ebm ask`` will call it: the annotation's document, concepts and outcome prior."""
    from extractors.annotate import Annotator

    a = Annotator(resources).annotate(bundled_citations({"1621668"})["1621668"])
    q = make_question("acetaminophen", "ibuprofen", "reducing fever", resources.matcher)
    assert "D000082" in q.i_cuis and "D007052" in q.c_cuis  # Acetaminophen, Ibuprofen
    found = extract_findings(
        a.document,
        "acetaminophen",
        "ibuprofen",
        "reducing fever",
        model,
        prior={o.sentence: o.probability for o in a.outcomes},
        concepts=a.concepts,
        matcher=resources.matcher,
        outcome_words=load_outcome_words(package_data(OUTCOME_WORDS_FILE)),
    )
    assert found[0].sentence == FEVER_RESULT and found[0].direction == "lower"
    assert a.document.text[found[0].start : found[0].end] == FEVER_RESULT
