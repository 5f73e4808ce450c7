"""``ebm eval`` (reranking measures with significance) and ``ebm assess`` (blinded answers)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ebm.errors import InputError
from ebm.mesh import mesh as shipped_mesh


def register(subparsers: argparse._SubParsersAction) -> None:
    _register_eval(subparsers)
    _register_assess(subparsers)


# -- ebm eval ---------------------------------------------------------------------------------


def _register_eval(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "eval",
        help="evaluate TREC runs against graded qrels (P@10, MAP, MRR, TDRR, significance)",
        description=(
            "Evaluate one or more TREC runs against graded qrels (3 contains answer, 2 relevant, "
            "1 partially relevant, 0 not relevant) with the paper's measures: P@10, MAP, MRR and "
            "TDRR, per query, mean, and per clinical task; each run against the first with its "
            "relative change and a two-sided Wilcoxon signed-rank test; pairwise differences "
            "between all runs. Conventions as trec_eval -c: averaged over every query of the qrels, "
            "a query without results scores 0, ties in score broken by docno descending."
        ),
    )
    p.add_argument("qrels", type=Path, metavar="QRELS", help="TREC qrels: qid iteration docno grade")
    p.add_argument("runs", type=Path, nargs="+", metavar="RUN", help="TREC runs; the first is the reference")
    p.add_argument(
        "--level",
        choices=("lenient", "strict"),
        default="lenient",
        help="lenient: grades 3 and 2 are relevant (default); strict: only 3",
    )
    p.add_argument("--threshold", type=int, metavar="N", help="relevant when grade >= N (overrides --level)")
    p.add_argument(
        "--tasks",
        type=Path,
        metavar="FRAMES_DIR",
        help="directory of PICO frames (JSON/YAML with id and task) for the per-task breakdown",
    )
    p.add_argument(
        "--fine-tasks",
        action="store_true",
        help="keep the frames' six tasks instead of the paper's four groups",
    )
    p.add_argument("--per-query", action="store_true", help="also print every query's values")
    p.add_argument("--ascii", action="store_true", help="ASCII significance marks (++, +, --, -, ns)")
    p.add_argument("--json", action="store_true", help="print the full report as JSON")
    p.set_defaults(func=run_eval)


def run_eval(args: argparse.Namespace) -> int:
    from ebm.evaluation.relevance import threshold_for
    from ebm.evaluation.report import build_report
    from ebm.evaluation.tasks import read_frames, task_group
    from ebm.evaluation.trec import read_qrels, read_run

    threshold = threshold_for(args.level, args.threshold)
    qrels = read_qrels(args.qrels)
    runs = [read_run(path) for path in args.runs]
    names = [r.name for r in runs]
    if len(set(names)) < len(names):
        # Same file name in different folders: name runs by the path given instead.
        for run, path in zip(runs, args.runs, strict=True):
            run.name = str(path)
    tasks = None
    if args.tasks is not None:
        frames = read_frames(args.tasks)
        tasks = {qid: task_group(q.task, group=not args.fine_tasks) for qid, q in frames.items()}
    report = build_report(qrels, runs, threshold, tasks=tasks, qrels_path=args.qrels)
    if args.json:
        print(report.to_json())
    else:
        sys.stdout.write(report.to_text(per_query=args.per_query, ascii_only=args.ascii))
    return 0


# -- ebm assess -------------------------------------------------------------------------------


def _register_assess(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "assess",
        help="blinded answer assessment: make sheets from two runs, score filled sheets",
        description="Blinded assessment of two systems' answers (paper, section 10).",
    )
    sub = p.add_subparsers(dest="assess_command", metavar="ACTION")
    p.set_defaults(func=lambda args: _missing_action(p))
    _register_assess_make(sub)
    _register_assess_score(sub)


def _missing_action(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _register_assess_make(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "make",
        help="merge two runs' top answers into a blinded sheet (HTML + CSV) and a separate key",
        description=(
            "For each question, merge the top N answers of both runs, suppress duplicates, shuffle "
            "them (seeded) with no system marked, and write a printable HTML sheet, a CSV to fill "
            "(judgement: + relevant and actionable, check relevant, - not useful) and a key file "
            "mapping items to systems. Give the assessor the sheet only."
        ),
    )
    p.add_argument("run_a", type=Path, metavar="RUN_A", help="TREC run of system A (e.g. the baseline)")
    p.add_argument("run_b", type=Path, metavar="RUN_B", help="TREC run of system B")
    p.add_argument("--top", type=int, default=5, metavar="N", help="answers per system (default 5)")
    p.add_argument(
        "--frames", type=Path, required=True, metavar="DIR", help="PICO frames (question text, task)"
    )
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="output directory")
    p.add_argument("--seed", type=int, default=0, help="shuffling seed (default 0)")
    p.add_argument(
        "--key",
        type=Path,
        metavar="FILE",
        help="where to write the key (default OUT/key.json; keep it away from the assessors)",
    )
    p.add_argument(
        "--answers",
        nargs=2,
        type=Path,
        metavar=("ANSWERS_A", "ANSWERS_B"),
        help=(
            "answers of each system as 'ebm ask --format json' documents (a directory of <qid>.json, "
            "or one JSON file with a document, a list of them, or a mapping qid -> document); "
            "both or neither, so that no system is recognisable by what its items show"
        ),
    )
    p.add_argument("--force", action="store_true", help="overwrite an existing sheet and key")
    p.add_argument(
        "--store",
        nargs="?",
        const="",
        default=None,
        metavar="DB",
        help="look titles and abstracts up in the local MEDLINE store (default store when no DB)",
    )
    p.set_defaults(func=run_assess_make)


def _register_assess_score(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "score",
        help="answer precision per system and task from a filled sheet and its key",
        description=(
            "Strict (plus only) and lenient (plus or check) answer precision of each system, per "
            "clinical task and across all: the share of a system's top N answers judged good, a "
            "missing answer counting as not good. System B is compared with A (relative change, "
            "Wilcoxon signed-rank test on per-question precision)."
        ),
    )
    p.add_argument("sheet", type=Path, metavar="SHEET.csv", help="the filled CSV sheet")
    p.add_argument("key", type=Path, metavar="KEY", help="the key file written by 'ebm assess make'")
    p.add_argument("--ascii", action="store_true", help="ASCII significance marks")
    p.add_argument("--json", action="store_true", help="print the scores as JSON")
    p.set_defaults(func=run_assess_score)


def run_assess_make(args: argparse.Namespace) -> int:
    from ebm.evaluation import assess
    from ebm.evaluation.tasks import read_frames
    from ebm.evaluation.trec import read_run

    if args.top < 1:
        raise InputError(f"--top must be at least 1, got {args.top}")
    run_a, run_b = read_run(args.run_a), read_run(args.run_b)
    frames = read_frames(args.frames)
    answers = None
    if args.answers:
        answers = (assess.read_answers(args.answers[0]), assess.read_answers(args.answers[1]))
    store = assess.open_store(args.store or None, shipped_mesh) if args.store is not None else None
    try:
        lookup = assess.source_lookup(store) if store is not None else None
        sheet = assess.make_sheet(
            run_a, run_b, frames, top=args.top, seed=args.seed, answers=answers, lookup=lookup
        )
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()
    written = assess.write_sheet(sheet, args.out, key_path=args.key, force=args.force)
    for warning in sheet.warnings:
        print(f"ebm: warning: {warning}", file=sys.stderr)
    for path in written:
        print(path)
    return 0


def run_assess_score(args: argparse.Namespace) -> int:
    from ebm.evaluation import assess

    key = assess.read_key(args.key)
    judgements = assess.read_judgements(args.sheet, key)
    result = assess.score(judgements, key)
    if args.json:
        print(result.to_json())
    else:
        sys.stdout.write(result.to_text(ascii_only=args.ascii))
    return 0
