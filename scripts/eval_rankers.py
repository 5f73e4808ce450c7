"""Every ranker of ``ebm ask`` on fixed judged pools, EBM+ weights fitted with cross-validation.

Reranks each question's fixed pool (a TREC run: its order is the baseline, its scores are the
retrieval scores EBM+ uses) with the paper's rankers (S_EBM, the combination, the term-based
reranker) and EBM+ (``ebm.scoring.rankers``), and prints the evaluation tables (lenient and
strict: P@10, MAP, MRR, TDRR, with Wilcoxon tests against the pool order).

With ``--fit``, EBM+ weights are fitted on all the questions by coordinate ascent on lenient MAP
(``ebm.scoring.fit``) and, for an honest estimate, by leave-one-question-out cross-validation:
the ``... (LOQO CV)`` run ranks each question with weights fitted on the *other* questions only.
``--write`` stores the all-questions fit as the shipped weights (``ebm/data/ebm_plus_weights.toml``).
``--ablation`` adds cross-validated runs of feature subsets.

    python scripts/eval_rankers.py --bench ../shared/data/bench --year 2024 [--fit [--write]] [--ablation]

Issue 15: every table is also given per question kind (few: 1-2 lenient-relevant citations,
many: more); ``--prior`` estimates EBM-prior (``ebm.scoring.ranker_prior``) by nested CV (feature
set and penalty chosen without the left-out question; with ``--ablation`` per feature set),
``--weak FILE`` adds the weak questions of ``scripts/weak_questions.py`` (fits on them alone,
scored on every dev question; the shipped rankers scored on them), ``--write-prior`` ships the
fit on all questions; ``--variants`` adds untuned S_EBM forms (each tested against date order)
and each question-aware evidence column alone. ``--cache FILE`` keeps the computed columns.

Tune on the development split only: the other half of the benchmark is withheld.
"""

# ruff: noqa: E402  (the BLAS thread settings must come before numpy is imported)
from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import sys

from ebm.mesh import mesh as shipped_mesh

# Thousands of small least-squares fits: a multi-threaded BLAS on a shared 2-core machine spends
# most of its time contending (30 ms per fit single-threaded, 1 s with the default threads).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ebm.ask import AskConfig, Pipeline
from ebm.errors import EbmError
from ebm.evaluation.baselines import date_order
from ebm.evaluation.bench import load_frames_dir, markdown_tables, read_pools
from ebm.evaluation.kinds import kinds_by_query, relevant_count
from ebm.evaluation.relevance import LEVELS
from ebm.evaluation.report import build_report
from ebm.evaluation.significance import wilcoxon
from ebm.evaluation.sweep import ordered_run
from ebm.evaluation.tasks import task_group
from ebm.evaluation.trec import Run, read_qrels, run_from_rankings, write_run
from ebm.scoring.combine import minmax
from ebm.scoring.fit import Question, cross_validate, fit, nested_cross_validate
from ebm.scoring.ranker_prior import (
    PRIOR_WEIGHTS_FILE,
    PairQuestion,
    PriorWeights,
    average_precision,
    choose,
    fit_prior,
    mean_ap,
    nested_prior,
    pair_question,
    prior_matrix,
    prior_parts,
    prior_scores,
    shipped_prior_weights,
)
from ebm.scoring.rankers import (
    FEATURES,
    WEIGHTS_FILE,
    PlusWeights,
    RankerSettings,
    candidate_columns,
    feature_values,
    rank_columns,
)
from ebm.scoring.task import capped

ROOT = Path(__file__).resolve().parents[1]
# Fitted by default: what the benchmark judges. Its rubric grades topical relevance: the problem
# and the intervention or exposure asked about ("3 contains answer", "2 relevant"); a citation
# about another population is still relevant (2), and study quality, year, journal and type are
# not judged. So population, S_SoE and S_task are left out of the fit (weight 0, still shown);
# S_SoE also depends on which corpus a record came from (many bundled records have no journal
# or year), so a weight fitted on it would learn the corpus, not the question.
FIT_FEATURES: tuple[str, ...] = ("retrieval", "lexical", "problem", "intervention", "co_problems")
ABLATIONS: dict[str, tuple[str, ...]] = {
    "retrieval + lexical": ("retrieval", "lexical"),
    "retrieval + paper S_PICO": ("retrieval", "pico"),
    "retrieval + lexical + paper S_PICO": ("retrieval", "lexical", "pico"),
    "without retrieval": ("lexical", "problem", "intervention", "co_problems"),
    "without lexical": ("retrieval", "problem", "intervention", "co_problems"),
    "+ population, outcome": (*FIT_FEATURES, "population", "outcome"),
    "+ term, task, soe": (*FIT_FEATURES, "term", "task", "soe"),
}

