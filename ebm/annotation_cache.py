"""An on-disk cache of annotated citations, so a question asked again is answered fast.

Annotating a citation (text pipeline, concepts, every extractor) is the slow step of
``ebm ask``; its result depends only on the citation and on the annotator's configuration.
Entries are keyed by PMID and an annotator *version*: a digest of everything that can change
an annotation (the ebm version, the source of the text/concept/extractor code, and
``Resources.digest`` of the annotation's consumers: exactly the rule tables the matcher,
negation and extractors read, the concept index's build metadata and the models). Each entry also
stores a digest of the citation it was made from, so a re-ingested, changed record is
annotated again. A version change simply misses: stale entries are never read, and
``prune()`` drops them.

Storage: one SQLite file in the data directory (``annotations.sqlite``), pickled and
zlib-compressed ``Annotation`` objects. Pickle is read back only from this file, which ebm
itself writes in the user's own data directory.
"""

from __future__ import annotations

import functools
import hashlib
import json
import pickle
import sqlite3
import threading
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

import ebm
from ebm.citation import Citation
from ebm.errors import DataError
from ebm.paths import data_dir
from ebm.resources import Resources
from ebm.rules.registry import ANNOTATION
from extractors.annotate import Annotation

CACHE_FILE = "annotations.sqlite"
# Code whose change can change an annotation: its source is part of the version.
_CODE_PACKAGES = ("ebm.text", "ebm.concepts", "extractors")


def default_cache_path() -> Path:
    return data_dir() / CACHE_FILE


def citation_digest(citation: Citation) -> str:
    data = json.dumps(citation.to_dict(), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:32]


@functools.cache
def code_digest() -> str:
    """The digest of the annotating code, read once per process: the code this process runs
    was imported at start-up, so later edits on disk must not change its version."""
    import importlib

    h = hashlib.sha256()
    for name in _CODE_PACKAGES:
        pkg = importlib.import_module(name)
        for path in sorted(Path(p) for p in pkg.__path__):
            for f in sorted(path.glob("*.py")):
                h.update(f.name.encode())
                h.update(f.read_bytes())
    return h.hexdigest()


def annotation_version(resources: Resources) -> str:
    """A digest of everything an annotation depends on besides the citation: the ebm version,
    the annotating code, and exactly the resources an ``Annotator`` reads
    (``Resources.digest(ANNOTATION)``: the matcher's, negation's and extractors' tables, the
    models and the index), so editing a scoring or query table keeps the cache, editing an
    extractor table does not. Needs no text pipeline loaded."""
    h = hashlib.sha256()
    h.update(f"ebm {ebm.__version__}".encode())
    h.update(code_digest().encode())
    h.update(resources.digest(ANNOTATION).encode())
    return h.hexdigest()[:32]


class AnnotationCache:
    """Annotations on disk, keyed by (PMID, annotator version). One cache may serve several
    threads (a web server's): its connection is shared under a lock."""

    def __init__(self, path: Path, version: str) -> None:
        self.path = Path(path)
        self.version = version
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS annotations ("
                " pmid TEXT NOT NULL, version TEXT NOT NULL, digest TEXT NOT NULL, data BLOB NOT NULL,"
                " PRIMARY KEY (pmid, version))"
            )
            self._db.commit()
        except (sqlite3.Error, OSError) as exc:
            raise DataError(
                f"annotation cache {self.path}: {exc} (run with --no-cache to go without)"
            ) from exc
        self.hits = 0
        self.misses = 0

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> AnnotationCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_many(self, citations: Sequence[Citation]) -> dict[str, Annotation]:
        """The cached annotations of ``citations`` that are current (PMID -> annotation)."""
        if not citations:
            return {}
        wanted = {c.pmid: citation_digest(c) for c in citations}
        out: dict[str, Annotation] = {}
        pmids = list(wanted)
        for i in range(0, len(pmids), 500):
            chunk = pmids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            try:
                with self._lock:
                    rows = self._db.execute(
                        f"SELECT pmid, digest, data FROM annotations WHERE version = ? AND pmid IN ({marks})",
                        (self.version, *chunk),
                    ).fetchall()
            except sqlite3.Error as exc:
                raise self._error(exc) from exc
            for pmid, digest, data in rows:
                if digest != wanted[pmid]:
                    continue
                try:
                    out[pmid] = pickle.loads(zlib.decompress(data))
                except Exception:  # a damaged or foreign entry: annotate again
                    continue
        self.hits += len(out)
        self.misses += len(wanted) - len(out)
        return out

    def put_many(self, annotations: Iterable[Annotation]) -> None:
        rows = []
        for a in annotations:
            # The document's memo holds derived, rebuildable data only.
            slim = replace(a, document=replace(a.document, cache={}))
            blob = zlib.compress(pickle.dumps(slim, protocol=pickle.HIGHEST_PROTOCOL), 6)
            rows.append((a.citation.pmid, self.version, citation_digest(a.citation), blob))
        if not rows:
            return
        try:
            with self._lock, self._db:
                self._db.executemany("INSERT OR REPLACE INTO annotations VALUES (?, ?, ?, ?)", rows)
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def _error(self, exc: Exception) -> DataError:
        return DataError(f"annotation cache {self.path}: {exc} (delete the file, or run with --no-cache)")

    def prune(self) -> int:
        """Drop the entries of other annotator versions; the number dropped."""
        with self._lock, self._db:
            cur = self._db.execute("DELETE FROM annotations WHERE version != ?", (self.version,))
        return cur.rowcount

    def __len__(self) -> int:
        return int(
            self._db.execute(
                "SELECT COUNT(*) FROM annotations WHERE version = ?", (self.version,)
            ).fetchone()[0]
        )
