"""Questions answered in worker processes, so a slow question never blocks a page.

The server process only serves pages: a web request queues a ``Job`` and returns (the page
polls it), or for the JSON API waits a bounded time for it. Questions run in a pool of worker
PROCESSES (``Runner(workers=N)``, default one per core): the pipeline is CPU work under the
GIL, so threads would neither run two questions at once nor leave the pages responsive. Each
worker builds its pipelines once, from the picklable ``AskConfig`` it is given
(``build_pipeline``), runs at a lower CPU priority than the server (pages first), and reports
its progress ("searching", "annotating 12 of 50", ...) on its own pipe to the server.

The queue is bounded (``max_pending`` questions waiting or running; more are refused as
``Busy``, 503 with ``Retry-After``), a question has a deadline (``AskConfig.deadline_s``,
enforced in the worker; a worker that overruns it by ``HARD_GRACE`` seconds is stopped and
replaced), and a worker that dies fails its question with a message and is replaced.

At start-up each worker warms up first: it opens the local store and loads the concept index,
text pipeline and outcome model, so the first question does not pay for them; the workers can
then ask a few given frames (``ebm serve --warm DIR``) so their candidate pools are annotated
in the on-disk cache before anyone asks. Questions asked meanwhile go first.

``workers=0`` is the previous design, kept as a reference for ``benchmarks/web_load.py``: one
worker THREAD inside the server process answering one question at a time.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import multiprocessing
import multiprocessing.connection as mp_connection
import os
import queue
import secrets
import signal
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
from ebm.web.evidence import question_document, shown_answers
from ebm.web.forms import Question
from extractors.annotate import Annotation

log = logging.getLogger("ebm.web")

ANNOTATE_CHUNK = 5  # citations annotated between two progress reports
MAX_JOBS = 30  # jobs kept in memory with their answers, oldest finished dropped first (a top-50
# answer with its explanations is ~2 MB pickled)
MAX_PENDING = 20  # questions waiting or running at once; more are refused as busy
WORKER_NICE = 10  # workers' CPU priority below the server's, so pages answer while they work
HARD_GRACE = 60.0  # seconds past its deadline before a worker's question is stopped by force

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
    page: bool = True  # for the results page (the worker sends the objects, not only the document)
    doc: dict[str, Any] | None = None  # the ``ebm ask --format json`` document, made by the worker
    steps: list[str] = field(default_factory=list)  # every step reported, in order
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
        if not self.steps or self.steps[-1] != step:
            self.steps.append(step)

    def document(self) -> dict[str, Any]:
        """The ``ebm ask --format json`` document of this job's answer."""
        if self.doc is None:
            assert self.result is not None
            self.doc = self.result.to_dict(top=self.question.top, explanation=self.question.explain)
        return self.doc


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


def build_pipeline(config: AskConfig, source: str) -> ReportingPipeline:
    """The one place a worker builds a pipeline: from the picklable ``config`` (rules directory,
    store, weights, deadline), never from state of the server process."""
    return ReportingPipeline(replace(config, source=source))


