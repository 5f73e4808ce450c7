"""P@10, MAP, MRR, TDRR: hand-computed cases, the vectorised forms, and ir_measures on run files."""

from __future__ import annotations

import random
from pathlib import Path

import ir_measures
import numpy as np
import pytest

from ebm.evaluation.measures import MAP, MEASURES, MRR, P10, TDRR, by_name
from ebm.evaluation.scores import score_run
from ebm.evaluation.trec import read_qrels, read_run

FIXTURES = Path(__file__).parent / "fixtures" / "eval"


def test_tdrr_paper_example() -> None:
    # Paper, section 7: relevant documents at ranks 2 and 5 give 1/2 + 1/5 = 0.7.
    flags = [False, True, False, False, True]
    assert TDRR(flags, 2) == pytest.approx(0.7)
    assert MRR(flags, 2) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("flags", "num_rel", "expected"),
    [
        ([], 0, 0.0),
        ([False] * 50, 3, 0.0),
        ([True], 1, 1.0),
        ([True, True, True], 3, 1 + 1 / 2 + 1 / 3),
        ([False, False, True, False, True, True], 5, 1 / 3 + 1 / 5 + 1 / 6),
        # TDRR has no cutoff: rank 40 still counts.
        ([False] * 39 + [True], 1, 1 / 40),
    ],
)
def test_tdrr_hand_computed(flags: list[bool], num_rel: int, expected: float) -> None:
    assert TDRR(flags, num_rel) == pytest.approx(expected)
    assert TDRR.batch(np.array([flags], dtype=bool).reshape(1, len(flags)), num_rel)[0] == pytest.approx(
        expected
    )


def test_precision_counts_missing_ranks_as_not_relevant() -> None:
    assert P10([True, True, True], 3) == pytest.approx(0.3)
    assert P10([True] * 12, 12) == pytest.approx(1.0)
    assert by_name("P@5")([True, False, True], 2) == pytest.approx(0.4)


def test_average_precision_counts_unretrieved_relevant_documents() -> None:
    # Relevant at ranks 1 and 3, four relevant in all: (1/1 + 2/3) / 4.
    assert MAP([True, False, True], 4) == pytest.approx((1 + 2 / 3) / 4)
    assert MAP([True], 0) == 0.0  # no relevant document: 0, as trec_eval


def test_batch_forms_match_plain_forms_on_random_rankings() -> None:
    rng = np.random.default_rng(7)
    flags = rng.random((200, 30)) < 0.25
    num_rel = flags.sum(axis=1) + rng.integers(0, 3, size=200)
    for measure in MEASURES:
        batch = measure.batch(flags, num_rel)
        plain = [measure(list(row), int(n)) for row, n in zip(flags, num_rel, strict=True)]
        np.testing.assert_allclose(batch, plain, rtol=0, atol=1e-12, err_msg=measure.name)


def test_hand_checked_collection_lenient() -> None:
    """tests/fixtures/eval: worked out by hand (see the comments)."""
    qrels = read_qrels(FIXTURES / "qrels.txt")
    scores = score_run(qrels, read_run(FIXTURES / "run_a.run"), threshold=2)
    assert scores.qids == ["Q1", "Q2", "Q3", "Q4"]  # Q5 is not in the qrels: ignored
    assert scores.ignored == ["Q5"] and scores.missing == ["Q3"]
    # Q1 order d4 d2 d1 d3 d5 (d2 before d1 on the tie); relevant (grade >= 2): d1 d2 d5 and d9,
    # which is never retrieved: flags 0 1 1 0 1, four relevant.
    q1 = {"P@10": 3 / 10, "MAP": (1 / 2 + 2 / 3 + 3 / 5) / 4, "MRR": 1 / 2, "TDRR": 1 / 2 + 1 / 3 + 1 / 5}
    # Q2 order e3 e1 zz: e3 relevant, zz not judged (not relevant): flags 1 0 0, one relevant.
    q2 = {"P@10": 1 / 10, "MAP": 1.0, "MRR": 1.0, "TDRR": 1.0}
    # Q3 has no results, Q4 no relevant document: both 0.
    for name in q1:
        values = scores.values[name]
        assert values == pytest.approx([q1[name], q2[name], 0.0, 0.0]), name
        assert scores.mean(name) == pytest.approx((q1[name] + q2[name]) / 4), name


