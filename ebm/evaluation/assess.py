"""Blinded assessment of two systems' answers (paper, section 10).

``make_sheet``: for each question, the top N answers (citations) of system A and of system B are
merged, a citation both returned appears once, and the items are shuffled (seeded per question)
with nothing saying which system gave them. ``write_sheet`` writes a printable HTML sheet and a
CSV to fill for the assessors, and a key mapping items to systems that must be kept from them.

An item shows what is available about the citation and nothing about the system: its PMID, title
and, when the systems' answers are given as ``ebm ask --format json`` documents, the answer's
outcome sentences; otherwise, when a store is given, the abstract. Situational metadata (evidence
grade, year, journal, score, rank) is left out, as in the paper, which assessed topical relevance.

``score``: from a filled sheet and the key, answer precision per system: the share of the
system's top N answers judged good, a missing answer (a system returning fewer than N) counting
as not good, as P@N does; strict counts '+' (relevant and actionable) only, lenient '+' or
'check' (relevant). Per clinical task and across all questions, each a mean over questions; B is
compared with A by the relative change and a Wilcoxon signed-rank test on per-question precision.
"""

from __future__ import annotations

import csv
import html
import importlib
import io
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ebm.errors import DataError, InputError
from ebm.evaluation.report import format_change, text_table
from ebm.evaluation.significance import Comparison, relative_change, wilcoxon
from ebm.evaluation.tasks import Question, task_group, task_order
from ebm.evaluation.trec import Run

SYSTEMS = ("A", "B")
KEY_FORMAT = "ebm-assess-key"
KEY_VERSION = 1
CSV_COLUMNS = ("item", "question", "pmid", "title", "judgement", "comment")

# What an assessor may write in the judgement column, and what it means.
JUDGEMENTS: dict[str, str] = {
    "+": "plus",
    "plus": "plus",
    "check": "check",
    "✓": "check",
    "✔": "check",
    "√": "check",
    "-": "minus",
    "−": "minus",  # Unicode minus sign
    "–": "minus",  # en dash, as word processors turn '-' into
    "minus": "minus",
}
STRICT = frozenset({"plus"})
LENIENT = frozenset({"plus", "check"})


@dataclass(frozen=True)
class AnswerText:
    """What an item shows about one citation."""

    title: str | None = None
    lines: tuple[str, ...] = ()  # outcome sentences, or abstract paragraphs
    kind: str | None = None  # "outcomes" or "abstract"


@dataclass(frozen=True)
class Item:
    item_id: str
    qid: str
    pmid: str
    text: AnswerText
    systems: tuple[str, ...]  # key only: which of A, B returned it


@dataclass
class SheetQuestion:
    qid: str
    task: str
    question: str | None
    frame: Mapping[str, Any]
    items: list[Item]
    answers: dict[str, list[str]]  # key only: system -> its top-N PMIDs in rank order


@dataclass
class Sheet:
    questions: list[SheetQuestion]
    top: int
    seed: int
    systems: dict[str, dict[str, str | None]]  # "A" -> {"name", "path"}
    warnings: list[str] = field(default_factory=list)


Lookup = Callable[[Sequence[str]], Mapping[str, AnswerText]]


# -- answers documents and the store -----------------------------------------------------------


