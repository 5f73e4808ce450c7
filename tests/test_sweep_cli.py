"""``ebm sweep`` on cached components: hand-designed collections whose best weights are derived by
hand, cross-checked against an independent brute force (one run per setting, scored by the plain
measures), and the bench/sweep agreement at the chosen setting."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ebm.cli import main
from ebm.evaluation.bench import Settings, run_bench
from ebm.evaluation.components import Components, QuestionComponents
from ebm.evaluation.scores import score_run
from ebm.evaluation.sweep import combination_run, grid_weights, weights_run
from ebm.evaluation.trec import read_qrels, write_qrels

# Q1: the relevant "1" is first iff l1 > l3 (over "3") and l1 > 0.5 l2 (over "2").
# Q2: the relevant "1" is first iff l2 > l1 (over "3") and l2 > 0.5 l3 (over "2").
# Relevant documents come last in pool order, so they lose every tie (ties keep the pool order,
# as ebm ask keeps the retrieval order). Both first: l2 > l1 > l3 and l1 > l2 / 2. In grid order (l1, then l2,
# ascending) with step 0.1, the first such setting is (0.3, 0.5, 0.2): l1 = 0.1 and 0.2 leave
# no l2, and (0.3, 0.4) ties l1 with l3 = 0.3.
HAND = {
    "Q1": {"docnos": ["3", "2", "1"], "pico": [0, 0, 1], "soe": [0, 0.5, 0], "task": [1, 0, 0]},
    "Q2": {"docnos": ["3", "2", "1"], "pico": [1, 0, 0], "soe": [0, 0, 1], "task": [0, 0.5, 0]},
}
# The term scores put the relevant document last in Q1 and first in Q2.
TERM = {"Q1": [2.0, 1.0, 0.0], "Q2": [0.0, 1.0, 2.0]}


def hand_components() -> Components:
    questions = []
    for qid, q in HAND.items():
        values = {k: np.asarray(q[k], dtype=float) for k in ("pico", "soe", "task")}
        values["term"] = np.asarray(TERM[qid], dtype=float)
        values["bm25"] = np.asarray([3.0, 2.0, 1.0])
        questions.append(QuestionComponents(qid, "therapy", q["docnos"], [3.0, 2.0, 1.0], [None] * 3, values))
    return Components(questions, "hand", {})


@pytest.fixture
def hand_files(tmp_path: Path) -> tuple[Path, Path]:
    comp = hand_components().save(tmp_path / "components.json.gz")
    qrels = tmp_path / "qrels.txt"
    write_qrels(qrels, {q: {"1": 3, "2": 0, "3": 2} for q in HAND})
    return comp, qrels


def brute_force_weights(components: Components, qrels_path: Path, threshold: int, step: float) -> dict:
    """MAP of every grid setting from a run built and scored one setting at a time."""
    qrels = read_qrels(qrels_path)
    n = round(1 / step)
    i, j, l1, l2, l3 = grid_weights(n)
    items = [q.component_scores() for q in components.questions]
    return {
        (int(a), int(b)): score_run(qrels, weights_run(items, x, y, z), threshold).mean("MAP")
        for a, b, x, y, z in zip(i, j, l1, l2, l3, strict=True)
    }


def test_sweep_finds_the_hand_derived_best_weights(hand_files, tmp_path: Path, capsys) -> None:
    comp, qrels = hand_files
    out = tmp_path / "out"
    args = ["sweep", str(qrels), "--components", str(comp), "--step", "0.1", "--out", str(out)]
    assert main([*args, "--level", "strict"]) == 0
    printed = capsys.readouterr().out
    assert "S_EBM best: l1 = 0.3, l2 = 0.5, l3 = 0.2: 1.0000" in printed
    data = json.loads((out / "sweep-strict.json").read_text())
    assert data["weights"]["best"] == {"l1": 0.3, "l2": 0.5, "l3": 0.2}
    assert data["weights"]["best_value"] == 1.0
    # the independent brute force agrees on every setting's best and on the number of ties
    brute = brute_force_weights(hand_components(), qrels, 3, 0.1)
    best = max(brute.values())
    first = min(k for k, v in brute.items() if v == best)
    assert best == 1.0 and first == (3, 5)
    assert data["weights"]["ties"] == sum(v == best for v in brute.values())
    assert data["pool_order"] == pytest.approx(1 / 3)  # pool order ranks "1" last in both pools
    for name in ("sweep-weights-strict.png", "sweep-alpha-strict.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_pool_order_value_is_hand_computed(hand_files, tmp_path: Path, capsys) -> None:
    comp, qrels = hand_files
    # lenient: "3" (grade 2) and "1" (grade 3) relevant, at pool ranks 1 and 3 in both pools:
    # AP = (1/1 + 2/3) / 2 = 5/6
    assert (
        main(["sweep", str(qrels), "--components", str(comp), "--step", "0.5", "--out", str(tmp_path)]) == 0
    )
    assert "pool order: 0.8333" in capsys.readouterr().out


def test_combination_sweep_over_best_weights_matches_brute_force(hand_files, tmp_path: Path, capsys) -> None:
    comp, qrels = hand_files
    args = ["sweep", str(qrels), "--components", str(comp), "--step", "0.1", "--out", str(tmp_path)]
    assert main([*args, "--level", "strict", "--weights", "best"]) == 0
    data = json.loads((tmp_path / "sweep-strict.json").read_text())
    assert data["combination"]["ebm_weights"] == [0.3, 0.5, 0.2]
    items = [q.combination_scores(0.3, 0.5, 0.2) for q in hand_components().questions]
    judged = read_qrels(qrels)
    curve = data["combination"]["curve"]["MAP"]
    for k, alpha in enumerate(data["combination"]["alphas"]):
        run = combination_run(items, alpha, beta=(10 - k) / 10)
        assert curve[k] == pytest.approx(score_run(judged, run, 3).mean("MAP"), abs=1e-12)
    # alpha 0 is the term score alone: Q1's relevant document last (1/3), Q2's first (1)
    assert curve[0] == pytest.approx((1 / 3 + 1) / 2)
    assert curve[-1] == 1.0  # alpha 1: S_EBM at the best weights
    # Q1: EBM (0.3, 0.25, 0.2) -> min-max (1, 0.5, 0), term (0, 1, 2) -> (0, 0.5, 1); combined
    # "1" = alpha, "2" = 0.5, "3" = 1 - alpha: "1" first iff alpha > 0.5 (ties lose), i.e. 0.6;
    # Q2's "1" is 1 at every alpha (top on both scores)
    assert data["combination"]["best_alpha"] == 0.6


def test_bench_at_the_swept_setting_reproduces_the_sweep(hand_files) -> None:
    comp, qrels = hand_files
    result = run_bench(Components.load(comp), read_qrels(qrels), Settings(0.3, 0.5, 0.2, 1.0), ["strict"])
    report = result.reports["strict"]
    assert report.runs == ["pool", "date", "bm25", "term", "ebm", "combination"]
    assert report.cell(report.runs.index("ebm"), "MAP").mean == 1.0
    assert report.cell(report.runs.index("combination"), "MAP").mean == 1.0  # alpha 1: EBM alone


def test_task_filter_and_errors(hand_files, tmp_path: Path, capsys) -> None:
    comp, qrels = hand_files
    base = ["sweep", str(qrels), "--components", str(comp), "--out", str(tmp_path)]
    assert main([*base, "--task", "prognosis"]) == 2
    assert "no question of task 'prognosis'" in capsys.readouterr().err
    assert main([*base, "--step", "0.03"]) == 2
    assert "does not divide 1" in capsys.readouterr().err
    assert main([*base, "--measure", "NDCG"]) == 2
    assert "unknown measure" in capsys.readouterr().err
    assert main(["sweep", str(qrels), "--out", str(tmp_path)]) == 2
    assert "--frames" in capsys.readouterr().err
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(b"not gzip")
    assert main(["sweep", str(qrels), "--components", str(bad), "--out", str(tmp_path)]) == 2
    assert "not a components file" in capsys.readouterr().err
    assert main([*base, "--task", "therapy", "--step", "0.5"]) == 0


def test_components_file_round_trip_is_exact(tmp_path: Path) -> None:
    c = hand_components()
    c.questions[0].values["pico"] = np.asarray([0.1 + 0.2, 1 / 3, -2.5e-17])
    loaded = Components.load(c.save(tmp_path / "c.json.gz"))
    for a, b in zip(c.questions, loaded.questions, strict=True):
        assert a.docnos == b.docnos and a.years == b.years
        for name in a.values:
            assert np.array_equal(a.values[name], b.values[name])
