"""The store at scale: ingest rate, size and search latency of a SYNTHETIC store of up to 1,000,000
citations (``synthetic_medline``: bundled records recombined under new PMIDs, shuffled sentences,
real MeSH; for timing only, no figure on it means anything else).

1. writes ``--n`` citations as gzip PubMed XML files of 30,000 (a baseline file's size);
2. ingests them with ``ebm.store.ingest.ingest_files`` (what ``ebm corpus ingest`` runs), against
   reference B of ingest_bench.py (plain FTS5 insert) timed on the first ``--ref-n`` citations in
   the same run;
3. store size per citation;
4. search latency, p50 / p95 over ``--repeat`` warm runs of each query, top 50, through
   ``MedlineStore.search_hits`` (translation, count, ranking): the benchmark's 23 ``pool_query``
   strings (../shared/data/bench/frames, the queries that built pools.run), and the field-tagged
   queries of store_bench.py ([mh] explosion, [majr], [pt], [dp], filters); reference: the pool
   queries as plain FTS5 MATCH with BM25 and LIMIT 50;
5. the same after ``MedlineStore.optimize()`` (FTS5 segments merged), with its time.

    nice python benchmarks/scale_bench.py [--n 1000000] [--workers N] [--dir DIR] [--repeat 5]
    python benchmarks/scale_bench.py --n 20000      # quick mode
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

from ingest_bench import measure, plain
from store_bench import TAGGED
from synthetic_medline import write_files

from ebm.store.ingest import ingest_files
from ebm.store.sqlite import ABSTRACT_WEIGHT, TITLE_WEIGHT, MedlineStore

ROOT = Path(__file__).resolve().parents[1]
FRAMES = ROOT.parent / "shared" / "data" / "bench" / "frames"


def latencies(fn, queries: list[str], repeat: int) -> list[float]:
    out = []
    for q in queries:
        fn(q)  # warm
        for _ in range(repeat):
            t = time.perf_counter()
            fn(q)
            out.append(time.perf_counter() - t)
    return out


def pct(values: list[float], p: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1] * 1000


def report(label: str, values: list[float]) -> None:
    print(
        f"  {label:58} p50 {pct(values, 50):8.1f} ms   p95 {pct(values, 95):8.1f} ms"
        f"   max {max(values) * 1000:8.1f} ms"
    )


def searches(path: Path, repeat: int) -> None:
    pool_queries = [json.loads(f.read_text())["pool_query"] for f in sorted(FRAMES.glob("*.json"))]
    fts_sql = (
        f"SELECT rowid, bm25(text_fts, {TITLE_WEIGHT}, {ABSTRACT_WEIGHT}) AS s FROM text_fts "
        "WHERE text_fts MATCH ? ORDER BY s LIMIT 50"
    )
    db = sqlite3.connect(path)
    with MedlineStore(path) as store:
        counts = [store.search_hits(q, limit=0).count for q in pool_queries]
        report(
            "reference: pool queries as plain FTS5 MATCH, BM25, top 50",
            latencies(lambda q: db.execute(fts_sql, (q,)).fetchall(), pool_queries, repeat),
        )
        report(
            f"{len(pool_queries)} pool queries, search_hits top 50",
            latencies(lambda q: store.search_hits(q, limit=50), pool_queries, repeat),
        )
        tagged = latencies(lambda q: store.search_hits(q, limit=50), TAGGED, repeat)
        report(f"{len(TAGGED)} field-tagged queries, search_hits top 50", tagged)
        per_query = [statistics.median(tagged[i * repeat : (i + 1) * repeat]) for i in range(len(TAGGED))]
        for ms_, q in sorted(zip(per_query, TAGGED, strict=True), reverse=True)[:3]:
            print(f"    slowest tagged: median {ms_ * 1000:8.1f} ms  {q[:90]}")
    db.close()
    print(
        f"  (pool queries match {min(counts):,} to {max(counts):,} citations,"
        f" median {statistics.median(counts):,.0f})"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--n", type=int, default=1_000_000, help="synthetic citations (1,000,000; 20000 for a quick run)"
    )
    ap.add_argument("--workers", type=int, help="parsing processes (default: one per CPU)")
    ap.add_argument(
        "--ref-n", type=int, default=60_000, help="citations of the plain FTS5 reference (60,000)"
    )
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per query (5)")
    ap.add_argument("--generate-only", action="store_true", help="write the files into --dir and stop")
    ap.add_argument(
        "--dir",
        help="keep the files (reused by a later run) and the store here (default: a temporary directory)",
    )
    args = ap.parse_args()

    print(f"python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}, {os.cpu_count()} CPUs")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.dir) if args.dir else Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        data = out / f"synthetic-{args.n}"
        done = data / "complete"
        if done.is_file():  # written by an earlier run with the same --n and --dir: same seed, same files
            files = [data / name for name in done.read_text().split()]
        else:
            data.mkdir(exist_ok=True)
            files = write_files(data, args.n)
            done.write_text("\n".join(f.name for f in files))
        print(
            f"SYNTHETIC input: {args.n:,} citations, {len(files)} gzip XML files "
            f"({sum(f.stat().st_size for f in files) / 1e6:,.0f} MB), "
            f"written in {time.perf_counter() - t:.0f} s"
        )
        if args.generate_only:
            return 0

        ref_files = list(islice(files, max(1, -(-min(args.n, args.ref_n) // 30_000))))
        n_ref, wall_ref, _, _ = measure(plain(out / "reference.sqlite", ref_files, fts=True))
        (out / "reference.sqlite").unlink()
        store_path = out / "scale.sqlite"
        store_path.unlink(missing_ok=True)

        def ingest() -> int:
            with MedlineStore(store_path) as store:
                return ingest_files(store, files, workers=args.workers).read

        n, wall, cpu, children = measure(ingest)
        print("\ningest")
        print(f"  reference B: plain FTS5 insert, {n_ref:,} citations   {n_ref / wall_ref:9,.0f} citations/s")
        print(
            f"  ingest_files, {n:,} citations              {n / wall:9,.0f} citations/s "
            f"({wall / 60:.1f} min; {(n_ref / wall_ref) / (n / wall):.2f}x reference B; CPU ms per citation: "
            f"writer {cpu / n * 1000:.3f}, workers {children / n * 1000:.3f})"
        )
        with sqlite3.connect(store_path) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = store_path.stat().st_size
        print(f"  store: {size / 1e9:.2f} GB, {size / n / 1024:.2f} KB per citation")

        print(f"\nsearch ({args.repeat} warm runs per query)")
        searches(store_path, args.repeat)
        t = time.perf_counter()
        with MedlineStore(store_path) as store:
            store.optimize()
        print(f"\nafter MedlineStore.optimize() ({time.perf_counter() - t:.0f} s)")
        searches(store_path, args.repeat)
        print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
