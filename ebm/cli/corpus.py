"""``ebm corpus``: the local MEDLINE store (ingest PubMed XML, search, stats).

    ebm corpus ingest PATH... [--db FILE] [--batch-size N]
    ebm corpus search QUERY [--limit N] [--sort relevance|date] [--json] [--db FILE]
    ebm corpus stats [--json] [--db FILE]
    ebm corpus annotate [--workers N | --scheduler ADDRESS] [--since DATE] [--rules DIR] [--db FILE]

Without ``--db`` the default store is used (``EBM_HOME/medline.sqlite`` or the per-user data
directory), created from the bundled corpus on first use.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import NoReturn

from ebm.errors import EbmError, InputError
from ebm.mesh import mesh as shipped_mesh
from ebm.query_syntax import MAX_DEPTH, MAX_TERMS
from ebm.store.default import open_store
from ebm.store.ingest import CHUNK_SIZE, IngestSummary
from ebm.store.sqlite import IngestReport

XML_SUFFIXES = (".xml", ".xml.gz")
NBIB_SUFFIXES = (".nbib", ".nbib.gz")  # MEDLINE text format (PubMed "Save -> PubMed format")


def register(subparsers: argparse._SubParsersAction) -> None:
    corpus = subparsers.add_parser(
        "corpus",
        help="the local MEDLINE store: ingest, search, stats",
        description="The local MEDLINE store (SQLite + FTS5). Without --db: EBM_HOME/medline.sqlite, "
        "else the per-user data directory; created from the bundled corpus on first use.",
    )
    sub = corpus.add_subparsers(dest="corpus_command", metavar="ACTION", required=True)
    db = argparse.ArgumentParser(add_help=False)
    db.add_argument("--db", metavar="FILE", help="store file (default: EBM_HOME/medline.sqlite)")

    p = sub.add_parser(
        "ingest",
        parents=[db],
        help="add PubMed XML files (plain or .gz) or MEDLINE text exports (.nbib) to the store",
        description="Add PubMed/MEDLINE XML files (PubmedArticleSet or MedlineCitationSet: baseline and "
        "update files, efetch output; plain or gzip) or MEDLINE text-format exports (.nbib, PubMed's "
        "'Save -> PubMed format') to the store. Files are parsed in parallel worker processes; one "
        "transaction per batch. A PMID already stored is replaced by the later file's record; "
        "DeleteCitation blocks remove PMIDs. Each file is recorded once ingested whole: running the "
        "same files again skips them, and an interrupted ingest resumes when run again. A PubMed file "
        "older than the newest one ingested is reported and skipped (--allow-older applies it).",
    )
    p.add_argument(
        "paths", nargs="+", metavar="PATH",
        help="XML or .nbib file, or a directory of *.xml, *.xml.gz, *.nbib, *.nbib.gz",
    )  # fmt: skip
    p.add_argument(
        "--batch-size", type=int, default=CHUNK_SIZE, help=f"citations per transaction ({CHUNK_SIZE})"
    )
    p.add_argument("--workers", type=int, help="parsing processes (default: one per CPU; 0: none)")
    p.add_argument(
        "--allow-older", action="store_true", help="apply PubMed files older than the newest ingested"
    )
    p.set_defaults(func=run_ingest)

    p = sub.add_parser(
        "search",
        parents=[db],
        help="search the store with PubMed syntax",
        description="Search with a subset of PubMed syntax: AND OR NOT, parentheses, quoted phrases, "
        "[ti] [tiab] [tw] [mh] [mh:noexp] [majr] [sh] [pt] [la] [dp] [pmid], hasabstract, word*. "
        f"At most {MAX_TERMS:,} terms and {MAX_DEPTH} levels of nesting. See docs/store.md.",
        epilog="A query that starts with '-' goes after '--': ebm corpus search -- '-fever'. "
        "Titles are cut to the terminal's width (to 300 characters when not a terminal); --json "
        "gives them whole.",
    )
    p.error = _search_error  # type: ignore[method-assign]
    p.add_argument("query", help="e.g. '\"febrile\" AND ibuprofen[tiab]'")
    p.add_argument("--limit", type=int, default=20, help="hits to show (20)")
    p.add_argument("--sort", choices=("relevance", "date"), default="relevance", help="BM25 or newest first")
    p.add_argument("--json", action="store_true", help="print a JSON document")
    p.set_defaults(func=run_search)

    p = sub.add_parser(
        "annotate",
        parents=[db],
        help="annotate the store's citations on Dask and store the annotations",
        description="Annotate every citation of the store not yet annotated with the current rules, "
        "models and code (ebm ask and ebm bench then read the stored annotations, and ebm corpus "
        "search accepts [problem] [intervention] [population] [design] [grade]). Runs on a local "
        "Dask cluster of --workers processes (loopback only), or on an existing cluster "
        "(--scheduler tcp://HOST:8786). Resumable: a re-run annotates only what is missing.",
    )
    p.add_argument("--workers", type=int, help="local worker processes (default: one per CPU)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="an existing Dask scheduler, e.g. tcp://10.0.0.1:8786")
    p.add_argument("--since", metavar="DATE", help="only citations published on or after YYYY[-MM[-DD]]")
    p.add_argument("--rules", metavar="DIR", help="an edited copy of rules/ (default: the shipped tables)")
    p.add_argument("--batch-size", type=int, default=32, help="citations per Dask task (32)")
    p.add_argument("--limit", type=int, help="annotate at most N citations of those missing")
    p.set_defaults(func=run_annotate)

    p = sub.add_parser("stats", parents=[db], help="counts of what the store holds")
    p.add_argument("--json", action="store_true", help="print a JSON document")
    p.set_defaults(func=run_stats)


def _search_error(message: str) -> NoReturn:
    """argparse's error, with the way out when the query was read as an option ("-fever")."""
    if "required: query" in message:
        message = (
            "no query given (a query that starts with '-' goes after '--': ebm corpus search -- '-fever')"
        )
    print(f"ebm corpus search: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def _xml_files(paths: list[str]) -> list[Path]:
    """The files to read, checked before anything is written."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            suffixes = XML_SUFFIXES + NBIB_SUFFIXES
            found = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(suffixes))
            if not found:
                raise InputError(f"{path}: no *.xml, *.xml.gz, *.nbib or *.nbib.gz files in this directory")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise InputError(f"{path}: no such file or directory")
    return files


def run_ingest(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from ebm.store.ingest import IngestSummary, ingest_files

    files = _xml_files(args.paths)
    store = open_store(args.db, create=True, vocabulary=shipped_mesh)
    report = IngestSummary()
    with store, tqdm(unit=" citations", desc="ingest", file=sys.stderr, disable=None) as bar:

        def progress(n: int, name: str) -> None:
            bar.set_postfix_str(name, refresh=False)
            bar.update(n)

        try:
            ingest_files(
                store, files, workers=args.workers, chunk_size=args.batch_size,
                allow_older=args.allow_older, summary=report, on_chunk=progress,
            )  # fmt: skip
        except EbmError as exc:
            bar.close()
            _print_notices(report)
            raise type(exc)(
                f"{exc}\n{_summary(report, store.path)} before the error; nothing stored earlier was lost"
            ) from exc
        except KeyboardInterrupt:
            bar.close()
            print(
                f"ebm: interrupted: {_summary(report, store.path)} (the batch in progress was rolled back)",
                file=sys.stderr,
            )
            raise
        total = len(store)
    _print_notices(report)
    if report.skipped:
        print(f"ebm: already ingested, skipped: {', '.join(report.skipped)}", file=sys.stderr)
    if report.older:
        done = "applied (--allow-older)" if args.allow_older else "skipped (--allow-older applies them)"
        print(
            f"ebm: older than the newest PubMed file in the store, {done}: {', '.join(report.older)}",
            file=sys.stderr,
        )
    print(
        f"{_summary(report, store.path)} from {len(report.files)} file(s); "
        f"the store holds {total:,} citations",
        file=sys.stderr,
    )
    return 0


def _summary(report: IngestReport | IngestSummary, path: Path) -> str:
    text = f"stored {report.stored:,} citations in {path} ({report.added:,} new, {report.replaced:,} replaced"
    if report.deleted:
        text += f", {report.deleted:,} deleted"
    skipped = report.skipped_records if isinstance(report, IngestSummary) else report.skipped
    if skipped:
        text += f", {skipped:,} records skipped"
    return text + ")"


NOTICES_SHOWN = 20


def _print_notices(report: IngestSummary) -> None:
    """The reader's notices (records skipped for want of a PMID, texts cut to their caps)."""
    for note in report.notices[:NOTICES_SHOWN]:
        print(f"ebm: {note}", file=sys.stderr)
    if len(report.notices) > NOTICES_SHOWN:
        print(f"ebm: ... and {len(report.notices) - NOTICES_SHOWN:,} more notices", file=sys.stderr)


def run_search(args: argparse.Namespace) -> int:
    if args.limit < 0:
        raise InputError(f"--limit must not be negative, not {args.limit}")
    with open_store(args.db, vocabulary=shipped_mesh) as store:
        hits = store.search_hits(args.query, limit=args.limit, sort=args.sort)
    if args.json:
        doc = {
            "query": hits.query,
            "translation": hits.translation,
            "sort": hits.sort,
            "count": hits.count,
            "results": [
                {"rank": i, "pmid": h.pmid, "year": h.year, "title": h.title, "score": h.score}
                for i, h in enumerate(hits.hits, 1)
            ],
        }
        print(json.dumps(doc, ensure_ascii=False, indent=2))
        return 0
    print(f"{hits.count:,} citations match {_cut(hits.translation, 2000)}", file=sys.stderr)
    width = shutil.get_terminal_size().columns - 23 if sys.stdout.isatty() else 300
    for i, h in enumerate(hits.hits, 1):
        year = str(h.year) if h.year is not None else "----"
        print(f"{i:>4}  {h.pmid:>9}  {year}  {_cut(h.title or '(no title)', max(width, 20))}")
    return 0


def _cut(text: str, width: int) -> str:
    """One line of at most ``width`` characters (a record's title can be 1 MB long)."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def run_annotate(args: argparse.Namespace) -> int:
    import re

    from ebm.annotation_cache import annotation_version
    from ebm.ask import default_resources
    from ebm.store.annotate_dask import annotate_store, default_workers

    if args.workers is not None and args.scheduler:
        raise InputError("give --workers (a local cluster) or --scheduler (an existing one), not both")
    if args.since and not re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", args.since):
        raise InputError(f"--since {args.since!r}: write a date as YYYY, YYYY-MM or YYYY-MM-DD")
    if args.batch_size < 1 or (args.limit is not None and args.limit < 0):
        raise InputError("--batch-size must be at least 1 and --limit not negative")
    resources = default_resources(Path(args.rules) if args.rules else None)
    version = annotation_version(resources)
    with open_store(args.db, vocabulary=shipped_mesh) as store:
        report = annotate_store(
            store,
            version,
            resources.rules_dir,
            workers=args.workers or default_workers(),
            scheduler=args.scheduler,
            since=args.since,
            batch=args.batch_size,
            progress=sys.stderr.isatty(),
            limit=args.limit,
        )
        total = store.annotated_count(version)
    for line in report.skipped[:NOTICES_SHOWN]:
        print(f"ebm: skipped {line}", file=sys.stderr)
    workers = f"{report.workers} worker{'s' if report.workers != 1 else ''}"
    rate = f" in {report.seconds:.1f} s ({report.rate:.1f} citations/s on {workers}, start-up included)"
    print(
        f"annotated {report.annotated:,} of {report.todo:,} citations missing"
        f"{rate if report.todo else ''}; {total:,} stored for version {version[:12]}"
        + (f"; {len(report.skipped):,} skipped" if report.skipped else "")
    )
    return 0


def run_stats(args: argparse.Namespace) -> int:
    with open_store(args.db, vocabulary=shipped_mesh) as store:
        stats = store.stats()
    if args.json:
        print(json.dumps(stats.to_dict(), ensure_ascii=False, indent=2))
        return 0
    years = f"{stats.year_min}-{stats.year_max}" if stats.year_min is not None else "unknown"
    rows = [
        ("store", stats.path),
        ("citations", f"{stats.citations:,}"),
        ("with abstract", f"{stats.with_abstract:,}"),
        ("with MeSH headings", f"{stats.with_mesh:,}"),
        ("with publication types", f"{stats.with_publication_types:,}"),
        ("with a year", f"{stats.with_year:,}"),
        ("years", years),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    print("sources:")
    for source, n in stats.sources.items():
        print(f"  {n:>7,}  {source}")
    return 0
