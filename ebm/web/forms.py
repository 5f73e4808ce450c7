"""Validation of a question sent by the web form or the JSON API, with errors per field.

Both entry points end in the same ``Question`` (a validated ``Frame`` plus where to search and
how many answers to show). The frame itself is validated by ``ebm.frame.frame_from_dict``
(unknown task, unknown keys, wrong types); this module adds what a web request needs on top:
one message per form field (so the page can show it next to the field), a required primary
problem (the form's one required slot, as in every frame of the paper) and length limits, so
a pasted abstract or a runaway client cannot make the pipeline chew on megabytes of text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ebm.errors import InputError
from ebm.frame import LIST_FIELDS, Frame, Task, frame_from_dict, parse_task
from ebm.scoring.rankers import DEFAULT_RANKER, REGISTRY, canonical
from ebm.web.question import SLOTS, Asked, NothingFound, QuestionReader

SOURCES = ("local", "pubmed")
MAX_TEXT = 200  # characters per slot value: PICO slots are short phrases
MAX_QUESTION = 1000  # the question in words (the form's box and the JSON API)
MAX_ITEMS = 8  # values per list slot (co-occurring problems, population, ...)
MAX_TOP = 50  # answers per page (the pipeline reranks 50 candidates)
DEFAULT_TOP = 10
TOP_CHOICES = (5, 10, 20, 50)
# Several values in one form field are separated by semicolons or new lines (commas occur
# inside MeSH names such as "Diagnosis, Differential").
SEPARATORS = re.compile(r"[;\n]")
# Control characters (NUL, escape, ...) have no place in a clinical phrase; they are refused
# with a message and never echoed back into the page. Tab, CR and LF are white space.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")

# The form's fields in page order, with their labels (the JSON API uses the frame's keys).
FORM_FIELDS: dict[str, str] = {
    "question": "Ask in plain words",
    "task": "Task",
    "problem": "Primary problem",
    "co_problems": "Co-occurring problems",
    "population": "Population",
    "intervention": "Intervention",
    "comparison": "Comparison",
    "outcome": "Outcome (optional)",
    "source": "Search",
    "top": "Answers to show",
    "ranker": "Ranked by",
    "randomized_only": "Randomized trials and systematic reviews only",
}
# The designs (``extractors.design`` labels) the "randomized trials and systematic reviews only"
# filter keeps.
TRIALS_AND_REVIEWS = ("randomized_controlled_trial", "systematic_review")


class FieldError(InputError):
    """A bad value, with the field it belongs to (``None``: the request as a whole)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Question:
    """A validated question: the frame, where to search it and how many answers to show."""

    frame: Frame
    source: str = "local"
    top: int = DEFAULT_TOP
    explain: bool = False  # JSON API: add every rule and extractor decision to each result
    ranker: str = DEFAULT_RANKER  # a name of ``ebm.scoring.rankers.REGISTRY``
    # only answers whose study design is in TRIALS_AND_REVIEWS (among every ranked candidate)
    randomized_only: bool = False
    asked: Asked | None = None  # the question in words and how it was read, when one was given


@dataclass
class FormResult:
    """What the form page needs: the question when valid, else a message per field."""

    values: dict[str, str]  # the submitted text, to fill the form in again
    errors: dict[str, str] = field(default_factory=dict)
    question: Question | None = None


def _split(text: str) -> list[str]:
    return [" ".join(v.split()) for v in SEPARATORS.split(text) if v.strip()]


def _too_long(value: str, limit: int = MAX_TEXT) -> str | None:
    if len(value) > limit:
        return f"too long: at most {limit} characters, got {len(value)}"
    return None


def _control(value: str) -> str | None:
    """A message naming the first control character in ``value``, or None."""
    m = CONTROL.search(value)
    if m is None:
        return None
    return f"contains a control character (U+{ord(m.group()):04X}) at position {m.start() + 1}; remove it"


def strip_control(value: str) -> str:
    """``value`` without control characters (what the form shows back)."""
    return CONTROL.sub("", value)


