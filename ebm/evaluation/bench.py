"""The benchmark runner behind ``ebm bench``: baselines and systems reranking the same pools.

For each question a candidate pool (a fixed pool read from a TREC run, whose order is the
baseline, or a pool retrieved from the store with the frame's query) is reranked by

- ``pool``: the pool's own order (trec_eval order of the pool run, or retrieval order);
- ``date``: newest year first, unknown years last, pool order within a year (PubMed's classic
  order);
- ``bm25``: BM25 of the question's words over title and abstract (the store's FTS5 index);
- every ranker of ``ebm ask`` (``ebm.scoring.rankers.REGISTRY``), under its ``bench_run`` name:
  ``term`` (the term-based reranker), ``ebm`` (S_EBM = l1 S_PICO + l2 S_SoE + l3 S_task),
  ``combination`` (alpha norm(S_EBM) + (1 - alpha) norm(S_term), min-max per question),
  ``ebm-plus`` (EBM+, ``ebm ask``'s default, with the shipped weights and the pool score as its
  retrieval feature; its weights were fitted on the development questions,
  ``scripts/eval_rankers.py``: on those, this run is a training figure, not an estimate) and
  ``pool`` (the retrieval ranker: the pool order).

The rankers score through ``ebm.scoring.rankers.rank_columns``, the function ``ebm ask`` ranks
with, over the components ``ebm.evaluation.components`` computed once (cached): each question's
order is ``ebm ask``'s for the same candidates, ties in pool order, and the runs are written so
that they read back in that order (``trec.run_from_ranked``). The sweeps
(``ebm.evaluation.sweep``) break ties the same way, so a sweep's figure at a setting is the
bench's figure at that setting. Evaluation: ``ebm.evaluation.report.build_report`` with the pool
order as reference, lenient and strict, per clinical task.

A diagnosis reranks each pool by every single component (``pico.problem``, ``soe.date``, ...) as
the first key with pool order breaking ties, to see which component helps or hurts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ebm.errors import InputError
from ebm.evaluation.baselines import date_order
from ebm.evaluation.components import Components, Pool, QuestionComponents
from ebm.evaluation.kinds import kinds_by_query
from ebm.evaluation.relevance import LEVELS, level_name
from ebm.evaluation.report import (
    ALL_TASKS,
    Cell,
    PairDifference,
    Report,
    build_report,
    cell_dict,
    format_change,
    pair_dict,
    text_table,
)
from ebm.evaluation.tasks import frame_paths, task_group
from ebm.evaluation.trec import (
    Qrels,
    Run,
    format_run,
    read_run,
    run_from_ranked,
    run_from_rankings,
    run_from_scores,
)
from ebm.frame import Frame, load_frame
from ebm.scoring.rankers import REGISTRY, RankerSettings, rank_columns

SYSTEMS = ("pool", "date", "bm25", "term", "ebm", "combination", "ebm-plus", "ebm-prior")
DEFAULT_POOL_SIZE = 50


@dataclass(frozen=True)
class Settings:
    """The weights the systems are run with."""

    l1: float
    l2: float
    l3: float
    alpha: float  # weight of norm(S_EBM) in the combination; norm(S_term) gets 1 - alpha

    @classmethod
    def default(cls) -> Settings:
        """The scorer's shipped defaults (``ebm.scoring``): equal weights, alpha 0.8."""
        from ebm.scoring import ALPHA, Weights

        w = Weights()
        return cls(w.l1, w.l2, w.l3, ALPHA)

    def ranker_settings(self) -> RankerSettings:
        """These weights as ``ebm ask``'s ranker settings (EBM+: the shipped weights)."""
        from ebm.scoring import Weights

        return RankerSettings(Weights(self.l1, self.l2), self.alpha, l3=self.l3)

    def describe(self) -> str:
        return (
            f"S_EBM = {self.l1:.4g} PICO + {self.l2:.4g} SoE + {self.l3:.4g} task; "
            f"combination = {self.alpha:.4g} norm(EBM) + {1 - self.alpha:.4g} norm(term)"
        )


# -- inputs ----------------------------------------------------------------------------------