def default_workers() -> int:
    """One worker process per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class _Worker:
    """The worker side: builds its pipelines once and answers what its inbox says."""

    def __init__(self, wid: int, config: AskConfig, outbox: Any) -> None:
        self.wid = wid
        self.config = config
        self.outbox = outbox
        self.pipelines: dict[str, ReportingPipeline] = {}

    def pipeline(self, source: str) -> ReportingPipeline:
        if source not in self.pipelines:
            self.pipelines[source] = build_pipeline(self.config, source)
        return self.pipelines[source]

    def loop(self, inbox: Any, warm: bool, parent: int | None = None) -> None:
        """Answer the inbox until told to stop (or, in a process, until the server is gone:
        ``parent`` is its process id, and an orphan must not live on)."""
        try:
            self.outbox.put(("ready", self.wid, self.warm_up() if warm else None))
            while True:
                try:
                    message = inbox.get(timeout=1.0)
                except queue.Empty:
                    if parent is not None and os.getppid() != parent:
                        return
                    continue
                if message[0] == "stop":
                    return
                if message[0] == "warm-frame":
                    self.warm_frame(message[1])
                else:
                    self.run(message[1], message[2], message[3])
        finally:
            for p in self.pipelines.values():
                p.close()

    def warm_up(self) -> str | None:
        """Load everything a question needs; the reason when that failed, else None."""
        t = time.perf_counter()
        try:
            p = self.pipeline(self.config.source)
            p.source  # noqa: B018  (opens the store, building the default one on first use)
            p.annotator  # noqa: B018  (text pipeline, concept index, outcome model)
            p.cache  # noqa: B018
        except EbmError as exc:
            log.warning("worker %d: warm-up failed: %s", self.wid, exc)
            return str(exc)
        except Exception as exc:  # keep serving: each question will report its own error
            log.exception("worker %d: warm-up failed", self.wid)
            return f"{type(exc).__name__}: {exc}"
        log.info("worker %d: resources loaded in %.1f s", self.wid, time.perf_counter() - t)
        return None

    def warm_frame(self, frame: Any) -> None:
        t = time.perf_counter()
        ok = False
        try:
            self.pipeline(self.config.source).ask(frame)
            ok = True
            log.info("warm: %s answered in %.1f s", frame.id or frame.problem, time.perf_counter() - t)
        except Exception as exc:  # a warm-up question is a courtesy; never fatal
            log.warning("warm-up question %s failed: %s", frame.id or frame.problem, exc)
        self.outbox.put(("warmed", self.wid, ok))

    def run(self, job_id: str, q: Question, page: bool) -> None:
        def report(step: str, done: int = 0, total: int = 0) -> None:
            self.outbox.put(("progress", self.wid, job_id, step, done, total))

        try:
            p = self.pipeline(q.source)
            p.report = report
            try:
                result = p.ask(q.frame, ranker=q.ranker)
                explanations: dict[str, Explanation] = {}
                if page:
                    explanations = {
                        a.pmid: Explanation(
                            q.frame, result.concepts, p.last_annotations[a.pmid], a.ebm, a.term, a
                        )
                        for a in shown_answers(result, q)
                        if a.pmid in p.last_annotations
                    }
            finally:
                p.report = lambda step, done, total: None
                p.last_annotations = {}
            document = question_document(result, q)  # the answers shown (design filter)
            # A page needs the objects; the API only the document (much less to send back).
            self.outbox.put(("done", self.wid, job_id, document, result if page else None, explanations))
        except EbmError as exc:
            self.outbox.put(("failed", self.wid, job_id, _kind(exc), str(exc)))
        except Exception as exc:  # a bug: the page shows its message, the log its traceback
            log.exception("question failed: %s", q.frame.describe().replace("\n", "; "))
            message = f"internal error ({type(exc).__name__}: {exc}); see the server log"
            self.outbox.put(("failed", self.wid, job_id, "internal", message))


def _worker_process(
    wid: int, config: AskConfig, inbox: Any, outbox: Any, warm: bool, nice: int, parent: int
) -> None:
    """A worker process's main function (spawned: it starts from a fresh interpreter)."""
    if nice:
        try:
            os.nice(nice)  # the server's pages go first
        except OSError:
            pass
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s[%(process)d]: %(message)s")
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops the workers
    _Worker(wid, config, _Sender(outbox)).loop(inbox, warm, parent)


class _Sender:
    """A worker's end of its pipe, as the ``put`` the worker calls."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def put(self, message: tuple[Any, ...]) -> None:
        self._conn.send(message)


@dataclass
class _Exited:
    """A worker process that exited at start-up and is not replaced."""

    exitcode: int | None

    def is_alive(self) -> bool:
        return True  # nothing to watch any more

    def join(self, timeout: float | None = None) -> None:
        pass

    def terminate(self) -> None:
        pass


@dataclass
class _Slot:
    """The server's view of one worker."""

    wid: int
    inbox: Any
    conn: Any  # the server's end of the worker's pipe; None once it is closed
    process: Any = None  # multiprocessing.Process, or None for the reference thread
    thread: threading.Thread | None = None
    ready: bool = False  # warmed up (or told not to) and waiting for work
    job: Job | None = None  # the question it is answering
    busy_since: float = 0.0
    warm_frame: bool = False  # answering a warm-up frame


