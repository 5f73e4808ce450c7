"""Issues 13 and 14 in the product's answers: one evidence grade (publication types, else the
design predicted from the text) shown the same by ``ebm annotate`` and ``ebm ask``; each answer's
findings for the frame, a bottom line for therapy/prevention, and the JSON fields the web pages
render. Real citations of the bundled corpus (the tests' store) and a real 2026 PubMed file."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from ebm.ask import AskConfig, Pipeline
from ebm.cli import main
from ebm.frame import frame_from_args, load_frame
from ebm.medline import read_citations
from tests import scoring_pool

ROOT = Path(__file__).resolve().parents[1]
FEVER = ROOT / "questions" / "fever_acetaminophen_ibuprofen.yaml"
FINDING_KEYS = {"outcome", "direction", "significant", "sentence", "start", "end", "numbers", "confidence"}
ANSWER_KEYS = {"findings", "design", "sample_size", "human", "evidence_line", "grade", "study_class"}
DESIGN_KEYS = {"label", "probability", "probabilities", "source"}
ASK = ["--format", "json", "--no-cache", "--year", "2024"]


@pytest.fixture(autouse=True)
def _store(concept_index: Path) -> None:
    scoring_pool.store()  # the bundled corpus in the tests' data directory (`ebm ask`'s default)


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> Any:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def fever_json() -> dict[str, Any]:
    """``ebm ask --frame fever --top 50 --format json`` (every candidate of the pool)."""
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["ask", "--frame", str(FEVER), "--top", "50", *ASK]) == 0
    return json.loads(buf.getvalue())  # type: ignore[no-any-return]


def test_fever_answers_carry_findings_design_and_the_bottom_line(fever_json: dict[str, Any]) -> None:
    results = fever_json["results"]
    assert len(results) == 50
    for r in results:
        assert ANSWER_KEYS <= set(r), r["pmid"]
        assert set(r["design"]) == DESIGN_KEYS
        assert r["design"]["source"] in ("publication types", "text")
        assert r["sample_size"] is None or set(r["sample_size"]) == {"value", "sentence"}
        assert r["human"] in (True, False, None)
        assert r["evidence_line"].endswith(f"grade {r['grade'] or 'unknown'}")
        for f in r["findings"]:
            assert set(f) == FINDING_KEYS
            assert f["direction"] in ("higher", "lower", "no_difference")
    trial = next(r for r in results if r["pmid"] == "1621668")
    # the fever RCT has no publication types: a predicted RCT with its 37 children
    assert trial["design"]["label"] == "randomized_controlled_trial" and trial["design"]["source"] == "text"
    assert trial["design"]["probability"] > 0.9
    assert trial["sample_size"]["value"] == 37
    assert (
        trial["evidence_line"].startswith("RCT (predicted, 0.9")
        and "n = 37 · grade A" in (trial["evidence_line"])
    )
    assert trial["components"]["soe"]["study"] == 0.5  # S_SoE reads the same (predicted) grade's row
    first = trial["findings"][0]
    assert "greater temperature decrement" in first["sentence"]
    assert first["confidence"] > 0.3 and first["end"] > first["start"]
    # a statement of the bottom line names its PMIDs; the trial is one of them
    bl = fever_json["bottom_line"]
    assert bl is not None and bl["intervention"] == "acetaminophen" and bl["comparison"] == "ibuprofen"
    assert len(bl["considered"]) == 10  # top 10 by default
    pmids = {
        p for o in bl["outcomes"] for s in (o["concurrence"], *o["contradictions"]) if s for p in s["pmids"]
    }
    assert "1621668" in pmids
    assert "[PMID 1621668" in bl["text"] or "1621668" in bl["text"]
    assert "understood_as" not in fever_json  # the frame came from a file


def test_annotate_and_ask_print_the_same_grade_for_the_pool(
    fever_json: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """Every candidate of the fever question: ``ebm annotate PMID`` (JSON and text) and ``ebm ask``
    give one grade and one evidence line."""
    predicted = 0
    for r in fever_json["results"]:
        ann = run_json(["annotate", r["pmid"], "--json"], capsys)
        assert ann["evidence"]["grade"] == r["grade"], r["pmid"]
        assert ann["design"] == r["design"] and ann["human"] == r["human"], r["pmid"]
        assert ann["sample_size"] == r["sample_size"], r["pmid"]
        predicted += ann["evidence"]["predicted"]
    assert predicted >= 25  # most bundled citations are text only: their grade is predicted
    capsys.readouterr()
    assert main(["annotate", "1621668"]) == 0
    trial = next(r for r in fever_json["results"] if r["pmid"] == "1621668")
    assert f"  {trial['evidence_line']} · human" in capsys.readouterr().out


def test_ask_text_prints_the_bottom_line_above_the_list_and_findings_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    capsys.readouterr()
    assert main(["ask", "--frame", str(FEVER), "--top", "3", "--no-cache", "--year", "2024"]) == 0
    out = capsys.readouterr().out
    assert out.index("Bottom line:") < out.index("3 of 50 candidates")
    assert "[PMID 1621668" in out or "PMID 1621668]" in out
    block = out[out.index("PMID 1621668") :]
    assert "RCT (predicted, 0.99) · n = 37 · grade A" in out
    # the finding comes before the outcome sentences
    assert block.index("* reducing fever") < block.index("- All three active treatments")


def test_no_bottom_line_for_a_diagnosis_question(capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(
        [
            "ask",
            "--task",
            "diagnostic test",
            "--problem",
            "appendicitis",
            "--intervention",
            "ultrasonography",
            "--top",
            "5",
            *ASK,
        ],
        capsys,
    )
    assert d["bottom_line"] is None
    assert all(set(r["design"]) == DESIGN_KEYS for r in d["results"])


def test_a_question_in_words_carries_its_understood_line(capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(
        ["ask", "Is ibuprofen better than acetaminophen for fever in children?", "--top", "3", *ASK], capsys
    )
    assert d["understood_as"].startswith("Understood as: therapy · problem Fever")
    assert d["bottom_line"] is not None and d["bottom_line"]["intervention"] == "ibuprofen"
    assert main(["ask", "--frame", str(FEVER), "--bottom-line-top", "0"]) == 2


def test_explain_shows_the_findings_and_the_evidence_line(capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["explain", "1621668", "--frame", str(FEVER), "--no-cache", "--year", "2024"]) == 0
    out = capsys.readouterr().out
    assert "RCT (predicted, 0.99) · n = 37 · grade A" in out
    assert out.index("finding (chars") < out.index("outcome sentence")
    d = run_json(["explain", "1621668", "--frame", str(FEVER), *ASK], capsys)
    assert d["answer"]["findings"] and set(d["answer"]["findings"][0]) == FINDING_KEYS
    assert d["answer"]["evidence_line"].startswith("RCT (predicted")


def test_question_aware_outcome_score_in_the_candidate_columns(resources: Any) -> None:
    """The best finding's confidence is the rankers' ``findings`` column where the frame has an
    intervention; without one, the question-blind outcome part."""
    from ebm.scoring.rankers import candidate_columns

    frame = load_frame(FEVER)
    store = scoring_pool.store()
    cits = store.fetch(["1621668", "9505772"])
    with Pipeline(AskConfig(cache=False, year=2024), source=store, resources=resources) as p:
        anns, _ = p.annotate(cits)
        cands = p.candidate_scores(frame, anns)
        cols = candidate_columns(cands)
        by = {c.pmid: c for c in cands}
        fever, other = by["1621668"], by["9505772"]
        assert fever.s_outcome_question is not None and fever.s_outcome_question > 0.5
        assert fever.findings and fever.s_outcome_question >= fever.findings[0].confidence
        assert other.s_outcome_question is not None and other.s_outcome_question < 0.1
        assert cols["findings"] == [c.s_outcome_question for c in cands]
        blind = p.candidate_scores(frame_from_args("prognosis", problem="fever"), anns)
        assert all(c.s_outcome_question is None and not c.findings for c in blind)
        assert candidate_columns(blind)["findings"] == [c.match.value("outcome") for c in blind]


def test_annotate_a_whole_pubmed_file_as_json_lines(shared: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = shared / "medline" / "pmparser-samples" / "pubmed26n1334-sample.xml.gz"
    capsys.readouterr()
    assert main(["annotate", "--file", str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    pmids = [c.pmid for c in read_citations(path)]
    assert len(lines) == len(pmids) == 30
    objs = [json.loads(line) for line in lines]
    assert [o["pmid"] for o in objs] == pmids  # file order
    texts = {c.pmid: (c.title or "") + (c.abstract_text or "") for c in read_citations(path)}
    for o in objs:
        if not texts[o["pmid"]].strip():  # nothing to read: the classifier abstains
            assert o["design_from_text"] is None
        else:
            assert set(o["design_from_text"]) == DESIGN_KEYS and o["design_from_text"]["source"] == "text"
        assert o["design"] is None or set(o["design"]) == DESIGN_KEYS
        assert o["sample_size"] is None or set(o["sample_size"]) == {"value", "sentence"}
        assert o["human"] in (True, False, None)
    assert any(o["design"] and o["design"]["source"] == "publication types" for o in objs)
    assert sum(o["design_from_text"] is not None for o in objs) >= 25
    assert "ebm annotate: 30 records" in err


def test_annotate_an_nbib_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """MEDLINE text format: the bundled fever trial written as .nbib (gzipped) reads the same."""
    nbib = tmp_path / "fever.nbib.gz"
    with gzip.open(nbib, "wt", encoding="utf-8") as f:
        f.write(
            "PMID- 1621668\nTI  - Antipyretic efficacy of ibuprofen vs acetaminophen.\n"
            "AB  - 37 otherwise healthy children aged 2 to 12 years were randomized to receive\n"
            "      ibuprofen, acetaminophen or placebo in a double-blind trial.\n\n"
        )
    capsys.readouterr()
    assert main(["annotate", "--file", str(nbib), "--json"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    o = json.loads(line)
    assert o["pmid"] == "1621668" and o["sample_size"]["value"] == 37
    assert o["design"]["label"] == "randomized_controlled_trial"


def test_design_tables_and_model_key_the_annotation_cache(tmp_path: Path, resources: Any) -> None:
    """design_grades.tsv is read by the annotation (its grade): an edit changes the annotation
    cache's digest; question_cues.tsv is not (questions only)."""
    import shutil

    from ebm.resources import Resources, shipped_rules_dir
    from ebm.rules.registry import ANNOTATION

    base = resources.digest(ANNOTATION)
    for name, line in (
        ("design_grades.tsv", None),
        ("question_cues.tsv", "ignore\tquinine\t-\t1"),
    ):
        d = tmp_path / name
        shutil.copytree(shipped_rules_dir(), d, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
        p = d / name
        text = p.read_text(encoding="utf-8")
        if line is None:  # a predicted case report is graded B
            text = text.replace(
                "case_report\tobservational\t0.3\tC\t", "case_report\tobservational\t0.3\tB\t"
            )
            assert "case_report\tobservational\t0.3\tB\t" in text
        else:
            text += line + "\n"
        p.write_text(text, encoding="utf-8")
        edited = Resources.load(d, index_dir=resources.index_dir).digest(ANNOTATION)
        assert (edited != base) is (name == "design_grades.tsv"), name
