"""The local MEDLINE store: one SQLite file with the citations and their full-text indexes.

Tables (schema version in ``meta``):

- ``citations``: one row per PMID: the record as ``Citation.to_dict()`` JSON (zlib), the columns the
  query language filters on (year, sort date, language, has_abstract ...) and the indexed text.
- ``vocab``: each distinct descriptor, qualifier and publication type (UI and name) once;
  ``headings``, ``qualifiers``, ``pubtypes``: one row per occurrence in a citation, with the
  major-topic flags (a heading or publication type the record gives by name only gets the UI of
  the MeSH 2024 descriptor of that name).
- FTS5 indexes, all external-content (the text lives once, in the tables above) and written
  in the same transactions as the rows: ``text_fts`` (title, abstract; porter stemming; BM25
  ranking with title weight 5, abstract 1, as the benchmark pools were built), ``mesh_fts``
  (descriptor names in ``vocab``, for text words), ``word_fts`` (title, abstract, headings
  without stemming, for ``word*`` truncation).

Writes happen in one transaction per batch, so a killed ingest leaves every earlier batch
stored and nothing half-written.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from ebm.citation import Citation
from ebm.errors import DataError, EbmError, InputError
from ebm.medline.reader import Deletion, Notice, cap_text
from ebm.mesh import MeshVocabulary
from ebm.source import SearchResult, Sort
from ebm.store import annotations as stored
from ebm.store.query import SqlQuery, translate

SCHEMA_VERSION = "1"
TITLE_WEIGHT = 5.0
ABSTRACT_WEIGHT = 1.0
BATCH_SIZE = 1000

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE citations(
    id INTEGER PRIMARY KEY,
    pmid TEXT NOT NULL UNIQUE,
    year INTEGER,
    sort_date TEXT,            -- YYYY-MM-DD, 00 for a month or day the record does not give
    language TEXT,
    has_abstract INTEGER NOT NULL,
    has_mesh INTEGER NOT NULL,
    has_pt INTEGER NOT NULL,
    source TEXT,
    title TEXT NOT NULL,       -- '' when unknown: the indexed text
    abstract TEXT NOT NULL,
    mesh TEXT NOT NULL,        -- heading names, one per line
    record BLOB NOT NULL       -- Citation.to_dict() as zlib-compressed JSON
);
CREATE INDEX citations_date ON citations(sort_date);
CREATE INDEX citations_language ON citations(language);
-- every distinct descriptor (D), qualifier (Q) and publication type (P), stored once
CREATE TABLE vocab(
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    ui TEXT NOT NULL,          -- '' when neither the record nor MeSH 2024 gives one
    name TEXT NOT NULL COLLATE NOCASE,
    UNIQUE(kind, ui, name)
);
CREATE INDEX vocab_name ON vocab(kind, name);
CREATE TABLE headings(
    cid INTEGER NOT NULL,
    vid INTEGER NOT NULL,
    major INTEGER NOT NULL,            -- main theme: the descriptor or one of its qualifiers starred
    descriptor_major INTEGER NOT NULL  -- the descriptor itself starred
);
CREATE INDEX headings_cid ON headings(cid);
CREATE TABLE qualifiers(heading INTEGER NOT NULL, cid INTEGER NOT NULL, vid INTEGER NOT NULL,
                        major INTEGER NOT NULL);
CREATE INDEX qualifiers_cid ON qualifiers(cid);
CREATE TABLE pubtypes(cid INTEGER NOT NULL, vid INTEGER NOT NULL);
CREATE INDEX pubtypes_cid ON pubtypes(cid);

CREATE VIRTUAL TABLE text_fts USING fts5(
    title, abstract, content='citations', content_rowid='id', tokenize='porter unicode61');
CREATE VIRTUAL TABLE word_fts USING fts5(
    title, abstract, mesh, content='citations', content_rowid='id', tokenize='unicode61',
    detail='column');
-- descriptor names, indexed once each: text words reach citations through headings.vid
CREATE VIEW descriptors AS SELECT id, name FROM vocab WHERE kind = 'D';
CREATE VIRTUAL TABLE mesh_fts USING fts5(
    name, content='descriptors', content_rowid='id', tokenize='porter unicode61');

-- The FTS tables are written by MedlineStore itself, not by triggers: an FTS5 insert made by a
-- trigger flushes the index at every row's statement savepoint (5x slower on a bulk ingest).
CREATE TRIGGER citations_au BEFORE UPDATE ON citations BEGIN
    SELECT RAISE(ABORT, 'citations are replaced (delete + insert), never updated');
END;
CREATE TRIGGER vocab_bd BEFORE DELETE ON vocab BEGIN
    SELECT RAISE(ABORT, 'vocab rows are kept: headings refer to them');
END;
"""

