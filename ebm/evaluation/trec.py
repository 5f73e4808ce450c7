"""TREC qrels and run files: reading (errors name file and line), writing, trec_eval ranking order.

Formats (whitespace-separated, one record per line, blank lines and ``#`` comments skipped):

- qrels: ``qid iteration docno grade`` with an integer grade (here 3 contains answer, 2 relevant,
  1 partially relevant, 0 not relevant).
- run: ``qid Q0 docno rank score tag``.

Ranking follows trec_eval, not the file: documents are ordered by score, highest first, ties
broken by docno in *descending* string order (trec_eval's ``comp_sim_docno``); the rank column is
read and checked to be an integer but otherwise ignored, as trec_eval ignores it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ebm.errors import InputError

# qid -> docno -> grade
Qrels = dict[str, dict[str, int]]


@dataclass(frozen=True)
class ScoredDoc:
    docno: str
    score: float
    rank: int  # as written in the file; not used for ordering


@dataclass
class Run:
    """A run: for each query the scored documents, in file order (see :func:`ranking`)."""

    name: str
    results: dict[str, list[ScoredDoc]] = field(default_factory=dict)
    path: Path | None = None
    tag: str | None = None  # the run tag of the file's last column, when all lines agree

    def ranking(self, qid: str) -> list[str]:
        """Docnos of ``qid`` in trec_eval order (empty when the run has no result for it)."""
        return ranking(self.results.get(qid, ()))

    @property
    def qids(self) -> list[str]:
        return sorted(self.results)

    @property
    def docnos(self) -> set[str]:
        """Every document the run lists, for any query (a pool's citations)."""
        return {d.docno for docs in self.results.values() for d in docs}


def ranking(docs: Iterable[ScoredDoc]) -> list[str]:
    """trec_eval order: score descending, then docno descending (byte order, as strcmp)."""
    # Two stable sorts: docno descending first, then score descending keeps that order within ties.
    by_docno = sorted(docs, key=lambda d: d.docno.encode(), reverse=True)
    return [d.docno for d in sorted(by_docno, key=lambda d: d.score, reverse=True)]


def _lines(path: Path, what: str) -> Iterable[tuple[int, list[str]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{what} file not found: {path}") from None
    except IsADirectoryError:
        raise InputError(f"{what} file is a directory: {path}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            yield number, stripped.split()


def read_qrels(path: str | Path) -> Qrels:
    """Read a TREC qrels file; a malformed or contradictory line raises ``InputError``."""
    path = Path(path)
    qrels: Qrels = {}
    for number, fields in _lines(path, "qrels"):
        where = f"{path}:{number}"
        if len(fields) != 4:
            raise InputError(f"{where}: expected 4 columns 'qid iteration docno grade', found {len(fields)}")
        qid, _iteration, docno, grade_text = fields
        try:
            grade = int(grade_text)
        except ValueError:
            raise InputError(f"{where}: grade {grade_text!r} is not an integer") from None
        judged = qrels.setdefault(qid, {})
        if docno in judged and judged[docno] != grade:
            raise InputError(
                f"{where}: {qid} {docno} judged again with grade {grade} (earlier {judged[docno]})"
            )
        judged[docno] = grade
    if not qrels:
        raise InputError(f"{path}: no judgments")
    return qrels


def read_run(path: str | Path, name: str | None = None) -> Run:
    """Read a TREC run file; a malformed line or a document listed twice raises ``InputError``."""
    path = Path(path)
    run = Run(name=name or path.stem, path=path)
    tags: set[str] = set()
    seen: dict[tuple[str, str], int] = {}
    for number, fields in _lines(path, "run"):
        where = f"{path}:{number}"
        if len(fields) != 6:
            raise InputError(
                f"{where}: expected 6 columns 'qid Q0 docno rank score tag', found {len(fields)}"
            )
        qid, _q0, docno, rank_text, score_text, tag = fields
        try:
            rank = int(rank_text)
        except ValueError:
            raise InputError(f"{where}: rank {rank_text!r} (column 4) is not an integer") from None
        try:
            score = float(score_text)
        except ValueError:
            raise InputError(f"{where}: score {score_text!r} (column 5) is not a number") from None
        if not math.isfinite(score):
            raise InputError(f"{where}: score {score_text!r} (column 5) is not finite")
        if (qid, docno) in seen:
            raise InputError(f"{where}: {qid} {docno} already listed on line {seen[qid, docno]}")
        seen[qid, docno] = number
        run.results.setdefault(qid, []).append(ScoredDoc(docno, score, rank))
        tags.add(tag)
    if len(tags) == 1:
        run.tag = tags.pop()
    return run


def run_from_rankings(name: str, rankings: Mapping[str, Sequence[str]]) -> Run:
    """A run whose scores reproduce the given orders under trec_eval's ordering (n, n-1, ..., 1)."""
    run = Run(name=name)
    for qid, docnos in rankings.items():
        n = len(docnos)
        run.results[qid] = [ScoredDoc(d, float(n - i), i + 1) for i, d in enumerate(docnos)]
    return run


def run_from_ranked(name: str, ranked: Mapping[str, Sequence[tuple[str, float]]]) -> Run:
    """A run in the given orders (best first) that keeps the scores as nearly as floats allow.

    A score tied with (or above) the one ranked before it is lowered to just below it
    (``math.nextafter``), so the scores strictly decrease down each list and trec_eval's order
    (score descending, docno descending on ties) is the given order: a ranker that breaks ties its
    own way (``ebm ask``: retrieval order) is read back, and evaluated, as it was shown.
    """
    run = Run(name=name)
    for qid, docs in ranked.items():
        out: list[ScoredDoc] = []
        for rank, (docno, score) in enumerate(docs, start=1):
            score = float(score)
            if not math.isfinite(score):
                raise InputError(f"run {name}: {qid} {docno}: score {score!r} is not finite")
            if out and score >= out[-1].score:
                score = math.nextafter(out[-1].score, -math.inf)
            out.append(ScoredDoc(docno, score, rank))
        run.results[qid] = out
    return run


def run_from_scores(name: str, scores: Mapping[str, Mapping[str, float]]) -> Run:
    """A run from ``qid -> docno -> score``; ranks are written in trec_eval order."""
    run = Run(name=name)
    for qid, by_doc in scores.items():
        docs = [ScoredDoc(d, float(s), 0) for d, s in by_doc.items()]
        order = {d: i + 1 for i, d in enumerate(ranking(docs))}
        run.results[qid] = sorted(
            (ScoredDoc(d.docno, d.score, order[d.docno]) for d in docs), key=lambda d: d.rank
        )
    return run


def format_run(run: Run, tag: str | None = None) -> str:
    """The run as TREC text, each query's documents in trec_eval order with ranks 1..n.

    Scores are written exactly (``repr``) so that reading the file back gives the same order.
    """
    tag = tag or run.tag or run.name
    if not tag or any(c.isspace() for c in tag):
        raise InputError(f"run tag {tag!r} must be a non-empty word without spaces")
    lines = []
    for qid in sorted(run.results):
        by_doc = {d.docno: d for d in run.results[qid]}
        for rank, docno in enumerate(run.ranking(qid), start=1):
            lines.append(f"{qid} Q0 {docno} {rank} {by_doc[docno].score!r} {tag}")
    return "\n".join(lines) + ("\n" if lines else "")


def write_run(path: str | Path, run: Run, tag: str | None = None) -> None:
    Path(path).write_text(format_run(run, tag), encoding="utf-8")


def format_qrels(qrels: Qrels) -> str:
    lines = [f"{qid} 0 {docno} {grade}" for qid in sorted(qrels) for docno, grade in qrels[qid].items()]
    return "\n".join(lines) + ("\n" if lines else "")


def write_qrels(path: str | Path, qrels: Qrels) -> None:
    Path(path).write_text(format_qrels(qrels), encoding="utf-8")