def load_frames_dir(directory: str | Path) -> dict[str, Frame]:
    """Every frame of ``directory`` by id (the frame's ``id``, else the file name)."""
    frames: dict[str, Frame] = {}
    where: dict[str, Path] = {}
    for path in frame_paths(directory):
        frame = load_frame(path)
        qid = frame.id or path.stem
        if qid in frames:
            raise InputError(f"{path}: question id {qid!r} also in {where[qid]}")
        if frame.id is None:
            from dataclasses import replace

            frame = replace(frame, id=qid)
        frames[qid] = frame
        where[qid] = path
    return frames


def read_pools(path: str | Path) -> list[Pool]:
    """Pools from a TREC run, each in trec_eval order (score descending, docno descending)."""
    from ebm.evaluation.components import Candidate

    run = read_run(path)
    pools = []
    for qid in run.qids:
        score = {d.docno: d.score for d in run.results[qid]}
        pools.append(Pool(qid, [Candidate(p, score[p]) for p in run.ranking(qid)]))
    if not pools:
        raise InputError(f"{path}: no pooled citations")
    return pools


def retrieve_pools(
    frames: Mapping[str, Frame], store: Any, size: int, resources: Any, retrieval: str = "bm25"
) -> tuple[list[Pool], dict[str, str]]:
    """Each frame's pool from the store with its formulated query (``ebm.query.retrieve``),
    relaxed until the pool is full; the score is the store's BM25 of that query, as in ``ebm
    ask`` (the retrieval order, n, n - 1, ..., when the store gives none). ``retrieval="pico"``:
    from the stored annotations' PICO index instead (``ebm.pico_retrieval``, no BM25)."""
    from ebm.ask import retrieval_scores
    from ebm.evaluation.components import Candidate
    from ebm.query import retrieve

    pools, queries = [], {}
    for qid in sorted(frames):
        if retrieval == "pico":  # issue 17: the frame's concepts against the stored annotations
            from ebm.frame_concepts import frame_concepts
            from ebm.pico_retrieval import pico_ladder, pico_retrieve

            fc = frame_concepts(frames[qid], resources.matcher, resources.vocabulary)
            if not pico_ladder(fc):  # no concept to match: an empty pool (reported as such)
                pools.append(Pool(qid, []))
                queries[qid] = ""
                continue
            got = pico_retrieve(fc, store, size, size)
            pmids = list(got.result.pmids)
            values = retrieval_scores(pmids, None)
            pools.append(Pool(qid, [Candidate(p, s) for p, s in zip(pmids, values, strict=True)]))
            queries[qid] = got.query
            continue
        found = retrieve(
            frames[qid],
            store,
            min_hits=size,
            limit=size,
            rules=resources.rules,
            vocabulary=resources.vocabulary,
        )
        pmids = list(found.result.pmids)
        # the store's BM25 of the final query, as ebm ask passes it to EBM+ (else the order)
        scores = None
        if pmids and hasattr(store, "search_hits"):
            hits = store.search_hits(found.query, limit=len(pmids)).hits
            if [h.pmid for h in hits] == pmids:
                scores = {h.pmid: h.score for h in hits}
        values = retrieval_scores(pmids, scores)
        pools.append(Pool(qid, [Candidate(p, s) for p, s in zip(pmids, values, strict=True)]))
        queries[qid] = found.query
    return pools, queries


def pools_run(pools: Sequence[Pool], name: str = "pool") -> Run:
    return run_from_rankings(name, {p.qid: p.pmids for p in pools})


# -- runs ------------------------------------------------------------------------------------


def _ranked_by(q: QuestionComponents, column: str) -> list[str]:
    """Candidates by ``column`` descending, pool order breaking ties."""
    values = q.column(column)
    order = sorted(range(len(q.docnos)), key=lambda i: (-values[i], i))
    return [q.docnos[i] for i in order]


def question_columns(q: QuestionComponents) -> dict[str, list[float]]:
    """A question's components as the columns a ranker reads (``rankers.candidate_columns``):
    the pool score is the retrieval score, as ``ebm ask`` passes the store's BM25."""
    cols = {name: v.tolist() for name, v in q.values.items()}
    cols["retrieval"] = [float(s) for s in q.pool_scores]
    return cols


