"""Evaluation tables for one or more runs, laid out as the paper's Tables 7-11, as text or JSON.

- per query: every measure for every run;
- mean across all tasks (Table 7b) and per clinical task (Table 7a), each run with its relative
  change against the first run (the reference) and the Wilcoxon mark of its per-query differences
  from the first run on the same queries;
- pairwise differences between all runs (Table 11): relative change of the later run against the
  earlier one, with the Wilcoxon mark.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ebm.errors import InputError
from ebm.evaluation.measures import MEASURES, Measure
from ebm.evaluation.relevance import level_name
from ebm.evaluation.scores import RunScores, score_run
from ebm.evaluation.significance import Comparison, relative_change, wilcoxon
from ebm.evaluation.tasks import UNKNOWN_TASK, task_order
from ebm.evaluation.trec import Qrels, Run

ALL_TASKS = "all"
CONVENTION = (
    "trec_eval -c: averaged over every query in the qrels; a query a run has no results for "
    "scores 0; documents not in the qrels are not relevant; ties in score are broken by docno, "
    "descending"
)


@dataclass(frozen=True)
class Cell:
    """A run's mean on one measure over a set of queries, against the reference run."""

    mean: float
    change: float | None  # relative to the reference mean (None for the reference, or base 0)
    comparison: Comparison | None  # None for the reference run itself


@dataclass(frozen=True)
class PairDifference:
    a: str
    b: str  # "b vs a"
    measure: str
    a_mean: float
    b_mean: float
    change: float | None
    comparison: Comparison


@dataclass
class Report:
    threshold: int
    measures: list[str]
    scores: list[RunScores]  # in the order given; the first is the reference
    tasks: dict[str, str] | None = None  # qid -> task, when frames were given
    qrels_path: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def runs(self) -> list[str]:
        return [s.run for s in self.scores]

    @property
    def qids(self) -> list[str]:
        return self.scores[0].qids

    def task_names(self) -> list[str]:
        return task_order(self.tasks.values()) if self.tasks else []

    def group_qids(self, task: str = ALL_TASKS) -> list[str]:
        if task == ALL_TASKS:
            return list(self.qids)
        if not self.tasks:
            raise InputError("no tasks known: give the frames directory")
        return [q for q in self.qids if self.tasks.get(q) == task]

    def cell(self, run_index: int, measure: str, task: str = ALL_TASKS) -> Cell:
        qids = self.group_qids(task)
        ref = self.scores[0].select(measure, qids)
        values = self.scores[run_index].select(measure, qids)
        mean = float(values.mean()) if len(qids) else 0.0
        if run_index == 0:
            return Cell(mean, None, None)
        ref_mean = float(ref.mean()) if len(qids) else 0.0
        return Cell(mean, relative_change(ref_mean, mean), wilcoxon(ref, values))

    def pairwise(self, measure: str, task: str = ALL_TASKS) -> list[PairDifference]:
        qids = self.group_qids(task)
        pairs = []
        for i, a in enumerate(self.scores):
            for b in self.scores[i + 1 :]:
                va, vb = a.select(measure, qids), b.select(measure, qids)
                ma = float(va.mean()) if len(qids) else 0.0
                mb = float(vb.mean()) if len(qids) else 0.0
                pairs.append(
                    PairDifference(a.run, b.run, measure, ma, mb, relative_change(ma, mb), wilcoxon(va, vb))
                )
        return pairs

    # -- JSON ---------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        groups = [ALL_TASKS, *self.task_names()]
        return {
            "qrels": self.qrels_path,
            "threshold": self.threshold,
            "level": level_name(self.threshold),
            "convention": CONVENTION,
            "measures": list(self.measures),
            "runs": [
                {"name": s.run, "missing_queries": s.missing, "ignored_queries": s.ignored}
                for s in self.scores
            ],
            "queries": self.queries_dicts(),
            "summary": self.summary_dicts(groups),
            "pairwise": {
                task: {m: [pair_dict(p) for p in self.pairwise(m, task)] for m in self.measures}
                for task in groups
            },
            "notes": list(self.notes),
        }

    def queries_dicts(self) -> list[dict[str, Any]]:
        """Per-question JSON rows: qid, task and every run's value of every measure."""
        return [
            {
                "qid": qid,
                "task": self.tasks.get(qid) if self.tasks else None,
                "scores": {s.run: {m: float(s.values[m][i]) for m in self.measures} for s in self.scores},
            }
            for i, qid in enumerate(self.qids)
        ]

    def summary_dicts(self, groups: Sequence[str]) -> list[dict[str, Any]]:
        """Per-task JSON rows: the number of questions and every run's cell of every measure."""
        return [
            {
                "task": task,
                "queries": len(self.group_qids(task)),
                "runs": {
                    run: {m: cell_dict(self.cell(r, m, task)) for m in self.measures}
                    for r, run in enumerate(self.runs)
                },
            }
            for task in groups
        ]

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    # -- text ---------------------------------------------------------------------------------

    def to_text(self, per_query: bool = False, ascii_only: bool = False) -> str:
        out: list[str] = []
        n = len(self.qids)
        source = f" in {self.qrels_path}" if self.qrels_path else ""
        out.append(
            f"Relevance: {_level_text(self.threshold)}; {n} queries{source}. Reference run: {self.runs[0]}."
        )
        out.append(f"Convention: {CONVENTION}.")
        out.append("")
        out.append(f"Across all tasks ({n} queries)")
        rows = [
            [run] + [_format_cell(self.cell(r, m), ascii_only) for m in self.measures]
            for r, run in enumerate(self.runs)
        ]
        out.append(text_table(["run", *self.measures], rows))
        tasks = self.task_names()
        if tasks:
            out.append("")
            out.append("By clinical task")
            header = ["", *(f"{t} ({len(self.group_qids(t))})" for t in tasks)]
            rows = []
            for m in self.measures:
                rows.append([m] + [""] * len(tasks))
                rows += [
                    [f"  {run}"] + [_format_cell(self.cell(r, m, t), ascii_only) for t in tasks]
                    for r, run in enumerate(self.runs)
                ]
            out.append(text_table(header, rows))
        if len(self.runs) > 2:
            out.append("")
            out.append("Pairwise differences, across all tasks (later run vs earlier run)")
            pairs = {m: self.pairwise(m) for m in self.measures}
            rows = []
            for k, pair in enumerate(pairs[self.measures[0]]):
                row = [f"{pair.b} vs {pair.a}"]
                for m in self.measures:
                    p = pairs[m][k]
                    row.append(f"{format_change(p.change, 1) or 'n/a'} {p.comparison.mark(ascii_only)}")
                rows.append(row)
            out.append(text_table(["", *self.measures], rows))
        if per_query:
            out.append("")
            out.append("Per query")
            header = ["qid", "task"] if self.tasks else ["qid"]
            header += [f"{m} {run}" for m in self.measures for run in self.runs]
            rows = []
            for i, qid in enumerate(self.qids):
                row = [qid] + ([self.tasks.get(qid, UNKNOWN_TASK)] if self.tasks else [])
                row += [f"{s.values[m][i]:.3f}" for m in self.measures for s in self.scores]
                rows.append(row)
            out.append(text_table(header, rows))
        if len(self.runs) > 1:
            out.append("")
            if ascii_only:
                out.append(
                    "++/-- significant at 1%, +/- at 5%, ns not significant "
                    "(two-sided Wilcoxon signed-rank test on per-query values)."
                )
            else:
                out.append(
                    "▲/▼ significant at 1%, △/▽ at 5%, ° not significant "
                    "(two-sided Wilcoxon signed-rank test on per-query values)."
                )
        for note in self.notes:
            out.append(f"Note: {note}")
        return "\n".join(out) + "\n"


