"""Speed of the local MEDLINE store on the bundled corpus, each figure against a reference
measured in the same run.

- Ingest rate (citations/s) of ``MedlineStore.ingest`` (batches of 1000, WAL, all indexes), and
  of the bulk build that creates the default store, against a plain ``executemany`` of the same
  citations as JSON into a table with no index at all (the floor of any SQLite store).
- End-to-end ingest of a real PubMed XML file (reader + store).
- Search latency over a query set: the 23 benchmark ``pool_query`` strings through
  ``MedlineStore.search_hits`` (PubMed syntax, translation, count, ranking, top 50) against the
  same strings sent straight to FTS5 ``MATCH`` with BM25 and LIMIT 50 (no translation, no count);
  and field-tagged PubMed queries (MeSH explosion, publication types, filters), whose
  reference is the translation alone and the plain-FTS time of their text part.

    python benchmarks/store_bench.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_timing import call_times

from ebm.medline.bundled import iter_bundled
from ebm.medline.reader import read_citations
from ebm.mesh import mesh as shipped_mesh
from ebm.store.default import build_default_store
from ebm.store.sqlite import ABSTRACT_WEIGHT, TITLE_WEIGHT, MedlineStore

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"

TAGGED = [
    '"febrile" AND ibuprofen[tiab]',
    "headache disorders[mh]",
    "humans[mh] AND asthma[majr] AND 2000:2016[dp]",
    '"cardiovascular diseases"[mh] AND randomized controlled trial[pt]',
    "(asthma OR wheezing) AND (child* OR infant*) AND hasabstract",
    # a Clinical Queries filter (therapy, broad) ANDed with a topic, as ebm ask sends them
    "(hypertension[mh] OR hypertension[tiab]) AND ((clinical[Title/Abstract] AND trial[Title/Abstract]) "
    "OR clinical trials as topic[MeSH Terms] OR clinical trial[Publication Type] OR random*[Title/Abstract] "
    "OR random allocation[MeSH Terms] OR therapeutic use[MeSH Subheading])",
    "(diabetes mellitus[mh] OR diabetes[tiab]) AND (sensitiv*[Title/Abstract] OR sensitivity and "
    "specificity[MeSH Terms] OR diagnos*[Title/Abstract] OR diagnosis[MeSH:noexp])",
    "(depression[tiab] OR depressive disorder[mh]) NOT (animals[mh] NOT humans[mh])",
]


def timed(fn, repeat: int) -> list[float]:
    return call_times(fn, repeat, warm=True)  # warm: page cache, MeSH vocabulary, statement cache


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:7.2f} ms  max {max(values) * 1000:7.2f} ms"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per query (after one warm-up)")
    args = ap.parse_args()

    citations = list(iter_bundled())
    n = len(citations)
    print(
        f"bundled corpus: {n:,} citations; python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)

        # ---- ingest
        plain = sqlite3.connect(tmpdir / "plain.sqlite", isolation_level=None)
        plain.execute("PRAGMA journal_mode = WAL")
        plain.execute("CREATE TABLE c(pmid TEXT, record TEXT)")
        t = time.perf_counter()
        rows = [(c.pmid, json.dumps(c.to_dict())) for c in citations]
        for i in range(0, n, 1000):
            plain.execute("BEGIN")
            plain.executemany("INSERT INTO c VALUES (?, ?)", rows[i : i + 1000])
            plain.execute("COMMIT")
        ref = time.perf_counter() - t
        plain.close()

        t = time.perf_counter()
        with MedlineStore(tmpdir / "store.sqlite", vocabulary=shipped_mesh) as s:
            s.ingest(citations, batch_size=1000)
        store_s = time.perf_counter() - t

        t = time.perf_counter()
        build_default_store(tmpdir / "default.sqlite", quiet=True, vocabulary=shipped_mesh)
        build_s = time.perf_counter() - t  # includes reading the bundle (gzip JSON lines)

        medline = SHARED / "medline" / "medline16n0902.xml.gz"
        xml_n = sum(1 for _ in read_citations(medline))
        t = time.perf_counter()
        with MedlineStore(tmpdir / "xml.sqlite", vocabulary=shipped_mesh) as s:
            s.ingest(read_citations(medline))
        xml_s = time.perf_counter() - t

        print("\ningest")
        for label, count, secs in [
            ("reference: plain executemany of JSON, no index", n, ref),
            ("MedlineStore.ingest, batches of 1000 (WAL)", n, store_s),
            ("default store build from the bundle (bulk mode)", n, build_s),
            (f"XML file end to end ({medline.name})", xml_n, xml_s),
        ]:
            print(f"  {label:<50} {count / secs:9,.0f} citations/s ({count:,} in {secs:.2f} s)")
        size = (tmpdir / "default.sqlite").stat().st_size
        print(f"  store file: {size / 1e6:.1f} MB")

        # ---- search
        store = MedlineStore(tmpdir / "default.sqlite", vocabulary=shipped_mesh)
        db = sqlite3.connect(tmpdir / "default.sqlite")
        frames = sorted((SHARED / "bench" / "frames").glob("*.json"))
        pool_queries = [json.loads(f.read_text())["pool_query"] for f in frames]
        fts_sql = (
            f"SELECT rowid, bm25(text_fts, {TITLE_WEIGHT}, {ABSTRACT_WEIGHT}) AS s FROM text_fts "
            "WHERE text_fts MATCH ? ORDER BY s LIMIT 50"
        )
        mine, ref_t = [], []
        for q in pool_queries:
            mine += timed(lambda q=q: store.search_hits(q, limit=50), args.repeat)
            ref_t += timed(lambda q=q: db.execute(fts_sql, (q,)).fetchall(), args.repeat)
        print(f"\nsearch, {len(pool_queries)} benchmark pool queries (OR of words and phrases), top 50")
        print(f"  reference: the same strings as plain FTS5 MATCH   {ms(ref_t)}")
        print(f"  MedlineStore.search_hits (translate+count+rank)   {ms(mine)}")

        tr, sr, rank_only = [], [], []
        for q in TAGGED:
            tr += timed(lambda q=q: store.translate(q), args.repeat)
            sr += timed(lambda q=q: store.search_hits(q, limit=50), args.repeat)
            rank = store.translate(q).rank_match
            if rank:
                rank_only += timed(lambda r=rank: db.execute(fts_sql, (r,)).fetchall(), args.repeat)
        print(f"\nsearch, {len(TAGGED)} field-tagged PubMed queries ([mh] explosion, [pt], filters), top 50")
        print(f"  reference: plain FTS5 MATCH of their text terms   {ms(rank_only)}")
        print(f"  translation alone                                 {ms(tr)}")
        print(f"  MedlineStore.search_hits                          {ms(sr)}")
        store.close()
        db.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