# Covering indexes for the field terms ([mh] [majr] [sh] [pt] hasabstract): a term's citation ids
# come from the index alone, without reading a row per match. Written with a new store;
# ``MedlineStore.optimize`` adds them to a store made before them (replacing the narrower ones).
_SEARCH_INDEXES = """
DROP INDEX IF EXISTS headings_vid;
DROP INDEX IF EXISTS qualifiers_vid;
DROP INDEX IF EXISTS pubtypes_vid;
CREATE INDEX IF NOT EXISTS headings_vid_cid ON headings(vid, major, cid);
CREATE INDEX IF NOT EXISTS qualifiers_vid_cid ON qualifiers(vid, cid);
CREATE INDEX IF NOT EXISTS pubtypes_vid_cid ON pubtypes(vid, cid);
CREATE INDEX IF NOT EXISTS citations_abstract ON citations(has_abstract);
"""


@dataclass
class IngestReport:
    """Counts of one ingest; updated as batches commit, so it is right after an error too."""

    read: int = 0  # citations received
    added: int = 0  # new PMIDs stored
    replaced: int = 0  # PMIDs already stored, replaced by the new record
    deleted: int = 0  # PMIDs removed by DeleteCitation blocks
    batches: int = 0  # transactions committed
    skipped: int = 0  # records the reader skipped (no PMID): each has a notice
    notices: list[str] = field(default_factory=list)  # skipped records, texts cut to their caps

    @property
    def stored(self) -> int:
        return self.added + self.replaced


@dataclass(frozen=True)
class Hit:
    pmid: str
    score: float | None  # BM25 (higher is better); None in date order or without text terms
    year: int | None
    title: str | None


@dataclass(frozen=True)
class Hits:
    query: str
    count: int
    hits: tuple[Hit, ...]
    translation: str
    sort: str


@dataclass(frozen=True)
class StoreStats:
    path: str
    citations: int
    with_abstract: int
    with_mesh: int
    with_publication_types: int
    with_year: int
    year_min: int | None
    year_max: int | None
    sources: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class FileRecord:
    """A distribution file ingested whole (``ebm.store.ingest``): written in the transaction of its
    last batch, so a file is either recorded and complete or not recorded and ingested again."""

    name: str
    sha256: str
    citations: int  # citation records read from the file
    deleted: int  # PMIDs its DeleteCitation blocks removed from the store
    ingested_at: str  # UTC, ISO 8601
    seq: str | None = None  # PubMed file sequence ("26n1335"), for the order of baseline/update files


_FILES_SCHEMA = """
CREATE TABLE IF NOT EXISTS ingested_files(
    sha256 TEXT PRIMARY KEY, name TEXT NOT NULL, citations INTEGER NOT NULL, deleted INTEGER NOT NULL,
    ingested_at TEXT NOT NULL, seq TEXT)
"""

# A citation prepared for ``MedlineStore.write_prepared`` in another process: the citations row
# (``_citation_row``), its headings (ui, name, main theme, descriptor starred, qualifiers as
# (ui, name, starred)) and its publication types (ui, name). Plain tuples: cheap to pickle.
PreparedHeading = tuple[str | None, str, int, int, tuple[tuple[str | None, str, int], ...]]
PreparedCitation = tuple[tuple[Any, ...], tuple[PreparedHeading, ...], tuple[tuple[str | None, str], ...]]


