"""The clinical task of each question, read from its PICO frame, for per-task breakdowns.

Frames are JSON or YAML files (``*.json``, ``*.yaml``, ``*.yml``) holding at least ``task``; the
question id is the frame's ``id`` or else the file name without extension. Only ``id``, ``task``
and ``question`` are read here: validating frames is the frame reader's business.

The paper's tables (7-10, 15, 16) have four columns, so by default the six frame tasks are grouped
as it does: therapy and prevention under Therapy, differential diagnosis and diagnostic test under
Diagnosis. ``group=False`` keeps the frame's own task.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ebm.errors import InputError

PAPER_GROUPS: dict[str, str] = {
    "therapy": "therapy",
    "prevention": "therapy",
    "diagnosis": "diagnosis",
    "differential diagnosis": "diagnosis",
    "diagnostic test": "diagnosis",
    "prognosis": "prognosis",
    "etiology": "etiology",
    "harm": "etiology",
}
# Column order of the paper's tables, each group followed by its members; others alphabetically.
PAPER_ORDER = (
    "therapy",
    "prevention",
    "diagnosis",
    "differential diagnosis",
    "diagnostic test",
    "prognosis",
    "etiology",
    "harm",
)
UNKNOWN_TASK = "unknown"
FRAME_SUFFIXES = (".json", ".yaml", ".yml")


@dataclass(frozen=True)
class Question:
    qid: str
    task: str  # as written in the frame, lower case
    question: str | None = None  # the natural-language question, when the frame has one
    frame: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    path: Path | None = None


def normalise_task(task: str) -> str:
    return " ".join(task.replace("_", " ").replace("-", " ").split()).lower()


def task_group(task: str, group: bool = True) -> str:
    task = normalise_task(task)
    return PAPER_GROUPS.get(task, task) if group else task


def read_frame_file(path: Path) -> Question:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise InputError(f"{where}: invalid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: a frame must be a mapping with at least 'task'")
    task = data.get("task")
    if not isinstance(task, str) or not task.strip():
        raise InputError(f"{path}: frame has no 'task' (one of therapy, prevention, diagnosis, ...)")
    qid = data.get("id", path.stem)
    if not isinstance(qid, str | int) or not str(qid).strip():
        raise InputError(f"{path}: frame 'id' must be a non-empty string")
    question = data.get("question")
    return Question(
        qid=str(qid).strip(),
        task=normalise_task(task),
        question=question if isinstance(question, str) else None,
        frame=data,
        path=path,
    )


def frame_paths(directory: str | Path) -> list[Path]:
    """The frame files (*.json, *.yaml, *.yml) of ``directory`` in name order; none is an error."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"frames directory not found: {directory}")
    paths = [p for p in sorted(directory.iterdir()) if p.suffix.lower() in FRAME_SUFFIXES and p.is_file()]
    if not paths:
        raise InputError(f"{directory}: no frames (*.json, *.yaml, *.yml)")
    return paths


def read_frames(directory: str | Path) -> dict[str, Question]:
    """All frames in ``directory`` by question id; two frames with one id is an error."""
    questions: dict[str, Question] = {}
    for path in frame_paths(directory):
        question = read_frame_file(path)
        if question.qid in questions:
            raise InputError(f"{path}: question id {question.qid!r} also in {questions[question.qid].path}")
        questions[question.qid] = question
    return questions


def task_order(tasks: Iterable[str]) -> list[str]:
    """The paper's column order first, other tasks alphabetically, 'unknown' last."""
    present = set(tasks)
    known = [t for t in PAPER_ORDER if t in present]
    rest = sorted(t for t in present if t not in PAPER_ORDER and t != UNKNOWN_TASK)
    return known + rest + ([UNKNOWN_TASK] if UNKNOWN_TASK in present else [])


def tasks_by_query(
    questions: Mapping[str, Question], qids: Iterable[str], group: bool = True
) -> dict[str, str]:
    """The task (group) of each of ``qids``; a query without a frame gets 'unknown'."""
    return {qid: task_group(questions[qid].task, group) if qid in questions else UNKNOWN_TASK for qid in qids}
