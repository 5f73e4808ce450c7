"""Write the bench's baseline runs (pool order, date order) and print their evaluation tables.

Date order is PubMed's classic order on the fixed pools: newest year first, unknown years last,
pool order within a year; years come from the bundled corpus. The printed figures reproduce the
baselines published in ../shared/data/bench/README.md.

    python scripts/bench_baselines.py [--bench ../shared/data/bench] [--out runs/]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ebm.evaluation.baselines import date_order, pool_order
from ebm.evaluation.report import build_report
from ebm.evaluation.tasks import read_frames, tasks_by_query
from ebm.evaluation.trec import read_qrels, read_run, write_run
from ebm.medline.bundled import iter_bundled

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", type=Path, default=ROOT.parent / "shared" / "data" / "bench")
    parser.add_argument("--out", type=Path, help="directory to write pool.run and date.run into")
    args = parser.parse_args()
    qrels = read_qrels(args.bench / "qrels.txt")
    pool_file = read_run(args.bench / "pools.run")
    pooled = {d.docno for docs in pool_file.results.values() for d in docs}
    years = {c.pmid: c.year for c in iter_bundled() if c.pmid in pooled}
    runs = [pool_order(pool_file, "pool"), date_order(pool_file, years, "date")]
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        for run in runs:
            write_run(args.out / f"{run.name}.run", run)
    tasks = tasks_by_query(read_frames(args.bench / "frames"), qrels)
    for threshold in (2, 3):
        report = build_report(qrels, runs, threshold, tasks=tasks, qrels_path=args.bench / "qrels.txt")
        print(report.to_text())


if __name__ == "__main__":
    main()