def ranker_run(components: Components, name: str, settings: Settings) -> Run | None:
    """``ebm ask``'s ranking of each pool by the ranker ``name`` (``rankers.rank_columns``; ties
    in pool order), named by its ``bench_run``; None when the components lack a column it reads
    (a components file written before EBM+ was benched)."""
    ranker, rs = REGISTRY[name], settings.ranker_settings()
    ranked = {}
    for q in components.questions:
        try:
            r = rank_columns(name, question_columns(q), range(1, len(q.docnos) + 1), rs)
        except KeyError:
            return None
        ranked[q.qid] = [(q.docnos[i], r.scores[i]) for i in r.order]
    return run_from_ranked(ranker.bench_run, ranked)


# bench run name -> ranker (``pool`` is the retrieval ranker's run)
BENCH_RANKERS = {r.bench_run: r.name for r in REGISTRY.values()}


def system_runs(components: Components, settings: Settings) -> list[Run]:
    """Every system of ``SYSTEMS`` over the same pools (pool first): the baselines date and bm25,
    and every ranker of ``ebm ask`` (EBM+ only when its columns were computed)."""
    qs = components.questions
    runs: list[Run] = []
    for name in SYSTEMS:
        if name in BENCH_RANKERS:
            run = ranker_run(components, BENCH_RANKERS[name], settings)
            if run is not None:
                runs.append(run)
        elif name == "date":
            pool = run_from_rankings("pool", {q.qid: list(q.docnos) for q in qs})
            years = {d: y for q in qs for d, y in zip(q.docnos, q.years, strict=True)}
            runs.append(date_order(pool, years, name="date"))
        elif name == "bm25":
            runs.append(
                run_from_scores(
                    "bm25", {q.qid: dict(zip(q.docnos, q.column("bm25").tolist(), strict=True)) for q in qs}
                )
            )
    return runs


def component_runs(components: Components) -> list[Run]:
    """The pool order, then one run per component ranking by it first (pool order on ties)."""
    qs = components.questions
    runs = [run_from_rankings("pool", {q.qid: list(q.docnos) for q in qs})]
    for column in components.columns:
        if column == "ebm-plus.rank":  # a position, not a score (ebm-plus itself is ranked)
            continue
        runs.append(run_from_rankings(f"by-{column}", {q.qid: _ranked_by(q, column) for q in qs}))
    return runs


# -- evaluation ------------------------------------------------------------------------------


def levels_for(level: str) -> list[str]:
    if level == "both":
        return list(LEVELS)
    if level not in LEVELS:
        raise InputError(f"unknown level {level!r} (lenient, strict or both)")
    return [level]


def restrict_qrels(qrels: Qrels, qids: Sequence[str]) -> tuple[Qrels, list[str], list[str]]:
    """The qrels of the benched questions; also those of the qrels not benched, and the benched
    questions without judgments."""
    wanted = set(qids)
    kept = {q: j for q, j in qrels.items() if q in wanted}
    return kept, sorted(q for q in qrels if q not in wanted), sorted(q for q in qids if q not in qrels)


@dataclass
class CachedReport(Report):
    """A report that computes each cell and pairwise comparison once.

    The Wilcoxon test is a permutation test for small groups with ties (scipy's default for
    n <= 13), a few tenths of a second each; the text, Markdown and JSON outputs all ask for the
    same cells.
    """

    def __post_init__(self) -> None:
        self._cells: dict[tuple[int, str, str], Cell] = {}
        self._pairs: dict[tuple[str, str], list[PairDifference]] = {}

    @classmethod
    def of(cls, report: Report) -> CachedReport:
        return cls(**{f.name: getattr(report, f.name) for f in fields(Report)})

    def cell(self, run_index: int, measure: str, task: str = ALL_TASKS) -> Cell:
        key = (run_index, measure, task)
        if key not in self._cells:
            self._cells[key] = super().cell(run_index, measure, task)
        return self._cells[key]

    def pairwise(self, measure: str, task: str = ALL_TASKS) -> list[PairDifference]:
        key = (measure, task)
        if key not in self._pairs:
            self._pairs[key] = super().pairwise(measure, task)
        return self._pairs[key]

    def summary_dict(self) -> dict[str, Any]:
        """Per-question values, means per task with change and test against the first run, and
        the pairwise differences across all tasks (``Report.to_dict`` without the per-task
        pairwise matrices)."""
        groups = [ALL_TASKS, *self.task_names()]
        return {
            "threshold": self.threshold,
            "level": level_name(self.threshold),
            "measures": list(self.measures),
            "runs": self.runs,
            "queries": self.queries_dicts(),
            "summary": self.summary_dicts(groups),
            "pairwise": {
                m: [pair_dict(p, difference=False) for p in self.pairwise(m)] for m in self.measures
            },
            "notes": list(self.notes),
        }


