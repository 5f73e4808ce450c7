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
    python benchmarks/scale_bench.py --n 60000 --dir D --search-only   # searches on D's store again
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
from collections.abc import Callable
from itertools import islice
from pathlib import Path

from ingest_bench import load, measure, plain
from store_bench import TAGGED
from synthetic_medline import write_files

from ebm.errors import EbmError
from ebm.mesh import mesh as shipped_mesh
from ebm.store.ingest import ingest_files
from ebm.store.sqlite import ABSTRACT_WEIGHT, TITLE_WEIGHT, MedlineStore

ROOT = Path(__file__).resolve().parents[1]
FRAMES = ROOT.parent / "shared" / "data" / "bench" / "frames"


class Budget:
    """Interrupts a query past ``seconds`` (SQLite progress handler): a query the store cannot
    answer in time is reported as such instead of stalling the benchmark."""

    def __init__(self, db: sqlite3.Connection, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = float("inf")
        db.set_progress_handler(lambda: int(time.perf_counter() > self.deadline), 10_000)

    def call(self, fn: Callable[[], object]) -> float | None:
        """Wall seconds of ``fn()``, or None if it ran out of time."""
        t = time.perf_counter()
        self.deadline = t + self.seconds
        try:
            fn()
        except (sqlite3.OperationalError, EbmError) as exc:
            if "interrupt" not in str(exc):
                raise
            return None
        finally:
            self.deadline = float("inf")
        return time.perf_counter() - t


def latencies(
    budget: Budget, fn: Callable[[str], object], queries: list[str], repeat: int
) -> list[list[float]]:
    """Per query, the times of ``repeat`` warm runs (one if the warm-up took over a second; none if it
    ran out of time)."""
    out = []
    for q in queries:
        warm = budget.call(lambda q=q: fn(q))
        times: list[float] = []
        for _ in range(0 if warm is None else 1 if warm > 1 else repeat):
            t = budget.call(lambda q=q: fn(q))
            if t is None:
                break
            times.append(t)
        out.append(times)
    return out


def pct(values: list[float], p: float) -> float:
    return (
        statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1] * 1000
        if len(values) > 1
        else values[0] * 1000
    )


def report(label: str, per_query: list[list[float]], queries: list[str], budget: float) -> None:
    values = [t for ts in per_query for t in ts]
    late = sum(not ts for ts in per_query)
    if not values:
        print(f"  {label:58} every query over {budget:.0f} s")
        return
    note = (
        f"   ({late} of {len(per_query)} queries over {budget:.0f} s, left out: p95 is a lower bound)"
        if late
        else ""
    )
    print(
        f"  {label:58} p50 {pct(values, 50):8.1f} ms   p95 {pct(values, 95):8.1f} ms"
        f"   max {max(values) * 1000:8.1f} ms{note}"
    )


def searches(path: Path, repeat: int, seconds: float) -> None:
    pool_queries = [json.loads(f.read_text())["pool_query"] for f in sorted(FRAMES.glob("*.json"))]
    fts_sql = (
        f"SELECT rowid, bm25(text_fts, {TITLE_WEIGHT}, {ABSTRACT_WEIGHT}) AS s FROM text_fts "
        "WHERE text_fts MATCH ? ORDER BY s LIMIT 50"
    )
    db = sqlite3.connect(path)
    with MedlineStore(path, vocabulary=shipped_mesh) as store:
        budget = Budget(store._db, seconds)  # the benchmark's only reach into the store's connection
        plain_budget = Budget(db, seconds)
        report(
            "reference: pool queries as plain FTS5 MATCH, BM25, top 50",
            latencies(plain_budget, lambda q: db.execute(fts_sql, (q,)).fetchall(), pool_queries, repeat),
            pool_queries,
            seconds,
        )
        pool = latencies(budget, lambda q: store.search_hits(q, limit=50), pool_queries, repeat)
        report(f"{len(pool_queries)} pool queries, search_hits top 50", pool, pool_queries, seconds)
        tagged = latencies(budget, lambda q: store.search_hits(q, limit=50), TAGGED, repeat)
        report(f"{len(TAGGED)} field-tagged queries, search_hits top 50", tagged, TAGGED, seconds)
        for ts, q in zip(tagged, TAGGED, strict=True):
            shown = f"median {statistics.median(ts) * 1000:9.1f} ms" if ts else f"over {seconds:.0f} s       "
            print(f"    {shown}  {q[:100]}")
        counts = []
        for q in pool_queries:
            budget.deadline = float("inf")
            counts.append(store.search_hits(q, limit=0).count)
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
    ap.add_argument("--budget", type=float, default=30.0, help="seconds a query may take (30)")
    ap.add_argument("--generate-only", action="store_true", help="write the files into --dir and stop")
    ap.add_argument(
        "--search-only",
        action="store_true",
        help="only time the searches, on the store an earlier run left in --dir (same data, new code)",
    )
    ap.add_argument(
        "--dir",
        help="keep the files (reused by a later run) and the store here (default: a temporary directory)",
    )
    args = ap.parse_args()

    print(f"python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}, {os.cpu_count()} CPUs")
    print(f"load average before: {load()}")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.dir) if args.dir else Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        if args.search_only:
            kept = out / "scale.sqlite"
            if not args.dir or not kept.is_file():
                print(f"--search-only needs --dir with the store of an earlier run ({kept})", file=sys.stderr)
                return 2
            with MedlineStore(kept, vocabulary=shipped_mesh) as store:
                print(f"store {kept}: {len(store):,} citations (search only)")
            print(f"\nsearch ({args.repeat} warm runs per query)")
            searches(kept, args.repeat, args.budget)
            print(f"\nload average after: {load()}")
            return 0
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
            with MedlineStore(store_path, vocabulary=shipped_mesh) as store:
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
        searches(store_path, args.repeat, args.budget)
        t = time.perf_counter()
        with MedlineStore(store_path, vocabulary=shipped_mesh) as store:
            store.optimize()
        print(f"\nafter MedlineStore.optimize() ({time.perf_counter() - t:.0f} s)")
        searches(store_path, args.repeat, args.budget)
        print(f"\nload average after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