class MedlineStore:
    """A SQLite MEDLINE store; implements ``ebm.source.CitationSource``.

    One connection guarded by a lock, so a store can be shared between threads.
    ``bulk=True`` turns off journaling and syncing: only for building a new file that is
    thrown away if the build fails (see ``ebm.store.default``). ``vocabulary``: the MeSH the
    store maps [mh]/[pt] names and UI-less headings with: the vocabulary itself, or a function
    returning it (called on first need, so a store that only counts or fetches never loads MeSH;
    the caller chooses it, e.g. ``lambda: resources.vocabulary``).
    """

    name = "local"

    def __init__(
        self,
        path: str | Path,
        *,
        create: bool = True,
        bulk: bool = False,
        vocabulary: MeshVocabulary | Callable[[], MeshVocabulary],
    ) -> None:
        self.path = Path(path)
        self._vocabulary_source = vocabulary
        self._vocabulary: MeshVocabulary | None = None
        if not create and not self.path.is_file():
            raise DataError(f"no MEDLINE store at {self.path}")
        if create:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise DataError(f"cannot create the store's directory {self.path.parent}: {exc}") from exc
        self._lock = threading.RLock()
        self._vocab: dict[tuple[str, str, str], int] | None = None  # (kind, ui, name) -> vocab id
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA foreign_keys = OFF")
            if bulk:
                self._db.execute("PRAGMA journal_mode = OFF")
                self._db.execute("PRAGMA synchronous = OFF")
            else:
                self._db.execute("PRAGMA journal_mode = WAL")
                self._db.execute("PRAGMA synchronous = NORMAL")
            self._init_schema()
        except sqlite3.DatabaseError as exc:
            raise DataError(f"{self.path} is not a usable MEDLINE store: {exc}") from exc

    @property
    def vocabulary(self) -> MeshVocabulary:
        if self._vocabulary is None:
            source = self._vocabulary_source
            self._vocabulary = source if isinstance(source, MeshVocabulary) else source()
        return self._vocabulary

    def _heading_ui(self, name: str) -> str | None:
        """The MeSH UI of a heading or publication type the record names without one."""
        d = self.vocabulary.by_name(name)
        return d.ui if d else None

    # -------------------------------------------------------------- lifecycle

    def _init_schema(self) -> None:
        tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            self._db.executescript("BEGIN;" + _SCHEMA + _SEARCH_INDEXES + "COMMIT;")
            self._db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
            stored.ensure_tables(self._db)
            return
        if "meta" not in tables or "citations" not in tables:
            raise DataError(f"{self.path} is an SQLite file but not an ebm MEDLINE store")
        row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None or row[0] != SCHEMA_VERSION:
            raise DataError(
                f"{self.path} was written by another version of ebm (store schema "
                f"{row[0] if row else 'unknown'}, this version reads {SCHEMA_VERSION}): delete it "
                "and re-ingest (the default store is rebuilt from the bundled corpus)"
            )
        stored.ensure_tables(self._db)  # stored annotations (issue 17): added to older stores

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> MedlineStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def optimize(self) -> None:
        """Merge the FTS5 index segments (faster queries after a large ingest); add the covering
        indexes of the field terms to a store made before them."""
        with self._lock:
            self._db.executescript(_SEARCH_INDEXES)
            for table in ("text_fts", "word_fts", "mesh_fts"):
                self._db.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")

    def check(self) -> None:
        """``DataError`` unless SQLite and every FTS5 index agree with the stored rows."""
        with self._lock:
            try:
                ok = self._db.execute("PRAGMA integrity_check").fetchone()[0]
                if ok != "ok":
                    raise DataError(f"{self.path}: integrity check failed: {ok}")
                for table in ("text_fts", "word_fts", "mesh_fts"):
                    self._db.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
            except sqlite3.DatabaseError as exc:
                raise DataError(f"{self.path}: index check failed: {exc}") from exc

    # -------------------------------------------------------------- writing

    def ingest(
        self,
        records: Iterable[Citation | Deletion | Notice],
        *,
        batch_size: int = BATCH_SIZE,
        report: IngestReport | None = None,
        on_batch: Callable[[int], None] | None = None,
    ) -> IngestReport:
        """Store citations (replacing any stored under the same PMID) and apply deletions.

        One transaction per ``batch_size`` citations. If ``records`` raises an ``EbmError``
        (a malformed file), the citations read before it are stored, then the error is
        re-raised; any other exception (an interrupt) rolls back only the current batch.
        ``report`` (updated as batches commit) tells what was stored either way, and keeps the
        reader's notices (records skipped, texts cut). A citation whose PMID is not a number
        is an ``InputError`` naming its position (the records before it are stored); a title or
        abstract over the reader's caps is cut and reported.
        """
        if batch_size < 1:
            raise InputError(f"batch size must be at least 1, not {batch_size}")
        report = report if report is not None else IngestReport()
        batch: dict[str, Citation] = {}

        def flush() -> None:
            if batch:
                n = len(batch)
                self._write_batch(list(batch.values()), report)
                batch.clear()
                if on_batch:
                    on_batch(n)

        source = iter(records)
        while True:
            try:
                record = next(source)
            except StopIteration:
                break
            except EbmError:
                flush()  # the records before a malformed part are whole: keep them
                raise
            if isinstance(record, Deletion):
                flush()  # keep document order: a deletion applies to what came before it
                report.deleted += self.delete(record.pmids)
                continue
            if isinstance(record, Notice):
                report.skipped += record.skipped
                report.notices.append(record.message)
                continue
            if not (record.pmid.isascii() and record.pmid.isdigit()):
                flush()
                where = f"{record.source}: " if record.source else ""
                raise InputError(
                    f"{where}record {report.read + report.skipped + 1}: PMID {record.pmid[:40]!r} "
                    "is not a number"
                )
            record, cut = cap_text(record)
            if cut:
                report.notices.append(cut)
            report.read += 1
            batch.pop(record.pmid, None)  # a later record for the same PMID wins
            batch[record.pmid] = record
            if len(batch) >= batch_size:
                flush()
        flush()
        return report

    def delete(self, pmids: Iterable[str]) -> int:
        """Remove citations by PMID; returns how many were stored."""
        with self._lock, self._transaction():
            return self._delete(json.dumps([str(p) for p in pmids]))

    def _delete(self, pmids_json: str) -> int:
        db = self._db
        ids = json.dumps(
            [
                r[0]
                for r in db.execute(
                    "SELECT id FROM citations WHERE pmid IN (SELECT value FROM json_each(?))", (pmids_json,)
                )
            ]
        )
        if ids == "[]":
            return 0
        these = "IN (SELECT value FROM json_each(?))"
        # external-content FTS5 deletes need the indexed values, read before the rows go
        db.execute(
            "INSERT INTO text_fts(text_fts, rowid, title, abstract)"
            f" SELECT 'delete', id, title, abstract FROM citations WHERE id {these}",
            (ids,),
        )
        db.execute(
            "INSERT INTO word_fts(word_fts, rowid, title, abstract, mesh)"
            f" SELECT 'delete', id, title, abstract, mesh FROM citations WHERE id {these}",
            (ids,),
        )
        for table in ("headings", "qualifiers", "pubtypes"):
            db.execute(f"DELETE FROM {table} WHERE cid {these}", (ids,))
        stored.delete_for(db, ids)  # a replaced record is annotated again
        return db.execute(f"DELETE FROM citations WHERE id {these}", (ids,)).rowcount

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db, self.path)

    def _write_batch(self, citations: list[Citation], report: IngestReport) -> None:
        items = [prepare_citation(c) for c in citations]
        with self._lock:
            try:
                with self._transaction():
                    replaced = self._insert_prepared(items)
            except BaseException as exc:
                self._vocab = None  # ids added in the rolled-back transaction are gone
                if isinstance(exc, sqlite3.Error):
                    first, last = citations[0].pmid, citations[-1].pmid
                    raise DataError(
                        f"{self.path}: storing the batch of PMIDs {first}..{last} failed ({exc}); "
                        "that batch was rolled back, everything stored before it is kept"
                    ) from exc
                raise
        report.replaced += replaced
        report.added += len(citations) - replaced
        report.batches += 1

    def _vid(self, kind: str, ui: str | None, name: str) -> int:
        """The vocab id of a descriptor, qualifier or publication type, added if new."""
        if self._vocab is None:
            self._vocab = {
                (k, u, n): i for i, k, u, n in self._db.execute("SELECT id, kind, ui, name FROM vocab")
            }
        key = (kind, ui or "", name)
        vid = self._vocab.get(key)
        if vid is None:
            found = self._db.execute(
                "SELECT id FROM vocab WHERE kind = ? AND ui = ? AND name = ?", key
            ).fetchone()
            if found:  # added by another process since the cache was loaded
                vid = found[0]
            else:
                inserted = self._db.execute("INSERT INTO vocab(kind, ui, name) VALUES (?, ?, ?)", key)
                assert inserted.lastrowid is not None  # set by every INSERT
                vid = inserted.lastrowid
                if kind == "D":
                    self._db.execute("INSERT INTO mesh_fts(rowid, name) VALUES (?, ?)", (vid, name))
            self._vocab[key] = vid
        return vid

    # -------------------------------------------------------------- prepared batches, file records

    def write_prepared(
        self,
        ops: Sequence[tuple[str, Any]],
        *,
        file_record: FileRecord | None = None,
    ) -> tuple[int, int, int]:
        """Apply ``("rows", [PreparedCitation...])`` and ``("delete", [pmid...])`` operations in
        order, in ONE transaction, with ``file_record`` if given; (added, replaced, deleted).

        Used by ``ebm.store.ingest``, whose worker processes build the rows (``prepare_citation``);
        a PMID given twice in one ``rows`` operation keeps its last record.
        """
        added = replaced = deleted = 0
        with self._lock:
            try:
                with self._transaction():
                    if file_record is not None:
                        self._db.execute(_FILES_SCHEMA)  # execute, not executescript: that would COMMIT
                    for kind, payload in ops:
                        if kind == "notice":  # the reader's notices: reported by the caller
                            continue
                        if kind == "delete":
                            deleted += self._delete(json.dumps([str(p) for p in payload]))
                            continue
                        items = list({item[0][0]: item for item in payload}.values())
                        if not items:
                            continue
                        n = self._insert_prepared(items)
                        replaced += n
                        added += len(items) - n
                    if file_record is not None:
                        self._db.execute(
                            "INSERT OR REPLACE INTO ingested_files VALUES (?,?,?,?,?,?)",
                            (file_record.sha256, file_record.name, file_record.citations,
                             file_record.deleted + deleted, file_record.ingested_at, file_record.seq),
                        )  # fmt: skip
            except BaseException as exc:
                self._vocab = None  # ids added in the rolled-back transaction are gone
                if isinstance(exc, sqlite3.Error):
                    raise DataError(
                        f"{self.path}: storing a batch failed ({exc}); it was rolled back"
                    ) from exc
                raise
        return added, replaced, deleted

    def _insert_prepared(self, items: list[PreparedCitation]) -> int:
        """Insert prepared citations, replacing those stored under their PMIDs (how many)."""
        db = self._db
        replaced = self._delete(json.dumps([item[0][0] for item in items]))
        next_id = db.execute("SELECT coalesce(max(id), 0) + 1 FROM citations").fetchone()[0]
        next_heading = db.execute("SELECT coalesce(max(rowid), 0) + 1 FROM headings").fetchone()[0]
        headings: list[tuple[int, ...]] = []
        qualifiers: list[tuple[int, ...]] = []
        pubtypes: list[tuple[int, int]] = []
        vid = self._vid
        for cid, (_, item_headings, item_pubtypes) in enumerate(items, next_id):
            for ui, name, is_major, major, quals in item_headings:
                headings.append(
                    (next_heading, cid, vid("D", ui or self._heading_ui(name), name), is_major, major)
                )
                qualifiers.extend(
                    (next_heading, cid, vid("Q", qui, qname), qmajor) for qui, qname, qmajor in quals
                )
                next_heading += 1
            pubtypes.extend((cid, vid("P", ui or self._heading_ui(name), name)) for ui, name in item_pubtypes)
        numbered = [(cid, *item[0]) for cid, item in enumerate(items, next_id)]
        db.executemany(
            "INSERT INTO citations(id, pmid, year, sort_date, language, has_abstract, has_mesh, has_pt,"
            " source, title, abstract, mesh, record) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            numbered,
        )
        # a numbered row is (id, pmid, ..., title, abstract, mesh, record): see _citation_row
        texts = [(r[0], r[-4], r[-3], r[-2]) for r in numbered]
        db.executemany("INSERT INTO text_fts(rowid, title, abstract) VALUES (?,?,?)", [t[:3] for t in texts])
        db.executemany("INSERT INTO word_fts(rowid, title, abstract, mesh) VALUES (?,?,?,?)", texts)
        db.executemany(
            "INSERT INTO headings(rowid, cid, vid, major, descriptor_major) VALUES (?,?,?,?,?)", headings
        )
        db.executemany("INSERT INTO qualifiers VALUES (?,?,?,?)", qualifiers)
        db.executemany("INSERT INTO pubtypes VALUES (?,?)", pubtypes)
        return replaced

    def file_records(self) -> list[FileRecord]:
        """The distribution files ingested whole, oldest first."""
        with self._lock:
            self._db.execute(_FILES_SCHEMA)
            rows = self._db.execute(
                "SELECT name, sha256, citations, deleted, ingested_at, seq FROM ingested_files"
                " ORDER BY ingested_at, rowid"
            ).fetchall()
        return [FileRecord(*r) for r in rows]

    # -------------------------------------------------------------- reading

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT count(*) FROM citations").fetchone()[0]

    def __contains__(self, pmid: object) -> bool:
        with self._lock:
            return (
                self._db.execute("SELECT 1 FROM citations WHERE pmid = ?", (str(pmid),)).fetchone()
                is not None
            )

    def get(self, pmid: str) -> Citation | None:
        found = self.fetch([pmid])
        return found[0] if found else None

    def fetch(self, pmids: Sequence[str]) -> list[Citation]:
        """Citations for ``pmids`` in the given order; unknown PMIDs are left out."""
        wanted = [str(p).strip() for p in pmids]
        with self._lock:
            rows = dict(
                self._db.execute(
                    "SELECT pmid, record FROM citations WHERE pmid IN (SELECT value FROM json_each(?))",
                    (json.dumps(wanted),),
                )
            )
        return [decode_record(rows[p]) for p in dict.fromkeys(wanted) if p in rows]

    def iter_citations(self, batch: int = 1000) -> Iterator[Citation]:
        """Every stored citation, in insertion order."""
        last = 0
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT id, record FROM citations WHERE id > ? ORDER BY id LIMIT ?", (last, batch)
                ).fetchall()
            if not rows:
                return
            for _, record in rows:
                yield decode_record(record)
            last = rows[-1][0]

    # -------------------------------------------------------------- stored annotations (issue 17)

    def stored_annotations(self, version: str, citations: Sequence[Citation]) -> dict[str, Any]:
        """The annotations ``ebm corpus annotate`` stored for ``citations`` (PMID -> Annotation)."""
        with self._lock:
            return stored.get_many(self._db, version, citations)

    def write_annotations(self, version: str, items: Sequence[stored.Compact]) -> int:
        """Store workers' annotations in one transaction; the PICO fields then read ``version``."""
        with self._lock, self._transaction():
            n = stored.put_many(self._db, version, items)
            self._db.execute(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)", (stored.META_VERSION, version)
            )
            return n

    def records(self, pmids: Sequence[str]) -> list[bytes]:
        """The stored records (``decode_record`` reads them) of ``pmids`` that are stored."""
        with self._lock:
            return [
                r[0]
                for r in self._db.execute(
                    "SELECT record FROM citations WHERE pmid IN (SELECT value FROM json_each(?))",
                    (json.dumps(list(pmids)),),
                )
            ]

    def unannotated(self, version: str, since: str | None = None) -> list[str]:
        with self._lock:
            return stored.missing_ids(self._db, version, since)

    def annotated_count(self, version: str) -> int:
        with self._lock:
            return stored.count(self._db, version)

    def translate(self, query: str) -> SqlQuery:
        """How the store reads ``query`` (``InputError`` if it cannot honour it)."""
        return translate(
            query, self._known_name, vocabulary=self.vocabulary, pico=self.get_meta(stored.META_VERSION)
        )

    def _known_name(self, kind: str, name: str) -> bool:
        code = {"heading": "D", "pubtype": "P"}[kind]
        with self._lock:
            found = self._db.execute("SELECT 1 FROM vocab WHERE kind = ? AND name = ? LIMIT 1", (code, name))
            return found.fetchone() is not None

    def search(self, query: str, limit: int = 50, sort: Sort = "relevance") -> SearchResult:
        hits = self.search_hits(query, limit=limit, sort=sort)
        return SearchResult(
            query,
            hits.count,
            tuple(h.pmid for h in hits.hits),
            hits.translation,
            tuple(h.score for h in hits.hits),
        )

    def search_hits(self, query: str, limit: int = 50, sort: str = "relevance") -> Hits:
        """Run a PubMed-syntax query: the count of matches and the top ``limit`` hits."""
        if sort not in ("relevance", "date"):
            raise InputError(f"unknown sort order {sort!r} (relevance or date)")
        if limit < 0:
            raise InputError(f"limit must not be negative, not {limit}")
        q = self.translate(query)
        with self._lock:
            try:
                rows = self._db.execute(*_ranked_sql(q, limit, sort)).fetchall() if limit else []
                # every row carries the count of all hits; no row: no hit, or no row asked for
                count = rows[0][4] if rows else 0
                if not limit:
                    count = self._db.execute(f"SELECT count(*) FROM ({q.sql})", q.params).fetchone()[0]
            except sqlite3.OperationalError as exc:  # an FTS5 expression the translation let through
                shown = query if len(query) <= 200 else query[:200] + f"... ({len(query):,} characters)"
                raise InputError(f"query {shown!r} could not be run on the local store: {exc}") from exc
        hits = tuple(
            Hit(pmid, None if s is None else -s, year, title or None) for pmid, s, year, title, _ in rows
        )
        return Hits(query, count, hits, q.translation, sort)

    def stats(self) -> StoreStats:
        with self._lock:
            db = self._db
            n, ab, mh, pt, wy, y0, y1 = db.execute(
                "SELECT count(*), coalesce(sum(has_abstract), 0), coalesce(sum(has_mesh), 0),"
                " coalesce(sum(has_pt), 0), count(year), min(year), max(year) FROM citations"
            ).fetchone()
            sources = {
                s if s is not None else "unknown": k
                for s, k in db.execute(
                    "SELECT source, count(*) FROM citations GROUP BY source ORDER BY count(*) DESC, source"
                )
            }
        return StoreStats(str(self.path), n, ab, mh, pt, wy, y0, y1, sources)


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception (KeyboardInterrupt too)."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db = db
        self.path = path

    def __enter__(self) -> None:
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:  # locked by another writer past the timeout
            raise DataError(f"{self.path}: cannot write to the store: {exc}") from exc

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.db.execute("COMMIT")
        else:
            self.db.execute("ROLLBACK")


