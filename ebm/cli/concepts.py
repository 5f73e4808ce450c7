"""``ebm concepts``: the concepts recognised in a text or in a stored citation.

ebm concepts "Acute otitis media (AOM) in children; no AOM recurrence"
ebm concepts --pmid 227508 [--db PATH] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ebm.errors import InputError
from ebm.mesh import mesh as shipped_mesh


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "concepts",
        help="show the MeSH concepts recognised in a text or a citation",
        description="Concept recognition: each match with its span, text, concept ID, preferred name, "
        "semantic groups, similarity, negation, sentence and section. Needs `ebm setup`.",
    )
    p.add_argument("text", nargs="?", help="the text to analyse (an abstract, a question)")
    p.add_argument("--pmid", help="analyse this citation's title and abstract from the local store")
    p.add_argument("--db", help="the local store (default: the one in the data directory)")
    p.add_argument("--json", action="store_true", help="JSON output")
    p.add_argument(
        "--matcher",
        choices=["dictionary", "quickumls"],
        default="dictionary",
        help="dictionary (default, fast, exact) or quickumls (approximate)",
    )
    p.add_argument(
        "--threshold", type=float, default=0.9, help="similarity threshold for --matcher quickumls"
    )
    p.add_argument("--group", action="append", metavar="GROUP", help="only these semantic groups (DISO...)")
    p.add_argument("--rules", type=Path, metavar="DIR", help="an edited copy of rules/ (ebm rules copy DIR)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ebm.concepts.annotate import annotate
    from ebm.concepts.groups import GROUP_NAMES
    from ebm.resources import Resources

    if (args.text is None) == (args.pmid is None):
        raise InputError("give either a TEXT or --pmid PMID")
    if args.group:
        unknown = [g for g in args.group if g not in GROUP_NAMES]
        if unknown:
            raise InputError(f"unknown group {unknown[0]!r} (known: {', '.join(GROUP_NAMES)})")
    if args.matcher == "quickumls" and not 0 < args.threshold <= 1:
        raise InputError(f"--threshold {args.threshold}: must be in (0, 1]")
    resources = Resources.load(args.rules)
    if args.matcher == "quickumls":
        from ebm.concepts.matcher import QuickUMLSMatcher

        matcher: Any = QuickUMLSMatcher(
            resources.index_dir,
            resources.value("concept_stoplist"),
            resources.stopwords,
            threshold=args.threshold,
        )
    else:
        matcher = resources.matcher
    pipeline = resources.pipeline
    if args.pmid:
        from ebm.store import open_store

        pmid = args.pmid.strip()
        if not pmid.isdigit():
            raise InputError(f"--pmid {args.pmid!r}: a PMID is a number")
        found = open_store(args.db, vocabulary=shipped_mesh).fetch([pmid])
        if not found:
            raise InputError(f"PMID {pmid} is not in the local store")
        doc = pipeline.process(found[0])
    else:
        if not args.text.strip():
            raise InputError("the text is empty")
        doc = pipeline.process_text(None, args.text)
    concepts = annotate(doc, matcher, resources.negation)
    if args.group:
        concepts = [c for c in concepts if any(g in c.groups for g in args.group)]
    if args.json:
        json.dump(
            {"pmid": doc.pmid, "text": doc.text, "concepts": [c.to_dict() for c in concepts]},
            sys.stdout,
            indent=2,
            ensure_ascii=False,
            allow_nan=False,
        )
        print()
        return 0
    if not concepts:
        print("no concepts found")
        return 0
    print("span\ttext\tconcept\tname\tgroups\tsimilarity\tnegated\tsentence\tsection")
    for c in concepts:
        text = c.text if c.long_form is None else f"{c.text} [{c.long_form}]"
        print(
            f"{c.start}-{c.end}\t{text}\t{c.cui}\t{c.name}\t{','.join(c.groups)}\t{c.similarity:.2f}\t"
            f"{'negated' if c.negated else '-'}\t{c.sentence}\t{c.section or c.position}"
        )
    return 0