# EBM-prior (ebm.scoring.ranker_prior): feature sets and penalties the nested CV chooses among,
# smallest first (the first among equals wins).
MATCH = ("lexical", "problem", "intervention", "co_problems")
EVIDENCE = ("findings", "design", "sample_size", "recency")
PRIOR_SETS = {
    "match": MATCH,
    "match + both": (*MATCH, "both"),
    "match + both + evidence": (*MATCH, "both", *EVIDENCE),
    "match + both + evidence + rest": (*MATCH, "both", *EVIDENCE, "population", "outcome", "task", "term"),
}
PRIOR_ABLATIONS = {
    "lexical only": ("lexical",),
    "match": MATCH,
    "match + both": (*MATCH, "both"),
    "match + both + findings": (*MATCH, "both", "findings"),
    "match + both + design": (*MATCH, "both", "design"),
    "match + both + sample size": (*MATCH, "both", "sample_size"),
    "match + both + recency": (*MATCH, "both", "recency"),
    "match + both + evidence": (*MATCH, "both", *EVIDENCE),
    "match + both + evidence - findings": (*MATCH, "both", "design", "sample_size", "recency"),
    "match + both + evidence + task (bounded)": (*MATCH, "both", *EVIDENCE, "task"),
}
PENALTIES = (0.0001, 0.0003, 0.001, 0.003, 0.01)
WEAK_PENALTY = 0.0001  # the one weak-only fit shown as a run (all penalties are in the notes)


@dataclass
class QuestionData:
    """One question's candidates (pool order), every ranker column, and their years."""

    pmids: list[str]
    cols: dict[str, list[float]]
    years: list[int | None]


