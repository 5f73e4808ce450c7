"""PICO query frames: what the physician asks, as plain validated data.

A frame (Demner-Fushman & Lin 2007, sections 4 and 6) has a search task, a primary problem,
co-occurring problems, population, intervention, comparison and an optional outcome, plus an
optional id and the question in words. It is read from YAML or JSON (``load_frame``; the
benchmark frames in ``../shared/data/bench/frames`` load as they are) or built from CLI-style
arguments (``frame_from_args``). Mapping slots to concepts is the concept layer's job: a
frame only holds the physician's strings.

Errors name the file, line and field: ``questions/x.yaml:2: field 'task': unknown task
'therapie'; did you mean 'therapy'?``.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from ebm.errors import InputError


class Task(StrEnum):
    THERAPY = "therapy"
    PREVENTION = "prevention"
    DIFFERENTIAL_DIAGNOSIS = "differential diagnosis"
    DIAGNOSTIC_TEST = "diagnostic test"
    ETIOLOGY = "etiology"
    PROGNOSIS = "prognosis"

    @property
    def clinical_task(self) -> str:
        """The paper's four clinical tasks: therapy, diagnosis, etiology, prognosis."""
        return {
            Task.PREVENTION: "therapy",
            Task.DIFFERENTIAL_DIAGNOSIS: "diagnosis",
            Task.DIAGNOSTIC_TEST: "diagnosis",
        }.get(self, self.value)


# The paper's search-task names and other common spellings (keys normalised by _norm).
TASK_ALIASES: dict[str, Task] = {
    "therapy selection": Task.THERAPY,
    "treatment": Task.THERAPY,
    "prevention selection": Task.PREVENTION,
    "differential": Task.DIFFERENTIAL_DIAGNOSIS,
    "ddx": Task.DIFFERENTIAL_DIAGNOSIS,
    "diagnostic tests": Task.DIAGNOSTIC_TEST,
    "diagnostic test selection": Task.DIAGNOSTIC_TEST,
    "diagnostic methods selection": Task.DIAGNOSTIC_TEST,
    "cause determination": Task.ETIOLOGY,
    "harm": Task.ETIOLOGY,
    "etiology harm": Task.ETIOLOGY,
    "aetiology": Task.ETIOLOGY,
    "patient outcome prediction": Task.PROGNOSIS,
}

# Frame keys as written in files, and accepted spellings of them.
FIELDS = (
    "id",
    "task",
    "question",
    "problem",
    "co_problems",
    "population",
    "intervention",
    "comparison",
    "outcome",
    "pool_query",
)
FIELD_ALIASES: dict[str, str] = {
    "search task": "task",
    "primary problem": "problem",
    "co occurring problems": "co_problems",
    "co problems": "co_problems",
    "cooccurring problems": "co_problems",
    "interventions": "intervention",
    "comparisons": "comparison",
    "outcomes": "outcome",
}
LIST_FIELDS = ("co_problems", "population", "intervention", "comparison")
TEXT_FIELDS = ("problem", "outcome", "question", "pool_query")
# Slots that make a frame non-empty (outcome alone is no question: the paper leaves it implicit).
CONTENT_FIELDS = ("problem", "co_problems", "population", "intervention", "comparison")


@dataclass(frozen=True)
class Frame:
    """A validated PICO frame. List slots are tuples of the physician's strings, in order."""

    task: Task
    problem: str | None = None
    co_problems: tuple[str, ...] = ()
    population: tuple[str, ...] = ()
    intervention: tuple[str, ...] = ()
    comparison: tuple[str, ...] = ()
    outcome: str | None = None
    id: str | None = None
    question: str | None = None
    pool_query: str | None = None  # the keyword query a benchmark pool was built with (informative)

    def to_dict(self) -> dict[str, Any]:
        """JSON/YAML-ready; ``frame_from_dict`` reads it back to an equal frame."""
        d: dict[str, Any] = {"id": self.id, "task": self.task.value, "question": self.question}
        d["problem"] = self.problem
        for name in LIST_FIELDS:
            d[name] = list(getattr(self, name))
        d["outcome"] = self.outcome
        d["pool_query"] = self.pool_query
        return {k: v for k, v in d.items() if v not in (None, [])}

    def describe(self) -> str:
        """A few readable lines, as the paper prints frames."""
        lines = [f"search task: {self.task.value}"]
        if self.problem:
            lines.append(f"primary problem: {self.problem}")
        labels = {
            "co_problems": "co-occurring problems",
            "population": "population",
            "intervention": "intervention",
            "comparison": "comparison",
        }
        for name, label in labels.items():
            if getattr(self, name):
                lines.append(f"{label}: {', '.join(getattr(self, name))}")
        if self.outcome:
            lines.append(f"outcome: {self.outcome}")
        return "\n".join(lines)


