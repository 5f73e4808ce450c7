"""TREC qrels/run reading and writing, trec_eval's ranking order, frames for tasks."""

from __future__ import annotations

from pathlib import Path

import pytest

from ebm.errors import InputError
from ebm.evaluation.tasks import read_frames, task_group, tasks_by_query
from ebm.evaluation.trec import (
    ScoredDoc,
    format_run,
    ranking,
    read_qrels,
    read_run,
    run_from_scores,
    write_qrels,
    write_run,
)

FIXTURES = Path(__file__).parent / "fixtures" / "eval"


def test_read_qrels_fixture() -> None:
    qrels = read_qrels(FIXTURES / "qrels.txt")
    assert sorted(qrels) == ["Q1", "Q2", "Q3", "Q4"]
    assert qrels["Q1"] == {"d1": 3, "d2": 2, "d3": 1, "d4": 0, "d5": 2, "d9": 3}
    assert qrels["Q3"] == {"f1": 3}


def test_read_run_orders_by_score_then_docno_descending_ignoring_rank_column() -> None:
    run = read_run(FIXTURES / "run_a.run")
    assert run.name == "run_a" and run.tag == "sysA"
    # d1 and d2 tie at 4.0: trec_eval puts the larger docno first, whatever the rank column says.
    assert run.ranking("Q1") == ["d4", "d2", "d1", "d3", "d5"]
    assert run.ranking("Q3") == []
    assert run.qids == ["Q1", "Q2", "Q4", "Q5"]


def test_ranking_ties_use_byte_order_not_numeric() -> None:
    docs = [ScoredDoc("9", 1.0, 1), ScoredDoc("10", 1.0, 2), ScoredDoc("100", 2.0, 3), ScoredDoc("8", 1.0, 4)]
    # strcmp order: "9" > "8" > "10"
    assert ranking(docs) == ["100", "9", "8", "10"]


def test_run_round_trip_keeps_order_exactly(tmp_path: Path) -> None:
    scores = {"q1": {"a": 0.1 + 0.2, "b": 0.3, "c": 1e-17, "d": 0.3}, "q2": {"x": -2.5}}
    run = run_from_scores("mine", scores)
    path = tmp_path / "mine.run"
    write_run(path, run)
    back = read_run(path)
    assert back.tag == "mine"
    for qid in scores:
        assert back.ranking(qid) == run.ranking(qid)
    # 0.1 + 0.2 is just above 0.3: it must stay first after the round trip.
    assert back.ranking("q1") == ["a", "d", "b", "c"]
    lines = path.read_text().splitlines()
    assert lines[0].split()[:4] == ["q1", "Q0", "a", "1"]


def test_qrels_round_trip(tmp_path: Path) -> None:
    qrels = read_qrels(FIXTURES / "qrels.txt")
    write_qrels(tmp_path / "q.txt", qrels)
    assert read_qrels(tmp_path / "q.txt") == qrels


def test_format_run_rejects_tag_with_space() -> None:
    run = run_from_scores("two words", {"q": {"a": 1.0}})
    with pytest.raises(InputError, match="tag"):
        format_run(run)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("q1 0 d1\n", r"qrels\.txt:1: expected 4 columns"),
        ("q1 0 d1 2\nq1 0 d2 high\n", r"qrels\.txt:2: grade 'high' is not an integer"),
        ("q1 0 d1 2\n\nq1 0 d1 3\n", r"qrels\.txt:3: q1 d1 judged again with grade 3 \(earlier 2\)"),
        ("# only a comment\n\n", r"qrels\.txt: no judgments"),
    ],
)
def test_qrels_errors_name_file_and_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        read_qrels(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("q1 Q0 d1 1 2.0\n", r"r\.run:1: expected 6 columns"),
        ("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 x 1.0 t\n", r"r\.run:2: rank 'x' \(column 4\) is not an integer"),
        ("q1 Q0 d1 1 high t\n", r"r\.run:1: score 'high' \(column 5\) is not a number"),
        ("q1 Q0 d1 1 nan t\n", r"r\.run:1: score 'nan' \(column 5\) is not finite"),
        ("q1 Q0 d1 1 2 t\nq2 Q0 d1 1 2 t\nq1 Q0 d1 2 1 t\n", r"r\.run:3: q1 d1 already listed on line 1"),
    ],
)
def test_run_errors_name_file_and_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "r.run"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        read_run(path)


def test_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="run file not found"):
        read_run(tmp_path / "nope.run")
    with pytest.raises(InputError, match="qrels file is a directory"):
        read_qrels(tmp_path)
    (tmp_path / "bin.run").write_bytes(b"q1 Q0 \xff\xfe 1 1 t\n")
    with pytest.raises(InputError, match="not UTF-8"):
        read_run(tmp_path / "bin.run")


def test_empty_run_is_valid(tmp_path: Path) -> None:
    (tmp_path / "empty.run").write_text("")
    assert read_run(tmp_path / "empty.run").results == {}


def test_read_frames_json_and_yaml() -> None:
    frames = read_frames(FIXTURES / "frames")
    assert sorted(frames) == ["Q1", "Q2", "Q3", "Q4"]  # notes.txt ignored; Q4 named by its file
    assert frames["Q3"].task == "diagnostic test"
    assert frames["Q1"].question == "Does <drug> & co. help with fever?"
    groups = tasks_by_query(frames, ["Q1", "Q2", "Q3", "Q4", "Q9"])
    assert groups == {"Q1": "therapy", "Q2": "therapy", "Q3": "diagnosis", "Q4": "prognosis", "Q9": "unknown"}
    fine = tasks_by_query(frames, ["Q2", "Q3"], group=False)
    assert fine == {"Q2": "prevention", "Q3": "diagnostic test"}


def test_task_groups_follow_the_paper() -> None:
    assert task_group("Differential_Diagnosis") == "diagnosis"
    assert task_group("prevention") == "therapy"
    assert task_group("etiology") == "etiology"
    assert task_group("screening") == "screening"  # unknown tasks are kept, not guessed


def test_frame_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="frames directory not found"):
        read_frames(tmp_path / "missing")
    with pytest.raises(InputError, match="no frames"):
        read_frames(tmp_path)
    (tmp_path / "a.json").write_text('{"id": "A1", "question": "?"}')
    with pytest.raises(InputError, match=r"a\.json: frame has no 'task'"):
        read_frames(tmp_path)
    (tmp_path / "a.json").write_text('{"id": "A1",\n "task": therapy}')
    with pytest.raises(InputError, match=r"a\.json:2: invalid JSON"):
        read_frames(tmp_path)
    (tmp_path / "a.json").write_text('{"id": "A1", "task": "therapy"}')
    (tmp_path / "b.yaml").write_text("id: A1\ntask: etiology\n")
    with pytest.raises(InputError, match=r"b\.yaml: question id 'A1' also in .*a\.json"):
        read_frames(tmp_path)
    (tmp_path / "b.yaml").write_text("id: B1\ntask: [unclosed\n")
    with pytest.raises(InputError, match=r"b\.yaml:\d+: invalid YAML"):
        read_frames(tmp_path)
