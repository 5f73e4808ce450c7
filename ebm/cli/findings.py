"""``ebm findings``: what a trial found for intervention vs comparison on an outcome.

ebm findings --frame questions/fever_acetaminophen_ibuprofen.yaml 1621668   # citations of the store
ebm findings --intervention ibuprofen --comparison acetaminophen --outcome fever "TEXT"
echo "TEXT" | ebm findings --intervention ibuprofen -                        # text from stdin
ebm findings --jsonl prompts.jsonl                # one {"id", "intervention", "comparison",
                                                  #  "outcome", "text"} per line, one answer each

JSON for a text: ``{"findings": [{"outcome", "direction", "significant", "sentence", "start", "end",
"numbers", "confidence"}, ...]}``, best first, offsets into the text as given. For ``--frame``:
``{"citations": [{"pmid", "title", "findings": [...]}]}`` with offsets into the citation's
document text (the title, a blank line, then the abstract sections joined by blank lines).
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from ebm.errors import InputError
from ebm.mesh import mesh as shipped_mesh

DEFAULT_LIMIT = 3


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "findings",
        help="find what a trial reports for intervention vs comparison on an outcome",
        description="Find the sentences of a text (or of citations of the store) that report the "
        "intervention against the comparison on the outcome, with the direction of the effect for "
        "the intervention (higher / lower / no_difference), its significance and the numbers given.",
    )
    p.add_argument(
        "inputs", nargs="*", metavar="TEXT|PMID", help="a text ('-': stdin), or PMIDs with --frame"
    )
    p.add_argument("--frame", type=Path, help="a question frame (YAML/JSON): its I, C and O; then PMIDs")
    p.add_argument("--intervention", help="the intervention (required for a text)")
    p.add_argument(
        "--comparison", default="", help="the comparison (default: placebo / usual care / control)"
    )
    p.add_argument("--outcome", default="", help="the outcome (default: the outcomes the text reports)")
    p.add_argument(
        "--jsonl", type=Path, metavar="FILE", help="one JSON prompt per line; one answer line each"
    )
    p.add_argument("--db", help="the local store for --frame (default: the one in the data directory)")
    p.add_argument("--model", type=Path, help="a findings model (default: the shipped one)")
    p.add_argument(
        "--outcome-words",
        type=Path,
        metavar="TSV",
        help="words abstracts report an outcome with (default: the shipped table)",
    )
    p.add_argument(
        "--limit", type=int, default=DEFAULT_LIMIT, help=f"findings per text (default {DEFAULT_LIMIT})"
    )
    p.add_argument(
        "--min-confidence", type=float, help="report sentences at least this probable (default: the model's)"
    )
    p.add_argument("--json", action="store_true", help="JSON output")
    p.set_defaults(func=run)


def _model(path: Path | None) -> Any:
    from ebm.paths import package_data
    from extractors.findings import MODEL_FILE, load_findings_model

    if path is not None and not path.is_file():
        raise InputError(f"--model {path}: no such file")
    return load_findings_model(path or package_data(MODEL_FILE))


def _outcome_words(path: Path | None) -> Any:
    from ebm.paths import package_data
    from extractors.findings import OUTCOME_WORDS_FILE, load_outcome_words

    if path is not None and not path.is_file():
        raise InputError(f"--outcome-words {path}: no such file")
    return load_outcome_words(path or package_data(OUTCOME_WORDS_FILE))


def _read_text(arg: str) -> str:
    text = sys.stdin.read() if arg == "-" else arg
    if not text.strip():
        raise InputError("the text is empty" + (" (stdin)" if arg == "-" else ""))
    return text


def run(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise InputError(f"--limit {args.limit}: must be 1 or more")
    if args.min_confidence is not None and not 0.0 <= args.min_confidence <= 1.0:
        raise InputError(f"--min-confidence {args.min_confidence}: must be between 0 and 1")
    modes = sum(x is not None for x in (args.frame, args.jsonl)) + (args.intervention is not None)
    if modes != 1:
        raise InputError("give one of --frame FRAME PMID..., --intervention I TEXT, or --jsonl FILE")
    if args.jsonl is not None:
        if args.inputs:
            raise InputError("--jsonl takes no TEXT or PMID arguments")
        return _run_jsonl(args)
    if args.frame is not None:
        return _run_frame(args)
    if len(args.inputs) != 1:
        raise InputError(f"give exactly one TEXT ('-' for stdin), not {len(args.inputs)}")
    if not args.intervention.strip():
        raise InputError("--intervention is empty")
    from extractors.findings import extract_findings

    text = _read_text(args.inputs[0])
    model = _model(args.model)
    words = _outcome_words(args.outcome_words)
    found = extract_findings(
        text,
        args.intervention,
        args.comparison,
        args.outcome,
        model,
        limit=args.limit,
        min_confidence=args.min_confidence,
        outcome_words=words,
    )
    if args.json:
        json.dump({"findings": [f.to_dict() for f in found]}, sys.stdout, ensure_ascii=False, indent=2)
        print()
    else:
        print_findings(found, args.intervention, args.comparison, args.outcome)
    return 0


def _run_jsonl(args: argparse.Namespace) -> int:
    from extractors.findings import extract_findings

    path: Path = args.jsonl
    if not path.is_file():
        raise InputError(f"--jsonl {path}: no such file")
    model = _model(args.model)
    words = _outcome_words(args.outcome_words)
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{n}: not JSON ({exc.msg})") from exc
            if not isinstance(d, dict):
                raise InputError(f"{path}:{n}: expected a JSON object")
            for key in ("intervention", "text"):
                if not isinstance(d.get(key), str) or not d[key].strip():
                    raise InputError(f"{path}:{n}: field {key!r} missing or empty")
            for key in ("comparison", "outcome"):
                if d.get(key) is not None and not isinstance(d[key], str):
                    raise InputError(f"{path}:{n}: field {key!r} must be a string")
            found = extract_findings(
                d["text"],
                d["intervention"],
                d.get("comparison") or "",
                d.get("outcome") or "",
                model,
                limit=args.limit,
                min_confidence=args.min_confidence,
                outcome_words=words,
            )
            out = {"id": d.get("id"), "findings": [x.to_dict() for x in found]}
            sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    return 0


def _run_frame(args: argparse.Namespace) -> int:
    from ebm.frame import load_frame
    from ebm.store import open_store
    from ebm.text.pipeline import TextPipeline
    from extractors.findings import extract_findings

    if not args.inputs:
        raise InputError("--frame needs one or more PMIDs")
    bad = [x for x in args.inputs if not x.strip().isdigit()]
    if bad:
        raise InputError(f"{bad[0]!r} is not a PMID (a PMID is a number)")
    if not args.frame.is_file():
        raise InputError(f"--frame {args.frame}: no such file")
    frame = load_frame(args.frame)
    if not frame.intervention:
        raise InputError(f"{args.frame}: the frame has no intervention")
    intervention = " or ".join(frame.intervention)
    comparison = " or ".join(frame.comparison)
    outcome = frame.outcome or ""
    pmids = [x.strip() for x in args.inputs]
    store = open_store(args.db, vocabulary=shipped_mesh)
    try:
        citations = {c.pmid: c for c in store.fetch(pmids)}
    finally:
        store.close()
    missing = [p for p in pmids if p not in citations]
    if missing:
        raise InputError(f"PMID {missing[0]} is not in the local store")
    model = _model(args.model)
    words = _outcome_words(args.outcome_words)
    pipeline = TextPipeline()
    results = []
    for pmid in pmids:
        c = citations[pmid]
        doc = pipeline.process(c)
        found = extract_findings(
            doc,
            intervention,
            comparison,
            outcome,
            model,
            limit=args.limit,
            min_confidence=args.min_confidence,
            outcome_words=words,
        )
        results.append((c, found))
    if args.json:
        data = {
            "citations": [
                {"pmid": c.pmid, "title": c.title, "findings": [f.to_dict() for f in found]}
                for c, found in results
            ]
        }
        json.dump(data, sys.stdout, ensure_ascii=False, indent=2)
        print()
        return 0
    for i, (c, found) in enumerate(results):
        if i:
            print()
        print(f"PMID {c.pmid}: {c.title or '(no title)'}")
        print_findings(found, intervention, comparison, outcome)
    return 0


def _numbers(n: dict[str, Any]) -> str:
    parts = []
    if "effect" in n:
        parts.append(f"{n['effect']['kind']} {n['effect']['value']:g}")
    if "ci" in n:
        parts.append(f"{n['ci']['level']}% CI {n['ci']['low']:g} to {n['ci']['high']:g}")
    if "p" in n:
        parts.append(f"p {n['p']['relation']} {n['p']['value']:g}")
    return ", ".join(parts)


def print_findings(found: list[Any], intervention: str, comparison: str, outcome: str) -> None:
    """The human-readable findings, best first."""
    from ebm.bottom_line import direction_text

    if not found:
        on = f" on {outcome}" if outcome else ""
        print(f"  no sentence reports {intervention} vs {comparison or 'control'}{on}")
        return
    for k, f in enumerate(found, start=1):
        sig = "significant" if f.significant else "not significant"
        what = direction_text(f.direction, f.outcome, intervention, comparison)
        print(f"  {k}. {what} ({sig}; confidence {f.confidence:.2f}; chars {f.start}-{f.end})")
        print(
            textwrap.fill(
                " ".join(f.sentence.split()), width=100, initial_indent="     ", subsequent_indent="     "
            )
        )
        nums = _numbers(f.numbers)
        if nums:
            print(f"     numbers: {nums}")
