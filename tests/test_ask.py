"""``ebm ask`` / ``ebm explain`` and the pipeline behind them, on the bundled corpus.

The "done when" checks of issue 5 use a pool of real citations about myocardial ischaemia,
chosen by their publication types and MeSH headings (tests/scoring_pool.py): a randomized
trial of tracheal extubation, a case report, a molecular-biology paper and a
diagnostic-accuracy study.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ebm.ask import AskConfig, Pipeline
from ebm.cli import main
from ebm.errors import InputError
from ebm.frame import Frame, frame_from_args, load_frame
from ebm.scoring.rankers import FEATURES
from extractors.annotate import Annotation
from tests import scoring_pool

ROOT = Path(__file__).resolve().parents[1]
YEAR = 2024


@pytest.fixture(scope="module")
def pipeline(concept_index: Path) -> Pipeline:
    p = Pipeline(
        AskConfig(ranker="ebm", cache=False, year=YEAR),
        source=scoring_pool.store(),
        annotator=scoring_pool.annotator(),
    )
    return p


@pytest.fixture(scope="module")
def pool(pipeline: Pipeline) -> dict[str, Annotation]:
    cits = scoring_pool.ischemia_pool()
    anns, _ = pipeline.annotate(list(cits.values()))
    return dict(zip(cits, anns, strict=True))


def order(p: Pipeline, frame: Frame, pool: dict[str, Annotation]) -> list[str]:
    """Pool keys from best to worst."""
    by_pmid = {a.citation.pmid: k for k, a in pool.items()}
    return [by_pmid[a.pmid] for a in p.rank(frame, list(pool.values()))]


THERAPY = frame_from_args("therapy", problem="myocardial ischemia", intervention=["tracheal extubation"])


def test_therapy_frame_prefers_the_matching_trial(pipeline: Pipeline, pool: dict[str, Annotation]) -> None:
    answers = pipeline.rank(THERAPY, list(pool.values()))
    by_key = {k: next(a for a in answers if a.pmid == ann.citation.pmid) for k, ann in pool.items()}
    rct = by_key["rct"]
    assert rct.rank < by_key["case_report"].rank and rct.rank < by_key["genomics"].rank
    # ... because the trial matches problem and intervention and is the stronger evidence.
    assert rct.ebm.pico.problem == 1.0 and rct.ebm.pico.intervention == 1.0
    assert rct.ebm.soe.study > by_key["case_report"].ebm.soe.study
    assert rct.grade == "A" and by_key["case_report"].grade == "C"
    genomics = by_key["genomics"]
    assert genomics.ebm.pico.problem == -1.0
    assert any(c.points < 0 and "all " in c.reason for c in genomics.explanation if c.component == "task")


def test_diagnosis_frame_flips_therapy_and_diagnosis(pipeline: Pipeline, pool: dict[str, Annotation]) -> None:
    therapy = frame_from_args("therapy", problem="myocardial ischemia")
    diagnosis = frame_from_args("diagnostic test", problem="myocardial ischemia")
    t = order(pipeline, therapy, pool)
    d = order(pipeline, diagnosis, pool)
    assert t.index("rct") < t.index("diagnostic")
    assert d.index("diagnostic") < d.index("rct")
    assert d[0] == "diagnostic"


def test_edited_rules_copy_changes_the_order(
    pipeline: Pipeline, pool: dict[str, Annotation], tmp_path: Path
) -> None:
    rules = tmp_path / "rules"
    assert main(["rules", "copy", str(rules)]) == 0
    shipped = pipeline.rank(THERAPY, list(pool.values()))
    keys = {a.citation.pmid: k for k, a in pool.items()}
    assert [keys[a.pmid] for a in shipped].index("rct") < [keys[a.pmid] for a in shipped].index("case_report")

    # One weight: S_study of case reports, 0.3 -> 6.
    path = rules / "study_types.tsv"
    text = path.read_text(encoding="utf-8")
    row = "pt\tCase Reports\tobservational\t0.3\tC"
    assert text.count(row) == 1
    path.write_text(text.replace(row, "pt\tCase Reports\tobservational\t6\tC"), encoding="utf-8")
    edited = Pipeline(
        AskConfig(ranker="ebm", cache=False, year=YEAR, rules=rules), source=scoring_pool.store()
    )
    # S_study comes with the annotation (one evidence grade): annotated with the edited tables
    annotations, _ = edited.annotate([a.citation for a in pool.values()])
    answers = edited.rank(THERAPY, annotations)
    got = [keys[a.pmid] for a in answers]
    assert got.index("case_report") < got.index("rct")
    case = next(a for a in answers if keys[a.pmid] == "case_report")
    before = next(a for a in shipped if keys[a.pmid] == "case_report")
    assert case.ebm.soe.study == 6.0
    assert case.ebm.total == pytest.approx(before.ebm.total + (6.0 - 0.3) / 3)
    assert any(str(path) in (c.where or "") for c in case.explanation)


def test_ask_on_the_local_store(pipeline: Pipeline) -> None:
    frame = load_frame(ROOT / "questions" / "cough_gerd.yaml")
    result = pipeline.ask(frame)
    answers = result.answers
    assert 0 < len(answers) <= pipeline.config.candidates
    assert {a.pmid for a in answers} | set(result.missing) == set(result.retrieval.result.pmids)
    assert [a.rank for a in answers] == list(range(1, len(answers) + 1))
    assert all(x.score >= y.score for x, y in zip(answers, answers[1:], strict=False))
    for a in answers:
        assert a.score == pytest.approx(a.ebm.total)  # ranker "ebm"
        assert len(a.outcomes) <= 3
        assert [o.sentence for o in a.outcomes] == sorted(o.sentence for o in a.outcomes)
        assert all(o.sentence > 0 for o in a.outcomes)  # never the title
    d = result.to_dict(top=5)
    assert {"frame", "query", "results", "relaxations"} <= set(d)
    assert len(d["results"]) == min(5, len(answers))
    r0 = d["results"][0]
    assert {"rank", "pmid", "score", "components", "title", "outcomes", "grade", "year"} <= set(r0)
    assert set(r0["components"]) == {"pico", "soe", "task"}  # the paper's, as issue 5 gives them
    assert set(r0["match"]) == {
        "total",
        "problem",
        "intervention",
        "population",
        "co_problems",
        "outcome",
    }
    json.dumps(d)


def test_annotation_cache_makes_a_warm_question(tmp_path: Path, concept_index: Path) -> None:
    frame = load_frame(ROOT / "questions" / "hypomagnesemia_causes.yaml")
    config = AskConfig(cache_path=tmp_path / "annotations.sqlite", year=YEAR, candidates=20)
    kw = {"source": scoring_pool.store(), "annotator": scoring_pool.annotator()}
    with Pipeline(config, **kw) as cold:
        first = cold.ask(frame)
    assert first.cached == 0 and first.answers
    with Pipeline(config, **kw) as warm:
        second = warm.ask(frame)
    assert second.cached == len(second.answers) == len(first.answers)
    assert [(a.pmid, a.score) for a in second.answers] == [(a.pmid, a.score) for a in first.answers]
    assert [a.outcomes for a in second.answers] == [a.outcomes for a in first.answers]


def test_ask_config_validation() -> None:
    for bad in ({"ranker": "bm25"}, {"source": "web"}, {"candidates": 0}, {"top": 0}, {"alpha": 2.0}):
        with pytest.raises(InputError):
            AskConfig(**bad)


# --- the command line -------------------------------------------------------------------------------


@pytest.fixture
def cli_home(concept_index: Path) -> None:
    """The CLI finds the concept index and the bundled store in the tests' EBM_HOME."""
    scoring_pool.store()


