"""``ebm bench`` (baselines and systems reranking the same pools, evaluated) and ``ebm sweep``
(every weight setting of S_EBM and of the term/EBM combination on a development set)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from ebm.errors import InputError
from ebm.mesh import mesh as shipped_mesh

DEFAULT_OUT = Path("ebm-bench")
COMPONENTS_FILE = "components.json.gz"


def register(subparsers: argparse._SubParsersAction) -> None:
    _register_bench(subparsers)
    _register_sweep(subparsers)


def _say(msg: str) -> None:
    print(f"ebm: {msg}", file=sys.stderr, flush=True)


# -- shared options and the components ----------------------------------------------------------


def _add_input_options(p: argparse.ArgumentParser, frames_required: bool = True) -> None:
    p.add_argument(
        "--frames",
        type=Path,
        required=frames_required,
        metavar="DIR",
        help="PICO frames (JSON/YAML), one per question; the id is the frame's id or file name",
    )
    p.add_argument(
        "--pools",
        type=Path,
        metavar="RUN",
        help=(
            "fixed candidate pools as a TREC run (its order is the pool-order baseline); without it "
            "each frame's pool is retrieved from the store with its formulated query"
        ),
    )
    p.add_argument(
        "--pool-size", type=int, default=50, metavar="N", help="pool size when retrieving (default 50)"
    )
    p.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, metavar="DIR", help=f"output (default {DEFAULT_OUT}/)"
    )
    p.add_argument("--rules", type=Path, metavar="DIR", help="rule tables to score with (default: shipped)")
    p.add_argument("--db", type=Path, metavar="DB", help="MEDLINE store (default: the default store)")
    p.add_argument("--year", type=int, metavar="YYYY", help="the current year of S_date (default: this year)")
    p.add_argument(
        "--bm25-query",
        choices=("question", "pool"),
        default="question",
        help="BM25 ranks by the question's words (default) or by the frame's pool_query",
    )
    p.add_argument(
        "--recompute", action="store_true", help=f"ignore the cached components (OUT/{COMPONENTS_FILE})"
    )
    p.add_argument(
        "--skip-missing",
        action="store_true",
        help="leave pooled PMIDs that are not in the store out of the pools (default: error)",
    )
    p.add_argument(
        "--no-annotation-cache",
        action="store_true",
        help="annotate every citation afresh (default: reuse and fill ebm ask's annotation cache)",
    )
    p.add_argument(
        "--retrieval", choices=["bm25", "pico"], default="bm25",
        help="without --pools: retrieve pools with the frame's query (bm25, default) or from the "
        "stored annotations' PICO index (pico; needs ebm corpus annotate, issue 17)",
    )  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _components(args: argparse.Namespace) -> tuple[Any, dict[str, str] | None, list[str]]:
    """Components of every question with both a frame and a pool (cached in OUT)."""
    from ebm.evaluation.bench import load_frames_dir, read_pools, retrieve_pools
    from ebm.evaluation.components import compute_components
    from ebm.store import open_store

    if args.pool_size < 1:
        raise InputError(f"--pool-size must be at least 1, got {args.pool_size}")
    frames = load_frames_dir(args.frames)
    from ebm.resources import Resources

    resources = Resources.load(args.rules)  # every table of --rules DIR, or a file:line error
    notes: list[str] = []
    queries = None
    with open_store(args.db, vocabulary=shipped_mesh) as store:
        if args.pools is not None:
            pools = read_pools(args.pools)
            unframed = [p.qid for p in pools if p.qid not in frames]
            if unframed:
                notes.append(
                    f"{len(unframed)} pooled questions have no frame, left out: {', '.join(unframed)}"
                )
            pools = [p for p in pools if p.qid in frames]
            if not pools:
                raise InputError(f"no question of {args.pools} has a frame in {args.frames}")
        else:
            pools, queries = retrieve_pools(
                frames, store, args.pool_size, resources, retrieval=args.retrieval
            )
            args.out.mkdir(parents=True, exist_ok=True)
            from ebm.evaluation.bench import pools_run
            from ebm.evaluation.trec import write_run

            write_run(args.out / "pools.run", pools_run(pools), tag="retrieved")
        pooled = {p.qid for p in pools}
        unpooled = sorted(q for q in frames if q not in pooled)
        if unpooled:
            notes.append(f"{len(unpooled)} frames have no pool, left out: {', '.join(unpooled)}")
        empty = [p.qid for p in pools if not p.candidates]
        if empty:
            notes.append(f"{len(empty)} questions have an empty pool, left out: {', '.join(empty)}")
            pools = [p for p in pools if p.candidates]
        if not pools:
            raise InputError("no question has a candidate pool")
        components = compute_components(
            frames,
            pools,
            store,
            resources=resources,
            year=args.year,
            bm25_kind=args.bm25_query,
            cache=args.out / COMPONENTS_FILE,
            recompute=args.recompute,
            skip_missing=args.skip_missing,
            progress=not args.quiet,
            annotation_cache=not args.no_annotation_cache,
            say=_say,
        )
    for qid, dropped in components.meta.get("dropped_missing", {}).items():
        notes.append(
            f"{qid}: {len(dropped)} pooled PMIDs not in the store left out ({', '.join(dropped[:5])})"
        )
    return components, queries, notes


def _settings(args: argparse.Namespace) -> Any:
    from ebm.evaluation.bench import Settings
    from ebm.scoring import Weights

    default = Settings.default()
    l1, l2, l3 = default.l1, default.l2, default.l3
    if args.weights is not None:
        w = Weights.parse(args.weights)
        l1, l2, l3 = w.l1, w.l2, w.l3
    alpha = default.alpha if args.alpha is None else args.alpha
    if not 0.0 <= alpha <= 1.0:
        raise InputError(f"--alpha must be in [0, 1], got {alpha}")
    return Settings(l1, l2, l3, alpha)


# -- ebm bench --------------------------------------------------------------------------------


def _register_bench(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "bench",
        help="rerank each question's pool with the baselines and systems, evaluate with significance",
        description=(
            "For each question, its candidate pool (--pools: a fixed pool as a TREC run; otherwise "
            "retrieved from the store with the frame's query) is reranked by pool order, date order "
            "(newest first), BM25 of the question's words, the term-based reranker, S_EBM, the "
            "term/EBM combination and EBM+ (ebm ask's default ranker, shipped weights -- fitted on "
            "the development questions -- with the pool score as its retrieval feature). Writes "
            "OUT/runs/*.run, OUT/report-LEVEL.txt (with per-question values), OUT/report.json, "
            "OUT/bench.md (Markdown tables), OUT/diagnosis-LEVEL.txt (each score component alone "
            "against pool order) and the components cache; prints the "
            "evaluation (P@10, MAP, MRR, TDRR; Wilcoxon against pool order; per clinical task)."
        ),
    )
    _add_input_options(p)
    p.add_argument("--qrels", type=Path, required=True, metavar="QRELS", help="graded TREC qrels")
    p.add_argument(
        "--level",
        choices=("lenient", "strict", "both"),
        default="both",
        help="lenient (grade >= 2), strict (grade 3) or both (default)",
    )
    p.add_argument(
        "--weights",
        metavar="L1,L2",
        help="S_EBM weights: 'L1,L2', 'equal' or 'therapy' (default: the scorer's default)",
    )
    p.add_argument(
        "--alpha", type=float, metavar="A", help="weight of norm(EBM) in the combination (default 0.8)"
    )
    p.add_argument("--fine-tasks", action="store_true", help="the frames' six tasks instead of four groups")
    p.add_argument("--ascii", action="store_true", help="ASCII significance marks")
    p.set_defaults(func=run_bench_command)


def run_bench_command(args: argparse.Namespace) -> int:
    from ebm.evaluation.bench import levels_for, run_bench
    from ebm.evaluation.trec import read_qrels

    levels = levels_for(args.level)
    qrels = read_qrels(args.qrels)  # before the long part: a bad file fails at once
    settings = _settings(args)
    start = time.perf_counter()
    components, queries, notes = _components(args)
    result = run_bench(components, qrels, settings, levels, args.fine_tasks, args.qrels)
    result.notes = notes + result.notes
    result.pools_query = queries
    written = result.write(args.out)
    meta = components.meta
    print(f"Settings: {settings.describe()}.")
    if meta.get("cached"):
        print(f"Components: from the cache {args.out / COMPONENTS_FILE}.")
    else:
        print(
            f"Components: {meta['candidates']} candidates of {meta['questions']} questions, "
            f"{meta['citations']} distinct citations annotated in {meta['seconds_annotating']:.1f} s "
            f"({meta['annotations_from_cache']} of them read from the annotation cache), "
            f"{meta['seconds_scoring_total']:.1f} s annotating and scoring in all "
            f"(+ {meta['seconds_loading_models']:.1f} s loading models)."
        )
    for note in result.notes:
        print(f"Note: {note}")
    for report in result.reports.values():
        print()
        sys.stdout.write(report.to_text(ascii_only=args.ascii))
    for level, report in result.by_kind.items():  # per question kind (ebm.evaluation.kinds)
        print(f"\nBy question kind (few: 1-2 lenient-relevant citations, many: more), {level}:")
        sys.stdout.write(report.to_text(ascii_only=args.ascii))
    print()
    print(
        f"Written to {args.out}/ in {time.perf_counter() - start:.1f} s: "
        + ", ".join(str(p.relative_to(args.out)) for p in written.values())
    )
    return 0


# -- ebm sweep --------------------------------------------------------------------------------


def _register_sweep(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="all (l1, l2) weights of S_EBM and all term/EBM combination weights on a development set",
        description=(
            "Every (l1, l2) of S_EBM = l1 S_PICO + l2 S_SoE + (1 - l1 - l2) S_task on a grid, and every "
            "alpha of alpha norm(EBM) + (1 - alpha) norm(term), evaluated on the questions' pools "
            "(the components are computed once per citation, or read from the cache). Prints the best "
            "settings; writes OUT/sweep-weights-LEVEL.png (the paper's Figure 3), "
            "OUT/sweep-alpha-LEVEL.png and OUT/sweep-LEVEL.json. Tune on development questions only."
        ),
    )
    p.add_argument("qrels", type=Path, metavar="QRELS", help="graded TREC qrels")
    _add_input_options(p, frames_required=False)
    p.add_argument(
        "--components",
        type=Path,
        metavar="FILE",
        help="sweep a components file written by ebm bench/sweep (no frames, store or scoring needed)",
    )
    p.add_argument("--step", type=float, default=0.01, help="grid step, dividing 1 (default 0.01)")
    p.add_argument(
        "--level", choices=("lenient", "strict"), default="lenient", help="relevance level (default lenient)"
    )
    p.add_argument("--measure", default="MAP", help="measure to optimise (default MAP)")
    p.add_argument(
        "--task",
        metavar="TASK",
        help="sweep only the questions of one clinical task (therapy, diagnosis, prognosis, etiology)",
    )
    p.add_argument(
        "--weights",
        metavar="L1,L2",
        help=(
            "S_EBM weights inside the combination sweep: 'L1,L2', 'equal', 'therapy' or 'best' "
            "(the best of the weight sweep); default: the scorer's default"
        ),
    )
    p.set_defaults(func=run_sweep_command, alpha=None)


def run_sweep_command(args: argparse.Namespace) -> int:
    from ebm.evaluation.bench import restrict_qrels
    from ebm.evaluation.components import Components
    from ebm.evaluation.measures import by_name
    from ebm.evaluation.relevance import LEVELS
    from ebm.evaluation.sweep import grid_size, plot_curve, plot_surface, sweep_combination, sweep_weights
    from ebm.evaluation.tasks import normalise_task, task_group
    from ebm.evaluation.trec import read_qrels

    grid_size(args.step)  # a bad step fails before any work
    measure = by_name(args.measure).name
    qrels = read_qrels(args.qrels)
    threshold = LEVELS[args.level]
    want_best = args.weights is not None and args.weights.strip().casefold() == "best"
    if want_best:
        args.weights = None
    settings = _settings(args)
    if args.components is not None:
        components = Components.load(args.components)
        notes: list[str] = []
    elif args.frames is None:
        raise InputError(
            "give --frames DIR (with --pools RUN, or pools retrieved from the store) or --components"
        )
    else:
        components, _, notes = _components(args)
    if args.task:
        wanted = task_group(normalise_task(args.task))
        components = components.select(q.qid for q in components.questions if task_group(q.task) == wanted)
        if not components.questions:
            raise InputError(f"no question of task {args.task!r}")
    judged, _, unjudged = restrict_qrels(qrels, components.qids)
    if unjudged:
        notes.append(f"{len(unjudged)} questions without judgments left out: {', '.join(unjudged)}")
        components = components.select(q for q in components.qids if q in judged)
    if not components.questions:
        raise InputError("none of the questions has judgments in the qrels")
    for note in notes:
        print(f"Note: {note}")
    qs = components.questions
    start = time.perf_counter()
    surface = sweep_weights([q.component_scores() for q in qs], judged, threshold, args.step, measure)
    weights_seconds = time.perf_counter() - start
    l1, l2, l3 = surface.best_weights if want_best else (settings.l1, settings.l2, settings.l3)
    start = time.perf_counter()
    curve = sweep_combination(
        [q.combination_scores(l1, l2, l3) for q in qs], judged, threshold, args.step, measure
    )
    alpha_seconds = time.perf_counter() - start
    pool_value = _pool_value(components, judged, threshold, measure)
    default_value = _value_at(components, judged, threshold, measure, settings)
    args.out.mkdir(parents=True, exist_ok=True)
    suffix = args.level + (f"-{task_group(normalise_task(args.task))}" if args.task else "")
    surface_png = plot_surface(surface, args.out / f"sweep-weights-{suffix}.png")
    curve_png = plot_curve(curve, args.out / f"sweep-alpha-{suffix}.png")
    n = len(qs)
    print(
        f"{measure} ({args.level}) over {n} questions, step {args.step:g}: "
        f"{surface.values[measure].size - int((surface.values[measure] != surface.values[measure]).sum())} "
        f"weight settings in {weights_seconds:.2f} s, {len(curve.alphas)} alphas in {alpha_seconds:.2f} s."
    )
    print(f"  pool order: {pool_value:.4f}")
    print(
        f"  S_EBM at the default ({settings.l1:.4g}, {settings.l2:.4g}, {settings.l3:.4g}): "
        f"{default_value['ebm']:.4f}"
    )
    print(
        f"  S_EBM best: l1 = {surface.best_l1:g}, l2 = {surface.best_l2:g}, l3 = {surface.best_l3:g}: "
        f"{surface.best_value:.4f}" + (f" ({surface.ties} settings tie)" if surface.ties > 1 else "")
    )
    print(
        f"  combination at alpha = {settings.alpha:g}: {default_value['combination']:.4f}"
        if not want_best
        else f"  combination over S_EBM at the best weights ({l1:g}, {l2:g}, {l3:g})"
    )
    print(
        f"  combination best: alpha = {curve.best_alpha:g}: {curve.best_value:.4f}"
        + (f" ({curve.ties} alphas tie)" if curve.ties > 1 else "")
    )
    summary = {
        "level": args.level,
        "task": args.task,
        "measure": measure,
        "questions": components.qids,
        "pool_order": pool_value,
        "default": {
            "weights": [settings.l1, settings.l2, settings.l3],
            "alpha": settings.alpha,
            **default_value,
        },
        "weights": surface.to_dict(with_surface=False),
        "combination": {"ebm_weights": [l1, l2, l3], **curve.to_dict(with_curve=True)},
        "seconds": {"weights": round(weights_seconds, 3), "combination": round(alpha_seconds, 3)},
        "components": components.meta,
    }
    js = args.out / f"sweep-{suffix}.json"
    js.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print(f"Written: {surface_png}, {curve_png}, {js}")
    return 0


def _pool_value(components: Any, qrels: Any, threshold: int, measure: str) -> float:
    from ebm.evaluation.measures import by_name
    from ebm.evaluation.scores import score_run
    from ebm.evaluation.trec import run_from_rankings

    run = run_from_rankings("pool", {q.qid: list(q.docnos) for q in components.questions})
    return score_run(qrels, run, threshold, [by_name(measure)]).mean(measure)


def _value_at(components: Any, qrels: Any, threshold: int, measure: str, settings: Any) -> dict[str, float]:
    from ebm.evaluation.bench import system_runs
    from ebm.evaluation.measures import by_name
    from ebm.evaluation.scores import score_run

    runs = {r.name: r for r in system_runs(components, settings)}
    m = [by_name(measure)]
    return {name: score_run(qrels, runs[name], threshold, m).mean(measure) for name in ("ebm", "combination")}