# --- parsing ----------------------------------------------------------------------------


def _norm(s: str) -> str:
    return " ".join(re.sub(r"[_\-/]+", " ", s.casefold()).split())


def parse_task(value: Any, where: str = "frame") -> Task:
    if not isinstance(value, str):
        raise InputError(f"{where}: field 'task' must be text, got {_kind(value)}")
    n = _norm(value)
    for t in Task:
        if n == _norm(t.value):
            return t
    if n in TASK_ALIASES:
        return TASK_ALIASES[n]
    names = [t.value for t in Task]
    if n == "diagnosis":
        raise InputError(
            f"{where}: field 'task': 'diagnosis' is ambiguous: use 'differential diagnosis' "
            "(which disease?) or 'diagnostic test' (which test, how accurate?)"
        )
    close = difflib.get_close_matches(n, names + list(TASK_ALIASES), n=1, cutoff=0.6)
    hint = ""
    if close:
        best = TASK_ALIASES.get(close[0], close[0])
        hint = f"; did you mean {str(best)!r}?"
    raise InputError(f"{where}: field 'task': unknown task {value!r}{hint} (tasks: {', '.join(names)})")


def _kind(v: Any) -> str:
    if v is None:
        return "nothing"
    if isinstance(v, bool):
        return "true/false"
    if isinstance(v, int | float):
        return f"a number ({v})"
    if isinstance(v, Mapping):
        return "a mapping"
    if isinstance(v, list | tuple):
        return "a list"
    return type(v).__name__


def _text(name: str, v: Any, where: str) -> str | None:
    if v is None:
        return None
    if not isinstance(v, str):
        raise InputError(f"{where}: field {name!r} must be text, got {_kind(v)}")
    return " ".join(v.split()) or None


def _texts(name: str, v: Any, where: str) -> tuple[str, ...]:
    if v is None:
        return ()
    items = [v] if isinstance(v, str) else v
    if not isinstance(items, list | tuple):
        raise InputError(f"{where}: field {name!r} must be text or a list of text, got {_kind(v)}")
    out: list[str] = []
    for i, item in enumerate(items, start=1):
        if not isinstance(item, str):
            raise InputError(f"{where}: field {name!r}, item {i}: must be text, got {_kind(item)}")
        t = " ".join(item.split())
        if t and t not in out:
            out.append(t)
    return tuple(out)


