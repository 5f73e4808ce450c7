"""The store's ranked search SQL (``_ranked_sql``) against a plain evaluation of the same query.

The plain evaluation takes the hit set from the translated query's SQL alone, the BM25 of every
citation matching its rank expression from one FTS5 query, and orders the hits in Python
exactly as documented (docs/store.md, "Ranking"): scored hits by BM25, equal scores and unscored
hits (after every scored one) newest first, then the higher PMID. ``search_hits`` must return
the same count, PMIDs, order and scores for real queries on the bundled store: the benchmark's
pool queries alone and ANDed with every Clinical Queries filter (rules/clinical_queries.tsv, as
``ebm ask`` sends them), and field-tagged queries ([mh], [majr], [pt], [dp], NOT, truncation).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from ebm.mesh import mesh as shipped_mesh
from ebm.rules.tables import load_clinical_queries
from ebm.store import MedlineStore
from ebm.store.sqlite import ABSTRACT_WEIGHT, TITLE_WEIGHT, Hit
from tests.test_store import bundled_store

ROOT = Path(__file__).resolve().parents[1]
FRAMES = ROOT.parent / "shared" / "data" / "bench" / "frames"

TAGGED = [
    '"febrile" AND ibuprofen[tiab]',
    "fever",
    "ibuprofen[ti]",
    "headache disorders[mh]",
    "humans[mh] AND asthma[majr] AND 2000:2016[dp]",
    '"cardiovascular diseases"[mh] AND randomized controlled trial[pt]',
    "(asthma OR wheezing) AND (child* OR infant*) AND hasabstract",
    "(depression[tiab] OR depressive disorder[mh]) NOT (animals[mh] NOT humans[mh])",
    "asthma[mh] AND child*",
    "fever NOT ibuprofen",
    "asthma/drug therapy[mh] OR wheez*[tiab]",
    "english[la] AND 2010:2020[dp] AND (otitis OR pharyngitis)",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MedlineStore]:
    """The bundled corpus (8,185 real citations) in a store, built as the default store is
    (shared: tests.test_store)."""
    yield from bundled_store(tmp_path_factory)


def pool_queries() -> list[str]:
    frames = sorted(FRAMES.glob("*.json"))
    assert len(frames) >= 20, f"benchmark frames missing in {FRAMES}"
    return [json.loads(f.read_text())["pool_query"] for f in frames]


def clinical_queries() -> list[str]:
    """Every Clinical Queries filter ANDed with a pool query, in both syntaxes the table holds."""
    table = load_clinical_queries(ROOT / "rules" / "clinical_queries.tsv")
    pools = pool_queries()
    out = []
    for i, row in enumerate(table.rows):
        for text in (row.pubmed, row.subset):
            out.append(f"({pools[i % len(pools)]}) AND ({text})")
    return out


def plain(store: MedlineStore, query: str, limit: int, sort: str) -> tuple[int, list[Hit]]:
    """The count and top ``limit`` hits, evaluated step by step without the ranked SQL."""
    q = store.translate(query)
    db = sqlite3.connect(store.path)
    try:
        ids = [r[0] for r in db.execute(f"SELECT id FROM ({q.sql})", q.params)]
        scores: dict[int, float] = {}
        if q.rank_match is not None and sort == "relevance":
            scores = dict(
                db.execute(
                    f"SELECT rowid, bm25(text_fts, {TITLE_WEIGHT}, {ABSTRACT_WEIGHT}) FROM text_fts"
                    " WHERE text_fts MATCH ?",
                    (q.rank_match,),
                )
            )
        rows = {
            cid: (pmid, date, year, title)
            for cid, pmid, date, year, title in db.execute(
                "SELECT id, pmid, sort_date, year, title FROM citations"
                " WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps(sorted(set(ids))),),
            )
        }
    finally:
        db.close()
    order = sorted(set(ids), key=lambda cid: -int(rows[cid][0]))  # higher PMID first
    order.sort(key=lambda cid: rows[cid][1] or "", reverse=True)  # newest first ...
    order.sort(key=lambda cid: rows[cid][1] is None)  # ... without a date last
    order.sort(key=lambda cid: (cid not in scores, scores.get(cid, 0.0)))  # best BM25 first
    hits = [
        Hit(rows[cid][0], -scores[cid] if cid in scores else None, rows[cid][2], rows[cid][3] or None)
        for cid in order[:limit]
    ]
    return len(ids), hits


def check(store: MedlineStore, query: str, limit: int, sort: str = "relevance") -> None:
    got = store.search_hits(query, limit=limit, sort=sort)
    count, hits = plain(store, query, limit, sort)
    assert got.count == count, query
    assert list(got.hits) == hits, query  # PMIDs, order, scores (exactly), year, title


@pytest.mark.parametrize("limit", [50, 7])
def test_pool_queries_rank_as_the_plain_evaluation(store: MedlineStore, limit: int) -> None:
    for query in pool_queries():
        check(store, query, limit)


def test_clinical_queries_filters_rank_as_the_plain_evaluation(store: MedlineStore) -> None:
    queries = clinical_queries()
    assert len(queries) >= 10
    for query in queries:
        check(store, query, 50)


@pytest.mark.parametrize("sort", ["relevance", "date"])
def test_field_tagged_queries_rank_as_the_plain_evaluation(store: MedlineStore, sort: str) -> None:
    for query in TAGGED:
        for limit in (1, 20, 10_000):
            check(store, query, limit, sort)


def test_unscored_hits_follow_the_scored_ones_newest_first(store: MedlineStore) -> None:
    # more hits than text-scored ones: the tail comes from [mh] alone, without a score
    query = "fever[tiab] OR asthma[mh]"
    got = store.search_hits(query, limit=10_000)
    scores = [h.score for h in got.hits]
    n = sum(s is not None for s in scores)
    assert 0 < n < len(scores) == got.count
    assert all(s is not None for s in scores[:n]) and all(s is None for s in scores[n:])
    check(store, query, n + 3)  # the limit cuts inside the unscored tail


def test_ties_at_the_limit_are_broken_by_date(store: MedlineStore) -> None:
    # equal BM25 scores across the limit: the cut must keep every tie, then order them by date
    for query in pool_queries() + TAGGED:
        got = store.search_hits(query, limit=10_000)
        scored = [h.score for h in got.hits if h.score is not None]
        for i in range(1, len(scored)):
            if scored[i] == scored[i - 1]:
                check(store, query, i)  # the limit falls between two equal scores
                return
    pytest.fail("no query with equal BM25 scores: the tie case is not exercised")


def test_count_only(store: MedlineStore) -> None:
    for query in TAGGED:
        assert store.search_hits(query, limit=0).count == plain(store, query, 0, "relevance")[0]
        assert store.search_hits(query, limit=0).hits == ()


def plan(store: MedlineStore, query: str) -> list[str]:
    from ebm.store.sqlite import _ranked_sql

    sql, params = _ranked_sql(store.translate(query), 50, "relevance")
    return [r[3] for r in store._db.execute("EXPLAIN QUERY PLAN " + sql, params)]


def test_hits_are_probed_through_an_index_not_scanned_per_row(store: MedlineStore) -> None:
    # the therapy Clinical Queries filter: its hits used to be LEFT JOINed to the materialised
    # BM25 table, which SQLite scanned once per hit (16 s at 60,000 citations, docs/scale.md)
    query = clinical_queries()[0]
    steps = plan(store, query)
    assert not [s for s in steps if "LEFT-JOIN" in s], steps
    assert any(s.startswith("LIST SUBQUERY") for s in steps)  # IN (SELECT id FROM hits)
    # field terms read citation ids from covering indexes
    assert any("COVERING INDEX headings_vid_cid" in s for s in plan(store, "asthma[mh] AND fever"))
    assert any("COVERING INDEX pubtypes_vid_cid" in s for s in plan(store, "fever AND review[pt]"))
    assert any("COVERING INDEX citations_abstract" in s for s in plan(store, "fever AND hasabstract"))


def test_optimize_gives_an_older_store_the_covering_indexes(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with MedlineStore(path, vocabulary=shipped_mesh) as s:  # made as before the covering indexes
        s._db.executescript(
            "DROP INDEX headings_vid_cid; DROP INDEX qualifiers_vid_cid; DROP INDEX pubtypes_vid_cid;"
            " DROP INDEX citations_abstract; CREATE INDEX headings_vid ON headings(vid, major);"
            " CREATE INDEX qualifiers_vid ON qualifiers(vid); CREATE INDEX pubtypes_vid ON pubtypes(vid);"
        )
    with MedlineStore(path, vocabulary=shipped_mesh) as s:
        s.optimize()
        names = {r[0] for r in s._db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"headings_vid_cid", "qualifiers_vid_cid", "pubtypes_vid_cid", "citations_abstract"} <= names
    assert not names & {"headings_vid", "qualifiers_vid", "pubtypes_vid"}
