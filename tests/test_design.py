"""Study design from the text: the shipped model on real abstracts, its JSON record, the grade table."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from ebm.citation import Citation
from ebm.errors import DataError, InputError
from extractors.design import (
    DESIGN_CLASSES,
    DesignModel,
    design_from_index,
    design_json,
    design_model_path,
    human_from,
    load_design_model,
)
from extractors.design_grade import grade_from_design, load_design_grades, validate
from extractors.sample_size import extract_sample_size
from tests.conftest import ROOT, bundled_citations

GRADES = ROOT / "rules" / "design_grades.tsv"
RCT = "randomized_controlled_trial"


@pytest.fixture(scope="module")
def model() -> DesignModel:
    return load_design_model(design_model_path())


def test_model_loads_fast_and_names_every_class() -> None:
    t = time.perf_counter()
    m = load_design_model(design_model_path())
    assert time.perf_counter() - t < 1.0
    assert m.classes == DESIGN_CLASSES
    assert design_model_path().stat().st_size < 3_000_000


def test_missing_or_corrupt_model_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="design model missing"):
        load_design_model(tmp_path / "nope.npz")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(DataError, match="unreadable design model"):
        load_design_model(bad)


def test_fever_trial_is_an_rct_from_its_text(model: DesignModel) -> None:
    """PMID 1621668 (the paper's fever question) has no publication types in the bundle."""
    c = bundled_citations({"1621668"})["1621668"]
    p = model.predict(c.title, c.abstract_text)
    assert p.label == RCT and p.probability >= 0.5
    assert abs(sum(p.probabilities.values()) - 1.0) < 1e-6
    assert human_from(p, c.title, c.abstract_text) is True
    size = extract_sample_size(c.abstract_text)
    grade, klass, reason = grade_from_design(p, size, load_design_grades(GRADES))
    # an RCT is A; it reports 37 children, below the table's MIN_N of 40: lower confidence, same grade
    assert (grade, klass) == ("A", "clinical trial")
    assert "n = 37 < 40: lower confidence within grade A" in reason and "design_grades.tsv:" in reason


def test_case_reports_and_animal_studies_of_the_bundle(model: DesignModel) -> None:
    """Bundled records (MEDLINE 2016 slice, NLM 2006 sample, PubMedQA; many were training records)
    that the indexer tagged Case Reports, or Animals without Humans, predicted from their text."""
    from ebm.medline.bundled import iter_bundled

    cases, animals = [], []
    for c in iter_bundled():
        if not c.has_abstract or "pico" in (c.source or ""):
            continue
        mh = {h.descriptor_name for h in c.mesh_headings or ()}
        if any(p.name == "Case Reports" for p in c.publication_types or ()):
            cases.append(c)
        elif "Animals" in mh and "Humans" not in mh:
            animals.append(c)
    assert len(cases) >= 5 and len(animals) >= 50
    case_hits = sum(model.predict(c.title, c.abstract_text).label == "case_report" for c in cases)
    assert case_hits / len(cases) >= 0.6
    preds = [(c, model.predict(c.title, c.abstract_text)) for c in animals]
    assert sum(p.label == "animal_or_in_vitro" for _, p in preds) / len(preds) >= 0.7
    # an animal study is never called human; the flag abstains rather than guess
    assert not any(human_from(p, c.title, c.abstract_text) for c, p in preds)


def test_text_without_design_words_is_not_confident(model: DesignModel) -> None:
    p = model.predict("", "")
    assert p.probability < 0.9


def test_design_json_schema(model: DesignModel) -> None:
    c = bundled_citations({"1621668"})["1621668"]
    d = design_json(c, model)
    assert set(d) == {"pmid", "design", "design_from_text", "sample_size", "human"}
    assert d["design"]["source"] == "text" and d["design"] == d["design_from_text"]
    assert set(d["design"]) == {"label", "probability", "probabilities", "source"}
    assert set(d["design"]["probabilities"]) == set(DESIGN_CLASSES)
    assert d["sample_size"]["value"] == 37 and "37 otherwise healthy children" in d["sample_size"]["sentence"]
    assert d["human"] is True


def test_publication_types_decide_when_they_name_a_design(model: DesignModel) -> None:
    from ebm.citation import PublicationType

    c = bundled_citations({"1621668"})["1621668"]
    tagged = Citation(
        pmid=c.pmid,
        title=c.title,
        abstract=c.abstract,
        publication_types=(PublicationType(None, "Journal Article"), PublicationType(None, "Case Reports")),
    )
    d = design_json(tagged, model)
    assert d["design"]["source"] == "publication types" and d["design"]["label"] == "case_report"
    assert d["design_from_text"]["label"] == RCT  # the classifier's output is kept
    plain = Citation(
        pmid="1",
        title=c.title,
        abstract=c.abstract,
        publication_types=(PublicationType(None, "Journal Article"),),
    )
    assert design_from_index(plain) is None and design_json(plain, model)["design"]["source"] == "text"


def test_grade_table_loads_validates_and_round_trips() -> None:
    g = load_design_grades(GRADES)
    assert set(g.rows) == set(DESIGN_CLASSES) and validate(g) == []
    assert g.table.dumps() == GRADES.read_text(encoding="utf-8")
    assert g.rows[RCT].grade == "A" and g.rows["case_report"].grade == "C"


def test_bad_grade_table_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "design_grades.tsv"
    shutil.copy(GRADES, bad)
    lines = bad.read_text(encoding="utf-8").splitlines(keepends=True)
    i = next(n for n, ln in enumerate(lines) if ln.startswith("cohort\t"))
    lines[i] = lines[i].replace("\tA\t", "\tQ\t", 1)
    bad.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(InputError, match=rf"design_grades.tsv:{i + 1}"):
        load_design_grades(bad)
    lines[i] = "randomized_controlled_trial\tclinical trial\t0.5\tA\t0.4\n"
    bad.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(InputError, match="repeated"):
        load_design_grades(bad)


def test_design_json_for_every_record_of_a_pubmed_file(model: DesignModel, shared: Path) -> None:
    """What `ebm annotate --file F --json` prints per record: real 2026 baseline records, some
    'Publisher' records with no MeSH yet; one JSON-serialisable object each, in file order."""
    import json

    from ebm.medline.reader import read_citations

    path = shared / "medline" / "pmparser-samples" / "pubmed26n1334-sample.xml.gz"
    citations = list(read_citations(path))
    lines = [json.dumps(design_json(c, model), allow_nan=False) for c in citations]
    assert [json.loads(x)["pmid"] for x in lines] == [c.pmid for c in citations]
    records = [json.loads(x) for x in lines]
    sources = {d["design"]["source"] for d in records if d["design"] is not None}
    assert "text" in sources
    for c, d in zip(citations, records, strict=True):
        if not (c.title or "").strip() and not (c.abstract_text or "").strip():
            # a record with no title or abstract text: the classifier abstains
            assert d["design_from_text"] is None and d["human"] in (None, False, True)
            assert d["design"] is None or d["design"]["source"] == "publication types"
            continue
        assert d["design"]["label"] in DESIGN_CLASSES and 0.0 <= d["design"]["probability"] <= 1.0
        assert d["human"] in (True, False, None)
        assert d["sample_size"] is None or isinstance(d["sample_size"]["value"], int)


def test_fast_cue_matching_equals_plain_regex_matching() -> None:
    """The cues are matched on lower-cased text with literal anchors (for speed); on 2,000 bundled
    abstracts that gives exactly what the table's patterns give with re.IGNORECASE."""
    import re

    from ebm.medline.bundled import iter_bundled
    from extractors.design import _CASE_SENSITIVE, CUES, cue_features

    plain = [(n, re.compile(rx, 0 if n in _CASE_SENSITIVE else re.I), w) for n, rx, w in CUES]
    checked = 0
    for c in iter_bundled():
        if not c.has_abstract:
            continue
        title, abstract = c.title or "", c.abstract_text or ""
        full = title + "\n" + abstract
        expected = ["cue:" + n for n, rx, w in plain if rx.search(title if w == "title" else full)]
        assert cue_features(title, abstract) == expected, c.pmid
        checked += 1
        if checked == 2000:
            break
