"""``ebm.question``: a question in plain words -> a PICO frame (issue 16), on real questions."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from ebm.errors import InputError
from ebm.frame import Task
from ebm.question import (
    ParsedQuestion,
    QuestionCues,
    RoleModel,
    load_question_cues,
    load_role_model,
    parse_question,
    understood_as,
)
from ebm.rules.table import load
from tests.conftest import ROOT, load_script

CUES = ROOT / "rules" / "question_cues.tsv"
MODEL = ROOT / "ebm" / "data" / "models" / "question_roles.json.gz"


@pytest.fixture(scope="module")
def cues() -> QuestionCues:
    return load_question_cues(CUES)


@pytest.fixture(scope="module")
def model() -> RoleModel:
    return load_role_model(MODEL)


@pytest.fixture
def parse(resources, cues: QuestionCues, model: RoleModel):  # type: ignore[no-untyped-def]
    def run(text: str) -> ParsedQuestion:
        return parse_question(text, resources.matcher, resources.vocabulary, cues, model)

    return run


def test_issue_example_therapy_with_comparison(parse) -> None:  # type: ignore[no-untyped-def]
    p = parse("Is ibuprofen better than acetaminophen for fever in children?")
    f = p.frame
    assert f.task is Task.THERAPY
    assert (f.problem, f.population, f.intervention, f.comparison) == (
        "fever",
        ("children",),
        ("ibuprofen",),
        ("acetaminophen",),
    )
    assert f.question == "Is ibuprofen better than acetaminophen for fever in children?"
    assert "'better than'" in p.task_reason
    assert understood_as(p) == (
        "Understood as: therapy · problem Fever · population children · intervention Ibuprofen · "
        "comparison Acetaminophen"
    )
    assert p.unplaced == ()


def test_issue_example_keywords(parse) -> None:  # type: ignore[no-untyped-def]
    p = parse("leg cramps quinine")
    assert p.frame.task is Task.THERAPY
    assert p.frame.problem == "leg cramps"  # the anatomy word stays with its disorder
    assert p.frame.intervention == ("quinine",)
    # no task word: the default is said, not hidden
    assert "no task words" in p.task_reason and "default" in p.task_reason


def test_diagnostic_question(parse) -> None:  # type: ignore[no-untyped-def]
    p = parse(
        "In elderly patients with suspected acute appendicitis, are leukocyte count and "
        "C-reactive protein useful for diagnosis?"
    )
    f = p.frame
    assert f.task is Task.DIAGNOSTIC_TEST
    assert f.problem == "suspected acute appendicitis"
    assert f.population == ("elderly patients",)
    assert f.intervention == ("leukocyte count", "C-reactive protein")


def test_etiology_question(parse) -> None:  # type: ignore[no-untyped-def]
    p = parse("Is obesity a risk factor for wheezing in adolescents?")
    f = p.frame
    assert f.task is Task.ETIOLOGY
    assert f.problem == "wheezing" and f.intervention == ("obesity",) and f.population == ("adolescents",)
    p = parse("What drugs can cause seizures?")
    assert p.frame.task is Task.ETIOLOGY
    assert p.frame.problem == "seizures" and p.frame.intervention == ("drugs",)  # unknown words kept as text


def test_ambiguous_task_is_explained(parse) -> None:  # type: ignore[no-untyped-def]
    p = parse("Does aspirin prevent stroke, and what is the risk of bleeding?")
    assert p.frame.task is Task.PREVENTION
    assert "ambiguous" in p.task_reason and "etiology" in p.task_reason


def test_accented_words(parse) -> None:  # type: ignore[no-untyped-def]
    p = parse("Is betahistine effective for Ménière's disease in adults?")
    f = p.frame
    assert f.problem == "Ménière's disease"
    assert f.intervention == ("betahistine",)
    assert f.task is Task.THERAPY
    # accented cue words read like plain ones ("prévent" is not English, "prévention" folds to it)
    p = parse("prévention of Sjögren's syndrome")
    assert p.frame.task is Task.PREVENTION and p.frame.problem == "Sjögren's syndrome"


def _all_words_accounted(p: ParsedQuestion, text: str) -> None:
    frame_text = " ".join(
        [p.frame.problem or "", p.frame.outcome or ""]
        + [
            v
            for s in ("co_problems", "population", "intervention", "comparison")
            for v in getattr(p.frame, s)
        ]
    )
    for w in p.words:
        assert w.use in (
            "problem",
            "co_problem",
            "population",
            "intervention",
            "comparison",
            "outcome",
            "cue",
            "ignored",
            "unplaced",
        )
        assert text[w.start : w.start + len(w.text)] == w.text
        if w.use not in ("cue", "ignored", "unplaced"):
            assert w.text in frame_text, (text, w)


def test_no_word_dropped_silently(parse, shared: Path) -> None:  # type: ignore[no-untyped-def]
    """Every word of 200 CLIREC keyword queries and PICO strings is in a slot, a cue, the
    ignored words or the unplaced words, at its place in the text."""
    train = load_script("train_question_model")
    queries = train.read_clirec(shared.parent)
    texts = sorted({q.keywords for q in queries} | {v for q in queries[:60] for v in q.fields.values()})[:200]
    assert len(texts) == 200
    for text in texts:
        p = parse(text)
        norm = " ".join(text.split())
        _all_words_accounted(p, norm)
        # every run of letters or digits lies inside one of the reported words
        spans = [(w.start, w.start + len(w.text)) for w in p.words]
        for m in re.finditer(r"[^\W_]+", norm):
            assert any(s <= m.start() and m.end() <= e for s, e in spans), (text, m.group())


def test_cue_table_round_trip_and_errors(tmp_path: Path) -> None:
    from ebm.question import QUESTION_CUE_COLUMNS

    table = load(CUES, QUESTION_CUE_COLUMNS)
    assert table.dumps() == CUES.read_text(encoding="utf-8")
    bad = tmp_path / "question_cues.tsv"
    shutil.copy(CUES, bad)
    lines = bad.read_text(encoding="utf-8").splitlines()
    n = next(i for i, line in enumerate(lines) if line.startswith("task\t"))
    for row, message in (
        ("task\tbetter than\ttherapie\t2", "'therapie'.*did you mean 'therapy'"),
        ("before\tversus\tprevention\t1", "a before row needs a role"),
        ("prior\tdrug\ttherapy\t1", "a prior row names a kind of words"),
        ("task\tversus\ttherapy\tmuch", "not a number"),
    ):
        lines[n] = row
        bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
        with pytest.raises(InputError, match=rf"question_cues.tsv:{n + 1}: .*{message}"):
            load_question_cues(bad)


def test_empty_question_is_an_input_error(parse) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError, match="no words"):
        parse("  ?? ")


def test_model_file_errors(tmp_path: Path) -> None:
    from ebm.errors import DataError

    with pytest.raises(DataError, match="not found"):
        load_role_model(tmp_path / "missing.json.gz")
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(b"not gzip")
    with pytest.raises(DataError, match="not a question role model"):
        load_role_model(bad)


def test_bench_development_figures(resources, parse, shared: Path) -> None:  # type: ignore[no-untyped-def]
    """The figures docs/questions.md reports for the 23 development questions (the cue table
    was written looking at them: a regression guard, not an estimate)."""
    ev = load_script("eval_questions")
    from ebm.frame import load_frames

    frames = load_frames(shared / "bench" / "frames")
    cases = [ev.Case(f.id, f.question, f, lambda t, g=f.task: t == g) for f in frames]
    scorer = ev.Scorer(resources.matcher, resources.vocabulary)
    r = ev.evaluate(cases, lambda q: parse(q).frame, scorer)
    b = ev.evaluate(cases, lambda q: ev.baseline(q, resources.matcher), scorer)
    assert r["n"] == 23
    assert r["task"] >= 0.9 and r["slots"]["problem"]["all"] >= 0.9
    assert r["slots"]["intervention"]["all"] > b["slots"]["intervention"]["all"]
    assert r["exact"] > b["exact"]
