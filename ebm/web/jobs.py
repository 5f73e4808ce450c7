"""Questions answered in the background, so a slow question never blocks a page.

One worker thread owns the ``ebm.ask.Pipeline`` objects (one per source: the annotation
cache's SQLite connection must stay in the thread that opened it) and answers one question
at a time, in the order asked. A web request only queues a ``Job`` and returns; the page
polls the job, which reports its step ("searching", "annotating 12 of 50", ...).

At start-up the worker warms up first: it opens the local store and loads the concept index,
text pipeline and outcome model, so the first question does not pay for them; it can then
ask a few given frames (``ebm serve --warm DIR``) so their candidate pools are annotated in
the on-disk cache before anyone asks. Questions asked meanwhile go first.
"""

from __future__ import annotations

import itertools
import logging
import queue
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ebm.ask import AskConfig, AskResult, Explanation, Pipeline
from ebm.citation import Citation
from ebm.errors import DataError, EbmError, InputError, ServiceError
from ebm.source import SearchResult, Sort
from ebm.web.forms import Question
from extractors.annotate import Annotation

log = logging.getLogger("ebm.web")

ANNOTATE_CHUNK = 5  # citations annotated between two progress reports
MAX_JOBS = 30  # jobs kept in memory with their answers, oldest finished dropped first (a top-50
# answer with its explanations is ~2 MB pickled)
MAX_PENDING = 20  # questions waiting or running at once; more are refused as busy

Report = Callable[[str, int, int], None]  # (step, done, total)


@dataclass
class Job:
    """One question on its way through the pipeline."""

    id: str
    question: Question
    state: str = "queued"  # queued, running, done, failed
    step: str = "waiting for the worker"
    done: int = 0
    total: int = 0
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    result: AskResult | None = None
    # The explanation ("why ranked here") of each answer shown, by PMID.
    explanations: dict[str, Explanation] = field(default_factory=dict)
    error: str | None = None
    error_kind: str = "internal"  # input, service (PubMed), data (missing index/store), internal
    event: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def finished_ok(self) -> bool:
        return self.state == "done"

    @property
    def elapsed(self) -> float:
        end = self.finished or time.time()
        return end - (self.started or self.created)

    def report(self, step: str, done: int = 0, total: int = 0) -> None:
        self.step, self.done, self.total = step, done, total

    def document(self) -> dict[str, Any]:
        """The ``ebm ask --format json`` document of this job's answer."""
        assert self.result is not None
        return self.result.to_dict(top=self.question.top, explanation=self.question.explain)


class Busy(ServiceError):
    """Too many questions waiting: refused rather than queued without bound."""


class _ReportingSource:
    """A ``CitationSource`` that tells the job what it is doing (searching, fetching)."""

    def __init__(self, source: Any, pipeline: ReportingPipeline) -> None:
        self._source = source
        self._pipeline = pipeline
        self.name = getattr(source, "name", "local")
        self._searches = 0

    def search(self, query: str, limit: int = 50, sort: Sort = "relevance") -> SearchResult:
        self._searches += 1
        n = self._searches
        self._pipeline.report("searching" if n == 1 else f"searching (relaxed query {n})", 0, 0)
        return self._source.search(query, limit=limit, sort=sort)

    def fetch(self, pmids: Sequence[str]) -> list[Citation]:
        self._searches = 0
        self._pipeline.report(f"fetching {len(pmids)} citations", 0, 0)
        return self._source.fetch(pmids)


class ReportingPipeline(Pipeline):
    """``ebm.ask.Pipeline`` that reports its progress and keeps the annotations of the last
    question (the "why ranked here" of each answer needs them)."""

    def __init__(self, config: AskConfig) -> None:
        super().__init__(config)
        self.report: Report = lambda step, done, total: None
        self.last_annotations: dict[str, Annotation] = {}
        self._reporting: _ReportingSource | None = None

    @property
    def source(self) -> Any:
        raw = super().source
        if self._reporting is None or self._reporting._source is not raw:
            self._reporting = _ReportingSource(raw, self)
        return self._reporting

    def annotate(self, citations: Sequence[Citation]) -> tuple[list[Annotation], int]:
        n = len(citations)
        out: list[Annotation] = []
        cached = 0
        self.report("annotating", 0, n)
        for i in range(0, n, ANNOTATE_CHUNK):
            annotations, hits = super().annotate(citations[i : i + ANNOTATE_CHUNK])
            out.extend(annotations)
            cached += hits
            self.report("annotating", len(out), n)
        self.report("scoring", n, n)
        self.last_annotations = {a.citation.pmid: a for a in out}
        return out, cached


