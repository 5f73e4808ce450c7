"""``ebm ask --format trec`` writes the ranking it shows: read back by the evaluation's reader
(trec_eval's order: score descending, docno descending on ties), each question's list is the
order ``ebm ask`` ranked, ties included. The six paper questions of questions/ with the term
ranker have many tied scores (candidates sharing no question term score 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ebm.cli import main
from ebm.evaluation.trec import ScoredDoc, ranking, read_run, run_from_ranked
from tests import scoring_pool

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["ask", "--frame", str(ROOT / "questions"), "--ranker", "term", "--year", "2024"]


@pytest.fixture
def cli_home(concept_index: Path) -> None:
    scoring_pool.store()


def test_trec_run_reads_back_in_the_order_ask_shows(
    cli_home: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main([*ARGS, "--format", "json", "--top", "50"]) == 0
    shown = {d["frame"]["id"]: [r["pmid"] for r in d["results"]] for d in json.loads(capsys.readouterr().out)}
    assert len(shown) == 6 and all(shown.values())

    assert main([*ARGS, "--format", "trec"]) == 0
    path = tmp_path / "term.run"
    path.write_text(capsys.readouterr().out, encoding="utf-8")
    run = read_run(path)
    assert run.tag == "ebm-term"
    assert {q: run.ranking(q) for q in run.qids} == shown
    for q in run.qids:  # ranks 1..n down the list, scores strictly decreasing
        docs = run.results[q]
        assert [d.rank for d in docs] == list(range(1, len(docs) + 1))
        assert all(a.score > b.score for a, b in zip(docs, docs[1:], strict=False))

    # The test has teeth: the scores rounded as ebm ask used to write them (6 decimals) tie and
    # reorder when read back.
    moved = 0
    for q in run.qids:
        rounded = [ScoredDoc(d.docno, round(d.score, 6), d.rank) for d in run.results[q]]
        moved += sum(a != b for a, b in zip(ranking(rounded), shown[q], strict=True))
    assert moved > 0


def test_run_from_ranked_keeps_the_given_order_and_the_scores() -> None:
    run = run_from_ranked("x", {"Q": [("1", 2.0), ("9", 1.0), ("2", 1.0), ("5", 1.0), ("3", 0.5)]})
    assert run.ranking("Q") == ["1", "9", "2", "5", "3"]  # trec_eval alone would give 9, 5, 2
    assert [d.score for d in run.results["Q"]] == pytest.approx([2.0, 1.0, 1.0, 1.0, 0.5], abs=1e-15)
    # a score above the one before it (an order not by score) is still written in the given order
    run = run_from_ranked("x", {"Q": [("a", 0.0), ("b", 3.0), ("c", -1.0)]})
    assert run.ranking("Q") == ["a", "b", "c"]
