"""Annotations stored in the MEDLINE store, and the PICO index over them (issue 17).

``ebm corpus annotate`` annotates every citation once; ``ebm ask``/``ebm bench`` then read the
stored ``Annotation`` instead of running the text pipeline at question time. Rows are keyed by
(citation id, annotation version): the version is ``ebm.annotation_cache.annotation_version``,
a digest of the ebm version, the annotating code and ``Resources.digest(ANNOTATION)`` (exactly
the tables, models and concept index an ``Annotator`` reads), so an edited extractor table or a
new release simply misses and ``ebm corpus annotate`` fills the gap. A citation replaced or
deleted at ingest loses its annotations with it (``MedlineStore._delete``).

Serialisation (``FORMAT`` 1): the ``Annotation`` dataclass tree as JSON, zlib-compressed. Each
record is ``{"@": "module.Class", "v": [field values in declaration order]}``; tuples, sets and
dicts are tagged so the round trip is exact (``decode(encode(a)) == a``). The citation itself
is not stored (it is the store's row) and a token's text is dropped when it is the document's
text at its offsets (it always is, but it is checked). Only classes of the ``ebm`` and
``extractors`` packages are rebuilt, never arbitrary code (unlike pickle).

The PICO index: for each (citation, version) the MeSH UIs of its problems, interventions and
population (``pico_terms``), and its design (``extractors.design``), sample size and evidence
grade (``pico_labels``); ``ebm.store.query`` turns ``Fever[problem]``, ``Ibuprofen[intervention]``,
``children[population]``, ``rct[design]`` and ``A[grade]`` into lookups there.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import sqlite3
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ebm.citation import Citation
from ebm.errors import DataError

if TYPE_CHECKING:
    from ebm.resources import Resources
    from extractors.annotate import Annotation

__all__ = [
    "FORMAT",
    "PICO_ELEMENTS",
    "Compact",
    "compact",
    "decode",
    "encode",
    "ensure_tables",
    "get_many",
    "missing_ids",
    "put_many",
]

FORMAT = 1
PICO_ELEMENTS = ("problem", "intervention", "population")
# the META key naming the version the PICO fields of ``ebm corpus search`` read
META_VERSION = "annotation_version"

SCHEMA = """
CREATE TABLE IF NOT EXISTS annotations(
    cid INTEGER NOT NULL, version TEXT NOT NULL, format INTEGER NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY (cid, version)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pico_terms(
    version TEXT NOT NULL, element TEXT NOT NULL, ui TEXT NOT NULL, cid INTEGER NOT NULL,
    PRIMARY KEY (version, element, ui, cid)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS pico_terms_cid ON pico_terms(cid);
CREATE TABLE IF NOT EXISTS pico_labels(
    cid INTEGER NOT NULL, version TEXT NOT NULL, design TEXT, grade TEXT, sample_size INTEGER,
    PRIMARY KEY (cid, version)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS pico_labels_design ON pico_labels(version, design);
CREATE INDEX IF NOT EXISTS pico_labels_grade ON pico_labels(version, grade);
"""
TABLES = ("annotations", "pico_terms", "pico_labels")


def ensure_tables(db: sqlite3.Connection) -> None:
    """Create the annotation tables in a store that lacks them (additive: old stores open)."""
    for statement in SCHEMA.strip().split(";"):
        if statement.strip():
            db.execute(statement)


# ---------------------------------------------------------------------------- codec

_ALLOWED = ("ebm.", "extractors.")
_CLASSES: dict[str, type] = {}


def _class(name: str) -> type:
    found = _CLASSES.get(name)
    if found is None:
        module, _, qual = name.rpartition(".")
        if not module.startswith(_ALLOWED):
            raise DataError(f"stored annotation names a foreign class {name!r}")
        found = getattr(importlib.import_module(module), qual)
        if not isinstance(found, type):
            raise DataError(f"stored annotation names {name!r}, not a class")
        _CLASSES[name] = found
    return found


def _enc(x: Any) -> Any:
    if x is None or isinstance(x, (str, bool, int, float)):
        return x
    if isinstance(x, list):
        return [_enc(v) for v in x]
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        t = type(x)
        values = [_enc(getattr(x, f.name)) for f in dataclasses.fields(x) if f.compare]
        return {"@": f"{t.__module__}.{t.__qualname__}", "v": values}
    if isinstance(x, tuple):
        if hasattr(x, "_fields"):  # a NamedTuple
            nt = type(x)
            return {"@": f"{nt.__module__}.{nt.__qualname__}", "v": [_enc(v) for v in x]}
        return {"t": [_enc(v) for v in x]}
    if isinstance(x, dict):
        return {"d": [[_enc(k), _enc(v)] for k, v in x.items()]}
    if isinstance(x, (set, frozenset)):
        return {"s": [_enc(v) for v in sorted(x, key=repr)], "f": isinstance(x, frozenset)}
    if hasattr(x, "item"):  # a numpy scalar
        return x.item()
    raise TypeError(f"cannot store a {type(x).__name__} in an annotation")


_BUILDERS: dict[str, Any] = {}


def _builder(name: str) -> Any:
    """A callable taking a stored record's values in order (positional: decoding is the warm
    ``ebm ask``'s cost, so field names are looked up once per class)."""
    found = _BUILDERS.get(name)
    if found is None:
        t = _class(name)
        if dataclasses.is_dataclass(t):
            names = [f.name for f in dataclasses.fields(t) if f.compare]
            init = [f.name for f in dataclasses.fields(t) if f.init]
            if init[: len(names)] == names:
                found = t
            else:  # compared fields are not the first ones of __init__: by name

                def found(*values: Any, _t: Any = t, _names: list[str] = names) -> Any:
                    return _t(**dict(zip(_names, values, strict=True)))

        else:
            found = t
        _BUILDERS[name] = found
    return found


def _dec(x: Any) -> Any:
    tx = type(x)
    if tx is list:
        return [_dec(v) for v in x]
    if tx is not dict:
        return x
    if "@" in x:
        return _builder(x["@"])(*[_dec(v) for v in x["v"]])
    if "t" in x:
        return tuple([_dec(v) for v in x["t"]])
    if "d" in x:
        return {_dec(k): _dec(v) for k, v in x["d"]}
    if "s" in x:
        items = [_dec(v) for v in x["s"]]
        return frozenset(items) if x["f"] else set(items)
    raise DataError(f"stored annotation has an unknown record {sorted(x)}")


def encode(a: Annotation) -> bytes:
    """``a`` as compact bytes, without its citation (the store's row) or token texts."""
    doc = a.document
    tokens = [[t.start, t.end, t.sentence] + ([] if doc.text[t.start : t.end] == t.text else [t.text])
              for t in doc.tokens]  # fmt: skip
    slim_doc = dataclasses.replace(doc, tokens=[], cache={})
    body = {
        "document": _enc(slim_doc),
        "tokens": tokens,
        **{
            f.name: _enc(getattr(a, f.name))
            for f in dataclasses.fields(a)
            if f.name not in ("citation", "document")
        },
    }
    return zlib.compress(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode(), 6)


def decode(blob: bytes, citation: Citation) -> Annotation:
    """The ``Annotation`` ``encode`` stored, with ``citation`` put back."""
    from ebm.text.document import Token
    from extractors.annotate import Annotation

    body = json.loads(zlib.decompress(blob))
    doc = _dec(body.pop("document"))
    text = doc.text
    doc.tokens = [
        Token(t[0], t[1], t[3] if len(t) > 3 else text[t[0] : t[1]], t[2]) for t in body.pop("tokens")
    ]
    return Annotation(citation=citation, document=doc, **{k: _dec(v) for k, v in body.items()})


# ---------------------------------------------------------------------------- rows


@dataclass(frozen=True)
class Compact:
    """What a worker returns for one citation: the stored bytes and the PICO index entries."""

    pmid: str
    data: bytes | None  # None: the text could not be processed (``error`` says why)
    terms: tuple[tuple[str, str], ...] = ()  # (element, MeSH UI)
    design: str | None = None
    grade: str | None = None
    sample_size: int | None = None
    error: str | None = None


def compact(a: Annotation, design: str | None, sample_size: int | None) -> Compact:
    """The stored form of ``a`` with its index entries: every problem and intervention and the
    first three population candidates (``Annotation.to_dict`` shows three too)."""
    terms: set[tuple[str, str]] = set()
    for element, cands in (("problem", a.problems), ("intervention", a.interventions),
                           ("population", a.population[:3])):  # fmt: skip
        terms.update((element, ui) for c in cands for ui in c.concepts)
    return Compact(a.citation.pmid, encode(a), tuple(sorted(terms)), design, a.evidence.grade, sample_size)


def put_many(db: sqlite3.Connection, version: str, items: Sequence[Compact]) -> int:
    """Store ``items`` (one transaction, by the caller); returns how many were stored. Items
    whose citation is no longer in the store are skipped (deleted meanwhile)."""
    ids = dict(
        db.execute(
            "SELECT pmid, id FROM citations WHERE pmid IN (SELECT value FROM json_each(?))",
            (json.dumps([i.pmid for i in items]),),
        ).fetchall()
    )
    rows: list[tuple[Any, ...]] = []
    terms: list[tuple[Any, ...]] = []
    labels: list[tuple[Any, ...]] = []
    for item in items:
        cid = ids.get(item.pmid)
        if cid is None or item.data is None:
            continue
        rows.append((cid, version, FORMAT, item.data))
        terms.extend((version, element, ui, cid) for element, ui in item.terms)
        labels.append((cid, version, item.design, item.grade, item.sample_size))
    db.executemany("INSERT OR REPLACE INTO annotations VALUES (?,?,?,?)", rows)
    db.executemany("INSERT OR IGNORE INTO pico_terms VALUES (?,?,?,?)", terms)
    db.executemany("INSERT OR REPLACE INTO pico_labels VALUES (?,?,?,?,?)", labels)
    return len(rows)


def get_many(db: sqlite3.Connection, version: str, citations: Sequence[Citation]) -> dict[str, Annotation]:
    """The stored annotations of ``citations`` for ``version`` (PMID -> annotation)."""
    if not citations:
        return {}
    by_pmid = {c.pmid: c for c in citations}
    rows = db.execute(
        "SELECT c.pmid, a.format, a.data FROM citations c JOIN annotations a ON a.cid = c.id"
        " WHERE a.version = ? AND c.pmid IN (SELECT value FROM json_each(?))",
        (version, json.dumps(list(by_pmid))),
    ).fetchall()
    return {pmid: decode(data, by_pmid[pmid]) for pmid, fmt, data in rows if fmt == FORMAT}


def missing_ids(db: sqlite3.Connection, version: str, since: str | None = None) -> list[str]:
    """PMIDs of the stored citations without an annotation of ``version`` (in store order),
    only those published on or after ``since`` (YYYY[-MM[-DD]]) when given."""
    sql = (
        "SELECT pmid FROM citations c WHERE NOT EXISTS"
        " (SELECT 1 FROM annotations a WHERE a.cid = c.id AND a.version = ?)"
    )
    params: list[object] = [version]
    if since:
        sql += " AND c.sort_date >= ?"
        params.append(since)
    return [r[0] for r in db.execute(sql + " ORDER BY c.id", params)]


def count(db: sqlite3.Connection, version: str) -> int:
    return int(db.execute("SELECT count(*) FROM annotations WHERE version = ?", (version,)).fetchone()[0])


def batches(items: Sequence[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield list(items[i : i + size])


def delete_for(db: sqlite3.Connection, ids_json: str) -> None:
    """Drop the annotations of citations (ids as a JSON list) being deleted or replaced."""
    these = "IN (SELECT value FROM json_each(?))"
    for table in TABLES:
        db.execute(f"DELETE FROM {table} WHERE cid {these}", (ids_json,))


# ---------------------------------------------------------------------------- ebm ask's hook


@functools.lru_cache(maxsize=8)
def _version(resources: Resources) -> str:
    from ebm.annotation_cache import annotation_version

    return annotation_version(resources)


def stored_for(source: object, resources: Resources, citations: Sequence[Citation]) -> dict[str, Annotation]:
    """The annotations ``ebm corpus annotate`` stored for ``citations`` with exactly the
    version ``resources`` would annotate with (PMID -> annotation); empty for a source that
    stores none (PubMed). ``ebm ask``/``ebm bench`` read these before annotating."""
    get = getattr(source, "stored_annotations", None)
    if get is None or not citations:
        return {}
    found: dict[str, Annotation] = get(_version(resources), citations)
    return found