def evaluate(
    qrels: Qrels,
    runs: Sequence[Run],
    components: Components,
    levels: Sequence[str],
    fine_tasks: bool = False,
    qrels_path: str | Path | None = None,
) -> dict[str, CachedReport]:
    tasks = {q.qid: task_group(q.task, group=not fine_tasks) for q in components.questions}
    return {
        level: CachedReport.of(build_report(qrels, runs, LEVELS[level], tasks=tasks, qrels_path=qrels_path))
        for level in levels
    }


def diagnosis_text(report: Report) -> str:
    """Each component alone (as first key, pool order on ties) against pool order, all tasks."""
    rows = []
    for r, run in enumerate(report.runs):
        rows.append([run] + [_format_text_cell(report.cell(r, m)) for m in report.measures])
    head = (
        f"Each score component alone: pool reranked by the component, pool order breaking ties; "
        f"{level_name(report.threshold)}, {len(report.qids)} questions, against pool order "
        "(relative change, two-sided Wilcoxon signed-rank test: ++/-- 1%, +/- 5%, ns)."
    )
    return head + "\n\n" + text_table(["run", *report.measures], rows) + "\n"


def _format_text_cell(cell: Cell) -> str:
    if cell.comparison is None:
        return f"{cell.mean:.3f}"
    return f"{cell.mean:.3f} ({format_change(cell.change) or 'n/a'}) {cell.comparison.mark(ascii_only=True)}"


# -- output ----------------------------------------------------------------------------------


def _md_cell(cell: Cell) -> str:
    text = f"{cell.mean:.3f}"
    if cell.comparison is None:
        return text
    change = format_change(cell.change)
    mark = cell.comparison.mark()
    return f"{text} ({change.replace('-', '−')}) {mark}" if change else f"{text} {mark}"


def markdown_tables(
    reports: Mapping[str, Report], labels: Mapping[str, str] | None = None, *, all_tasks: bool = True
) -> str:
    """Markdown tables, runs x levels x measures: across all tasks (left out with
    ``all_tasks=False``: a second grouping printed under the first), then per group of the reports
    (clinical task, question kind)."""
    labels = labels or {}
    first = next(iter(reports.values()))
    groups = [*([ALL_TASKS] if all_tasks else []), *first.task_names()]
    out = []
    for task in groups:
        n = len(first.group_qids(task))
        title = f"All tasks ({n} questions)" if task == ALL_TASKS else f"{task.capitalize()} ({n} questions)"
        out.append(f"**{title}**")
        out.append("")
        out.append("| run | level | " + " | ".join(first.measures) + " |")
        out.append("|---|---|" + "---|" * len(first.measures))
        for report in reports.values():
            for r, run in enumerate(report.runs):
                cells = [_md_cell(report.cell(r, m, task)) for m in report.measures]
                out.append(
                    f"| {labels.get(run, run)} | {level_name(report.threshold)} | " + " | ".join(cells) + " |"
                )
        out.append("")
    out.append(
        "Relative change and two-sided Wilcoxon signed-rank test against the first run on the same "
        "questions: ▲/▼ significant at 1%, △/▽ at 5%, ° not significant."
    )
    return "\n".join(out) + "\n"


PLUS_NOTE = (
    "EBM+ ranks with the shipped weights ({source}), fitted on the 23 development questions of the "
    "benchmark (../shared/data/bench): on those questions its row is a training figure. The honest "
    "estimate is the leave-one-question-out cross-validation of `python scripts/eval_rankers.py "
    "--bench ../shared/data/bench --year 2024 --fit` (each question ranked with weights fitted on "
    "the other 22; docs/scoring.md)."
)

RUN_LABELS = {
    "pool": "pool order",
    "date": "date order (newest first)",
    "bm25": "BM25 (question words)",
    "term": "term-based",
    "ebm": "EBM",
    "combination": "combination",
    "ebm-plus": "EBM+ (weights fitted on the dev set)",
    "ebm-prior": "EBM-prior (bonuses fitted on the dev set)",
}


