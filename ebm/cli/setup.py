"""``ebm setup``: build the concept index in the data directory, offline.

ebm setup                 MeSH 2024 (shipped), written as RRF and indexed (~20 s)
ebm setup --umls DIR      a licensed UMLS release (MRCONSO.RRF + MRSTY.RRF in DIR or DIR/META)
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "setup",
        help="build the concept index (MeSH 2024, or a UMLS release) in the data directory",
        description="Build the concept index used by `ebm concepts` and the extractors, in the data "
        "directory (EBM_HOME or the per-user directory). Needs no network access.",
    )
    p.add_argument("--umls", type=Path, metavar="DIR", help="index a UMLS release instead of MeSH 2024")
    p.add_argument(
        "--sab",
        metavar="SAB,...",
        help="with --umls: keep only these source vocabularies (e.g. MSH,SNOMEDCT_US,RXNORM)",
    )
    p.add_argument(
        "--no-permuted",
        action="store_true",
        help="leave out permuted terms (TTY PM); they help the dictionary matcher on BC5CDR",
    )
    p.add_argument(
        "--no-quickumls",
        action="store_true",
        help="skip the QuickUMLS (approximate matching) index: faster, smaller, dictionary matcher only",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--rules",
        type=Path,
        metavar="DIR",
        help="build with the stopwords and groups of an edited rules/ copy",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from ebm.concepts.index import build_mesh_index, build_umls_index, count_rrf_rows, index_dir
    from ebm.resources import Resources

    out = index_dir()
    # the tables an index is built with (stopwords, semantic groups); checked without the
    # index, which may not exist yet
    resources = Resources.load(args.rules, index_dir=out)
    permuted, quickumls = not args.no_permuted, not args.no_quickumls
    if args.umls is not None:
        from ebm.errors import InputError

        if not args.umls.is_dir():
            raise InputError(f"--umls {args.umls}: not a directory")
        total = count_rrf_rows(args.umls)
        sources = frozenset(s.strip() for s in args.sab.split(",") if s.strip()) if args.sab else None
        with tqdm(total=total or None, unit=" rows", desc="indexing UMLS", disable=args.quiet) as bar:
            stats = build_umls_index(
                args.umls,
                out,
                resources.value("umls_semantic_groups"),
                resources.stopwords,
                sources=sources,
                progress=bar.update,
                include_permuted=permuted,
                with_quickumls=quickumls,
            )
    else:
        voc = resources.vocabulary
        total = len(voc.terms)
        with tqdm(total=total, unit=" terms", desc="indexing MeSH 2024", disable=args.quiet) as bar:
            stats = build_mesh_index(
                out,
                voc,
                resources.value("semantic_groups"),
                resources.stopwords,
                progress=bar.update,
                include_permuted=permuted,
                with_quickumls=quickumls,
            )
    print(
        f"{stats.source}: {stats.concepts:,} concepts, {stats.strings:,} strings, {stats.keys:,} lookup keys"
        f"{' + QuickUMLS index' if stats.quickumls else ''}; {stats.bytes / 1e6:.0f} MB in {out} "
        f"({stats.seconds:.0f} s)"
    )
    return 0
