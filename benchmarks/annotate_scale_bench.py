"""Annotation at scale (issue 17): ``ebm corpus annotate`` throughput on 1 and 2 Dask workers,
peak memory per worker, stored size per citation, and warm ``ebm ask`` latency with stored
annotations, each against a reference measured in the same run.

1. reference: one process annotating ``--n`` bundled citations in a loop (``Annotator``, no
   Dask, no store writes): citations/s;
2. ``annotate_store`` on a loopback ``LocalCluster`` of 1, then 2 worker processes over a store
   of the same ``--n`` citations. Workers are warmed first (one batch each: spaCy, the concept
   index and the models load once per process), then the timed run annotates the rest and the
   client stores every batch: citations/s, speed-up of 2 over 1, peak RSS of each worker
   (``ru_maxrss``), bytes stored per citation (annotation + PICO index, from the file size);
3. the writer alone: annotation rows stored per second by the one client process;
4. warm ``ebm ask`` with 50 candidates on the bundled store (8,185 citations) for ``--questions``
   frames, median of ``--repeat`` runs: with the candidates' annotations stored (the ask reads
   them), and the reference: the same question annotating at question time (no cache).

    nice python benchmarks/annotate_scale_bench.py [--n 400] [--questions 3] [--repeat 3]

The machine is shared: the load average is printed before and after, since another process on
the 2 cores lowers the 2-worker figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from ebm.annotation_cache import annotation_version
from ebm.ask import AskConfig, Pipeline
from ebm.frame import frame_from_args
from ebm.medline.bundled import iter_bundled
from ebm.mesh import mesh as shipped_mesh
from ebm.resources import Resources
from ebm.store.annotate_dask import annotate_store, local_cluster, worker_cpu, worker_memory
from ebm.store.annotations import compact
from ebm.store.default import open_store
from ebm.store.sqlite import MedlineStore
from extractors.annotate import Annotator

QUESTIONS = (
    frame_from_args("therapy", problem="hypertension", intervention=["propranolol"]),
    frame_from_args("therapy", problem="asthma", population=["children"], intervention=["theophylline"]),
    frame_from_args("therapy", problem="depression", intervention=["imipramine"]),
    frame_from_args("therapy", problem="otitis media", population=["children"], intervention=["amoxicillin"]),
)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def sample(n: int) -> list:
    every = list(iter_bundled())
    step = max(1, len(every) // n)
    return every[::step][:n]


def reference(resources: Resources, citations: list) -> float:
    annotator = Annotator(resources)
    annotator.annotate(citations[0])  # models loaded outside the timing
    start = time.perf_counter()
    cpu = time.process_time()
    for c in citations:
        annotator.annotate(c)
    REFERENCE_CPU_MS.append(1000 * (time.process_time() - cpu) / len(citations))
    return len(citations) / (time.perf_counter() - start)


REFERENCE_CPU_MS: list[float] = []  # CPU ms per citation of each reference run


def dask_run(resources: Resources, citations: list, workers: int, work: Path, batch: int) -> dict:
    from dask.distributed import Client

    path = work / f"store{workers}.sqlite"
    version = annotation_version(resources)
    with MedlineStore(path, vocabulary=resources.vocabulary) as store:
        store.ingest(citations)
        # the same minute's in-process rate, on citations this process has not annotated yet
        # (a second pass over the same ones hits the matcher's memos and is faster)
        ref = reference(resources, citations[40 * workers : 40 * workers + 40])
        cluster = local_cluster(workers)
        try:
            address = cluster.scheduler_address
            start = time.perf_counter()
            annotate_store(store, version, resources.rules_dir, scheduler=address, batch=batch,
                           limit=batch * workers, progress=False)  # fmt: skip
            warm = time.perf_counter() - start
            with Client(address) as client:
                cpu0 = client.run(worker_cpu)
                client_cpu = time.process_time()
                report = annotate_store(
                    store, version, resources.rules_dir, scheduler=address, batch=batch, progress=False
                )
                client_cpu = time.process_time() - client_cpu
                cpu1 = client.run(worker_cpu)
                memory = client.run(worker_memory)
        finally:
            cluster.close()
    stored = table_bytes(path)
    return {
        "workers": workers,
        "reference_in_process_citations_per_s_before": round(ref, 2),
        "startup_and_first_batches_s": round(warm, 1),
        "timed_citations": report.annotated,
        "seconds": round(report.seconds, 2),
        "citations_per_s": round(report.rate, 2),
        # CPU per citation does not depend on what else runs on the machine (wall time does)
        "worker_cpu_ms_per_citation": round(
            1000 * sum(cpu1[w] - cpu0[w] for w in cpu1 if w in cpu0) / max(report.annotated, 1), 1
        ),
        "client_cpu_ms_per_citation": round(1000 * client_cpu / max(report.annotated, 1), 2),
        "peak_rss_mb_per_worker": sorted(round(m / 2**20) for m in memory.values()),
        "stored_bytes_per_citation": {k: round(v / len(citations)) for k, v in stored.items()},
    }


def table_bytes(path: Path) -> dict[str, int]:
    """Pages of the annotation and PICO index tables (SQLite's dbstat), after a VACUUM."""
    import sqlite3

    db = sqlite3.connect(path)
    db.execute("VACUUM")
    rows = db.execute(
        "SELECT name, sum(pgsize) FROM dbstat WHERE name LIKE 'annotations%' OR name LIKE 'pico%'"
        " OR name LIKE 'sqlite_autoindex_annotations%' OR name LIKE 'sqlite_autoindex_pico%' GROUP BY name"
    ).fetchall()
    db.close()
    out = {"annotations": 0, "pico_index": 0}
    for name, size in rows:
        out[
            "annotations"
            if name.startswith(("annotations", "sqlite_autoindex_annotations"))
            else "pico_index"
        ] += size
    out["total"] = out["annotations"] + out["pico_index"]
    return out


def writer_rate(resources: Resources, citations: list, work: Path, copies: int = 25) -> dict:
    """The one writer's ceiling: rows of annotations and PICO index stored per second (the
    client's share of ``ebm corpus annotate``), 40 real annotations written under ``copies``
    versions, one transaction per 40 as the client does per batch."""
    annotator = Annotator(resources)
    rows = [compact(annotator.annotate(c), None, None) for c in citations[:40]]
    with MedlineStore(work / "writer.sqlite", vocabulary=resources.vocabulary) as store:
        store.ingest(citations[:40])
        start = time.perf_counter()
        for i in range(copies):
            store.write_annotations(f"v{i}", rows)
        seconds = time.perf_counter() - start
    return {"rows": len(rows) * copies, "rows_per_s": round(len(rows) * copies / seconds)}


def ask_latency(resources: Resources, work: Path, questions: int, repeat: int) -> dict:
    """Warm ask, 50 candidates, on a copy of the bundled store: the candidates' annotations
    stored (as ``ebm corpus annotate`` stores them) against annotating at question time."""
    with open_store(vocabulary=shipped_mesh) as default:
        src = default.path
    path = work / "bundled.sqlite"
    shutil.copy(src, path)
    version = annotation_version(resources)
    config = AskConfig(db=path, cache=False, candidates=50, deadline_s=None)
    annotator = Annotator(resources)
    rows: list[dict] = []
    with MedlineStore(path, vocabulary=resources.vocabulary) as store:
        with Pipeline(config, source=store, resources=resources, annotator=annotator) as p:
            for frame in QUESTIONS[:questions]:
                fresh = []
                for _ in range(repeat):
                    t = time.perf_counter()
                    result = p.ask(frame)
                    fresh.append(time.perf_counter() - t)
                pmids = [a.pmid for a in result.answers]
                cits = store.fetch(pmids)
                store.write_annotations(version, [compact(annotator.annotate(c), None, None) for c in cits])
                warm = []
                cpu = []
                for _ in range(repeat):
                    t, c0 = time.perf_counter(), time.process_time()
                    again = p.ask(frame)
                    warm.append(time.perf_counter() - t)
                    cpu.append(time.process_time() - c0)
                assert again.cached == len(again.answers), "stored annotations not read"
                assert [a.pmid for a in again.answers] == pmids
                rows.append({
                    "problem": frame.problem,
                    "candidates": len(pmids),
                    "stored_s": round(statistics.median(warm), 3),
                    "stored_cpu_s": round(statistics.median(cpu), 3),
                    "annotating_s": round(statistics.median(fresh), 3),
                    "annotate_step_stored_s": round(again.timings.annotate, 3),
                })  # fmt: skip
    return {"questions": rows, "median_stored_s": statistics.median(r["stored_s"] for r in rows)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=400, help="citations annotated per configuration (400)")
    ap.add_argument("--batch", type=int, default=16, help="citations per Dask task (16)")
    ap.add_argument("--questions", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-dask", action="store_true", help="only the ask latency")
    args = ap.parse_args(argv)
    out: dict = {"load_average_start": load(), "cpus": os.cpu_count()}
    resources = Resources.load()
    citations = sample(args.n)
    with tempfile.TemporaryDirectory(prefix="annotate_bench") as tmp:
        work = Path(tmp)
        if not args.skip_dask:
            out["reference_in_process_citations_per_s"] = round(reference(resources, citations[:40]), 2)
            print(f"reference (one process, no Dask): {out['reference_in_process_citations_per_s']}/s",
                  file=sys.stderr)  # fmt: skip
            runs = [dask_run(resources, citations, w, work, args.batch) for w in (1, 2)]
            out["dask"] = runs
            out["speedup_2_over_1"] = round(runs[1]["citations_per_s"] / runs[0]["citations_per_s"], 2)
            # each run against the in-process rate measured just before it (the load changes)
            out["speedup_2_over_1_normalised"] = round(
                (runs[1]["citations_per_s"] / runs[1]["reference_in_process_citations_per_s_before"])
                / (runs[0]["citations_per_s"] / runs[0]["reference_in_process_citations_per_s_before"]),
                2,
            )
        out["writer"] = writer_rate(resources, citations, work)
        out["ask"] = ask_latency(resources, work, args.questions, args.repeat)
    out["reference_cpu_ms_per_citation"] = [round(x, 1) for x in REFERENCE_CPU_MS]
    out["load_average_end"] = load()
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
