"""``ebm annotate``: everything the knowledge extractors find in a citation.

ebm annotate 7028532                 # a citation of the local store (built from the bundled corpus)
ebm annotate 7028532 --db my.sqlite  # ... of another store
ebm annotate --file pubmed.xml       # every citation of a PubMed XML (.xml, .xml.gz) or .nbib file
ebm annotate --file pubmed.xml.gz --json > out.jsonl   # one JSON object per record, in file order
ebm annotate --file pubmed.xml 7028532 --json
ebm annotate 7028532 --rules my-rules  # with an edited copy of the rule tables

JSON: one annotation object for a PMID (of the store, or of ``--file``); for ``--file`` without a
PMID, JSON Lines: one object per record, in file order, written as each is annotated, with
progress on stderr. Each object carries the evidence grade and issue 13's ``design`` ({label,
probability, probabilities, source}), ``design_from_text``, ``sample_size`` ({value, sentence}
or null) and ``human``.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ebm.citation import Citation
from ebm.errors import InputError
from ebm.mesh import mesh as shipped_mesh

EXPLAIN_LINES = 4  # reasons shown per candidate with --explain


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "annotate",
        help="show the population, problems, interventions, outcomes and evidence grade of a citation",
        description="Run every knowledge extractor over a citation: population, primary and "
        "co-occurring problems, interventions, outcome sentences and strength of evidence, each "
        "with its score and the evidence behind it. Needs `ebm setup` (the concept index).",
    )
    p.add_argument("pmid", nargs="?", help="the PMID of a citation (in the store, or in --file)")
    p.add_argument(
        "--file",
        type=Path,
        help="a PubMed XML (.xml, .xml.gz) or MEDLINE text (.nbib) file instead of the store; "
        "with --json and no PMID: one JSON object per record (JSON Lines)",
    )
    p.add_argument("--db", help="the local store (default: the one in the data directory)")
    p.add_argument("--json", action="store_true", help="JSON output")
    p.add_argument(
        "--outcomes", type=int, default=3, metavar="N", help="outcome sentences to show (default 3)"
    )
    p.add_argument("--explain", action="store_true", help="show why each candidate scored what it did")
    p.add_argument("--concepts", action="store_true", help="also list every concept found (JSON)")
    p.add_argument("--rules", type=Path, metavar="DIR", help="an edited copy of rules/ (ebm rules copy DIR)")
    p.set_defaults(func=run)


def read_file(path: Path) -> Iterator[Citation]:
    """The citations of a PubMed XML (plain or gzip) or MEDLINE text (.nbib) file, in order."""
    import gzip

    from ebm.medline import read_citations
    from ebm.medline.nbib import is_nbib, read_nbib

    try:
        with open(path, "rb") as f:
            head = f.read(4096)
        if head[:2] == b"\x1f\x8b":
            with gzip.open(path, "rb") as g:
                head = g.read(4096)
    except OSError as exc:
        raise InputError(f"--file {path}: cannot read: {exc}") from exc
    if is_nbib(head):
        return read_nbib(path)
    return read_citations(path)


def _citations(args: argparse.Namespace) -> list[Citation]:
    pmid = args.pmid.strip() if args.pmid else None
    if pmid is not None and not pmid.isdigit():
        raise InputError(f"{args.pmid!r} is not a PMID (a PMID is a number)")
    if args.file is not None:
        if args.db:
            raise InputError("give either --file or --db, not both")
        if not args.file.is_file():
            raise InputError(f"--file {args.file}: no such file")
        found = [c for c in read_file(args.file) if pmid is None or c.pmid == pmid]
        if not found:
            what = f"no citation with PMID {pmid}" if pmid else "no citation"
            raise InputError(f"{args.file}: {what} in the file")
        return found
    if pmid is None:
        raise InputError("give a PMID, or --file FILE")
    from ebm.store import open_store

    store = open_store(args.db, vocabulary=shipped_mesh)
    try:
        found = store.fetch([pmid])
    finally:
        store.close()
    if not found:
        raise InputError(f"PMID {pmid} is not in the local store")
    return found


def run(args: argparse.Namespace) -> int:
    if args.outcomes < 0:
        raise InputError(f"--outcomes {args.outcomes}: must be 0 or more")
    from ebm.resources import Resources

    resources = Resources.load(args.rules)  # a broken table stops here, with file:line
    from extractors.annotate import Annotator

    if args.json and args.file is not None and not args.pmid:
        return _json_lines(args, Annotator(resources))
    citations = _citations(args)
    annotator = Annotator(resources)
    annotations = [annotator.annotate(c) for c in citations]
    if args.json:
        data: Any = annotations[0].to_dict(concepts=args.concepts)
        json.dump(data, sys.stdout, indent=2, ensure_ascii=False, allow_nan=False)
        print()
        return 0
    for i, a in enumerate(annotations):
        if i:
            print()
        print_annotation(a, outcomes=args.outcomes, explain=args.explain)
    return 0


PROGRESS_EVERY_S = 2.0


def _json_lines(args: argparse.Namespace, annotator: Any) -> int:
    """Every record of ``--file``: one JSON object per line as it is annotated (a large file
    streams), progress on stderr every few seconds and at the end."""
    if args.db:
        raise InputError("give either --file or --db, not both")
    if not args.file.is_file():
        raise InputError(f"--file {args.file}: no such file")
    from ebm.text.document import UnprocessableText

    start = last = time.perf_counter()
    n = skipped = 0
    for c in read_file(args.file):
        try:
            a = annotator.annotate(c)
        except UnprocessableText as exc:  # one record too large must not stop the file
            skipped += 1
            print(f"ebm annotate: skipped: {exc}", file=sys.stderr)
            continue
        sys.stdout.write(json.dumps(a.to_dict(concepts=args.concepts), ensure_ascii=False, allow_nan=False))
        sys.stdout.write("\n")
        n += 1
        now = time.perf_counter()
        if now - last >= PROGRESS_EVERY_S:
            last = now
            sys.stdout.flush()
            print(f"ebm annotate: {n} records ({n / (now - start):.0f}/s)", file=sys.stderr)
    if n == 0 and skipped == 0:
        raise InputError(f"{args.file}: no citation in the file")
    elapsed = time.perf_counter() - start
    tail = f", {skipped} skipped" if skipped else ""
    print(f"ebm annotate: {n} records in {elapsed:.1f} s{tail}", file=sys.stderr)
    return 0


def _wrap(text: str, indent: str = "    ") -> str:
    return textwrap.fill(" ".join(text.split()), width=100, initial_indent=indent, subsequent_indent=indent)


def _concept(c: Any) -> str:
    ids = ", ".join(f"{n} {u}" for n, u in zip(c.names, c.concepts, strict=False))
    return f"{c.text!r}" + (f" [{ids}]" if ids else "")


def _human(human: bool | None) -> str:
    return {True: " · human", False: " · animal or in vitro", None: ""}[human]


def print_annotation(a: Any, outcomes: int = 3, explain: bool = False) -> None:
    """The human-readable report of one ``Annotation``."""
    c = a.citation
    print(f"PMID {c.pmid}: {c.title or '(no title)'}")
    if not a.document.text.strip():
        print("  (no title or abstract: nothing to extract)")
    from extractors.evidence import evidence_line

    ev = a.evidence
    grade = f"grade {ev.grade}" if ev.grade else "grade unknown"
    print(f"Strength of evidence: {grade}" + (f" ({ev.study_class})" if ev.study_class else ""))
    print(f"  {evidence_line(ev)}" + _human(a.human))
    if explain:
        for r in ev.reasons:
            print(f"    - {r}")

    def section(title: str, items: list[Any], limit: int | None = None) -> None:
        shown = items if limit is None else items[:limit]
        if not shown:
            print(f"{title}: none found")
            return
        print(f"{title}:")
        for item in shown:
            print(f"  {item.score:7.2f}  {_concept(item)}")
            if explain:
                for why in item.evidence[:EXPLAIN_LINES]:
                    print(f"             - {why}")
                if len(item.evidence) > EXPLAIN_LINES:
                    print(f"             ... and {len(item.evidence) - EXPLAIN_LINES} more (--json has all)")

    section("Population", a.population, 1)
    section("Primary problem", [a.primary_problem] if a.primary_problem else [], 1)
    section("Co-occurring problems", a.co_problems[:5])
    section("Interventions", a.interventions, 8)
    tops = a.top_outcomes(outcomes) if outcomes else []
    if outcomes:
        print(
            f"Outcomes (the {len(tops)} most probable outcome sentences, in abstract order):"
            if tops
            else "Outcomes: none"
        )
        for o in tops:
            print(f"  [{o.probability:.2f}, sentence {o.sentence}]")
            print(_wrap(o.text))
