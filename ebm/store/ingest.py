"""Parallel ingest of MEDLINE distribution files into the store: PubMed XML baseline and update
files (plain or gzip) and MEDLINE text-format exports (``.nbib``), told apart by their content.

Pipeline: the main process reads each file, checks whether it was already ingested, and cuts it
into chunks of ``chunk_size`` records at record boundaries (``</PubmedArticle>``, blank line
before ``PMID-``); worker processes parse the chunks and build the store rows (the costly part:
XML, JSON, zlib); the main process is the single writer, committing one transaction per chunk in
file order, so a later file's version of a PMID replaces an earlier one and a ``DeleteCitation``
applies after the records before it.

Each file is recorded (name, SHA-256, citation count, deletions, time, PubMed sequence) in the
transaction of its last chunk: re-running an update set skips the files already recorded; an
interrupted ingest is resumed by running it again (the file in progress is ingested again from
its start: replacing a PMID by the same record is harmless). A PubMed file older than the newest
one recorded (``pubmed26n1334`` after ``pubmed26n1335``) is reported and skipped unless
``allow_older``: applying it would bring back older versions of the records.

A malformed file: the chunks before the fault are kept and the file is read again serially from
there, so the error names the exact position (file:line) as the single-process readers do.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import Any, NoReturn

from ebm.citation import Citation
from ebm.errors import EbmError, InputError
from ebm.medline.nbib import is_nbib, read_nbib
from ebm.medline.reader import Deletion, Notice, cap_text, read_records
from ebm.store.sqlite import FileRecord, IngestReport, MedlineStore, prepare_citation

CHUNK_SIZE = 2000  # records per chunk = per transaction
_GZIP_MAGIC = b"\x1f\x8b"
_XML_ROOT = re.compile(rb"<(PubmedArticleSet|MedlineCitationSet)\b[^>]*>")
_XML_END = {
    b"PubmedArticleSet": re.compile(rb"</PubmedArticle>|</PubmedBookArticle>"),
    b"MedlineCitationSet": re.compile(rb"</MedlineCitation>"),
}
_NBIB_START = re.compile(rb"(?m)^PMID- ")
_SEQ = re.compile(r"(?:pubmed|medline)(\d\d)n(\d{4})")

Op = tuple[str, Any]  # ("rows", [PreparedCitation...]), ("delete", (pmid, ...)) or ("notice", Notice)


@dataclass
class IngestSummary:
    """What an ingest did; updated as chunks commit, so it is right after an error too."""

    files: list[str] = field(default_factory=list)  # ingested whole (and recorded)
    skipped: list[str] = field(default_factory=list)  # already recorded (same checksum)
    older: list[str] = field(default_factory=list)  # older than the store's newest PubMed file
    read: int = 0  # citation records read
    added: int = 0
    replaced: int = 0
    deleted: int = 0
    batches: int = 0
    skipped_records: int = 0  # records the reader skipped (no PMID); each has a notice
    notices: list[str] = field(default_factory=list)  # the reader's notices, file and record number

    @property
    def stored(self) -> int:
        return self.added + self.replaced


@dataclass(frozen=True)
class _Task:
    file: int  # index into the list of files being ingested
    chunk: int
    last: bool  # the file's last chunk: its record is written with it
    kind: str  # "xml" or "nbib"
    name: str
    data: bytes


def file_seq(name: str) -> str | None:
    """The PubMed sequence of a distribution file name ("pubmed26n1335.xml.gz" -> "26n1335")."""
    match = _SEQ.search(name)
    return f"{match.group(1)}n{match.group(2)}" if match else None


def ingest_files(
    store: MedlineStore,
    paths: Sequence[str | os.PathLike[str]],
    *,
    workers: int | None = None,
    chunk_size: int = CHUNK_SIZE,
    allow_older: bool = False,
    summary: IngestSummary | None = None,
    on_chunk: Callable[[int, str], None] | None = None,
) -> IngestSummary:
    """Ingest ``paths`` into ``store``; ``workers=0`` parses in this process (default: one
    worker per CPU). ``on_chunk(citations, file name)`` is called after each commit."""
    if chunk_size < 1:
        raise InputError(f"chunk size must be at least 1, not {chunk_size}")
    if workers is not None and workers < 0:
        raise InputError(f"workers must be 0 or more, not {workers}")
    summary = summary if summary is not None else IngestSummary()
    files = [Path(p) for p in paths]
    for path in files:
        if not path.is_file():
            raise InputError(f"{path}: no such file")
        _kind(_head(path), path)  # every file's format checked before anything is written
    recorded = store.file_records()
    known = {r.sha256 for r in recorded}
    newest = max((r.seq for r in recorded if r.seq), default=None)
    # file -> [records, citations, deleted, record positions] committed so far
    per_file: dict[int, list[int]] = {}
    tasks = _tasks(files, chunk_size, known, newest, allow_older, summary)
    n_workers = (os.cpu_count() or 1) if workers is None else workers
    results = _Results(tasks, n_workers)
    try:
        for task, checksum, outcome in results:
            counts = per_file.setdefault(task.file, [0, 0, 0, 0])
            if isinstance(outcome, EbmError):
                results.close()
                _resume_serially(store, files[task.file], task.kind, counts[0], summary, outcome)
            ops, records, citations = outcome
            counts[0] += records
            counts[1] += citations
            _notices(ops, counts, citations, summary)
            record = None
            if task.last:
                seq = file_seq(task.name)
                stamp = datetime.now(UTC).isoformat(timespec="seconds")
                record = FileRecord(task.name, checksum, counts[1], counts[2], stamp, seq)
            added, replaced, deleted = store.write_prepared(ops, file_record=record)
            counts[2] += deleted
            summary.read += citations
            summary.added += added
            summary.replaced += replaced
            summary.deleted += deleted
            summary.batches += 1
            if task.last:
                summary.files.append(task.name)
            if on_chunk:
                on_chunk(citations, task.name)
    finally:
        results.close()
    return summary


# --- reading and cutting files (main process) --------------------------------------------


def _tasks(
    files: list[Path],
    chunk_size: int,
    known: set[str],
    newest: str | None,
    allow_older: bool,
    summary: IngestSummary,
) -> Iterator[tuple[_Task, str]]:
    for index, path in enumerate(files):
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from exc
        checksum = hashlib.sha256(raw).hexdigest()
        if checksum in known:
            summary.skipped.append(path.name)
            continue
        seq = file_seq(path.name)
        if seq is not None and newest is not None and seq < newest:
            summary.older.append(path.name)
            if not allow_older:
                continue
        if seq is not None and (newest is None or seq > newest):
            newest = seq
        known.add(checksum)  # the same file twice in one run is ingested once
        data = _decompress(raw)
        kind = _kind(data, path) if data is not None else "nbib" if raw[:2] != _GZIP_MAGIC else "xml"
        if data is None:  # corrupt gzip: one task on the compressed bytes, the reader says where
            yield _Task(index, 0, True, kind, path.name, raw), checksum
            continue
        cut = _xml_chunks(data, chunk_size) if kind == "xml" else _nbib_chunks(data, chunk_size)
        chunk = next(cut, None)
        number = 0
        while chunk is not None:
            following = next(cut, None)
            yield _Task(index, number, following is None, kind, path.name, chunk), checksum
            chunk, number = following, number + 1


def _decompress(raw: bytes) -> bytes | None:
    """The file's bytes, gunzipped if they are gzip; None if the gzip data is corrupt."""
    if raw[:2] != _GZIP_MAGIC:
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error):
        return None


