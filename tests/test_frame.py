"""PICO frames: the paper's questions, the benchmark frames, and every error a user can make."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ebm.errors import InputError
from ebm.frame import (
    Frame,
    Task,
    frame_from_args,
    frame_from_dict,
    load_frame,
    load_frames,
    loads_frame,
)

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "questions"


def test_paper_questions_load_as_the_paper_gives_them() -> None:
    frames = {f.id: f for f in load_frames(QUESTIONS)}
    assert set(frames) == {
        "paper-fever",
        "paper-quinine",
        "paper-cough-gerd",
        "paper-lupoid-sclerosis",
        "paper-hypomagnesemia",
        "paper-rebound-headache",
    }
    fever = frames["paper-fever"]
    assert fever.task is Task.THERAPY
    assert fever.problem == "acute febrile illness"
    assert fever.population == ("children",)
    assert fever.intervention == ("acetaminophen",)
    assert fever.comparison == ("ibuprofen",)
    assert fever.outcome == "reducing fever"
    assert fever.question is not None and fever.question.startswith("In children with an acute febrile")
    quinine = frames["paper-quinine"]
    assert quinine.co_problems == ("muscle cramps", "cramps")
    assert quinine.population == ("young adult",)
    assert frames["paper-cough-gerd"].task is Task.DIFFERENTIAL_DIAGNOSIS
    assert frames["paper-cough-gerd"].co_problems == ("cough",)
    assert frames["paper-lupoid-sclerosis"].task is Task.PROGNOSIS
    assert frames["paper-lupoid-sclerosis"].co_problems == ("multiple sclerosis",)
    assert frames["paper-hypomagnesemia"].task is Task.ETIOLOGY


def test_bench_frames_load_with_their_keys(shared: Path) -> None:
    files = sorted((shared / "bench" / "frames").glob("*.json"))
    frames = load_frames(shared / "bench" / "frames")
    assert len(frames) == len(files) > 0
    for path, frame in zip(files, frames, strict=True):
        raw = json.loads(path.read_text())
        assert frame.id == raw["id"] == path.stem
        assert frame.task.value == raw["task"]
        assert frame.problem == raw["problem"]
        assert frame.co_problems == tuple(raw["co_problems"])
        for slot in ("population", "intervention", "comparison"):
            assert getattr(frame, slot) == ((raw[slot],) if raw[slot] else ())
        assert frame.outcome == raw["outcome"]
        assert frame.pool_query == raw["pool_query"]
    tasks = {f.task for f in frames}
    assert {Task.THERAPY, Task.PREVENTION, Task.DIAGNOSTIC_TEST, Task.DIFFERENTIAL_DIAGNOSIS} <= tasks


def test_round_trip_through_dict_and_json(shared: Path) -> None:
    for frame in load_frames([QUESTIONS, shared / "bench" / "frames"]):
        again = loads_frame(json.dumps(frame.to_dict()), "x.json", "json")
        assert again == frame


def test_paper_labels_and_task_names_are_accepted() -> None:
    text = (
        "search task: patient outcome prediction\n"
        "primary problem: lupus erythematosus\n"
        "co-occurring problems: multiple sclerosis\n"
    )
    f = loads_frame(text, "q.yaml")
    assert f.task is Task.PROGNOSIS and f.problem == "lupus erythematosus"
    assert f.co_problems == ("multiple sclerosis",)
    assert frame_from_dict({"task": "Therapy Selection", "problem": "x"}).task is Task.THERAPY
    assert frame_from_dict({"task": "cause determination", "problem": "x"}).task is Task.ETIOLOGY
    assert frame_from_dict({"task": "diagnostic_test", "problem": "x"}).task is Task.DIAGNOSTIC_TEST
    assert Task.PREVENTION.clinical_task == "therapy"
    assert Task.DIAGNOSTIC_TEST.clinical_task == "diagnosis"


def test_unknown_task_names_file_line_and_suggests(tmp_path: Path) -> None:
    p = tmp_path / "q.yaml"
    p.write_text("id: x\ntask: therapie\nproblem: fever\n")
    with pytest.raises(InputError) as e:
        load_frame(p)
    msg = str(e.value)
    assert f"{p}:2" in msg and "unknown task 'therapie'" in msg and "did you mean 'therapy'" in msg


def test_diagnosis_alone_is_ambiguous() -> None:
    with pytest.raises(InputError, match="'differential diagnosis'.*'diagnostic test'"):
        frame_from_dict({"task": "diagnosis", "problem": "appendicitis"})


def test_unknown_key_suggests_the_field(tmp_path: Path) -> None:
    p = tmp_path / "q.yaml"
    p.write_text("task: therapy\nproblem: fever\ninterventon: ibuprofen\n")
    with pytest.raises(InputError) as e:
        load_frame(p)
    msg = str(e.value)
    assert f"{p}:3" in msg and "unknown field 'interventon'" in msg and "did you mean 'intervention'" in msg


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"task": "therapy", "problem": 3}, "field 'problem' must be text, got a number (3)"),
        (
            {"task": "therapy", "problem": "x", "co_problems": {"a": 1}},
            "field 'co_problems' must be text or a list",
        ),
        ({"task": "therapy", "intervention": ["aspirin", 5]}, "field 'intervention', item 2: must be text"),
        ({"task": 1, "problem": "x"}, "field 'task' must be text"),
        ({"task": "therapy", "problem": "x", "id": [1]}, "field 'id' must be text"),
        ({"problem": "fever"}, "field 'task' is required"),
        ({"task": "therapy"}, "the frame is empty"),
        (
            {"task": "therapy", "problem": " ", "population": [], "outcome": "less fever"},
            "the frame is empty",
        ),
        ({"task": "therapy", "problem": "x", "Problem": "y"}, "field 'problem' given twice"),
    ],
)
def test_wrong_values_name_the_field(data: dict, expected: str) -> None:
    with pytest.raises(InputError) as e:
        frame_from_dict(data, "frame.yaml")
    assert expected in str(e.value) and str(e.value).startswith("frame.yaml")


def test_not_a_mapping_and_broken_files(tmp_path: Path) -> None:
    bad_json = tmp_path / "q.json"
    bad_json.write_text('{"task": "therapy",\n "problem": }\n')
    with pytest.raises(InputError, match=rf"{bad_json}:2: invalid JSON"):
        load_frame(bad_json)
    bad_yaml = tmp_path / "q.yaml"
    bad_yaml.write_text("task: therapy\nproblem: [fever\n")
    with pytest.raises(InputError, match="invalid YAML"):
        load_frame(bad_yaml)
    listed = tmp_path / "l.yaml"
    listed.write_text("- task: therapy\n")
    with pytest.raises(InputError, match="must be a mapping"):
        load_frame(listed)
    empty = tmp_path / "e.yaml"
    empty.write_text("# nothing\n")
    with pytest.raises(InputError, match="the file is empty"):
        load_frame(empty)
    with pytest.raises(InputError, match="frame file not found"):
        load_frame(tmp_path / "missing.yaml")
    with pytest.raises(InputError, match="no frame files"):
        load_frames(_empty_dir(tmp_path))


def _empty_dir(tmp_path: Path) -> Path:
    d = tmp_path / "empty"
    d.mkdir()
    return d


def test_frame_from_command_line_values() -> None:
    f = frame_from_args(
        "therapy",
        problem="acute febrile illness",
        population=["children"],
        intervention=["acetaminophen"],
        comparison=["ibuprofen"],
    )
    assert f == Frame(
        Task.THERAPY,
        problem="acute febrile illness",
        population=("children",),
        intervention=("acetaminophen",),
        comparison=("ibuprofen",),
    )
    with pytest.raises(InputError, match="--task is required"):
        frame_from_args(None, problem="fever")
    with pytest.raises(InputError, match="command line: field 'task': unknown task 'therap'"):
        frame_from_args("therap", problem="fever")


def test_lists_are_cleaned_and_describe_reads_like_the_paper() -> None:
    f = frame_from_dict(
        {
            "task": "therapy",
            "problem": "leg  cramps",
            "co_problems": ["muscle cramps", "", "muscle cramps", "cramps"],
        }
    )
    assert f.problem == "leg cramps"
    assert f.co_problems == ("muscle cramps", "cramps")
    assert f.describe().splitlines() == [
        "search task: therapy",
        "primary problem: leg cramps",
        "co-occurring problems: muscle cramps, cramps",
    ]