def _top(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise FieldError(f"top must be a whole number from 1 to {MAX_TOP}", "top")
    try:
        n = int(value)
    except ValueError:
        raise FieldError(f"top must be a whole number from 1 to {MAX_TOP}, got {value!r}", "top") from None
    if not 1 <= n <= MAX_TOP:
        raise FieldError(f"top must be from 1 to {MAX_TOP}, got {n}", "top")
    return n


def _ranker(value: Any) -> str:
    """A ranker's canonical name (``ebm.scoring.rankers``: a name or an alias)."""
    if not isinstance(value, str):
        raise FieldError(f"ranker must be one of {', '.join(REGISTRY)}", "ranker")
    try:
        return canonical(value)
    except InputError as exc:
        raise FieldError(str(exc), "ranker") from None


def _source(value: Any) -> str:
    if value not in SOURCES:
        raise FieldError(f"unknown source {value!r} (choose from {', '.join(SOURCES)})", "source")
    return str(value)


_FIELD_IN_MESSAGE = re.compile(r"field '([^']+)'")


def _field_of(exc: InputError) -> str | None:
    """The frame field an ``ebm.frame`` message names (``... field 'task': ...``)."""
    text = str(exc)
    m = _FIELD_IN_MESSAGE.search(text)
    if m:
        return m.group(1)
    if "frame is empty" in text:
        return "problem"
    return None


def _strip_where(message: str, where: str) -> str:
    """``form: field 'task': unknown task`` -> ``unknown task`` (the page shows the field)."""
    return re.sub(rf"^{re.escape(where)}(:\d+)?: (field '[^']+'(, item \d+)?: )?", "", message)


def check_frame(frame: Frame) -> dict[str, str]:
    """The web limits on a parsed frame: a primary problem, short values, few items per slot."""
    errors: dict[str, str] = {}
    if not frame.problem:
        errors["problem"] = "give the primary problem (for example: acute febrile illness)"
    for name in ("problem", "outcome", "question", "id", "pool_query", *LIST_FIELDS):
        value = getattr(frame, name)
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, str) and (msg := _control(v)):
                errors[name] = msg
                break
    for name in ("problem", "outcome"):
        if name in errors:
            continue
        value = getattr(frame, name)
        if value and (msg := _too_long(value)):
            errors[name] = msg
    for name in LIST_FIELDS:
        values = getattr(frame, name)
        if len(values) > MAX_ITEMS:
            errors[name] = f"too many values: at most {MAX_ITEMS}, got {len(values)}"
            continue
        for v in values:
            if msg := _too_long(v):
                errors[name] = msg
                break
    if frame.question and (msg := _too_long(frame.question, MAX_QUESTION)):
        errors["question"] = msg
    for name in ("id", "pool_query"):
        value = getattr(frame, name)
        if value and (msg := _too_long(value, MAX_QUESTION)):
            errors[name] = msg
    return errors


def validate_form(form: Mapping[str, str]) -> FormResult:
    """Check the submitted form; every bad field gets its own message."""
    raw = {name: str(form.get(name, "")).strip() for name in FORM_FIELDS}
    raw["randomized_only"] = "on" if _checked(raw["randomized_only"]) else ""
    # What is shown back never carries a control character; a field that had one is refused.
    values = {name: strip_control(v) for name, v in raw.items()}
    result = FormResult(values)
    errors = result.errors
    for name, v in raw.items():
        if msg := _control(v):
            errors[name] = msg
    if errors:
        return result
    task = None
    if not values["task"]:
        errors["task"] = f"choose a task ({', '.join(t.value for t in Task)})"
    else:
        try:
            task = parse_task(values["task"], "form")
        except InputError as exc:
            errors["task"] = _strip_where(str(exc), "form")
    if not values["problem"]:
        errors["problem"] = "give the primary problem (for example: acute febrile illness)"
    for name in ("problem", "outcome"):
        if name not in errors and (msg := _too_long(values[name])):
            errors[name] = msg
    if msg := _too_long(values["question"], MAX_QUESTION):
        errors["question"] = msg
    lists: dict[str, list[str]] = {}
    for name in LIST_FIELDS:
        items = _split(values[name])
        lists[name] = items
        if len(items) > MAX_ITEMS:
            errors[name] = f"too many values: at most {MAX_ITEMS} (separate them with ;), got {len(items)}"
        elif any(_too_long(v) for v in items):
            longest = max(len(v) for v in items)
            errors[name] = f"too long: at most {MAX_TEXT} characters per value, got {longest}"
    options: dict[str, Any] = {}
    checks = (
        ("source", _source, "local"),
        ("top", _top, str(DEFAULT_TOP)),
        ("ranker", _ranker, DEFAULT_RANKER),
    )
    for name, check, default in checks:
        try:
            options[name] = check(values[name] or default)
        except FieldError as exc:
            errors[name] = exc.message
    if errors:
        return result
    data: dict[str, Any] = {"task": task.value if task else values["task"], "problem": values["problem"]}
    data |= lists
    data["outcome"] = values["outcome"] or None
    data["question"] = " ".join(values["question"].split()) or None
    try:
        frame = frame_from_dict(data, "form")
    except InputError as exc:  # not expected after the checks above; still shown by its field
        errors[_field_of(exc) or "problem"] = _strip_where(str(exc), "form")
        return result
    result.question = Question(
        frame,
        options["source"],
        options["top"],
        ranker=options["ranker"],
        randomized_only=bool(values["randomized_only"]),
    )
    return result


def _checked(value: str) -> bool:
    """A checkbox's value: browsers send "on" (or the value attribute) when ticked, nothing else."""
    return value.lower() in ("on", "1", "true", "yes")