class Runner:
    """The worker thread and its jobs. ``submit`` queues a question; ``get`` finds its job."""

    def __init__(
        self,
        config: AskConfig | None = None,
        *,
        warm: bool = True,
        warm_frames: Sequence[Any] = (),  # Frames to ask at start-up
        max_jobs: int = MAX_JOBS,
        max_pending: int = MAX_PENDING,
    ) -> None:
        self.config = config or AskConfig()
        self.warm = warm
        self.warm_frames = tuple(warm_frames)
        self.max_jobs = max_jobs
        self.max_pending = max_pending
        self.status = "starting"  # starting, warming up, ready, or the warm-up's error
        self.warmed_frames = 0
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()
        self._queue: queue.PriorityQueue[tuple[int, int, str, Any]] = queue.PriorityQueue()
        self._seq = itertools.count()
        self._pipelines: dict[str, ReportingPipeline] = {}
        self._thread = threading.Thread(target=self._work, name="ebm-web-worker", daemon=True)
        self._started = False

    # --- the web side ---------------------------------------------------------------------------

    def start(self) -> Runner:
        if not self._started:
            self._started = True
            if self.warm:
                self._queue.put((1, next(self._seq), "warm", None))
                for frame in self.warm_frames:
                    self._queue.put((2, next(self._seq), "warm-frame", frame))
            else:
                self.status = "ready"
            self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        if self._started:
            self._queue.put((-1, next(self._seq), "stop", None))
            self._thread.join(timeout)

    def submit(self, question: Question) -> Job:
        """Queue ``question``; ``Busy`` when ``max_pending`` questions are already waiting."""
        job = Job(secrets.token_urlsafe(12), question)
        with self._lock:
            pending = sum(1 for j in self._jobs.values() if not j.event.is_set())
            if pending >= self.max_pending:
                many = "s" if pending != 1 else ""
                raise Busy(f"the server is busy with {pending} question{many}; ask again in a moment")
            self._jobs[job.id] = job
            while len(self._jobs) > self.max_jobs:
                oldest = next(iter(self._jobs.values()))
                if not oldest.event.is_set():
                    break  # never drop a job still waiting or running
                self._jobs.popitem(last=False)
        with self._lock:
            ahead = sum(1 for j in self._jobs.values() if not j.event.is_set() and j is not job)
        if self.status in ("starting", "warming up"):
            job.report("waiting for the concept index and models to load")
        elif ahead:
            job.report(f"waiting for {ahead} earlier question{'s' if ahead > 1 else ''}")
        self._queue.put((0, next(self._seq), "job", job))
        return job

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def wait(self, job: Job, timeout: float | None = None) -> bool:
        return job.event.wait(timeout)

    # --- the worker thread ------------------------------------------------------------------------

    def _pipeline(self, source: str) -> ReportingPipeline:
        if source not in self._pipelines:
            self._pipelines[source] = ReportingPipeline(replace(self.config, source=source))
        return self._pipelines[source]

    def _work(self) -> None:
        try:
            while True:
                _, _, kind, item = self._queue.get()
                if kind == "stop":
                    return
                if kind == "warm":
                    self._warm_up()
                elif kind == "warm-frame":
                    self._warm_frame(item)
                else:
                    self._run(item)
        finally:
            for p in self._pipelines.values():
                p.close()

    def _warm_up(self) -> None:
        self.status = "warming up"
        t = time.perf_counter()
        try:
            p = self._pipeline(self.config.source)
            p.source  # noqa: B018  (opens the store, building the default one on first use)
            p.annotator  # noqa: B018  (text pipeline, concept index, outcome model)
            p.cache  # noqa: B018
        except EbmError as exc:
            self.status = f"not ready: {exc}"
            log.warning("warm-up failed: %s", exc)
            return
        except Exception as exc:  # keep serving: each question will report its own error
            self.status = f"not ready: {type(exc).__name__}: {exc}"
            log.exception("warm-up failed")
            return
        self.status = "ready"
        log.info("warm: resources loaded in %.1f s", time.perf_counter() - t)

    def _warm_frame(self, frame: Any) -> None:
        if self.status != "ready":
            return
        t = time.perf_counter()
        try:
            self._pipeline(self.config.source).ask(frame)
        except Exception as exc:  # a warm-up question is a courtesy; never fatal
            log.warning("warm-up question %s failed: %s", frame.id or frame.problem, exc)
            return
        self.warmed_frames += 1
        log.info("warm: %s answered in %.1f s", frame.id or frame.problem, time.perf_counter() - t)

    def _run(self, job: Job) -> None:
        job.state = "running"
        job.started = time.time()
        job.report("starting")
        q = job.question
        try:
            p = self._pipeline(q.source)
            p.report = job.report
            try:
                result = p.ask(q.frame)
                shown = result.top(q.top)
                job.explanations = {
                    a.pmid: Explanation(
                        q.frame, result.concepts, p.last_annotations[a.pmid], a.ebm, a.term, a
                    )
                    for a in shown
                    if a.pmid in p.last_annotations
                }
            finally:
                p.report = lambda step, done, total: None
                p.last_annotations = {}
            job.result = result
            job.state = "done"
            job.report("done")
        except EbmError as exc:
            job.error = str(exc)
            job.error_kind = _kind(exc)
            job.state = "failed"
        except Exception as exc:  # a bug: the page shows its message, the log its traceback
            log.exception("question failed: %s", q.frame.describe().replace("\n", "; "))
            job.error = f"internal error ({type(exc).__name__}: {exc}); see the server log"
            job.state = "failed"
        finally:
            job.finished = time.time()
            job.event.set()


def _kind(exc: EbmError) -> str:
    if isinstance(exc, InputError):
        return "input"
    if isinstance(exc, ServiceError):
        return "service"
    if isinstance(exc, DataError):
        return "data"
    return "internal"