def test_hand_checked_collection_strict() -> None:
    qrels = read_qrels(FIXTURES / "qrels.txt")
    scores = score_run(qrels, read_run(FIXTURES / "run_a.run"), threshold=3)
    # Q1: relevant d1 (rank 3) and d9 (not retrieved); Q2 has no grade 3.
    assert scores.values["P@10"] == pytest.approx([0.1, 0, 0, 0])
    assert scores.values["MAP"] == pytest.approx([(1 / 3) / 2, 0, 0, 0])
    assert scores.values["MRR"] == pytest.approx([1 / 3, 0, 0, 0])
    assert scores.values["TDRR"] == pytest.approx([1 / 3, 0, 0, 0])


def _ir_measures_per_query(qrels_path: Path, run_path: Path, threshold: int) -> dict[str, dict[str, float]]:
    wanted = {m.ir_measure(threshold): m.name for m in MEASURES if m.ir_measures}
    parsed = [ir_measures.parse_measure(spec) for spec in wanted]
    names = {str(p): wanted[spec] for p, spec in zip(parsed, wanted, strict=True)}
    out: dict[str, dict[str, float]] = {}
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    for metric in ir_measures.iter_calc(parsed, qrels, run):
        out.setdefault(metric.query_id, {})[names[str(metric.measure)]] = metric.value
    return out


def assert_matches_ir_measures(qrels_path: Path, run_path: Path, threshold: int) -> int:
    """Per query and mean, P@10, MAP and MRR equal ir_measures' (pytrec_eval); returns #queries."""
    ours = score_run(read_qrels(qrels_path), read_run(run_path), threshold)
    theirs = _ir_measures_per_query(qrels_path, run_path, threshold)
    assert sorted(theirs) == ours.qids
    for name in ("P@10", "MAP", "MRR"):
        expected = [theirs[q][name] for q in ours.qids]
        np.testing.assert_allclose(ours.values[name], expected, rtol=0, atol=1e-9, err_msg=name)
    return len(ours.qids)


@pytest.mark.parametrize("run_name", ["run_a.run", "run_b.run"])
@pytest.mark.parametrize("threshold", [1, 2, 3])
def test_fixture_runs_match_ir_measures(run_name: str, threshold: int) -> None:
    assert assert_matches_ir_measures(FIXTURES / "qrels.txt", FIXTURES / run_name, threshold) == 4


def test_random_runs_with_many_ties_match_ir_measures(tmp_path: Path) -> None:
    rnd = random.Random(11)
    qrels_lines, run_lines = [], []
    for q in range(40):
        qid = f"T{q:02d}"
        docs = [str(rnd.randint(1, 99999)) for _ in range(rnd.randint(1, 60))]
        docs = list(dict.fromkeys(docs))
        for d in docs:
            if rnd.random() < 0.8:
                qrels_lines.append(f"{qid} 0 {d} {rnd.choice([0, 0, 1, 2, 3])}")
        if q % 9 == 0:
            continue  # no results for this query: scores 0
        retrieved = rnd.sample(docs, k=len(docs) // 2 + 1) + [f"unjudged{k}" for k in range(3)]
        for rank, d in enumerate(retrieved, start=1):
            # Scores on a coarse grid so that ties are frequent.
            run_lines.append(f"{qid} Q0 {d} {rank} {rnd.randint(0, 5) / 2} r")
    if not any(line.startswith("T01 ") for line in qrels_lines):
        qrels_lines.append("T01 0 x 0")
    (tmp_path / "q.txt").write_text("\n".join(qrels_lines) + "\n")
    (tmp_path / "r.run").write_text("\n".join(run_lines) + "\n")
    for threshold in (1, 2, 3):
        assert assert_matches_ir_measures(tmp_path / "q.txt", tmp_path / "r.run", threshold) >= 30
