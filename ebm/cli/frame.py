"""``ebm frame TEXT``: the PICO frame a question in plain words asks for, and nothing else.

ebm frame "Is ibuprofen better than acetaminophen for fever in children?"          # YAML
ebm frame "leg cramps quinine" --json > q.json && ebm ask --frame q.json

The output is what ``--frame`` reads (``ebm.frame.loads_frame``), so it can be edited and
reused. How the words were read (task reason, unplaced words) goes to stderr with ``--explain``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ebm.errors import InputError

if TYPE_CHECKING:
    from ebm.frame import Frame
    from ebm.question import ParsedQuestion

MODEL = Path(__file__).resolve().parent.parent / "data" / "models" / "question_roles.json.gz"  # shipped


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "frame",
        help="turn a question in plain words into a PICO frame (the format --frame reads)",
        description="Read a clinical question or a few keywords and print the PICO frame it asks for "
        "(task, problem, co-occurring problems, population, intervention, comparison, outcome) as "
        "YAML (default) or JSON, in the format `ebm ask --frame` reads. Needs `ebm setup`.",
    )
    p.add_argument(
        "text", help='the question, e.g. "Is ibuprofen better than acetaminophen for fever in children?"'
    )
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="JSON output")
    fmt.add_argument("--yaml", action="store_true", help="YAML output (the default)")
    p.add_argument(
        "--rules", help="rules directory (default: the shipped rules/); its question_cues.tsv is used"
    )
    p.add_argument("--explain", action="store_true", help="also print how the words were read, on stderr")
    p.set_defaults(func=run)


def parse_text(text: str, rules: str | None = None) -> ParsedQuestion:
    """The CLI's resources (matcher, vocabulary, cue table, role model) and the parse."""
    from ebm.ask import default_resources
    from ebm.question import parse_question

    if not text.strip():
        raise InputError("the question is empty")
    res = default_resources(Path(rules) if rules else None)  # the ones ebm ask then uses
    return parse_question(text, res.matcher, res.vocabulary, res.question_cues, res.role_model)


def dumps(parsed: ParsedQuestion, as_json: bool) -> str:
    from ebm.frame import CONTENT_FIELDS

    frame = parsed.frame
    if not any(getattr(frame, f) for f in CONTENT_FIELDS):
        said = [f"not placed: {', '.join(parsed.unplaced)}"] if parsed.unplaced else []
        said += [f"cue words: {', '.join(parsed.cue_words)}"] if parsed.cue_words else []
        said += [f"ignored: {', '.join(parsed.ignored)}"] if parsed.ignored else []
        raise InputError(
            f"no problem, population or intervention found in {frame.question!r} ({'; '.join(said)})"
        )
    data = frame.to_dict()
    if as_json:
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    import yaml

    return str(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100))


def run(args: argparse.Namespace) -> int:
    from ebm.question import understood_as

    parsed = parse_text(args.text, args.rules)
    sys.stdout.write(dumps(parsed, args.json))
    if args.explain:
        print(understood_as(parsed), file=sys.stderr)
        print(f"task: {parsed.task_reason}", file=sys.stderr)
        for text, slot, how in parsed.roles:
            print(f"  {slot}: {text!r} ({how})", file=sys.stderr)
        if parsed.ignored:
            print(f"ignored: {', '.join(parsed.ignored)}", file=sys.stderr)
    return 0


# Slots a flag of `ebm ask` may set over a parsed question: (option attribute, frame field).
OVERRIDES = (
    ("task", "task"),
    ("problem", "problem"),
    ("co_problem", "co_problems"),
    ("population", "population"),
    ("intervention", "intervention"),
    ("comparison", "comparison"),
    ("outcome", "outcome"),
    ("id", "id"),
)


def question_frame(args: argparse.Namespace, out: TextIO) -> Frame:
    """For ``ebm ask "QUESTION"``: the parsed frame with each slot given as a flag
    (``--task``, ``--problem``, ...) put in its place; "Understood as: ..." and the task reason
    are printed to ``out``."""
    return understood_frame(args, out)[0]


def understood_frame(args: argparse.Namespace, out: TextIO) -> tuple[Frame, str]:
    """``question_frame`` and its "Understood as: ..." line (``ebm ask``'s JSON carries it)."""
    from ebm.frame import frame_from_dict
    from ebm.question import understood_as

    parsed = parse_text(args.text, str(args.rules) if getattr(args, "rules", None) else None)
    data = parsed.frame.to_dict()
    changed = []
    for option, field_name in OVERRIDES:
        value = getattr(args, option, None)
        if value not in (None, []):
            data[field_name] = value
            changed.append(field_name)
    frame = frame_from_dict(
        data, "the question" + (f" with {', '.join(changed)} from the options" if changed else "")
    )
    from dataclasses import replace

    line = understood_as(replace(parsed, frame=frame))
    print(line, file=out)
    print(f"  task {parsed.task_reason}", file=out)
    if changed:
        print(f"  from the options: {', '.join(changed)}", file=out)
    return frame, line