def read_answers(path: str | Path) -> dict[str, dict[str, AnswerText]]:
    """``ebm ask --format json`` documents: qid -> PMID -> text shown for it.

    ``path`` is a directory of ``<qid>.json`` files, or one JSON file holding a document, a list
    of documents, or a mapping from question id to document. A document's question id is its
    ``frame.id`` when present, else the key of the mapping or the file name.
    """
    path = Path(path)
    docs: list[tuple[Any, str | None, Path]]  # (document, its key when given, file)
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise InputError(f"{path}: no answers documents (*.json)")
        docs = [(_load_json(f), f.stem, f) for f in files]
    elif path.is_file():
        data = _load_json(path)
        if isinstance(data, list):
            docs = [(d, None, path) for d in data]
        elif isinstance(data, dict) and "results" in data:
            docs = [(data, None, path)]
        elif isinstance(data, dict):
            docs = [(d, str(k), path) for k, d in data.items()]
        else:
            raise InputError(f"{path}: expected an answers document, a list or a mapping of them")
    else:
        raise InputError(f"answers not found: {path}")
    answers: dict[str, dict[str, AnswerText]] = {}
    for number, (doc, fallback, source) in enumerate(docs, start=1):
        where = f"{source} (document {number})" if len(docs) > 1 and fallback is None else str(source)
        if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
            raise InputError(f"{where}: an answers document needs a 'results' list")
        frame = doc.get("frame")
        qid = frame.get("id") if isinstance(frame, dict) else None
        qid = str(qid) if qid is not None else fallback
        if qid is None:
            raise InputError(f"{where}: no question id (frame.id); use a directory of <qid>.json")
        if qid in answers:
            raise InputError(f"{where}: answers for question {qid} given twice")
        answers[qid] = {}
        for k, result in enumerate(doc["results"], start=1):
            if not isinstance(result, dict) or "pmid" not in result:
                raise InputError(f"{where}: results[{k}] has no 'pmid'")
            title = result.get("title")
            outcomes = tuple(_outcome_text(o) for o in result.get("outcomes") or ())
            answers[qid][str(result["pmid"])] = AnswerText(
                title=str(title) if title else None,
                lines=tuple(o for o in outcomes if o),
                kind="outcomes" if outcomes else None,
            )
    return answers


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason})") from None


def _outcome_text(outcome: Any) -> str:
    if isinstance(outcome, str):
        return outcome.strip()
    if isinstance(outcome, dict):
        for key in ("text", "sentence"):
            if isinstance(outcome.get(key), str):
                return outcome[key].strip()
    return ""


def source_lookup(source: Any) -> Lookup:
    """A lookup over any ``CitationSource`` (``fetch(pmids) -> list[Citation]``): title + abstract."""

    def lookup(pmids: Sequence[str]) -> dict[str, AnswerText]:
        found = {}
        for citation in source.fetch(list(pmids)):
            paragraphs = tuple(
                f"{s.label}: {s.text}" if s.label else s.text for s in (citation.abstract or ())
            )
            found[citation.pmid] = AnswerText(
                title=citation.title, lines=paragraphs, kind="abstract" if paragraphs else None
            )
        return found

    return lookup


def open_store(db: str | Path | None, vocabulary: Any) -> Any:
    """The local MEDLINE store (``ebm.store.open_store``): ``db``, else the default store.

    The store is optional: without it (or without ``--store``) items show what the answers
    documents give, else the PMID only. Wrap the result with :func:`source_lookup`; close it
    (``close()``) when done.
    """
    try:
        store = importlib.import_module("ebm.store")
    except ImportError:
        raise DataError("--store: the local MEDLINE store (ebm.store) is not available") from None
    opener = getattr(store, "open_store", None)
    if opener is None:
        raise DataError("--store: ebm.store has no open_store(path) to open the store with")
    return opener(Path(db) if db else None, vocabulary=vocabulary)


# -- making the sheet -------------------------------------------------------------------------


