"""Ingest speed of PubMed XML distribution files, end to end (read, gunzip, parse, store with every
index), against plain SQLite inserts of the same citations measured in the same run.

Input: SYNTHETIC baseline-sized files (``synthetic_medline``: bundled records recombined under new
PMIDs, real MeSH, the author lists and PubmedData of real 2020/2026 baseline records; timing only).

- reference A: plain ``executemany`` of each citation's JSON into a table with no index (the floor
  of any SQLite store; JSON encoding timed, as in store_bench.py);
- reference B: plain FTS5 insert: the JSON row plus an FTS5 (porter) index of title and abstract,
  one transaction per 2,000 (what "a full-text store" costs at the least);
- the single-process path (``read_records`` -> ``MedlineStore.ingest``), and
- ``ebm.store.ingest.ingest_files`` (what ``ebm corpus ingest`` runs) with 0, 1, 2 ... workers.

For each: citations/s (wall), and CPU ms per citation of the writer (this process) and of the
parsing workers, from which the rate on more cores follows (printed). Other processes sharing
the cores slow the wall figures, not the CPU ones: the load average is printed before and after.

    python benchmarks/ingest_bench.py [--n 60000] [--workers 0,1,2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from synthetic_medline import real_bytes, write_files

from ebm.medline.reader import read_citations, read_records
from ebm.mesh import mesh as shipped_mesh
from ebm.store.ingest import CHUNK_SIZE, ingest_files
from ebm.store.sqlite import MedlineStore


def load() -> str:
    """The load averages (1, 5, 15 min), printed before and after the timings."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def measure(fn: Callable[[], int]) -> tuple[int, float, float, float]:
    """(citations, wall s, CPU s of this process, CPU s of child processes)."""
    t0, c0 = time.perf_counter(), os.times()
    n = fn()
    t1, c1 = time.perf_counter(), os.times()
    return (
        n,
        t1 - t0,
        (c1.user - c0.user) + (c1.system - c0.system),
        ((c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)),
    )


def plain(path: Path, files: list[Path], fts: bool) -> Callable[[], int]:
    citations = [c for f in files for c in read_citations(f)]  # parsed before timing

    def run() -> int:
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute(
            "CREATE TABLE c(id INTEGER PRIMARY KEY, pmid TEXT, title TEXT, abstract TEXT, record TEXT)"
        )
        if fts:
            db.execute(
                "CREATE VIRTUAL TABLE f USING fts5(title, abstract, content='c', content_rowid='id',"
                " tokenize='porter unicode61')"
            )
        for i in range(0, len(citations), CHUNK_SIZE):
            rows = [
                (i + k, c.pmid, c.title or "", c.abstract_text or "", json.dumps(c.to_dict()))
                for k, c in enumerate(citations[i : i + CHUNK_SIZE], 1)
            ]
            db.execute("BEGIN")
            db.executemany("INSERT INTO c VALUES (?,?,?,?,?)", rows)
            if fts:
                db.executemany(
                    "INSERT INTO f(rowid, title, abstract) VALUES (?,?,?)", [r[:1] + r[2:4] for r in rows]
                )
            db.execute("COMMIT")
        db.close()
        return len(citations)

    return run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--n", type=int, default=60_000, help="synthetic citations (60,000: two baseline-sized files)"
    )
    ap.add_argument("--per-file", type=int, default=30_000, help="citations per file (30,000, as PubMed's)")
    ap.add_argument("--workers", default="0,1,2", help="worker counts to time (0,1,2)")
    ap.add_argument(
        "--keep", metavar="DIR", help="write the files and stores here (default: a temporary dir)"
    )
    args = ap.parse_args()

    print(f"python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}, {os.cpu_count()} CPUs")
    print(f"load average before: {load()}")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.keep) if args.keep else Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        files = write_files(out, args.n, args.per_file)
        size = sum(f.stat().st_size for f in files)
        print(
            f"SYNTHETIC input: {args.n:,} citations in {len(files)} gzip XML files ({size / 1e6:.0f} MB), "
            f"written in {time.perf_counter() - t:.0f} s; real 2026 baseline records average "
            f"{real_bytes():,.0f} XML bytes"
        )

        runs: list[tuple[str, Callable[[], int]]] = [
            ("reference A: plain executemany of JSON, no index", plain(out / "a.sqlite", files, fts=False)),
            ("reference B: plain FTS5 insert (JSON row + FTS5)", plain(out / "b.sqlite", files, fts=True)),
        ]

        def serial() -> int:
            with MedlineStore(out / "serial.sqlite", vocabulary=shipped_mesh) as store:
                return store.ingest((r for f in files for r in read_records(f)), batch_size=CHUNK_SIZE).read

        runs.append(("single process: read_records -> MedlineStore.ingest", serial))
        for w in (int(x) for x in args.workers.split(",")):

            def parallel(w: int = w) -> int:
                with MedlineStore(out / f"parallel{w}.sqlite", vocabulary=shipped_mesh) as store:
                    return ingest_files(store, files, workers=w).read

            runs.append((f"ingest_files, {w} worker process{'es' if w != 1 else ''}", parallel))

        print(f"\n{'':54} {'citations/s':>12} {'vs B':>6} {'writer ms':>10} {'workers ms':>11}")
        ref_b = None
        for label, fn in runs:
            n, wall, cpu, children = measure(fn)
            rate = n / wall
            ref_b = rate if label.startswith("reference B") else ref_b
            vs = f"{ref_b / rate:5.2f}x" if ref_b and not label.startswith("reference") else ""
            print(f"{label:54} {rate:12,.0f} {vs:>6} {cpu / n * 1000:10.3f} {children / n * 1000:11.3f}")
        print(
            "\nwriter ms / workers ms: CPU milliseconds per citation in this process (reading, gunzip,"
            " cutting, SQLite) and in the parsing processes (XML, rows); the writer-bound ceiling is"
            " 1000 / writer ms citations/s, reached with enough cores for the workers."
        )
        print(f"load average after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