def load_weak(path: Path) -> dict[str, Any]:
    """Weak training questions (``scripts/weak_questions.py``): columns and qrels."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        raw = json.load(f)
    return {
        "questions": {q: QuestionData(**v) for q, v in raw["questions"].items()},
        "qrels": raw["qrels"],
    }


def _sum(*cols: Sequence[float]) -> list[float]:
    return [float(sum(v)) for v in zip(*cols, strict=True)]


def _mean_evidence(c: Mapping[str, Sequence[float]]) -> list[float]:
    return [v / 3 for v in _sum(c["design"], c["sample_size"], c["recency"])]


# Untuned variants of the paper's formula (equal weights), for what each fix does alone.
VARIANTS: dict[str, Callable[[Mapping[str, Sequence[float]]], list[float]]] = {
    "paper S_EBM, S_task capped (tanh)": lambda c: _sum(c["pico"], c["soe"], [capped(t) for t in c["task"]]),
    "S_match (sum of its parts)": lambda c: _sum(
        *(c[f"match.{p}"] for p in ("problem", "intervention", "population", "co_problems", "outcome"))
    ),
    "S_match + S_SoE + capped S_task": lambda c: _sum(
        *(c[f"match.{p}"] for p in ("problem", "intervention", "population", "co_problems", "outcome")),
        c["soe"],
        [capped(t) for t in c["task"]],
    ),
    # the normalisation revisited: each of the paper's three parts min-max scaled per question
    # (S_task capped first), so none swamps the others by its raw range
    "S_EBM, parts normalised": lambda c: _sum(
        minmax(c["pico"]), minmax(c["soe"]), minmax([capped(t) for t in c["task"]])
    ),
    # ... and S_SoE from the question-aware evidence (design, sample size, recency)
    "S_EBM, parts normalised, evidence SoE": lambda c: _sum(
        minmax(c["pico"]), _mean_evidence(c), minmax([capped(t) for t in c["task"]])
    ),
}


# Each question-aware evidence column alone as the first sort key (pool order breaking ties), as
# the bench's diagnosis does for the paper's components: what it says about topical relevance.
ALONE = ("findings", "design", "sample_size", "recency", "match.outcome")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bench", type=Path, default=ROOT.parent / "shared" / "data" / "bench")
    p.add_argument("--year", type=int, default=2024, help="the current year of S_date (default 2024)")
    p.add_argument("--db", type=Path, help="the local store (default: the default store)")
    p.add_argument("--ranker-weights", type=Path, help="EBM+ weights to evaluate (default: shipped)")
    p.add_argument("--fit", action="store_true", help="fit EBM+ weights, with leave-one-question-out CV")
    p.add_argument("--folds", type=int, help="k-fold instead of leave-one-question-out")
    p.add_argument("--write", action="store_true", help=f"store the fit as ebm/data/{WEIGHTS_FILE}")
    p.add_argument("--ablation", action="store_true", help="cross-validated runs of feature subsets")
    p.add_argument("--variants", action="store_true", help="untuned variants of the paper's formula")
    p.add_argument(
        "--nested",
        action="store_true",
        help="nested CV: the feature set (EBM+ or an ablation) chosen by inner 5-fold CV without the "
        "left-out question, then fitted: estimates choosing the set as well as its weights",
    )
    p.add_argument("--out", type=Path, help="write every run (TREC format) into this directory")
    p.add_argument("--cache", type=Path, help="columns cache (json.gz): read when it holds the same pools")
    p.add_argument("--recompute", action="store_true", help="recompute the columns even if cached")
    p.add_argument(
        "--prior", action="store_true", help="EBM-prior: nested CV (with --ablation: per feature set)"
    )
    p.add_argument(
        "--weak", type=Path, help="weak training questions (scripts/weak_questions.py) for EBM-prior"
    )
    p.add_argument(
        "--write-prior", action="store_true", help=f"store the EBM-prior fit as ebm/data/{PRIOR_WEIGHTS_FILE}"
    )
    p.add_argument("--per-task", action="store_true", help="also the tables per clinical task")
    args = p.parse_args()
    try:
        return run(args)
    except EbmError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def collect(
    frames: dict[str, Any], pools: list[Any], args: argparse.Namespace
) -> tuple[dict[str, QuestionData], Any]:
    """Every column any ranker reads (``candidate_columns`` and the question-aware evidence
    columns) and the year of each candidate, per question; read from ``--cache`` when it holds
    the same questions and pools (``--recompute`` forces it)."""
    from ebm.scoring.question_evidence import EvidenceModels, evidence_columns
    from ebm.store import open_store

    key = {q.qid: [c.pmid for c in q.candidates] for q in pools}
    if args.cache and args.cache.is_file() and not args.recompute:
        with gzip.open(args.cache, "rt", encoding="utf-8") as f:
            data = json.load(f)
        if data.get("pools") == key and data.get("year") == args.year:
            print(f"note: columns read from {args.cache}", file=sys.stderr)
            return {q: QuestionData(**v) for q, v in data["questions"].items()}, None
    config = AskConfig(year=args.year, ranker_weights=args.ranker_weights)
    out: dict[str, QuestionData] = {}
    with open_store(args.db, vocabulary=shipped_mesh) as store, Pipeline(config, source=store) as pipeline:
        # the design model and grade table the annotator grades the evidence with
        models = EvidenceModels(pipeline.resources.design_model, pipeline.resources.design_grades)
        for pool in pools:
            found = {c.pmid: c for c in store.fetch(pool.pmids)}
            kept = [c for c in pool.candidates if c.pmid in found]
            if len(kept) < len(pool.candidates):
                print(f"note: {pool.qid}: {len(pool.candidates) - len(kept)} pooled PMIDs not in the store")
            annotations, _ = pipeline.annotate([found[c.pmid] for c in kept])
            cands = pipeline.candidate_scores(
                frames[pool.qid], annotations, retrieval=[c.pool_score for c in kept]
            )
            cols = candidate_columns(cands)  # "findings" too: the pipeline's own extraction
            cols.update(evidence_columns(annotations, models))
            out[pool.qid] = QuestionData([c.pmid for c in kept], cols, [found[c.pmid].year for c in kept])
        settings = pipeline.ranker_settings
    if args.cache:
        args.cache.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(args.cache, "wt", encoding="utf-8") as f:
            json.dump(
                {"pools": key, "year": args.year, "questions": {q: v.__dict__ for q, v in out.items()}}, f
            )
    return out, settings


def run(args: argparse.Namespace) -> int:
    frames = load_frames_dir(args.bench / "frames")
    pools = [p for p in read_pools(args.bench / "pools.run") if p.qid in frames]
    qrels = read_qrels(args.bench / "qrels.txt")
    data, settings = collect(frames, pools, args)
    if settings is None:
        settings = RankerSettings(plus=PlusWeights.read(args.ranker_weights) if args.ranker_weights else None)
    per_question = {q: d.cols for q, d in data.items()}

    qids = list(per_question)
    docnos = {q: data[q].pmids for q in qids}

    def ranked_scores(name: str, q: str) -> list[float]:
        cols = per_question[q]
        return rank_columns(name, cols, list(range(1, len(docnos[q]) + 1)), settings).scores

    def scored(name: str, scores: Mapping[str, Sequence[float] | np.ndarray]) -> Run:
        # ties keep the pool order, as ebm ask (its retrieval order), ebm bench and the fit break them
        return ordered_run(name, [(q, docnos[q], np.asarray(scores[q], dtype=float)) for q in qids])

    pool = run_from_rankings("pool order", docnos)
    years = {p: y for d in data.values() for p, y in zip(d.pmids, d.years, strict=True)}
    runs = [pool, date_order(pool, years, name="date order")]  # as ebm bench's date baseline
    for ranker, label in (
        ("paper-ebm", "paper S_EBM"),
        ("combination", "paper combination"),
        ("term", "term"),
    ):
        runs.append(scored(label, {q: ranked_scores(ranker, q) for q in qids}))
    if args.variants:
        for label, fn in VARIANTS.items():
            runs.append(scored(label, {q: fn(per_question[q]) for q in qids}))
        for column in ALONE:
            runs.append(scored(f"{column} alone", {q: per_question[q][column] for q in qids}))
    shipped = settings.plus_weights()
    label = "EBM+ (shipped weights)" if args.ranker_weights is None else f"EBM+ ({args.ranker_weights.name})"
    runs.append(scored(label, {q: ranked_scores("ebm-plus", q) for q in qids}))
    if args.prior or args.write_prior:
        try:
            prior = shipped_prior_weights()
        except EbmError as exc:
            print(f"note: {exc}", file=sys.stderr)
        else:
            runs.append(
                scored(
                    "EBM-prior (shipped weights)",
                    {q: [sum(p.values()) for p in prior_parts(per_question[q], prior)] for q in qids},
                )
            )

    def questions(names: tuple[str, ...]) -> list[Question]:
        out = []
        for q in qids:
            values = feature_values(per_question[q], names)  # type: ignore[arg-type]
            out.append(Question(q, docnos[q], np.column_stack([values[n] for n in names])))
        return out

    notes = [f"EBM+ weights ({shipped.source}): {dict(shipped.weights)}"]
    fitted = None
    if args.fit or args.ablation:
        sets = {"EBM+": FIT_FEATURES} if args.fit else {}
        if args.ablation:
            sets.update({f"EBM+ {k}": v for k, v in ABLATIONS.items()})
        how = "LOQO CV" if args.folds is None else f"{args.folds}-fold CV"
        for label, names in sets.items():
            qs = questions(names)
            whole = fit(qs, names, qrels, threshold=LEVELS["lenient"])
            cv = cross_validate(qs, names, qrels, threshold=LEVELS["lenient"], folds=args.folds)
            runs.append(
                scored(f"{label} (fit on all, {how} below)", {q.qid: q.features @ whole.weights for q in qs})
            )
            runs.append(scored(f"{label} ({how})", cv.held_out_scores))
            spread = {
                n: (min(f.weights[i] for _, f in cv.folds), max(f.weights[i] for _, f in cv.folds))
                for i, n in enumerate(names)
            }
            notes.append(
                f"{label}: weights fitted on all {len(qs)} questions {whole.as_dict()} (training MAP "
                f"{whole.value:.3f}, {whole.passes} passes); range over the CV folds: "
                + ", ".join(f"{n} {lo:g}..{hi:g}" for n, (lo, hi) in spread.items())
            )
            if label == "EBM+":
                fitted = whole

    if args.nested:
        sets = {"EBM+": FIT_FEATURES, **ABLATIONS}
        nested = nested_cross_validate(
            {k: (v, questions(v)) for k, v in sets.items()}, qrels, LEVELS["lenient"]
        )
        runs.append(
            scored("EBM+ set and weights chosen without the question (nested CV)", nested.held_out_scores)
        )
        counts = Counter(nested.chosen.values())
        notes.append(
            "nested CV, feature set chosen per left-out question: "
            + ", ".join(f"{k} {n} times" for k, n in counts.most_common())
        )

    prior_fit = None
    if args.prior:
        n_rel = {q: relevant_count(qrels, q) for q in qids}
        weak = load_weak(args.weak) if args.weak else {}

        def pair_set(
            names: tuple[str, ...], source: Mapping[str, QuestionData], judged: Any
        ) -> list[PairQuestion]:
            return [
                pair_question(q, d.pmids, prior_matrix(d.cols, names), judged.get(q, {}), LEVELS["lenient"])
                for q, d in source.items()
            ]

        def sets_of(named: Mapping[str, tuple[str, ...]]) -> dict[str, list[PairQuestion]]:
            return {k: pair_set(v, data, qrels) for k, v in named.items()}

        def weak_of(named: Mapping[str, tuple[str, ...]]) -> dict[str, list[PairQuestion]]:
            if not weak:
                return {}
            return {k: pair_set(v, weak["questions"], weak["qrels"]) for k, v in named.items()}

        main_sets = sets_of(PRIOR_SETS)
        pn = nested_prior(main_sets, PENALTIES, n_rel)
        runs.append(
            scored("EBM-prior (nested CV: set and penalty chosen without the question)", pn.held_out_scores)
        )
        prior_counts = Counter(pn.chosen.values())
        notes.append(
            "EBM-prior nested CV, (set, penalty) chosen per left-out question: "
            + ", ".join(f"{k[0]} @ {k[1]:g}: {n}" for k, n in prior_counts.most_common())
        )
        if args.ablation:
            for label, subset in PRIOR_ABLATIONS.items():
                one = nested_prior(sets_of({label: subset}), PENALTIES, n_rel)
                runs.append(scored(f"EBM-prior {label} (nested CV: penalty)", one.held_out_scores))
        if weak:
            # fitted on the weak questions only: every dev question is out of sample
            for label, subset in PRIOR_SETS.items():
                wq = weak_of({label: subset})[label]
                dev = main_sets[label]
                for pen in PENALTIES:
                    w = fit_prior(wq, pen)
                    if pen == WEAK_PENALTY:
                        runs.append(
                            scored(
                                f"EBM-prior {label}, fitted on weak questions only (penalty {pen:g})",
                                {q.qid: prior_scores(q, w) for q in dev},
                            )
                        )
                    notes.append(
                        f"weak-only fit, {label}, penalty {pen:g}: dev MAP "
                        f"{mean_ap(dev, {q.qid: prior_scores(q, w) for q in dev}, n_rel):.3f}, bonus "
                        + ", ".join(f"{n} {x:.2f}" for n, x in zip(subset, w, strict=True))
                    )
            # the shipped rankers on the weak questions: out of sample for both (neither saw them)
            wqs = weak_of({"match": MATCH})["match"]
            ranked = {
                "pool order": {q.qid: -np.arange(len(q.docnos), dtype=float) for q in wqs},
                **{
                    f"{name} (shipped)": {
                        q: np.asarray(
                            rank_columns(name, d.cols, list(range(1, len(d.pmids) + 1)), settings).scores
                        )
                        for q, d in weak["questions"].items()
                    }
                    for name in ("ebm-plus", "ebm-prior", "paper-ebm")
                },
            }
            per_q = {
                k: np.array([average_precision(v[q.qid], q.relevant, 1) for q in wqs])
                for k, v in ranked.items()
            }
            for k, v in per_q.items():
                c = wilcoxon(v, per_q["pool order"])
                notes.append(
                    f"weak questions ({len(wqs)}, own article relevant): {k} MAP {v.mean():.3f}"
                    + ("" if k == "pool order" else f", vs pool order p {c.p_value:.3g}")
                )
            c = wilcoxon(per_q["ebm-prior (shipped)"], per_q["ebm-plus (shipped)"])
            notes.append(f"weak questions: ebm-prior vs ebm-plus, Wilcoxon p {c.p_value:.3g}")
            both = nested_prior(main_sets, PENALTIES, n_rel, extra=weak_of(PRIOR_SETS))
            runs.append(scored("EBM-prior, dev + weak questions (nested CV)", both.held_out_scores))
        name, pen = choose(main_sets, PENALTIES, n_rel)
        w = fit_prior(main_sets[name], pen)
        prior_fit = (name, pen, w)
        notes.append(
            f"EBM-prior fitted on all {len(qids)} (set {name!r}, penalty {pen:g} chosen by 5-fold CV): "
            + ", ".join(f"{n} {x:.3f}" for n, x in zip(PRIOR_SETS[name], w, strict=True))
        )

    tasks = {q: task_group(frames[q].task.value) for q in qids}
    kinds = kinds_by_query(qrels, qids)
    reports = {
        level: build_report(qrels, runs, LEVELS[level], tasks=tasks, qrels_path=args.bench / "qrels.txt")
        for level in ("lenient", "strict")
    }
    by_kind = {
        level: build_report(qrels, runs, LEVELS[level], tasks=kinds, qrels_path=args.bench / "qrels.txt")
        for level in ("lenient", "strict")
    }
    text = markdown_tables(reports)
    if not args.per_task:
        text = text.split("\n\n**", 1)[0] + "\n"
    print(text)
    kind_text = markdown_tables(by_kind, all_tasks=False)  # the all-tasks table is above
    print("Per question kind (few: 1-2 lenient-relevant citations; many: more)\n\n" + kind_text)
    # the paper compared S_EBM with PubMed's order (newest first): each S_EBM form against date order
    for level, report in reports.items():
        date = report.scores[report.runs.index("date order")]
        for rs in report.scores:
            if "S_EBM" in rs.run or "combination" in rs.run:
                a, b = rs.values["MAP"], date.values["MAP"]
                c = wilcoxon(a, b)
                notes.append(
                    f"{rs.run} vs date order, {level} MAP {a.mean():.3f} vs {b.mean():.3f}: better on "
                    f"{int(np.sum(a > b))}, worse on {int(np.sum(a < b))}, Wilcoxon p {c.p_value:.3g}"
                )
    for n in notes:
        print(f"- {n}")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        for r in runs:
            name = "".join(ch if ch.isalnum() or ch in "+-" else "_" for ch in r.name).strip("_")
            write_run(args.out / f"{name}.run", r, tag=name)
    if args.write:
        if fitted is None:
            print("error: --write needs --fit", file=sys.stderr)
            return 2
        path = ROOT / "ebm" / "data" / WEIGHTS_FILE
        note = (
            f"EBM+ weights (ebm.scoring.rankers), fitted {datetime.date.today()} by\n"
            f"  python scripts/eval_rankers.py --fit --write --year {args.year}\n"
            f"on the {len(qids)} development questions of ../shared/data/bench (fixed BM25 pools):\n"
            f"coordinate ascent on lenient MAP, training MAP {fitted.value:.3f}.\n"
            "Features are scaled per question; the retrieval weight is fixed at 1. See docs/scoring.md\n"
            "for the cross-validated estimate. Features not fitted weigh 0 (listed so that every\n"
            "component shows in the output). Edit a copy and pass it with --ranker-weights FILE."
        )
        weights = {name: fitted.as_dict().get(name, 0.0) for name in FEATURES}
        path.write_text(PlusWeights(weights, str(path)).to_toml(note), encoding="utf-8")
        print(f"wrote {path}")
    if args.write_prior:
        if prior_fit is None:
            print("error: --write-prior needs --prior", file=sys.stderr)
            return 2
        name, pen, w = prior_fit
        path = ROOT / "ebm" / "data" / PRIOR_WEIGHTS_FILE
        note = (
            f"EBM-prior bonus weights (ebm.scoring.ranker_prior), fitted {datetime.date.today()} by\n"
            f"  python scripts/eval_rankers.py --prior --write-prior --year {args.year} --cache C\n"
            f"on the {len(qids)} development questions of ../shared/data/bench: feature set {name!r} and\n"
            f"penalty {pen:g} chosen by 5-fold CV, then a pairwise logistic fit on all of them.\n"
            "score = minmax(retrieval) + sum of bonus x feature (each feature in [0, 1], bonus <= 1).\n"
            "Nested-CV estimate and the protocol: docs/bench.md."
        )
        weights = dict(zip(PRIOR_SETS[name], (round(float(x), 4) for x in w), strict=True))
        path.write_text(PriorWeights(weights, str(path)).to_toml(note), encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
