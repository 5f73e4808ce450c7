"""``ebm corpus annotate``: annotate the store's citations on Dask, store them from one process.

The client (this process) lists the citations without an annotation of the current version
(``ebm.store.annotations``), cuts them into batches and sends each batch's stored records to a
Dask worker; the worker builds its ``Annotator`` (and design model) once per process and rules
directory, annotates, and returns compact rows (``Compact``); the client writes each returned
batch in one transaction. So:

- resumable: a re-run (or a run after an interrupt) annotates only what is missing;
- a worker that dies loses only its batches in flight: the scheduler gives them to another
  worker (and ``retries`` re-runs a batch whose task raised);
- many machines: ``--scheduler tcp://HOST:8786`` uses an existing cluster (``dask scheduler``,
  ``dask worker`` on each machine with ebm installed and ``ebm setup`` run). Records travel with
  the tasks, so workers need no copy of the store; they check that they annotate with the same
  version as the client (same ebm, code, rules and index), else the run stops.

The default is a ``LocalCluster`` of N worker processes (one thread each) bound to 127.0.0.1.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ebm.errors import EbmError, InputError
from ebm.store.annotations import Compact, batches, compact

BATCH = 32  # citations per task: a few seconds of work, little lost when a worker dies
IN_FLIGHT = 3  # batches queued per worker thread, so memory stays bounded on any corpus size

_STATE: dict[str | None, tuple[Any, Any, str]] = {}  # rules dir -> (Annotator, DesignModel, version)


def _worker_state(rules_dir: str | None) -> tuple[Any, Any, str]:
    """This process's annotator for ``rules_dir`` (None: the worker's own shipped rules), built
    on its first batch and kept."""
    if rules_dir not in _STATE:
        from ebm.annotation_cache import annotation_version
        from ebm.resources import Resources
        from extractors.annotate import Annotator
        from extractors.design import design_model_path, load_design_model

        resources = Resources.load(Path(rules_dir) if rules_dir is not None else None)
        _STATE[rules_dir] = (
            Annotator(resources),
            load_design_model(design_model_path()),
            annotation_version(resources),
        )
    return _STATE[rules_dir]


def annotate_records(rules_dir: str | None, records: Sequence[bytes]) -> tuple[str, list[Compact]]:
    """The Dask task: stored citation records -> (the worker's annotation version, rows)."""
    from ebm.store.sqlite import decode_record
    from ebm.text.document import UnprocessableText
    from extractors.design import design_json

    annotator, design_model, version = _worker_state(rules_dir)
    out = []
    for record in records:
        citation = decode_record(record)
        try:
            a = annotator.annotate(citation)
        except UnprocessableText as exc:
            out.append(Compact(citation.pmid, None, error=str(exc)))
            continue
        design = getattr(a, "design", None)  # the annotator's own (issue 13), else computed here
        if design is not None:
            size = a.sample_size.value if getattr(a, "sample_size", None) is not None else None
            out.append(compact(a, design.get("label"), size))
            continue
        d = design_json(citation, design_model)
        size = d["sample_size"]["value"] if d["sample_size"] else None
        out.append(compact(a, d["design"]["label"] if d["design"] else None, size))  # None: no text
    return version, out


def worker_memory() -> int:
    """Peak resident memory of this process in bytes (run on each worker by the benchmark)."""
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def worker_cpu() -> float:
    """CPU seconds this process has used (the benchmark's load-independent cost per citation)."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return float(r.ru_utime + r.ru_stime)


@dataclass
class AnnotateReport:
    version: str
    todo: int  # citations without an annotation of this version at the start
    annotated: int = 0
    skipped: list[str] = field(default_factory=list)  # PMID: why
    seconds: float = 0.0
    workers: int = 0

    @property
    def rate(self) -> float:
        return self.annotated / self.seconds if self.seconds else 0.0


def local_cluster(workers: int, memory_limit: str = "2GB") -> Any:
    """N worker processes of one thread each, on loopback only, without the dashboard."""
    from dask.distributed import LocalCluster

    if workers < 1:
        raise InputError(f"--workers must be at least 1, got {workers}")
    return LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        memory_limit=memory_limit,
        silence_logs=logging.CRITICAL,  # not the shutdown races ("still alive, killing", heartbeats)
    )


def annotate_store(
    store: Any,  # MedlineStore (the one writer)
    version: str,
    rules_dir: Path,
    *,
    workers: int = 2,
    scheduler: str | None = None,
    since: str | None = None,
    batch: int = BATCH,
    progress: bool = True,
    on_batch: Callable[[int], None] | None = None,
    limit: int | None = None,
) -> AnnotateReport:
    """Annotate every citation of ``store`` lacking an annotation of ``version`` (published on
    or after ``since`` when given; at most ``limit``) and store the results.

    ``scheduler``: an existing cluster's address; otherwise a local cluster of ``workers``
    processes. ``on_batch(n_done)``: called after each stored batch (tests, the benchmark)."""
    from dask.distributed import Client, as_completed
    from tqdm import tqdm

    todo = store.unannotated(version, since)
    if limit is not None:
        todo = todo[:limit]
    report = AnnotateReport(version, len(todo))
    if not todo:
        return report
    cluster = None if scheduler else local_cluster(workers)
    start = time.perf_counter()
    try:
        with Client(scheduler or cluster, timeout=30) as client:
            n_threads = sum(client.nthreads().values())
            if n_threads == 0:
                raise EbmError(f"the Dask scheduler {scheduler} has no workers")
            report.workers = len(client.nthreads())
            # the shipped rules by name, not by this machine's path: another machine's ebm is
            # installed elsewhere (the version check still requires the same tables)
            from ebm.resources import shipped_rules_dir

            resolved = Path(rules_dir).resolve()
            rules = None if resolved == shipped_rules_dir().resolve() else str(resolved)
            pending = iter(batches(todo, batch))

            def submit(pmids: list[str]) -> Any:
                records = store.records(pmids)
                return client.submit(annotate_records, rules, records, pure=False, retries=2)

            first = [submit(b) for _, b in zip(range(n_threads * IN_FLIGHT), pending, strict=False)]
            queue = as_completed(first)
            bar = tqdm(total=len(todo), unit=" citations", desc="annotating", disable=not progress,
                       smoothing=0.1)  # fmt: skip
            with bar:
                for future in queue:
                    worker_version, rows = future.result()
                    future.release()
                    if worker_version != version:
                        raise EbmError(
                            f"a Dask worker annotates with version {worker_version}, this process "
                            f"with {version}: install the same ebm, rules and concept index everywhere"
                        )
                    report.annotated += store.write_annotations(version, rows)
                    report.skipped.extend(f"{r.pmid}: {r.error}" for r in rows if r.data is None)
                    bar.update(len(rows))
                    if on_batch is not None:
                        on_batch(report.annotated)
                    nxt = next(pending, None)
                    if nxt is not None:
                        queue.add(submit(nxt))
    finally:
        if cluster is not None:
            cluster.close()
    report.seconds = time.perf_counter() - start
    return report


def default_workers() -> int:
    return max(1, (os.cpu_count() or 1))