def make_sheet(
    run_a: Run,
    run_b: Run,
    frames: Mapping[str, Question],
    top: int = 5,
    seed: int = 0,
    answers: tuple[Mapping[str, Mapping[str, AnswerText]], Mapping[str, Mapping[str, AnswerText]]]
    | None = None,
    lookup: Lookup | None = None,
) -> Sheet:
    """Merge both runs' top ``top`` answers per question, blinded and shuffled (see module doc)."""
    if top < 1:
        raise InputError(f"top must be at least 1, got {top}")
    runs = dict(zip(SYSTEMS, (run_a, run_b), strict=True))
    sheet = Sheet(
        questions=[],
        top=top,
        seed=seed,
        systems={s: {"name": r.name, "path": str(r.path) if r.path else None} for s, r in runs.items()},
    )
    in_runs = set(run_a.results) | set(run_b.results)
    stray = sorted(in_runs - set(frames))
    if stray:
        sheet.warnings.append(
            f"{len(stray)} questions of the runs have no frame, left out: {', '.join(stray)}"
        )
    for qid in sorted(frames):
        question = frames[qid]
        top_docs = {s: r.ranking(qid)[:top] for s, r in runs.items()}
        for s, docs in top_docs.items():
            if not docs and qid in in_runs:
                sheet.warnings.append(f"question {qid}: system {s} ({runs[s].name}) has no answers")
        if qid not in in_runs:
            sheet.warnings.append(f"question {qid}: neither run has results, left out")
            continue
        pmids = list(dict.fromkeys(top_docs["A"] + top_docs["B"]))  # duplicates suppressed
        random.Random(f"{seed}:{qid}").shuffle(pmids)
        texts = _texts(qid, pmids, answers, lookup)
        items = [
            Item(
                item_id=f"{qid}-{k}",
                qid=qid,
                pmid=pmid,
                text=texts.get(pmid, AnswerText()),
                systems=tuple(s for s in SYSTEMS if pmid in top_docs[s]),
            )
            for k, pmid in enumerate(pmids, start=1)
        ]
        sheet.questions.append(
            SheetQuestion(qid, question.task, question.question, question.frame, items, top_docs)
        )
    if not sheet.questions:
        raise InputError("no question of the frames has results in either run")
    bare = sum(1 for q in sheet.questions for i in q.items if i.text.title is None and not i.text.lines)
    if bare:
        sheet.warnings.append(f"{bare} items show a PMID only (give --answers for both systems, or --store)")
    return sheet


def _texts(
    qid: str,
    pmids: Sequence[str],
    answers: tuple[Mapping[str, Mapping[str, AnswerText]], ...] | None,
    lookup: Lookup | None,
) -> dict[str, AnswerText]:
    """The text of each PMID: from either system's answers (the same citation shows the same text
    whichever system gave it), then from the store for what they lack."""
    texts: dict[str, AnswerText] = {}
    for per_system in answers or ():
        for pmid, text in per_system.get(qid, {}).items():
            if pmid in pmids and (pmid not in texts or (text.lines and not texts[pmid].lines)):
                texts[pmid] = text
    if lookup is not None:
        wanted = [p for p in pmids if p not in texts or texts[p].title is None or not texts[p].lines]
        found = lookup(wanted) if wanted else {}
        for pmid in wanted:
            if pmid not in found:
                continue
            old, new = texts.get(pmid, AnswerText()), found[pmid]
            texts[pmid] = AnswerText(
                title=old.title or new.title,
                lines=old.lines or new.lines,
                kind=old.kind if old.lines else new.kind,
            )
    return texts


def key_dict(sheet: Sheet) -> dict[str, Any]:
    return {
        "format": KEY_FORMAT,
        "version": KEY_VERSION,
        "top": sheet.top,
        "seed": sheet.seed,
        "systems": sheet.systems,
        "questions": {
            q.qid: {"task": q.task, "answers": {s: list(p) for s, p in q.answers.items()}}
            for q in sheet.questions
        },
        "items": {
            i.item_id: {"question": i.qid, "pmid": i.pmid, "systems": list(i.systems)}
            for q in sheet.questions
            for i in q.items
        },
    }


def sheet_csv(sheet: Sheet) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for q in sheet.questions:
        for i in q.items:
            writer.writerow([i.item_id, q.qid, i.pmid, i.text.title or "", "", ""])
    return buffer.getvalue()