def _ranked_sql(q: SqlQuery, limit: int, sort: str) -> tuple[str, tuple[object, ...]]:
    """The top ``limit`` hits of ``q`` as (pmid, score, year, title, count of all hits) rows.

    The hits are materialised once (``hits``) and only ever probed through ``IN``, which SQLite
    answers from an index it builds on them: joining a materialised CTE instead scanned it for
    every row (minutes at 60,000 citations for a Clinical Queries filter, docs/scale.md).
    """
    newest = "sort_date DESC NULLS LAST, CAST(pmid AS INTEGER) DESC"
    ranked = sort != "date" and q.rank_match is not None
    hit_sql, hit_params = _reuse_ranked(q) if ranked else (q.sql, q.params)
    if hit_sql == "SELECT id FROM ranked":  # one text term: its matches are the ranked rows
        hits = f"hits(id) AS ({hit_sql})"
    else:
        hits = f"hits(id) AS MATERIALIZED (SELECT id FROM ({hit_sql}))"
    total = "(SELECT count(*) FROM hits)"
    if not ranked:
        sql = (
            f"WITH {hits} SELECT pmid, NULL, year, title, {total} FROM citations"
            f" WHERE id IN (SELECT id FROM hits) ORDER BY {newest} LIMIT ?"
        )
        return sql, (*hit_params, limit)
    # BM25 of the positive text terms, computed once for all their matches; only the hits among
    # them are kept (``scored``). Ties are broken by date, which needs the citations row: rows are
    # looked up only for the scores up to the ``limit``-th best (ties included), not for every hit.
    # Hits without a text score (matched through other fields) rank after every scored one, newest
    # first, and are looked at only when fewer than ``limit`` hits are scored.
    sql = (
        "WITH ranked(id, score) AS MATERIALIZED ("
        f"SELECT rowid, bm25(text_fts, {TITLE_WEIGHT}, {ABSTRACT_WEIGHT})"
        " FROM text_fts WHERE text_fts MATCH ?),"
        f" {hits},"
        " scored(id, score) AS MATERIALIZED (SELECT id, score FROM ranked WHERE id IN (SELECT id FROM hits)),"
        " cut(score) AS (SELECT max(score) FROM (SELECT score FROM scored ORDER BY score LIMIT ?))"
        f" SELECT pmid, score, year, title, {total} FROM ("
        "SELECT c.pmid, s.score, c.year, c.title, c.sort_date FROM scored s JOIN citations c ON c.id = s.id"
        " WHERE s.score <= (SELECT score FROM cut)"
        " UNION ALL SELECT pmid, NULL, year, title, sort_date FROM citations"
        " WHERE (SELECT count(*) FROM scored) < ? AND id IN (SELECT id FROM hits)"
        " AND id NOT IN (SELECT id FROM scored))"
        f" ORDER BY score IS NULL, score, {newest} LIMIT ?"
    )
    return sql, (q.rank_match, *hit_params, limit, limit, limit)


