"""Significance marks, the report tables (per query, mean, per task, pairwise) and ``ebm eval``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from ebm.cli import main
from ebm.errors import InputError
from ebm.evaluation.relevance import relevant_docs, threshold_for
from ebm.evaluation.report import build_report, format_change
from ebm.evaluation.significance import relative_change, wilcoxon
from ebm.evaluation.tasks import read_frames, tasks_by_query
from ebm.evaluation.trec import read_qrels, read_run

FIXTURES = Path(__file__).parent / "fixtures" / "eval"


# -- relevance levels ---------------------------------------------------------------------------


def test_levels_and_threshold() -> None:
    assert threshold_for("lenient") == 2
    assert threshold_for("strict") == 3
    assert threshold_for("strict", 1) == 1  # an explicit threshold wins
    assert threshold_for() == 2
    with pytest.raises(InputError, match="unknown relevance level 'loose'"):
        threshold_for("loose")
    with pytest.raises(InputError, match="at least 1"):
        threshold_for(threshold=0)
    assert relevant_docs({"a": 3, "b": 2, "c": 1, "d": 0, "e": -1}, 2) == {"a", "b"}


# -- Wilcoxon -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "p", "mark"),
    [
        # All n differences of one sign: exact two-sided p = 2 / 2**n.
        (5, 2 / 2**5, "°"),
        (6, 2 / 2**6, "△"),
        (7, 2 / 2**7, "△"),
        (8, 2 / 2**8, "▲"),
    ],
)
def test_wilcoxon_exact_p_and_marks(n: int, p: float, mark: str) -> None:
    base = np.zeros(n + 3)
    better = np.concatenate([np.arange(1, n + 1) / 10, np.zeros(3)])  # 3 ties are discarded
    up = wilcoxon(base, better)
    assert up.p_value == pytest.approx(p)
    assert up.n == n + 3 and up.nonzero == n
    assert up.mark() == mark
    down = wilcoxon(better, base)
    assert down.mark() == {"°": "°", "△": "▽", "▲": "▼"}[mark]
    assert down.label == ("ns" if mark == "°" else f"down{1 if mark == '▲' else 5}")


def test_wilcoxon_identical_and_rounding_noise() -> None:
    same = wilcoxon([0.1, 0.5, 0.3], [0.1, 0.5, 0.3])
    assert same.p_value == 1.0 and same.direction == "none" and same.mark(ascii_only=True) == "ns"
    noise = wilcoxon([0.3] * 8, [0.1 + 0.2] * 8)  # 0.1 + 0.2 != 0.3 in floating point
    assert noise.nonzero == 0 and noise.p_value == 1.0
    with pytest.raises(InputError, match="same length"):
        wilcoxon([1, 2], [1, 2, 3])


def test_relative_change_and_format() -> None:
    assert relative_change(0.0, 0.5) is None
    assert format_change(relative_change(0.3, 0.52)) == "+73%"
    assert format_change(relative_change(0.367, 0.383)) == "+4.4%"
    assert format_change(relative_change(0.792, 0.739)) == "-6.7%"
    assert format_change(None) == ""


# -- report ---------------------------------------------------------------------------------------


@pytest.fixture
def fixture_report():
    qrels = read_qrels(FIXTURES / "qrels.txt")
    runs = [read_run(FIXTURES / "run_a.run"), read_run(FIXTURES / "run_b.run")]
    tasks = tasks_by_query(read_frames(FIXTURES / "frames"), qrels)
    return build_report(qrels, runs, threshold=2, tasks=tasks, qrels_path=FIXTURES / "qrels.txt")


def test_report_means_changes_and_tasks(fixture_report) -> None:
    report = fixture_report
    assert report.runs == ["run_a", "run_b"]
    # run_b per query (lenient): Q1 d9 d1 d4 -> 1 1 0 of 4 relevant; Q2 e3 (tie, larger docno first)
    # then e2 -> 1 0; Q3 f1 -> 1; Q4 nothing relevant.
    assert report.scores[1].values["MAP"] == pytest.approx([0.5, 1.0, 1.0, 0.0])
    assert report.scores[1].values["TDRR"] == pytest.approx([1.5, 1.0, 1.0, 0.0])
    a_map = (1 / 2 + 2 / 3 + 3 / 5) / 4 / 4 + 1 / 4
    cell = report.cell(1, "MAP")
    assert cell.mean == pytest.approx(2.5 / 4)
    assert cell.change == pytest.approx((2.5 / 4) / a_map - 1)
    assert cell.comparison.nonzero == 2 and cell.comparison.p_value == pytest.approx(0.5)
    assert report.cell(1, "P@10").change == pytest.approx(0.0)  # 0.1 both
    assert report.cell(0, "MAP").comparison is None
    assert report.task_names() == ["therapy", "diagnosis", "prognosis"]
    assert report.group_qids("therapy") == ["Q1", "Q2"]  # Q2 is prevention, grouped as therapy
    therapy = report.cell(1, "MAP", "therapy")
    assert therapy.mean == pytest.approx(0.75)
    diagnosis = report.cell(0, "MRR", "diagnosis")
    assert diagnosis.mean == 0.0 and report.cell(1, "MRR", "diagnosis").change is None
    assert any("Q5" in note for note in report.notes) and any("Q3" in note for note in report.notes)


def test_report_text(fixture_report) -> None:
    text = fixture_report.to_text(per_query=True)
    assert "Relevance: lenient (grade >= 2); 4 queries" in text
    assert "run_b  0.100 (+0.0%) °  0.625 (+73%) °  0.750 (+100%) °  0.875 (+72%) °" in text
    assert "therapy (2)" in text and "diagnosis (1)" in text and "prognosis (1)" in text
    assert "Q3   diagnosis" in text
    assert "▲/▼ significant at 1%" in text
    assert "Pairwise" not in text  # only with three runs or more
    assert "++/-- significant" in fixture_report.to_text(ascii_only=True)


def test_report_json(fixture_report) -> None:
    data = json.loads(fixture_report.to_json())
    assert data["level"] == "lenient" and data["threshold"] == 2
    assert data["measures"] == ["P@10", "MAP", "MRR", "TDRR"]
    assert [s["task"] for s in data["summary"]] == ["all", "therapy", "diagnosis", "prognosis"]
    run_b = data["summary"][0]["runs"]["run_b"]["MRR"]
    assert run_b["mean"] == pytest.approx(0.75) and run_b["change"] == pytest.approx(1.0)
    assert run_b["mark"] == "ns" and run_b["p_value"] == pytest.approx(0.5)
    assert data["summary"][0]["runs"]["run_a"]["MRR"]["mark"] is None
    q3 = next(q for q in data["queries"] if q["qid"] == "Q3")
    assert q3["task"] == "diagnosis" and q3["scores"]["run_a"]["MAP"] == 0.0
    assert q3["scores"]["run_b"]["MAP"] == 1.0
    assert data["runs"][0]["ignored_queries"] == ["Q5"]
    pair = data["pairwise"]["all"]["TDRR"][0]
    assert (pair["a"], pair["b"]) == ("run_a", "run_b")


def test_pairwise_matrix_three_runs(tmp_path: Path) -> None:
    qrels = read_qrels(FIXTURES / "qrels.txt")
    a, b = read_run(FIXTURES / "run_a.run"), read_run(FIXTURES / "run_b.run")
    c = read_run(FIXTURES / "run_a.run", name="copy_of_a")
    report = build_report(qrels, [a, b, c], threshold=2)
    pairs = report.pairwise("MAP")
    assert [(p.b, p.a) for p in pairs] == [("run_b", "run_a"), ("copy_of_a", "run_a"), ("copy_of_a", "run_b")]
    assert pairs[1].change == 0.0 and pairs[1].comparison.p_value == 1.0
    a_map = (1 / 2 + 2 / 3 + 3 / 5) / 4 / 4 + 1 / 4
    assert (pairs[2].a_mean, pairs[2].b_mean) == pytest.approx((2.5 / 4, a_map))
    assert pairs[2].change == pytest.approx(a_map / (2.5 / 4) - 1)
    assert pairs[2].comparison.direction == "down"
    text = report.to_text()
    assert "Pairwise differences" in text and "copy_of_a vs run_b" in text and "+0.0% °" in text


def test_duplicate_run_names_refused() -> None:
    qrels = read_qrels(FIXTURES / "qrels.txt")
    run = read_run(FIXTURES / "run_a.run")
    with pytest.raises(InputError, match="two runs are named 'run_a'"):
        build_report(qrels, [run, run], threshold=2)


# -- CLI -----------------------------------------------------------------------------------------


def test_cli_eval_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", str(FIXTURES / "qrels.txt"), str(FIXTURES / "run_a.run"), str(FIXTURES / "run_b.run")]
    assert main([*args, "--tasks", str(FIXTURES / "frames")]) == 0
    out = capsys.readouterr().out
    assert "0.625 (+73%) °" in out and "By clinical task" in out
    assert main([*args, "--level", "strict", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["level"] == "strict"
    # strict run_b: Q1 d9 d1 both grade 3 at ranks 1 and 2 -> AP 1; Q3 f1 -> 1.
    assert data["summary"][0]["runs"]["run_b"]["MAP"]["mean"] == pytest.approx(0.5)
    assert (
        main([*args, "--threshold", "1", "--json", "--fine-tasks", "--tasks", str(FIXTURES / "frames")]) == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["level"] == "grade >= 1"
    assert [s["task"] for s in data["summary"]] == [
        "all",
        "therapy",
        "prevention",
        "diagnostic test",
        "prognosis",
    ]


def test_cli_eval_same_file_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x").mkdir()
    shutil.copy(FIXTURES / "run_a.run", tmp_path / "x" / "run_a.run")
    assert (
        main(
            [
                "eval",
                str(FIXTURES / "qrels.txt"),
                str(FIXTURES / "run_a.run"),
                str(tmp_path / "x" / "run_a.run"),
                "--json",
            ]
        )
        == 0
    )
    names = [r["name"] for r in json.loads(capsys.readouterr().out)["runs"]]
    assert names == [str(FIXTURES / "run_a.run"), str(tmp_path / "x" / "run_a.run")]


def test_cli_eval_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.run"
    bad.write_text("Q1 Q0 d1 1 1.0 t\nQ1 Q0 d2 1.0 t\n")
    assert main(["eval", str(FIXTURES / "qrels.txt"), str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2: expected 6 columns" in err and "Traceback" not in err
    assert main(["eval", str(tmp_path / "none.txt"), str(bad)]) == 2
    assert "qrels file not found" in capsys.readouterr().err