def _head(path: Path) -> bytes:
    """The first bytes of the file, gunzipped if it is gzip (b"<" if that fails: the reader says why)."""
    try:
        with open(path, "rb") as raw:
            head = raw.read(4096)
        if head[:2] != _GZIP_MAGIC:
            return head
        with gzip.open(path, "rb") as unzipped:
            return unzipped.read(4096)
    except (OSError, EOFError, zlib.error) as exc:
        if isinstance(exc, OSError) and not isinstance(exc, gzip.BadGzipFile) and exc.errno is not None:
            raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from exc
        return b"<"


def _kind(data: bytes, path: Path) -> str:
    head = data[:4096]
    if is_nbib(head):
        return "nbib"
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):
        return "xml"
    raise InputError(f"{path}: neither PubMed XML nor MEDLINE text format (a record starts with 'PMID- ')")


def _xml_chunks(data: bytes, size: int) -> Iterator[bytes]:
    """The document cut after every ``size``-th record, each piece a document of its own."""
    root = _XML_ROOT.search(data, 0, 1 << 20)
    if root is None:
        yield data  # not PubMed XML: the reader says why
        return
    opening, closing = root.group(0), b"</" + root.group(1) + b">"
    start, count = root.end(), 0
    for end in _XML_END[root.group(1)].finditer(data, start):
        count += 1
        if count == size:
            yield opening + data[start : end.end()] + closing
            start, count = end.end(), 0
    yield opening + data[start:]  # the rest: DeleteCitation blocks and the closing tag


def _nbib_chunks(data: bytes, size: int) -> Iterator[bytes]:
    starts = [m.start() for m in _NBIB_START.finditer(data)]
    cuts = starts[size::size]
    begin = 0
    for cut in cuts:
        yield data[begin:cut]
        begin = cut
    yield data[begin:]