def form_values(frame: Frame) -> dict[str, str]:
    """A frame as form text (to pre-fill the form, e.g. with an example question)."""
    values = {name: "" for name in FORM_FIELDS}
    values["task"] = frame.task.value
    values["problem"] = frame.problem or ""
    for name in LIST_FIELDS:
        values[name] = "; ".join(getattr(frame, name))
    values["outcome"] = frame.outcome or ""
    values["question"] = frame.question or ""
    values["source"] = "local"
    values["top"] = str(DEFAULT_TOP)
    values["ranker"] = DEFAULT_RANKER
    return values


ENVELOPE_KEYS = ("frame", "source", "top", "explain", "ranker", "randomized_only")
OPTION_KEYS = ENVELOPE_KEYS[1:]


def _options(data: Mapping[str, Any]) -> dict[str, Any]:
    """The envelope's options (source, top, explain, ranker, randomized_only), checked."""
    options: dict[str, Any] = {
        "source": "local",
        "top": DEFAULT_TOP,
        "explain": False,
        "ranker": DEFAULT_RANKER,
        "randomized_only": False,
    }
    if "source" in data:
        options["source"] = _source(data["source"])
    if "top" in data:
        options["top"] = _top(data["top"])
    if "ranker" in data:
        options["ranker"] = _ranker(data["ranker"])
    for name in ("explain", "randomized_only"):
        if name in data:
            if not isinstance(data[name], bool):
                raise FieldError(f"{name} must be true or false", name)
            options[name] = data[name]
    return options


def read_question(text: Any, fields: Mapping[str, Any], reader: QuestionReader) -> tuple[Frame, Asked]:
    """A question in words read into a frame, each slot in ``fields`` replacing its reading;
    ``FieldError`` on the ``question`` field (or the slot named) when it cannot be asked."""
    if not isinstance(text, str):
        raise FieldError("question must be a string: the clinical question in words", "question")
    if msg := _control(text):
        raise FieldError(f"question {msg}", "question")
    if msg := _too_long(text.strip(), MAX_QUESTION):
        raise FieldError(f"question is {msg}", "question")
    try:
        reading = reader.read(text, fields)
    except NothingFound as exc:
        raise FieldError(str(exc), "question") from None
    except InputError as exc:
        field = _field_of(exc)
        raise FieldError(str(exc), field if field in SLOTS else "question") from None
    return reading.frame, reading.asked


def validate_json(data: Any, reader: Callable[[], QuestionReader] | None = None) -> Question:
    """A question from the API's JSON body: a frame object,
    ``{"frame": {...}, "source": "local", "top": 10, "explain": false}``, or a question in words
    ``{"question": "...", ...}`` (read by ``reader()``, called only then; frame fields beside it
    replace single slots, like ``ebm ask "QUESTION" --problem X``; the options as in the envelope).
    Raises ``FieldError`` naming the first bad field."""
    if not isinstance(data, dict):
        raise FieldError('the request body must be a JSON object (a frame, or {"frame": {...}})')
    if "question" in data and "frame" not in data:
        allowed = ("question", *SLOTS, "id", *OPTION_KEYS)
        unknown = [k for k in data if k not in allowed]
        if unknown:
            raise FieldError(
                f"unknown key {unknown[0]!r} beside 'question' (allowed: {', '.join(allowed)})",
                str(unknown[0]),
            )
        if reader is None:
            raise FieldError("this server does not read questions in words; send a frame", "question")
        options = _options(data)
        fields = {k: v for k, v in data.items() if k in SLOTS}
        frame, asked = read_question(data["question"], fields, reader())
        if "id" in data:
            try:
                frame = frame_from_dict({**frame.to_dict(), "id": data["id"]}, "frame")
            except InputError as exc:
                raise FieldError(str(exc), "id") from None
        errors = check_frame(frame)
        if errors:
            name, message = next(iter(errors.items()))
            raise FieldError(f"{asked.understood_as}: field {name!r}: {message}", name)
        return Question(frame, asked=asked, **options)
    options = _options({})
    if "frame" in data:
        unknown = [k for k in data if k not in ENVELOPE_KEYS]
        if unknown:
            raise FieldError(
                f"unknown key {unknown[0]!r} beside 'frame' (allowed: {', '.join(ENVELOPE_KEYS)})",
                str(unknown[0]),
            )
        options = _options(data)
        data = data["frame"]
        if not isinstance(data, dict):
            raise FieldError("'frame' must be a JSON object of frame fields", "frame")
    try:
        frame = frame_from_dict(data, "frame")
    except InputError as exc:  # "unknown field 'x'" names the unknown key as the field
        raise FieldError(str(exc), _field_of(exc)) from None
    errors = check_frame(frame)
    if errors:
        name, message = next(iter(errors.items()))
        raise FieldError(f"frame: field {name!r}: {message}", name)
    return Question(frame, **options)
