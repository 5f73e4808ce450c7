"""The real judged benchmark (../shared/data/bench): reproduce its published baselines.

The figures are those of /work/shared/data/bench/README.md (computed there with ir_measures).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ebm.cli import main
from ebm.evaluation.baselines import date_order, pool_order
from ebm.evaluation.report import build_report
from ebm.evaluation.scores import score_run
from ebm.evaluation.trec import read_qrels, read_run, write_run
from tests.test_evaluation_measures import assert_matches_ir_measures

# README.md of the bench: run -> level -> (P@10, MAP, MRR, TDRR)
PUBLISHED = {
    "pool": {"lenient": (0.326, 0.695, 0.847, 1.637), "strict": (0.148, 0.504, 0.540, 0.808)},
    "date": {"lenient": (0.243, 0.368, 0.358, 0.851), "strict": (0.126, 0.218, 0.194, 0.399)},
}
MEASURES = ("P@10", "MAP", "MRR", "TDRR")


@pytest.fixture(scope="module")
def bench(shared: Path) -> Path:
    return shared / "bench"


@pytest.mark.parametrize("level", ["lenient", "strict"])
def test_pool_order_reproduces_published_baseline(bench: Path, level: str, capsys) -> None:
    assert main(["eval", str(bench / "qrels.txt"), str(bench / "pools.run"), "--level", level, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    means = data["summary"][0]["runs"]["pools"]
    assert data["summary"][0]["queries"] == 23
    got = tuple(round(means[m]["mean"], 3) for m in MEASURES)
    assert got == PUBLISHED["pool"][level]


@pytest.mark.parametrize("threshold", [1, 2, 3])
def test_pool_run_matches_ir_measures_per_query(bench: Path, threshold: int) -> None:
    # pools.run has ties in score (e.g. D02), so this also checks the tie order on real data.
    assert assert_matches_ir_measures(bench / "qrels.txt", bench / "pools.run", threshold) == 23


def test_date_order_reproduces_published_baseline(bench: Path, tmp_path: Path) -> None:
    from ebm.medline.bundled import iter_bundled

    pool = read_run(bench / "pools.run")
    pooled = {d.docno for docs in pool.results.values() for d in docs}
    years = {c.pmid: c.year for c in iter_bundled() if c.pmid in pooled}
    assert len(years) == len(pooled)  # every pooled citation is in the bundled corpus
    qrels = read_qrels(bench / "qrels.txt")
    date = date_order(pool, years)
    for level, threshold in (("lenient", 2), ("strict", 3)):
        scores = score_run(qrels, date, threshold)
        assert tuple(round(scores.mean(m), 3) for m in MEASURES) == PUBLISHED["date"][level]
    # Written out and read back, it is the same run for ir_measures too.
    write_run(tmp_path / "date.run", date)
    assert assert_matches_ir_measures(bench / "qrels.txt", tmp_path / "date.run", 2) == 23


def test_bench_table_with_tasks_and_significance(bench: Path, shared: Path) -> None:
    from ebm.evaluation.tasks import read_frames, tasks_by_query

    qrels = read_qrels(bench / "qrels.txt")
    pool = pool_order(read_run(bench / "pools.run"), name="pool")
    reverse = pool_order(read_run(bench / "pools.run"), name="reverse")
    for docs in reverse.results.values():  # the pool upside down: must be significantly worse
        docs[:] = [d.__class__(d.docno, -d.score, d.rank) for d in docs]
    tasks = tasks_by_query(read_frames(bench / "frames"), qrels)
    report = build_report(qrels, [pool, reverse], threshold=2, tasks=tasks)
    assert report.task_names() == ["therapy", "diagnosis", "prognosis", "etiology"]
    assert sum(len(report.group_qids(t)) for t in report.task_names()) == 23
    for measure in MEASURES:
        cell = report.cell(1, measure)
        assert cell.change < 0 and cell.comparison.direction == "down"
        assert cell.comparison.level == 1, measure  # p < 0.01 over 23 questions