def test_cli_ask_json_text_and_trec(cli_home: None, capsys: pytest.CaptureFixture[str]) -> None:
    frame = ROOT / "questions" / "cough_gerd.yaml"
    assert main(["ask", "--frame", str(frame), "--format", "json", "--top", "3", "--year", "2024"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["frame"]["id"] == "paper-cough-gerd" and d["query"]
    assert 1 <= len(d["results"]) <= 3
    r0 = d["results"][0]
    assert r0["rank"] == 1 and r0["ranker"] == "ebm-plus"  # the default
    # every EBM+ feature is shown, and what they add up to is the score
    assert set(r0["ranking"]) == set(FEATURES)
    assert sum(r0["ranking"].values()) == pytest.approx(r0["score"], abs=1e-5)
    assert r0["retrieval_score"] is not None  # the local store's BM25

    assert main(["ask", "--frame", str(frame), "--top", "2", "--year", "2024"]) == 0
    out = capsys.readouterr().out
    assert "Query (" in out and "1. score" in out and "PMID " in out and "PICO " in out
    assert "EBM+ = " in out and "match (problem " in out

    assert (
        main(["ask", "--frame", str(frame), "--format", "json", "--ranker", "combo", "--year", "2024"]) == 0
    )
    assert json.loads(capsys.readouterr().out)["results"][0]["ranker"] == "combination"

    assert main(["ask", "--frame", str(frame), "--format", "trec", "--year", "2024"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines
    for n, line in enumerate(lines, start=1):
        qid, q0, pmid, rank, score, tag = line.split()
        assert (qid, q0, rank, tag) == ("paper-cough-gerd", "Q0", str(n), "ebm-plus")
        assert pmid.isdigit()
        float(score)


def test_cli_explain_names_every_rule(cli_home: None, capsys: pytest.CaptureFixture[str]) -> None:
    rct = scoring_pool.ischemia_pool()["rct"]
    args = ["explain", rct.pmid, "--task", "therapy", "--problem", "myocardial ischemia"]
    args += ["--intervention", "tracheal extubation", "--year", "2024"]
    assert main(args) == 0
    out = capsys.readouterr().out
    for needle in (
        "same concept",
        "Airway Extubation (D060666)",
        "best outcome sentence",
        "study_types.tsv:",
        "task_indicators.tsv:",
        "journals.tsv",
        "(1998 - 2024) / 100",
        "S_EBM =",
        "S_term =",
    ):
        assert needle in out, needle
    assert main([*args, "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    wheres = [c["where"] for c in d["answer"]["explanation"] if c["component"] == "task" and c["points"]]
    assert wheres and all(":" in w for w in wheres)


def test_cli_errors_are_messages(cli_home: None, capsys: pytest.CaptureFixture[str]) -> None:
    frame = str(ROOT / "questions" / "cough_gerd.yaml")
    assert main(["ask", "--frame", frame, "--task", "therapy"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["ask", "--problem", "gout"]) == 2
    assert "--frame" in capsys.readouterr().err
    assert main(["ask", "--frame", frame, "--weights", "0.9,0.9"]) == 2
    assert "at most 1" in capsys.readouterr().err
    assert main(["explain", "1", "--task", "therapy", "--problem", "gout"]) == 2
    assert "PMID 1 is not in the local store" in capsys.readouterr().err
    assert main(["ask", "--frame", frame, "--rules", "/nonexistent/rules"]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_unusable_cache_is_a_clear_error(tmp_path: Path, concept_index: Path) -> None:
    from ebm.annotation_cache import AnnotationCache
    from ebm.errors import DataError

    (tmp_path / "annotations.sqlite").mkdir()
    with pytest.raises(DataError, match="annotation cache .*--no-cache"):
        AnnotationCache(tmp_path / "annotations.sqlite", "v")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database" * 100)
    with pytest.raises(DataError, match="annotation cache"):
        AnnotationCache(junk, "v")