def build_report(
    qrels: Qrels,
    runs: Sequence[Run],
    threshold: int,
    tasks: Mapping[str, str] | None = None,
    measures: Sequence[Measure] = MEASURES,
    qrels_path: str | Path | None = None,
) -> Report:
    """Score ``runs`` (the first is the reference) and gather the tables."""
    if not runs:
        raise InputError("no run to evaluate")
    names = [r.name for r in runs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError(f"two runs are named {dupes[0]!r}: give them distinct names")
    scores = [score_run(qrels, run, threshold, measures) for run in runs]
    notes: list[str] = []
    for s in scores:
        if s.ignored:
            notes.append(
                f"run {s.run}: {len(s.ignored)} queries not in the qrels ignored ({_preview(s.ignored)})"
            )
        if s.missing:
            notes.append(
                f"run {s.run}: no results for {len(s.missing)} of {len(s.qids)} queries, scored 0 "
                f"({_preview(s.missing)})"
            )
    task_map = None
    if tasks is not None:
        task_map = {q: tasks.get(q, UNKNOWN_TASK) for q in scores[0].qids}
        unknown = [q for q, t in task_map.items() if t == UNKNOWN_TASK and q not in tasks]
        if unknown:
            notes.append(f"{len(unknown)} queries have no frame, task 'unknown' ({_preview(unknown)})")
    return Report(
        threshold=threshold,
        measures=[m.name for m in measures],
        scores=scores,
        tasks=task_map,
        qrels_path=str(qrels_path) if qrels_path is not None else None,
        notes=notes,
    )


def _level_text(threshold: int) -> str:
    name = level_name(threshold)
    return name if name.startswith("grade") else f"{name} (grade >= {threshold})"


def _preview(items: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")


def cell_dict(cell: Cell) -> dict[str, Any]:
    return {
        "mean": cell.mean,
        "change": cell.change,
        "p_value": cell.comparison.p_value if cell.comparison else None,
        "mark": cell.comparison.label if cell.comparison else None,
    }


def pair_dict(p: PairDifference, difference: bool = True) -> dict[str, Any]:
    """JSON of a pairwise difference; ``difference=False`` leaves out b_mean - a_mean."""
    out: dict[str, Any] = {"a": p.a, "b": p.b, "a_mean": p.a_mean, "b_mean": p.b_mean}
    if difference:
        out["difference"] = p.b_mean - p.a_mean
    out["change"] = p.change
    out["p_value"] = p.comparison.p_value
    out["mark"] = p.comparison.label
    return out


def format_change(change: float | None, decimals: int | None = None) -> str:
    """'+73%', '+4.5%', '-6.7%' as the paper prints them; '' when there is no base."""
    if change is None:
        return ""
    pct = change * 100
    if decimals is None:
        decimals = 1 if abs(pct) < 10 else 0
    return f"{pct:+.{decimals}f}%"


def _format_cell(cell: Cell, ascii_only: bool) -> str:
    text = f"{cell.mean:.3f}"
    if cell.comparison is None:
        return text
    change = format_change(cell.change)
    return (
        f"{text} ({change}) {cell.comparison.mark(ascii_only)}"
        if change
        else (f"{text} {cell.comparison.mark(ascii_only)}")
    )


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    width = [max(len(str(r[c])) for r in [header, *rows]) for c in range(len(header))]
    lines = []
    for row in [header, *rows]:
        lines.append("  ".join(str(v).ljust(width[c]) for c, v in enumerate(row)).rstrip())
    return "\n".join(lines)