# a text term's SELECT (ebm.store.query): with the rank expression as its MATCH, its matches are
# exactly the rows ``ranked`` holds
_TEXT_SELECT = "SELECT rowid AS id FROM text_fts WHERE text_fts MATCH ?"


def _reuse_ranked(q: SqlQuery) -> tuple[str, tuple[object, ...]]:
    """``q``'s SQL with every text_fts SELECT that matches the rank expression itself (a plain OR
    of text words, as the pool queries are) read from ``ranked``: one full-text pass, not two."""
    parts = q.sql.split(_TEXT_SELECT)
    if len(parts) == 1:
        return q.sql, q.params
    params = list(q.params)
    sql = parts[0]
    at = parts[0].count("?")  # the translation passes every value as a parameter: no '?' in literals
    for part in parts[1:]:
        if params[at] == q.rank_match:
            sql += "SELECT id FROM ranked"
            del params[at]
        else:
            sql += _TEXT_SELECT
            at += 1
        sql += part
        at += part.count("?")
    return sql, tuple(params)


# ------------------------------------------------------------------ record -> row

_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}  # fmt: skip
_SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}


def sort_date(year: int | None, pub_date: str | None) -> str | None:
    """``YYYY-MM-DD`` for date order and [dp] ranges; 00 for what the record does not give."""
    if year is None:
        return None
    month = day = 0
    words = re.findall(r"[A-Za-z]+|\d+", pub_date or "")
    for i, w in enumerate(words):
        key = w[:3].casefold()
        if key in _MONTHS or w.casefold() in _SEASONS:
            month = _MONTHS.get(key) or _SEASONS[w.casefold()]
            if i + 1 < len(words) and words[i + 1].isdigit() and len(words[i + 1]) <= 2:
                day = int(words[i + 1])
            break
        if w.isdigit() and len(w) <= 2 and i > 0 and words[i - 1] == str(year):
            month = int(w)  # "2016 03 12"
            if i + 1 < len(words) and words[i + 1].isdigit() and len(words[i + 1]) <= 2:
                day = int(words[i + 1])
            break
    return f"{year:04d}-{month:02d}-{day:02d}"