def sheet_html(sheet: Sheet) -> str:
    e = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>Answer assessment</title>',
        "<style>",
        "body{font-family:Georgia,serif;max-width:46em;margin:2em auto;line-height:1.4}",
        "section.q{break-inside:avoid-page;margin-bottom:2.5em}",
        "section.q+section.q{break-before:page}",
        "h2{font-size:1.15em;margin-bottom:.2em} .pico{color:#444;font-size:.9em}",
        "ol.items{padding-left:0;list-style:none} li.item{border-top:1px solid #bbb;padding:.6em 0;"
        "break-inside:avoid}",
        ".id{font-family:monospace;font-weight:bold} .pmid{font-family:monospace;color:#555}",
        ".title{font-weight:bold} .judge{float:right;font-family:monospace;white-space:nowrap}",
        ".judge span{display:inline-block;border:1px solid #333;width:2.2em;text-align:center;"
        "margin-left:.3em}",
        "</style></head><body>",
        "<h1>Answer assessment</h1>",
        "<p>For each question, judge every answer for <em>topical relevance</em> only, and mark it in "
        "the judgement column of the CSV sheet (or circle it here):</p>",
        "<ul><li><b>+</b> the answer directly answers the question (actionable);</li>",
        "<li><b>check</b> clinically relevant information that may factor into decisions, worth "
        "examining in detail;</li>",
        "<li><b>-</b> not useful for answering the question.</li></ul>",
        "<p>Answers are in random order; where they came from is not shown.</p>",
    ]
    for q in sheet.questions:
        parts.append(f'<section class="q" id="{e(q.qid)}">')
        parts.append(f"<h2>Question {e(q.qid)} ({e(q.task)})</h2>")
        if q.question:
            parts.append(f"<p>{e(q.question)}</p>")
        pico = _pico_line(q.frame)
        if pico:
            parts.append(f'<p class="pico">{e(pico)}</p>')
        parts.append('<ol class="items">')
        for i in q.items:
            parts.append('<li class="item">')
            parts.append('<span class="judge"><span>+</span><span>check</span><span>-</span></span>')
            parts.append(f'<span class="id">{e(i.item_id)}</span> <span class="pmid">PMID {e(i.pmid)}</span>')
            if i.text.title:
                parts.append(f'<div class="title">{e(i.text.title)}</div>')
            for line in i.text.lines:
                parts.append(f"<p>{e(line)}</p>")
            parts.append("</li>")
        parts.append("</ol></section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _pico_line(frame: Mapping[str, Any]) -> str:
    labels = (
        ("problem", "Problem"),
        ("population", "Population"),
        ("intervention", "Intervention"),
        ("comparison", "Comparison"),
        ("outcome", "Outcome"),
    )
    shown = [f"{label}: {frame[k]}" for k, label in labels if isinstance(frame.get(k), str) and frame[k]]
    return "; ".join(shown)


def write_sheet(
    sheet: Sheet, out: str | Path, key_path: str | Path | None = None, force: bool = False
) -> list[Path]:
    """Write ``sheet.html`` and ``sheet.csv`` into ``out`` and the key (default ``out/key.json``).

    Existing files are not overwritten unless ``force``: a new key would not match a sheet
    already handed out.
    """
    out = Path(out)
    key = Path(key_path) if key_path else out / "key.json"
    paths = [out / "sheet.html", out / "sheet.csv", key]
    existing = [str(p) for p in paths if p.exists()]
    if existing and not force:
        raise InputError(f"would overwrite {', '.join(existing)} (use --force)")
    out.mkdir(parents=True, exist_ok=True)
    key.parent.mkdir(parents=True, exist_ok=True)
    paths[0].write_text(sheet_html(sheet), encoding="utf-8")
    paths[1].write_text(sheet_csv(sheet), encoding="utf-8")
    key.write_text(json.dumps(key_dict(sheet), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return paths


# -- scoring a filled sheet -------------------------------------------------------------------


@dataclass(frozen=True)
class Key:
    top: int
    systems: dict[str, dict[str, Any]]
    tasks: dict[str, str]  # qid -> task as in the frame
    answers: dict[str, dict[str, list[str]]]  # qid -> system -> PMIDs
    items: dict[str, tuple[str, str]]  # item id -> (qid, pmid)
    path: Path | None = None


def read_key(path: str | Path) -> Key:
    path = Path(path)
    if not path.is_file():
        raise InputError(f"key file not found: {path}")
    data = _load_json(path)
    if not isinstance(data, dict) or data.get("format") != KEY_FORMAT:
        raise InputError(f"{path}: not a key written by 'ebm assess make'")
    if data.get("version") != KEY_VERSION:
        raise InputError(f"{path}: key version {data.get('version')!r}, this ebm reads {KEY_VERSION}")
    try:
        questions = data["questions"]
        return Key(
            top=int(data["top"]),
            systems=dict(data["systems"]),
            tasks={qid: str(q["task"]) for qid, q in questions.items()},
            answers={
                qid: {s: [str(p) for p in q["answers"][s]] for s in SYSTEMS} for qid, q in questions.items()
            },
            items={iid: (str(i["question"]), str(i["pmid"])) for iid, i in data["items"].items()},
            path=path,
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(f"{path}: key is incomplete or damaged ({exc!r})") from None


def read_judgements(path: str | Path, key: Key) -> dict[str, str]:
    """item id -> 'plus' | 'check' | 'minus'; any problem names the row and column."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a BOM, as spreadsheets write, is dropped
    except FileNotFoundError:
        raise InputError(f"sheet not found: {path}") from None
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); save as UTF-8 CSV"
        ) from None
    first = text.split("\n", 1)[0]
    delimiter = max(",;\t", key=first.count)  # spreadsheets in some locales save with ';'
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        header = [h.strip().lower() for h in next(reader)]
    except StopIteration:
        raise InputError(f"{path}: empty sheet") from None
    for column in ("item", "judgement"):
        if column not in header:
            raise InputError(f"{path}: row 1: no '{column}' column (header: {', '.join(header)})")
    col_item, col_judgement = header.index("item"), header.index("judgement")
    judgements: dict[str, str] = {}
    rows: dict[str, int] = {}
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) <= max(col_item, col_judgement):
            raise InputError(f"{path}: row {line}: {len(row)} columns, expected {len(header)}")
        item = row[col_item].strip()
        if item not in key.items:
            raise InputError(f"{path}: row {line}, column 'item': {item!r} is not an item of this key")
        if item in rows:
            raise InputError(f"{path}: row {line}, column 'item': {item} already on row {rows[item]}")
        raw = row[col_judgement].strip()
        if not raw:
            raise InputError(f"{path}: row {line}, column 'judgement': no judgement for {item}")
        value = JUDGEMENTS.get(raw.lower())
        if value is None:
            raise InputError(
                f"{path}: row {line}, column 'judgement': {raw!r} for {item}; use '+', 'check' or '-'"
            )
        judgements[item] = value
        rows[item] = line
    missing = [i for i in key.items if i not in judgements]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise InputError(f"{path}: {len(missing)} items of the key are not judged: {shown}")
    return judgements


@dataclass
class AssessmentScores:
    top: int
    systems: dict[str, dict[str, Any]]
    qids: list[str]
    tasks: dict[str, str]  # qid -> task group
    precision: dict[str, dict[str, np.ndarray]]  # condition -> system -> per-question precision

    def groups(self) -> list[str]:
        return [*task_order(self.tasks.values()), "all"]

    def _select(self, condition: str, system: str, group: str) -> np.ndarray:
        values = self.precision[condition][system]
        if group == "all":
            return values
        return values[[k for k, q in enumerate(self.qids) if self.tasks[q] == group]]

    def cell(self, condition: str, system: str, group: str) -> tuple[float, float | None, Comparison | None]:
        values = self._select(condition, system, group)
        mean = float(values.mean()) if values.size else 0.0
        if system == SYSTEMS[0]:
            return mean, None, None
        base = self._select(condition, SYSTEMS[0], group)
        base_mean = float(base.mean()) if base.size else 0.0
        return mean, relative_change(base_mean, mean), wilcoxon(base, values)

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {"top": self.top, "systems": self.systems, "conditions": {}}
        for condition in self.precision:
            result["conditions"][condition] = {
                group: {
                    "questions": int(self._select(condition, SYSTEMS[0], group).size),
                    **{
                        s: dict(
                            zip(
                                ("precision", "change", "p_value", "mark"),
                                _cell_values(self.cell(condition, s, group)),
                                strict=True,
                            )
                        )
                        for s in SYSTEMS
                    },
                }
                for group in self.groups()
            }
        result["questions"] = [
            {
                "qid": q,
                "task": self.tasks[q],
                **{c: {s: float(self.precision[c][s][k]) for s in SYSTEMS} for c in self.precision},
            }
            for k, q in enumerate(self.qids)
        ]
        return result

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_text(self, ascii_only: bool = False) -> str:
        out = []
        names = {s: f"{s}: {self.systems.get(s, {}).get('name') or s}" for s in SYSTEMS}
        titles = {
            "strict": "Strict answer precision ('+' only)",
            "lenient": "Lenient answer precision ('+' or 'check')",
        }
        for condition in self.precision:
            out.append(f"{titles[condition]}, top {self.top} answers per system")
            header = [""] + [f"{g} ({self._select(condition, 'A', g).size})" for g in self.groups()]
            rows = []
            for s in SYSTEMS:
                row = [names[s]]
                for g in self.groups():
                    mean, change, comparison = self.cell(condition, s, g)
                    text = f"{mean:.3f}"
                    if comparison is not None:
                        change_text = format_change(change)
                        text += f" ({change_text})" if change_text else ""
                        text += f" {comparison.mark(ascii_only)}"
                    row.append(text)
                rows.append(row)
            out.append(text_table(header, rows))
            out.append("")
        legend = (
            "++/-- significant at 1%, +/- at 5%, ns not significant"
            if ascii_only
            else "▲/▼ significant at 1%, △/▽ at 5%, ° not significant"
        )
        out.append(f"B against A: {legend} (two-sided Wilcoxon signed-rank test on per-question precision).")
        return "\n".join(out) + "\n"


def _cell_values(cell: tuple[float, float | None, Comparison | None]) -> tuple[Any, ...]:
    mean, change, comparison = cell
    return mean, change, comparison.p_value if comparison else None, comparison.label if comparison else None


def score(judgements: Mapping[str, str], key: Key, group_tasks: bool = True) -> AssessmentScores:
    """Strict and lenient answer precision per system and question (see module doc)."""
    verdict: dict[tuple[str, str], str] = {}
    for item_id, value in judgements.items():
        if item_id not in key.items:
            raise InputError(f"judgement for {item_id!r}, which is not an item of the key")
        verdict[key.items[item_id]] = value
    qids = sorted(key.answers)
    precision: dict[str, dict[str, np.ndarray]] = {}
    for condition, good in (("strict", STRICT), ("lenient", LENIENT)):
        precision[condition] = {}
        for s in SYSTEMS:
            values = np.zeros(len(qids))
            for k, qid in enumerate(qids):
                pmids = key.answers[qid][s][: key.top]
                unjudged = [p for p in pmids if (qid, p) not in verdict]
                if unjudged:
                    raise InputError(f"question {qid}: PMID {unjudged[0]} of system {s} was not judged")
                values[k] = sum(verdict[qid, p] in good for p in pmids) / key.top
            precision[condition][s] = values
    return AssessmentScores(
        top=key.top,
        systems=key.systems,
        qids=qids,
        tasks={q: task_group(key.tasks[q], group_tasks) for q in qids},
        precision=precision,
    )
