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

Tune on the development split only: the other half of the benchmark is withheld.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from ebm.ask import AskConfig, Pipeline
from ebm.errors import EbmError
from ebm.evaluation.bench import load_frames_dir, markdown_tables, read_pools
from ebm.evaluation.relevance import LEVELS
from ebm.evaluation.report import build_report
from ebm.evaluation.tasks import task_group
from ebm.evaluation.trec import Run, read_qrels, run_from_ranked, run_from_rankings, write_run
from ebm.scoring.fit import Question, cross_validate, fit, nested_cross_validate
from ebm.scoring.rankers import FEATURES, WEIGHTS_FILE, PlusWeights, feature_values, rank
from ebm.scoring.task import capped

ROOT = Path(__file__).resolve().parents[1]
# Fitted by default: what the benchmark judges. Its rubric grades topical relevance: the problem
# and the intervention or exposure asked about ("3 contains answer", "2 relevant"); a citation
# about another population is still relevant (2), and study quality, year, journal and type are
# not judged. So population, S_SoE and S_task are left out of the fit (weight 0, still shown);
# S_SoE also depends on which corpus a record came from (many bundled records have no journal
# or year), so a weight fitted on it would learn the corpus, not the question.
FIT_FEATURES = ("retrieval", "lexical", "problem", "intervention", "co_problems")
ABLATIONS = {
    "retrieval + lexical": ("retrieval", "lexical"),
    "retrieval + paper S_PICO": ("retrieval", "pico"),
    "retrieval + lexical + paper S_PICO": ("retrieval", "lexical", "pico"),
    "without retrieval": ("lexical", "problem", "intervention", "co_problems"),
    "without lexical": ("retrieval", "problem", "intervention", "co_problems"),
    "+ population, outcome": (*FIT_FEATURES, "population", "outcome"),
    "+ term, task, soe": (*FIT_FEATURES, "term", "task", "soe"),
}


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
    p.add_argument("--per-task", action="store_true", help="also the tables per clinical task")
    args = p.parse_args()
    try:
        return run(args)
    except EbmError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def run(args: argparse.Namespace) -> int:
    from ebm.store import open_store

    frames = load_frames_dir(args.bench / "frames")
    pools = [p for p in read_pools(args.bench / "pools.run") if p.qid in frames]
    qrels = read_qrels(args.bench / "qrels.txt")
    config = AskConfig(year=args.year, ranker_weights=args.ranker_weights)
    per_question = {}
    with open_store(args.db) as store, Pipeline(config, source=store) as pipeline:
        for pool in pools:
            found = {c.pmid: c for c in store.fetch(pool.pmids)}
            kept = [c for c in pool.candidates if c.pmid in found]
            if len(kept) < len(pool.candidates):
                print(f"note: {pool.qid}: {len(pool.candidates) - len(kept)} pooled PMIDs not in the store")
            annotations, _ = pipeline.annotate([found[c.pmid] for c in kept])
            cands = pipeline.candidate_scores(
                frames[pool.qid], annotations, retrieval=[c.pool_score for c in kept]
            )
            per_question[pool.qid] = cands
        settings = pipeline.ranker_settings

    qids = list(per_question)
    docnos = {q: [c.pmid for c in per_question[q]] for q in qids}

    def scored(name: str, scores: dict[str, list[float] | np.ndarray]) -> Run:
        # ties keep the pool order, as ebm ask (its retrieval order), ebm bench and the fit break them
        ranked = {}
        for q in qids:
            values = [float(v) for v in scores[q]]
            order = sorted(range(len(values)), key=lambda i: -values[i])
            ranked[q] = [(docnos[q][i], values[i]) for i in order]
        return run_from_ranked(name, ranked)

    runs = [run_from_rankings("pool order", docnos)]
    for ranker, label in (
        ("paper-ebm", "paper S_EBM"),
        ("combination", "paper combination"),
        ("term", "term"),
    ):
        runs.append(scored(label, {q: rank(ranker, per_question[q], settings).scores for q in qids}))
    # Untuned variants of the paper's formula (equal weights), for what each fix does alone.
    variants = {
        "paper S_EBM, S_task capped (tanh)": lambda c: (
            c.ebm.pico.total + c.ebm.soe.total + capped(c.ebm.task.total)
        ),
        "S_match (sum of its parts)": lambda c: c.match.total,
        "S_match + S_SoE + capped S_task": lambda c: (
            c.match.total + c.ebm.soe.total + capped(c.ebm.task.total)
        ),
    }
    if args.variants:
        for label, fn in variants.items():
            runs.append(scored(label, {q: [fn(c) for c in per_question[q]] for q in qids}))
    shipped = settings.plus_weights()
    label = "EBM+ (shipped weights)" if args.ranker_weights is None else f"EBM+ ({args.ranker_weights.name})"
    runs.append(scored(label, {q: rank("ebm-plus", per_question[q], settings).scores for q in qids}))

    def questions(names: tuple[str, ...]) -> list[Question]:
        out = []
        for q in qids:
            values = feature_values(per_question[q], names)
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

    tasks = {q: task_group(frames[q].task.value) for q in qids}
    reports = {
        level: build_report(qrels, runs, LEVELS[level], tasks=tasks, qrels_path=args.bench / "qrels.txt")
        for level in ("lenient", "strict")
    }
    text = markdown_tables(reports)
    if not args.per_task:
        text = text.split("\n\n**", 1)[0] + "\n"
    print(text)
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