_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields_of(obj: Any) -> dict[str, Any]:
    """One level of ``dataclasses.asdict``; the C JSON encoder does the tuples and dicts."""
    t = type(obj)
    names = _FIELDS.get(t)
    if names is None:
        names = _FIELDS[t] = tuple(f.name for f in fields(obj))
    return {n: getattr(obj, n) for n in names}


# the same JSON as json.dumps(c.to_dict()), without to_dict's deep copies (2x faster on ingest)
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_fields_of)


def encode_record(c: Citation) -> bytes:
    return zlib.compress(_ENCODER.encode(c).encode(), 1)


def decode_record(blob: bytes) -> Citation:
    return Citation.from_dict(json.loads(zlib.decompress(blob)))


def indexed_abstract(c: Citation) -> str:
    """The abstract as indexed: sections with their printed labels ("RESULTS: ..."), as the
    benchmark pools (../shared/data/bench) were indexed; '' when there is none."""
    return "\n\n".join(f"{s.label}: {s.text}" if s.label else s.text for s in c.abstract or ())


def prepare_citation(c: Citation) -> PreparedCitation:
    """What ``MedlineStore.write_prepared`` stores for ``c``, built where the record was parsed."""
    headings = tuple(
        (h.descriptor_ui, h.descriptor_name, int(h.is_major), int(h.major),
         tuple((q.ui, q.name, int(q.major)) for q in h.qualifiers))
        for h in c.mesh_headings or ()
    )  # fmt: skip
    return _citation_row(c), headings, tuple((p.ui, p.name) for p in c.publication_types or ())


def _citation_row(c: Citation) -> tuple[Any, ...]:
    mesh_names = "\n".join(h.descriptor_name for h in c.mesh_headings or ())
    return (
        c.pmid,
        c.year,
        sort_date(c.year, c.pub_date),
        c.language,
        int(c.has_abstract),
        int(bool(c.mesh_headings)),
        int(bool(c.publication_types)),
        c.source,
        c.title or "",
        indexed_abstract(c),
        mesh_names,
        encode_record(c),
    )
