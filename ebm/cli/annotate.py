"""``ebm annotate``: everything the knowledge extractors find in a citation.

ebm annotate 7028532                 # a citation of the local store (built from the bundled corpus)
ebm annotate 7028532 --db my.sqlite  # ... of another store
ebm annotate --file pubmed.xml       # every citation of a PubMed/MEDLINE XML file
ebm annotate --file pubmed.xml 7028532 --json
ebm annotate 7028532 --rules my-rules  # with an edited copy of the rule tables

JSON: one annotation object for a PMID of the store; a list of them for ``--file``.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from ebm.citation import Citation
from ebm.errors import InputError

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
        "--file", type=Path, help="a PubMed/MEDLINE XML file (.xml or .xml.gz) instead of the store"
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


def _citations(args: argparse.Namespace) -> list[Citation]:
    pmid = args.pmid.strip() if args.pmid else None
    if pmid is not None and not pmid.isdigit():
        raise InputError(f"{args.pmid!r} is not a PMID (a PMID is a number)")
    if args.file is not None:
        from ebm.medline import read_citations

        if args.db:
            raise InputError("give either --file or --db, not both")
        if not args.file.is_file():
            raise InputError(f"--file {args.file}: no such file")
        found = [c for c in read_citations(args.file) if pmid is None or c.pmid == pmid]
        if not found:
            what = f"no citation with PMID {pmid}" if pmid else "no citation"
            raise InputError(f"{args.file}: {what} in the file")
        return found
    if pmid is None:
        raise InputError("give a PMID, or --file FILE")
    from ebm.store import open_store

    store = open_store(args.db)
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
    citations = _citations(args)
    from extractors.annotate import Annotator

    annotator = Annotator(resources)
    annotations = [annotator.annotate(c) for c in citations]
    if args.json:
        data: Any = [a.to_dict(concepts=args.concepts) for a in annotations]
        if args.file is None:
            data = data[0]
        json.dump(data, sys.stdout, indent=2, ensure_ascii=False, allow_nan=False)
        print()
        return 0
    for i, a in enumerate(annotations):
        if i:
            print()
        print_annotation(a, outcomes=args.outcomes, explain=args.explain)
    return 0


def _wrap(text: str, indent: str = "    ") -> str:
    return textwrap.fill(" ".join(text.split()), width=100, initial_indent=indent, subsequent_indent=indent)


def _concept(c: Any) -> str:
    ids = ", ".join(f"{n} {u}" for n, u in zip(c.names, c.concepts, strict=False))
    return f"{c.text!r}" + (f" [{ids}]" if ids else "")


def print_annotation(a: Any, outcomes: int = 3, explain: bool = False) -> None:
    """The human-readable report of one ``Annotation``."""
    c = a.citation
    print(f"PMID {c.pmid}: {c.title or '(no title)'}")
    if not a.document.text.strip():
        print("  (no title or abstract: nothing to extract)")
    ev = a.evidence
    grade = f"grade {ev.grade}" if ev.grade else "grade unknown"
    print(f"Strength of evidence: {grade}" + (f" ({ev.study_class})" if ev.study_class else ""))
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