class Runner:
    """The worker pool and its jobs. ``submit`` queues a question; ``get`` finds its job."""

    def __init__(
        self,
        config: AskConfig | None = None,
        *,
        warm: bool = True,
        warm_frames: Sequence[Any] = (),  # Frames to ask at start-up
        workers: int | None = None,  # processes (default: one per core); 0: one thread in-process
        max_jobs: int = MAX_JOBS,
        max_pending: int = MAX_PENDING,
        nice: int = WORKER_NICE,
    ) -> None:
        self.config = config or AskConfig()
        self.warm = warm
        self.warm_frames = tuple(warm_frames)
        self.workers = default_workers() if workers is None else workers
        if self.workers < 0:
            raise InputError(f"workers must be 0 (one thread) or more processes, got {self.workers}")
        self.max_jobs = max_jobs
        self.max_pending = max_pending
        self.nice = nice
        self.status = "starting"  # starting, warming up, ready, or the warm-up's error
        self.warmed_frames = 0
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._pending: list[tuple[int, int, str, Any]] = []  # heap: (priority, seq, kind, item)
        self._seq = itertools.count()
        self._slots: list[_Slot] = []
        self._failures: list[str] = []  # warm-up failures, one per worker
        self._ctx = multiprocessing.get_context("spawn")  # never fork a threaded server
        self._threads: list[threading.Thread] = []
        self._started = False
        self._stopping = False

    # --- the web side ---------------------------------------------------------------------------

    def start(self) -> Runner:
        if self._started:
            return self
        self._started = True
        if not self.warm:
            self.status = "ready"
        else:
            self.status = "warming up"
            for frame in self.warm_frames:
                heapq.heappush(self._pending, (2, next(self._seq), "warm-frame", frame))
        for wid in range(max(self.workers, 1)):
            self._slots.append(self._spawn(wid))
        for target, name in ((self._collect, "ebm-web-collector"), (self._dispatch, "ebm-web-dispatcher")):
            t = threading.Thread(target=target, name=name, daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def _spawn(self, wid: int) -> _Slot:
        # Each worker answers on its own pipe: a worker stopped by force can only break its own.
        receive, send = self._ctx.Pipe(duplex=False)
        if not self.workers:  # the reference design: one thread in this process
            inbox: Any = queue.Queue()
            worker = _Worker(wid, self.config, _Sender(send))
            thread = threading.Thread(
                target=worker.loop, args=(inbox, self.warm), name="ebm-web-worker", daemon=True
            )
            thread.start()
            return _Slot(wid, inbox, receive, thread=thread)
        inbox = self._ctx.Queue()
        process = self._ctx.Process(
            target=_worker_process,
            args=(wid, self.config, inbox, send, self.warm, self.nice, os.getpid()),
            name=f"ebm-web-worker-{wid}",
            daemon=True,
        )
        process.start()
        send.close()  # the worker's end: closed here, so its death reads as end-of-file
        return _Slot(wid, inbox, receive, process=process)

    def stop(self, timeout: float = 10.0) -> None:
        if not self._started or self._stopping:
            return
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        for slot in self._slots:
            slot.inbox.put(("stop",))
        end = time.monotonic() + timeout
        for slot in self._slots:
            if slot.process is not None:
                slot.process.join(max(0.0, end - time.monotonic()))
                if slot.process.is_alive():
                    slot.process.terminate()
                    slot.process.join(2)
            elif slot.thread is not None:
                slot.thread.join(max(0.0, end - time.monotonic()))
        for t in self._threads:
            t.join(2)

    def submit(self, question: Question, *, page: bool = True) -> Job:
        """Queue ``question``; ``Busy`` when ``max_pending`` questions are already waiting.
        ``page``: the answer is for the results page (keep the objects, not only the document)."""
        job = Job(secrets.token_urlsafe(12), question, page=page)
        with self._wake:
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
            waiting = sum(1 for kind in self._pending if kind[2] == "job")
            if self.status in ("starting", "warming up"):
                job.report("waiting for the concept index and models to load")
            elif waiting >= sum(1 for s in self._slots if s.ready and s.job is None) and waiting:
                job.report(f"waiting for {waiting} earlier question{'s' if waiting > 1 else ''}")
            heapq.heappush(self._pending, (0, next(self._seq), "job", job))
            self._wake.notify_all()
        return job

    @property
    def workers_ready(self) -> int:
        """Workers that have loaded what a question needs and can take one."""
        with self._lock:
            return sum(1 for s in self._slots if s.ready and not isinstance(s.process, _Exited))

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def wait(self, job: Job, timeout: float | None = None) -> bool:
        return job.event.wait(timeout)

    # --- the server's threads: hand out work, read what the workers say ---------------------------

    def _dispatch(self) -> None:
        """Give the most urgent waiting item to an idle worker; watch the busy ones."""
        with self._wake:
            while not self._stopping:
                idle = next(
                    (
                        s
                        for s in self._slots
                        if s.ready
                        and s.job is None
                        and not s.warm_frame
                        and not isinstance(s.process, _Exited)
                    ),
                    None,
                )
                if idle is not None and self._pending:
                    _, _, kind, item = heapq.heappop(self._pending)
                    if kind == "warm-frame":
                        if self.status != "ready":
                            continue  # the models did not load: warm-up questions would fail too
                        idle.warm_frame = True
                        idle.inbox.put(("warm-frame", item))
                    else:
                        item.state = "running"
                        item.started = time.time()
                        item.report("starting")
                        idle.job = item
                        idle.inbox.put(("job", item.id, item.question, item.page))
                    idle.busy_since = time.monotonic()
                    continue
                self._watch()
                self._wake.wait(0.5)

    def _watch(self) -> None:
        """Replace a worker that died or overran its question's deadline (lock held)."""
        if not self.workers:
            return
        limit = None if self.config.deadline_s is None else self.config.deadline_s + HARD_GRACE
        for i, slot in enumerate(self._slots):
            assert slot.process is not None
            overran = (
                limit is not None and slot.job is not None and time.monotonic() - slot.busy_since > limit
            )
            if slot.process.is_alive() and not overran:
                continue
            if overran:
                slot.process.terminate()
                why = f"the question took more than {limit:g} s and was stopped"
            else:
                code = slot.process.exitcode
                why = f"the worker answering it stopped (exit code {code}); see the server log"
            slot.process.join(2)
            if slot.job is not None:
                self._finish(slot.job, error=why, kind="service" if overran else "internal")
            if not slot.ready and not overran:  # died starting up: a new one would too
                log.error("worker %d exited at start-up (exit code %s)", slot.wid, slot.process.exitcode)
                slot.process = _Exited(slot.process.exitcode)
                self._failures.append(f"worker {slot.wid} exited at start-up; see the server log")
                slot.ready = True  # counted as answered (with a failure); never given work
                self._update_status()
                continue
            log.warning("worker %d replaced: %s", slot.wid, why)
            self._slots[i] = self._spawn(slot.wid)

    def _collect(self) -> None:
        """Read every worker's pipe; a message updates its job (or the worker's state)."""
        while not self._stopping:
            with self._lock:
                slots = {id(s.conn): s for s in self._slots if s.conn is not None}
            if not slots:
                time.sleep(0.2)
                continue
            for conn in mp_connection.wait([s.conn for s in slots.values()], timeout=0.5):
                slot = slots[id(conn)]
                try:
                    message = slot.conn.recv()
                except (EOFError, OSError):  # the worker is gone; the dispatcher replaces it
                    with self._lock:
                        slot.conn = None
                    continue
                with self._wake:
                    if any(s is slot for s in self._slots):
                        self._handle(slot, message)
                    self._wake.notify_all()

    def _handle(self, slot: _Slot, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "ready":
            slot.ready = True
            if message[2] is not None:
                self._failures.append(message[2])
            self._update_status()
        elif kind == "warmed":
            slot.warm_frame = False
            self.warmed_frames += 1 if message[2] else 0
        elif kind == "progress":
            _, _, job_id, step, done, total = message
            if slot.job is not None and slot.job.id == job_id:
                slot.job.report(step, done, total)
        elif kind in ("done", "failed"):
            job = slot.job
            slot.job = None
            if job is not None and job.id == message[2]:
                if kind == "done":
                    job.doc, job.result, job.explanations = message[3], message[4], message[5]
                    self._finish(job)
                else:
                    self._finish(job, error=message[4], kind=message[3])

    def _update_status(self) -> None:
        if not self.warm:
            return
        if len(self._failures) < sum(1 for s in self._slots if s.ready):
            self.status = "ready"  # at least one worker has everything loaded
        elif all(s.ready for s in self._slots):
            self.status = f"not ready: {self._failures[0]}"

    @staticmethod
    def _finish(job: Job, *, error: str | None = None, kind: str = "internal") -> None:
        if error is None:
            job.state = "done"
            job.report("done")
        else:
            job.error, job.error_kind, job.state = error, kind, "failed"
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