def _field_name(key: Any, where: str) -> str:
    if not isinstance(key, str):
        raise InputError(f"{where}: field names must be text, got {_kind(key)}")
    n = _norm(key).replace(" ", "_")
    if n in FIELDS:
        return n
    alias = FIELD_ALIASES.get(_norm(key))
    if alias:
        return alias
    close = difflib.get_close_matches(n, FIELDS, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise InputError(f"{where}: unknown field {key!r}{hint} (fields: {', '.join(FIELDS)})")


def frame_from_dict(data: Any, where: str = "frame", lines: Mapping[str, int] | None = None) -> Frame:
    """A validated frame from a mapping (as read from YAML/JSON). ``lines``: key -> line, for errors."""
    if not isinstance(data, Mapping):
        raise InputError(f"{where}: a frame must be a mapping of fields, got {_kind(data)}")

    def at(key: str) -> str:
        line = (lines or {}).get(key)
        return f"{where}:{line}" if line else where

    values: dict[str, Any] = {}
    raw_keys: dict[str, str] = {}
    for key, v in data.items():
        name = _field_name(key, at(str(key)))
        if name in values:
            first = raw_keys[name]
            raise InputError(f"{at(str(key))}: field {name!r} given twice (as {first!r} and {key!r})")
        values[name] = v
        raw_keys[name] = str(key)
    if "task" not in values or values["task"] is None:
        raise InputError(f"{where}: field 'task' is required (tasks: {', '.join(t.value for t in Task)})")
    task = parse_task(values["task"], at(raw_keys["task"]))
    kw: dict[str, Any] = {}
    for name in TEXT_FIELDS:
        if name in values:
            kw[name] = _text(name, values[name], at(raw_keys[name]))
    for name in LIST_FIELDS:
        if name in values:
            kw[name] = _texts(name, values[name], at(raw_keys[name]))
    if "id" in values and values["id"] is not None:
        v = values["id"]
        if isinstance(v, bool) or not isinstance(v, str | int):
            raise InputError(f"{at(raw_keys['id'])}: field 'id' must be text, got {_kind(v)}")
        kw["id"] = str(v).strip() or None
    frame = Frame(task=task, **kw)
    if not any(getattr(frame, f) for f in CONTENT_FIELDS):
        raise InputError(
            f"{where}: the frame is empty: give at least a problem, population or intervention "
            "(co_problems and comparison count too)"
        )
    return frame


def _key_lines(content: str) -> dict[str, int]:
    """First line of each top-level ``key:`` (YAML) or ``"key":`` (JSON), for messages."""
    out: dict[str, int] = {}
    for n, line in enumerate(content.splitlines(), start=1):
        m = re.match(r'^\s{0,2}"?([A-Za-z_][\w \-]*?)"?\s*:', line)
        if m:
            out.setdefault(m.group(1), n)
    return out


def loads_frame(content: str, where: str = "frame", fmt: str = "yaml") -> Frame:
    """A frame from YAML or JSON text."""
    if fmt == "json":
        try:
            data = json.loads(content)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    else:
        import yaml

        try:
            data = yaml.safe_load(content)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            loc = f"{where}:{mark.line + 1}" if mark else where
            reason = getattr(exc, "problem", None) or str(exc)
            raise InputError(f"{loc}: invalid YAML: {reason}") from None
    if data is None:
        raise InputError(f"{where}: the file is empty")
    return frame_from_dict(data, where, _key_lines(content))


def load_frame(path: str | Path) -> Frame:
    """A frame from a ``.yaml``/``.yml`` or ``.json`` file."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"frame file not found: {p}")
    try:
        content = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{p}: not UTF-8 text") from None
    fmt = "json" if p.suffix.lower() == ".json" else "yaml"
    return loads_frame(content, str(p), fmt)


def load_frames(paths: str | Path | Iterable[str | Path]) -> list[Frame]:
    """Frames from files, or from every ``*.yaml``/``*.yml``/``*.json`` of a directory (sorted)."""
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    out: list[Frame] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.suffix.lower() in (".yaml", ".yml", ".json"))
            if not files:
                raise InputError(f"{p}: no frame files (*.yaml, *.yml, *.json)")
            out.extend(load_frame(f) for f in files)
        else:
            out.append(load_frame(p))
    return out


def frame_from_args(
    task: str | None,
    problem: str | None = None,
    co_problems: Sequence[str] = (),
    population: Sequence[str] = (),
    intervention: Sequence[str] = (),
    comparison: Sequence[str] = (),
    outcome: str | None = None,
    question: str | None = None,
    id: str | None = None,
) -> Frame:
    """A frame from command-line values (``--task T --problem P --intervention I ...``)."""
    data: dict[str, Any] = {"task": task, "problem": problem}
    data |= {"co_problems": list(co_problems), "population": list(population)}
    data |= {"intervention": list(intervention), "comparison": list(comparison)}
    data |= {"outcome": outcome, "question": question, "id": id}
    if task is None:
        raise InputError(f"--task is required (tasks: {', '.join(t.value for t in Task)})")
    return frame_from_dict(data, "command line")
