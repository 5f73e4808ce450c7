"""The rankers of ``ebm ask`` (the paper's, kept exactly; EBM+), EBM+ weights files, the fitting
with cross-validation, and the pipeline's start-up, on real citations of the bundled corpus.

Unit tests over the tiny MeSH subset (``tiny_resources``); ``ebm ask`` on the store and the real
index: tests/test_scoring_integration.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ebm.ask import AskConfig, Pipeline
from ebm.errors import InputError
from ebm.evaluation.sweep import evaluate_settings
from ebm.frame import frame_from_args
from ebm.resources import Resources
from ebm.scoring.combine import combine
from ebm.scoring.fit import GRID, Question, cross_validate, fit, mean_map, nested_cross_validate
from ebm.scoring.rankers import (
    FEATURES,
    RANKERS,
    CandidateScores,
    PlusWeights,
    RankerSettings,
    canonical,
    feature_values,
    rank,
    shipped_weights,
)
from extractors.annotate import Annotation
from tests import tiny

ROOT = Path(__file__).resolve().parents[1]
YEAR = 2024
THERAPY = frame_from_args("therapy", problem="myocardial ischemia", intervention=["tracheal extubation"])
DIAGNOSIS = frame_from_args("diagnostic test", problem="myocardial ischemia")


@pytest.fixture(scope="module")
def pipeline(tiny_resources: Resources) -> Pipeline:
    # no source: these tests score given annotations, they never search
    return Pipeline(AskConfig(cache=False, year=YEAR), resources=tiny_resources, annotator=tiny.annotator())


@pytest.fixture(scope="module")
def pool(pipeline: Pipeline) -> dict[str, Annotation]:
    cits = tiny.ischemia_pool()
    anns, _ = pipeline.annotate(list(cits.values()))
    return dict(zip(cits, anns, strict=True))


@pytest.fixture(scope="module")
def therapy(pipeline: Pipeline, pool: dict[str, Annotation]) -> list[CandidateScores]:
    return pipeline.candidate_scores(THERAPY, list(pool.values()))


def test_paper_rankers_are_kept_exactly(therapy: list[CandidateScores]) -> None:
    assert canonical("ebm") == "paper-ebm" and canonical("combo") == "combination"
    assert canonical(" EBM-Plus ") == "ebm-plus"
    with pytest.raises(InputError, match="unknown ranker 'bm25'"):
        canonical("bm25")
    ebm = rank("ebm", therapy)
    assert ebm.ranker == "paper-ebm" and ebm.scores == [c.ebm.total for c in therapy]
    assert all(sum(p.values()) == pytest.approx(c.ebm.total) for p, c in zip(ebm.parts, therapy, strict=True))
    combo = rank("combo", therapy)
    assert combo.scores == combine([c.ebm.total for c in therapy], [c.term.score for c in therapy])
    assert rank("term", therapy).scores == [c.term.score for c in therapy]
    assert rank("retrieval", therapy).order == list(range(len(therapy)))
    for r in RANKERS:  # every ranker orders by its scores, best first
        got = rank(r, therapy)
        assert [got.scores[i] for i in got.order] == sorted(got.scores, reverse=True)


def test_ebm_plus_parts_add_up_and_show_every_feature(therapy: list[CandidateScores]) -> None:
    shipped = shipped_weights()
    assert set(shipped.weights) == set(FEATURES)  # every feature listed (0 when not fitted)
    assert shipped.weights["retrieval"] == 1.0
    r = rank("ebm-plus", therapy)
    for score, parts in zip(r.scores, r.parts, strict=True):
        assert set(parts) == set(FEATURES)
        assert sum(parts.values()) == pytest.approx(score)
    assert "EBM+ =" in r.description
    # scaled features are in [0, 1] over the question's candidates
    values = feature_values(therapy)
    for name, f in FEATURES.items():
        assert all(0.0 <= v <= 1.0 for v in values[name]), name
        if f.scaled and len(set(values[name])) > 1:
            assert min(values[name]) == 0.0 and max(values[name]) == 1.0


def test_edited_weights_change_the_order(therapy: list[CandidateScores], tmp_path: Path) -> None:
    # retrieval alone: the retrieval order; with reversed retrieval scores, the reverse
    alone = RankerSettings(plus=PlusWeights({"retrieval": 1.0}))
    assert rank("ebm-plus", therapy, alone).order == list(range(len(therapy)))
    n = len(therapy)
    reversed_ = [
        CandidateScores(c.pmid, c.ebm, c.term, c.match, c.lexical, float(i), c.retrieval_rank)
        for i, c in enumerate(therapy)
    ]
    assert rank("ebm-plus", reversed_, alone).order == list(range(n))[::-1]
    # a weights file with the task indicators alone ranks by S_task
    path = tmp_path / "weights.toml"
    path.write_text("# task only\n[weights]\ntask = 1\n", encoding="utf-8")
    settings = RankerSettings(plus=PlusWeights.read(path))
    got = rank("ebm-plus", therapy, settings)
    tasks = [therapy[i].ebm.task.total for i in got.order]
    assert tasks == sorted(tasks, reverse=True)
    assert str(path) in got.description


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[weights]\nretreival = 1\n", "unknown EBM\\+ feature 'retreival'"),
        ("[weights]\nretrieval = 'high'\n", "must be a number"),
        ("retrieval = 1\n", "no \\[weights\\] table"),
        ("[weights\n", "not a TOML weights file"),
    ],
)
def test_bad_weights_files_are_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "w.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message) as err:
        PlusWeights.read(path)
    assert str(path) in str(err.value)
    with pytest.raises(InputError, match="not found"):
        PlusWeights.read(tmp_path / "missing.toml")


def test_weights_round_trip(tmp_path: Path) -> None:
    w = PlusWeights({"retrieval": 1.0, "problem": 0.5}, note="a note")
    path = tmp_path / "w.toml"
    path.write_text(w.to_toml(), encoding="utf-8")
    back = PlusWeights.read(path)
    assert dict(back.weights) == dict(w.weights)


# --- fitting --------------------------------------------------------------------------------------


def test_fit_finds_the_feature_that_ranks_the_judged_citation_first(
    pipeline: Pipeline, pool: dict[str, Annotation]
) -> None:
    anns = list(pool.values())
    keys = list(pool)
    diagnosis = pipeline.candidate_scores(DIAGNOSIS, anns)
    names = ("retrieval", "task")
    features = feature_values(diagnosis, names)
    # retrieval order puts the diagnostic-accuracy study last; S_task for a diagnosis frame first
    retrieval_last = [float(len(anns) - 1 - i) for i in range(len(anns))]
    retrieval_last[keys.index("diagnostic")] = -1.0
    x = np.column_stack([np.array(retrieval_last) - min(retrieval_last), features["task"]])
    docnos = [a.citation.pmid for a in anns]
    q = Question("dx", docnos, x)
    qrels = {"dx": {pool["diagnostic"].citation.pmid: 3}}
    assert mean_map([q], qrels, 2, np.array([[1.0, 0.0]]))[0] == pytest.approx(0.25)
    f = fit([q], names, qrels)
    assert f.weights[0] == 1.0 and f.weights[1] > 0
    # with two features, coordinate ascent is the exhaustive search over the grid
    grid = np.array([[1.0, w] for w in GRID])
    assert f.value == pytest.approx(mean_map([q], qrels, 2, grid).max())
    assert f.value > 0.25  # the judged citation moved up
    # the fitted MAP is the measure ebm eval reports (same ranking convention)
    same = evaluate_settings([("dx", docnos, x @ f.weights)], qrels, 2)["MAP"][0]
    assert same == pytest.approx(f.value)


def test_cross_validation_scores_each_question_without_it(pool: dict[str, Annotation]) -> None:
    # Four hand-made questions over the real pool: in three, feature b ranks the judged citation
    # first; in the fourth ("odd"), feature a does. Left out, "odd" gets the weights of the others.
    # The other feature's citation comes just before the judged one, so it wins ties (candidate
    # order, as ebm ask breaks them): equal weights do not rank the judged citation first.
    docnos = [a.citation.pmid for a in pool.values()]
    n = len(docnos)
    questions, qrels = [], {}
    for i, qid in enumerate(["q1", "q2", "q3", "odd"]):
        target = i % (n - 1) + 1
        a = np.zeros(n)
        b = np.zeros(n)
        if qid == "odd":
            a[target] = 1.0
            b[target - 1] = 1.0
        else:
            b[target] = 1.0
            a[target - 1] = 1.0
        questions.append(Question(qid, docnos, np.column_stack([a, b])))
        qrels[qid] = {docnos[target]: 3}
    cv = cross_validate(questions, ("a", "b"), qrels)
    assert set(cv.held_out_scores) == {"q1", "q2", "q3", "odd"}
    for held, f in cv.folds:
        assert len(held) == 1 and f.names == ("a", "b")
    assert cv.weights_for("q1")["b"] > 1.0  # fitted on q2, q3, odd: b wins
    odd = cv.held_out_scores["odd"]
    assert int(np.argmax(odd)) != 3 % (n - 1) + 1  # so "odd" is ranked wrong when left out
    two = cross_validate(questions, ("a", "b"), qrels, folds=2)
    assert sorted(q for held, _ in two.folds for q in held) == ["odd", "q1", "q2", "q3"]
    with pytest.raises(InputError, match="folds"):
        cross_validate(questions, ("a", "b"), qrels, folds=5)
    # nested: the feature set is chosen without the left-out question too
    only = {
        name: ((name,), [Question(q.qid, q.docnos, q.features[:, [j]]) for q in questions])
        for j, name in enumerate(("a", "b"))
    }
    nested = nested_cross_validate(only, qrels, inner_folds=3)
    assert nested.chosen["q1"] == "b" and nested.chosen["odd"] == "b"
    assert nested.inner_map["q1"]["b"] > nested.inner_map["q1"]["a"]
    assert set(nested.held_out_scores) == set(qrels)
    with pytest.raises(InputError, match="no questions"):
        fit([], ("a", "b"), qrels)


# --- start-up ---------------------------------------------------------------------------------------


def test_importing_ask_and_the_cache_does_not_import_spacy() -> None:
    code = "import sys, ebm.ask, ebm.cli.ask, ebm.annotation_cache; print('spacy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"
