"""``ebm frame TEXT``: prints only the frame, in the format ``--frame`` reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ebm.cli import main
from ebm.frame import loads_frame
from ebm.question import load_question_cues, load_role_model, parse_question
from tests.conftest import ROOT

QUESTIONS = [
    "Is ibuprofen better than acetaminophen for fever in children?",
    "leg cramps quinine",
    "In adults with appendicitis, does laparoscopic appendectomy result in fewer wound infections "
    "than conventional (open) appendectomy?",
    "Is betahistine effective for Ménière's disease?",
]


@pytest.fixture(scope="module")
def parsed_frames(resources):  # type: ignore[no-untyped-def]
    cues = load_question_cues(ROOT / "rules" / "question_cues.tsv")
    model = load_role_model(ROOT / "ebm" / "data" / "models" / "question_roles.json.gz")
    return {
        q: parse_question(q, resources.matcher, resources.vocabulary, cues, model).frame for q in QUESTIONS
    }


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_output_reloads_as_the_parsed_frame(
    fmt: str,
    parsed_frames,
    capsys: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
) -> None:
    for question, frame in parsed_frames.items():
        assert main(["frame", question, f"--{fmt}"]) == 0
        out = capsys.readouterr().out
        assert loads_frame(out, "stdout", fmt) == frame
        if fmt == "json":
            assert json.loads(out)["question"] == question


def test_default_is_yaml_and_file_is_usable(
    tmp_path: Path,
    parsed_frames,
    capsys: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
) -> None:
    from ebm.frame import load_frame

    assert main(["frame", QUESTIONS[0]]) == 0
    out = capsys.readouterr().out
    assert out.startswith("task: therapy\n")
    path = tmp_path / "q.yaml"
    path.write_text(out, encoding="utf-8")
    f = load_frame(path)
    assert (f.problem, f.population, f.intervention, f.comparison) == (
        "fever",
        ("children",),
        ("ibuprofen",),
        ("acetaminophen",),
    )


def test_explain_goes_to_stderr(resources, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    assert main(["frame", QUESTIONS[0], "--explain"]) == 0
    captured = capsys.readouterr()
    assert "Understood as: therapy · problem Fever" in captured.err
    assert "'better than'" in captured.err
    assert "Understood" not in captured.out


def test_errors_exit_2(resources, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    assert main(["frame", "   "]) == 2
    assert "the question is empty" in capsys.readouterr().err
    assert main(["frame", "what is the"]) == 2
    err = capsys.readouterr().err
    assert "no problem, population or intervention" in err and "cue words: is; ignored: what, the" in err


def test_ask_a_question_in_words(resources, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """``ebm ask "QUESTION"``: the parsed frame is asked, a flag sets one slot over it, and
    "Understood as" goes to stderr so that JSON stays clean."""
    assert (
        main(["ask", "leg cramps quinine", "--population", "adults", "--top", "1", "--format", "json"]) == 0
    )
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["frame"] == {
        "task": "therapy",
        "question": "leg cramps quinine",
        "problem": "leg cramps",
        "population": ["adults"],
        "intervention": ["quinine"],
    }
    assert len(out["results"]) == 1
    assert (
        "Understood as: therapy · problem leg cramps · population adults · intervention Quinine"
        in captured.err
    )
    assert "from the options: population" in captured.err
    assert main(["ask", "leg cramps", "--frame", str(ROOT / "questions" / "quinine_leg_cramps.yaml")]) == 2
    assert "either a QUESTION or --frame" in capsys.readouterr().err