# --- parsing (worker processes) ----------------------------------------------------------


def _prepare(kind: str, name: str, data: bytes) -> tuple[list[Op], int, int] | EbmError:
    """(operations, records read, citations read) for one chunk, or the reader's error."""
    records: Iterable[Citation | Deletion | Notice] = (
        read_records(data, name=name) if kind == "xml" else read_nbib(data, name=name)
    )
    ops: list[Op] = []
    rows: list[Any] = []
    n_records = n_citations = 0
    try:
        for record in records:
            n_records += 1
            if isinstance(record, Deletion):
                if rows:
                    ops.append(("rows", rows))
                    rows = []
                ops.append(("delete", record.pmids))
            elif isinstance(record, Notice):
                ops.append(("notice", record))
            else:
                n_citations += 1
                if not (record.pmid.isascii() and record.pmid.isdigit()):  # the serial re-read says where
                    raise InputError(f"{name}: PMID {record.pmid[:40]!r} is not a number")
                record, cut = cap_text(record)  # the XML reader has cut already; the MEDLINE text one not
                if cut:
                    ops.append(("notice", Notice(cut, label=name)))
                rows.append(prepare_citation(record))
    except EbmError as exc:
        # sent back to the writer by pickle: without its cause (lxml's error log cannot be
        # pickled once distributed's tblib pickling is installed, e.g. after ebm corpus annotate)
        exc.__cause__ = exc.__context__ = None
        exc.__traceback__ = None
        return exc
    if rows:
        ops.append(("rows", rows))
    return ops, n_records, n_citations


def _notices(ops: list[Op], counts: list[int], citations: int, summary: IngestSummary) -> None:
    """The chunk's notices into ``summary``, numbered from the file's start (a chunk's reader
    counts from the chunk's start); ``counts[3]``: records of the file before this chunk."""
    skipped = deletions = 0
    for kind, payload in ops:
        if kind == "delete":
            deletions += 1
        elif kind == "notice":
            # the line is the chunk's, not the file's: left out
            at = replace(payload, record=payload.record + counts[3], line=None) if payload.record else payload
            summary.notices.append(at.message)
            skipped += payload.skipped
    summary.skipped_records += skipped
    counts[3] += citations + deletions + skipped


def _watch_parent(parent: int) -> None:
    """Exit when the writer dies (SIGKILL gives the pool no chance to stop its forked workers,
    which would otherwise wait on the task queue forever)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _run(task: _Task) -> tuple[list[Op], int, int] | EbmError:
    return _prepare(task.kind, task.name, task.data)


class _Results:
    """(task, checksum, outcome) in task order; at most 2 chunks per worker in flight."""

    def __init__(self, tasks: Iterator[tuple[_Task, str]], workers: int) -> None:
        self.tasks = tasks
        self.pool = (
            ProcessPoolExecutor(workers, initializer=_watch_parent, initargs=(os.getpid(),))
            if workers > 0
            else None
        )
        self.pending: deque[tuple[_Task, str, Future[Any]]] = deque()
        self.depth = 2 * workers

    def __iter__(self) -> Iterator[tuple[_Task, str, tuple[list[Op], int, int] | EbmError]]:
        if self.pool is None:
            for task, checksum in self.tasks:
                yield task, checksum, _run(task)
            return
        for task, checksum in islice(self.tasks, self.depth):
            self.pending.append((task, checksum, self.pool.submit(_run, task)))
        while self.pending:
            task, checksum, future = self.pending.popleft()
            outcome = future.result()
            for nxt, nxt_sum in islice(self.tasks, 1):
                self.pending.append((nxt, nxt_sum, self.pool.submit(_run, nxt)))
            yield task, checksum, outcome

    def close(self) -> None:
        if self.pool is not None:
            for _, _, future in self.pending:
                future.cancel()
            self.pending.clear()
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None


def _resume_serially(
    store: MedlineStore, path: Path, kind: str, done: int, summary: IngestSummary, error: EbmError
) -> NoReturn:
    """Store the records of ``path`` after the ``done`` already committed, up to the fault, and
    raise the reader's error for the whole file (exact file:line)."""
    reader: Iterator[Citation | Deletion | Notice] = (
        read_records(path) if kind == "xml" else iter(read_nbib(path))
    )
    rest = islice(reader, done, None)
    report = IngestReport()
    try:
        store.ingest(rest, report=report)
    finally:
        summary.read += report.read
        summary.skipped_records += report.skipped
        summary.notices.extend(report.notices)
        summary.added += report.added
        summary.replaced += report.replaced
        summary.deleted += report.deleted
        summary.batches += report.batches
    raise error  # the chunk's error if the whole file reads (it should not): never silent