@dataclass
class BenchResult:
    components: Components
    settings: Settings
    runs: list[Run]
    reports: dict[str, CachedReport]
    diagnosis: dict[str, CachedReport]
    notes: list[str] = field(default_factory=list)
    pools_query: dict[str, str] | None = None  # qid -> query, for retrieved pools
    # the same runs per question kind (1-2 lenient-relevant citations or more: ebm.evaluation.kinds)
    by_kind: dict[str, CachedReport] = field(default_factory=dict)

    def write(self, out: str | Path) -> dict[str, Path]:
        """Runs, reports (text with per-question values, JSON, Markdown) and the diagnosis."""
        out = Path(out)
        (out / "runs").mkdir(parents=True, exist_ok=True)
        written: dict[str, Path] = {}
        for run in self.runs:
            path = out / "runs" / f"{run.name}.run"
            path.write_text(format_run(run, tag=run.name), encoding="utf-8")
            written[f"run {run.name}"] = path
        for level, report in self.reports.items():
            path = out / f"report-{level}.txt"
            path.write_text(report.to_text(per_query=True), encoding="utf-8")
            written[f"report {level}"] = path
        for level, report in self.by_kind.items():
            path = out / f"report-kind-{level}.txt"
            path.write_text(report.to_text(per_query=False), encoding="utf-8")
            written[f"report by kind {level}"] = path
        for level, report in self.diagnosis.items():
            path = out / f"diagnosis-{level}.txt"
            path.write_text(diagnosis_text(report), encoding="utf-8")
            written[f"diagnosis {level}"] = path
        md = out / "bench.md"
        notes = "".join(f"\n- {n}" for n in self.notes)
        by_kind = ""
        if self.by_kind:  # the all-tasks table is the one above
            kinds = markdown_tables(self.by_kind, RUN_LABELS, all_tasks=False)
            by_kind = f"\nBy question kind (few: 1-2 lenient-relevant, many: more)\n\n{kinds}"
        md.write_text(
            markdown_tables(self.reports, RUN_LABELS) + by_kind + (f"\nNotes:\n{notes}\n" if notes else ""),
            encoding="utf-8",
        )
        written["markdown"] = md
        js = out / "report.json"
        js.write_text(json.dumps(self.to_dict(), indent=2, ensure_ascii=False), encoding="utf-8")
        written["json"] = js
        return written

    def to_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings.__dict__,
            "components": self.components.meta,
            "notes": self.notes,
            "pool_queries": self.pools_query,
            "reports": {level: r.summary_dict() for level, r in self.reports.items()},
            "reports_by_kind": {level: r.summary_dict() for level, r in self.by_kind.items()},
            "diagnosis": {
                level: {run: {m: cell_dict(r.cell(i, m)) for m in r.measures} for i, run in enumerate(r.runs)}
                for level, r in self.diagnosis.items()
            },
        }


def run_bench(
    components: Components,
    qrels: Qrels,
    settings: Settings,
    levels: Sequence[str] = ("lenient", "strict"),
    fine_tasks: bool = False,
    qrels_path: str | Path | None = None,
) -> BenchResult:
    """Runs of every system over the components' pools and their evaluation."""
    if not components.questions:
        raise InputError("no question to benchmark")
    judged, unbenched, unjudged = restrict_qrels(qrels, components.qids)
    notes = []
    if unbenched:
        notes.append(
            f"{len(unbenched)} questions of the qrels have no frame or pool, left out: {', '.join(unbenched)}"
        )
    if unjudged:
        notes.append(
            f"{len(unjudged)} benched questions have no judgments, not evaluated: {', '.join(unjudged)}"
        )
    if not judged:
        raise InputError("none of the benched questions has judgments in the qrels")
    runs = system_runs(components, settings)
    if any(r.name == "ebm-plus" for r in runs):
        from ebm.scoring.rankers import shipped_weights

        notes.append(PLUS_NOTE.format(source=Path(shipped_weights().source).name))
    reports = evaluate(judged, runs, components, levels, fine_tasks, qrels_path)
    diagnosis = evaluate(judged, component_runs(components), components, levels, fine_tasks, qrels_path)
    kinds = kinds_by_query(judged, [q.qid for q in components.questions])
    by_kind = {
        level: CachedReport.of(build_report(judged, runs, LEVELS[level], tasks=kinds, qrels_path=qrels_path))
        for level in levels
    }
    return BenchResult(components, settings, runs, reports, diagnosis, notes, by_kind=by_kind)
