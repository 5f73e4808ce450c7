"""The web PICO form and JSON API (``ebm serve``): Flask with Jinja2 templates.

Pages (no JavaScript anywhere: a progress page refreshes itself with ``<meta refresh>``, the
"why ranked here" panels are ``<details>`` elements):

    GET  /                 the PICO form (query arguments pre-fill it: /?task=therapy&problem=...)
    POST /question         a question in plain words: the form filled for review ("Understood
                           as", the task's reason, the words not placed), or answered at once
    POST /ask              validate; errors go back to the form next to their fields, a valid
                           question is queued and the browser sent to its results page
    GET  /results/<job>    progress while the question runs, then one card per citation

JSON API (errors as ``{"error": message, "field": name}``):

    POST /api/ask          a frame (or {"frame": {...}, "source", "top", "explain", "ranker",
                           "randomized_only"}, or {"question": "words", frame fields, options})
                           -> the ``ebm ask --format json`` document; ?wait=0 returns 202 and a
                           job URL
    GET  /api/jobs/<job>   a job's state, or its document when done
    GET  /api/status       whether the models are loaded

Templates autoescape everything (titles and abstracts contain <, > and &); requests are
limited in size; errors are pages (or JSON) with the message, never a traceback.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flask import Flask, Response, jsonify, redirect, render_template, request, url_for
from werkzeug.exceptions import HTTPException, SecurityError

from ebm.ask import AskConfig
from ebm.errors import DataError, EbmError, InputError
from ebm.frame import Frame, Task
from ebm.scoring.rankers import REGISTRY
from ebm.web.evidence import bottom_line_view, card_evidence, shown_answers
from ebm.web.forms import (
    DEFAULT_TOP,
    FORM_FIELDS,
    MAX_ITEMS,
    MAX_QUESTION,
    MAX_TEXT,
    SOURCES,
    TOP_CHOICES,
    FieldError,
    FormResult,
    Question,
    check_frame,
    form_values,
    read_question,
    strip_control,
    validate_form,
    validate_json,
)
from ebm.web.jobs import WORKER_NICE, Busy, Job, Runner
from ebm.web.question import Asked, QuestionReader, Readers

log = logging.getLogger("ebm.web")

MAX_REQUEST = 64 * 1024  # bytes: a frame is a few hundred
API_PREFIX = "/api/"  # the JSON API: its errors are JSON too (here and in ebm.web.server)
API_WAIT_GRACE = 30.0  # POST /api/ask waits the question's deadline and this, then gives the job URL
API_WAIT_NO_DEADLINE = 120.0  # ... or this long when questions have no deadline
# Request threads that may wait for an answer at once: the others stay free for pages and
# /api/status (one more API call is queued and answered 202 with its job URL at once).
API_WAITERS = 12
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1"]

# Questions from the paper (section 4 and Table 1) that pre-fill the form.
EXAMPLES: dict[str, Frame] = {
    "fever": Frame(
        Task.THERAPY,
        problem="acute febrile illness",
        population=("children",),
        intervention=("acetaminophen",),
        comparison=("ibuprofen",),
        outcome="reducing fever",
    ),
    "leg-cramps": Frame(Task.THERAPY, problem="leg cramps", intervention=("quinine",)),
}

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)


def create_app(
    config: AskConfig | None = None,
    *,
    runner: Runner | None = None,
    warm: bool = True,
    warm_frames: Sequence[Frame] = (),
    trusted_hosts: Sequence[str] | None = None,
    workers: int | None = None,
    worker_nice: int | None = None,
    api_waiters: int = API_WAITERS,
) -> Flask:
    """The application; its workers start at once (``workers`` processes, default one per core;
    0: one thread) and warm up unless ``warm=False``. At most ``api_waiters`` API calls wait for
    their answer at once (the other request threads stay free for pages).
    ``trusted_hosts``: the Host names accepted (the loopback names when serving on loopback,
    so a web page elsewhere cannot reach the server through DNS rebinding)."""
    app = Flask(__name__)
    app.config.update(
        MAX_CONTENT_LENGTH=MAX_REQUEST,
        MAX_FORM_MEMORY_SIZE=MAX_REQUEST,
        MAX_FORM_PARTS=50,
        TRUSTED_HOSTS=list(trusted_hosts) if trusted_hosts else None,
        JSON_SORT_KEYS=False,
    )
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    app.jinja_env.autoescape = True  # every template, whatever its name
    app.jinja_env.trim_blocks = True
    app.jinja_env.lstrip_blocks = True
    runner = runner or Runner(
        config,
        warm=warm,
        warm_frames=warm_frames,
        workers=workers,
        nice=WORKER_NICE if worker_nice is None else worker_nice,
    )
    app.extensions["ebm_runner"] = runner.start()
    deadline = runner.config.deadline_s
    api_wait = API_WAIT_NO_DEADLINE if deadline is None else deadline + API_WAIT_GRACE
    waiters = threading.BoundedSemaphore(max(1, api_waiters))
    # The question-in-words reader: loaded once for this process, on first use (or now, in the
    # background, when the workers warm up too).
    readers = Readers(runner.config.rules)
    app.extensions["ebm_questions"] = readers
    if warm:
        threading.Thread(target=_preload, args=(readers,), name="ebm-web-questions", daemon=True).start()

    def page_context() -> dict[str, Any]:
        return {"status": runner.status, "source_default": runner.config.source}

    def form_page(
        result: FormResult | None = None, status: int = 200, asked: Asked | None = None
    ) -> tuple[str, int]:
        values = result.values if result else _prefill(request.args)
        errors = result.errors if result else {}
        return (
            render_template(
                "form.html",
                values=values,
                errors=errors,
                labels=FORM_FIELDS,
                tasks=[t.value for t in Task],
                sources=SOURCES,
                top_choices=TOP_CHOICES,
                rankers=RANKER_LABELS,
                max_text=MAX_TEXT,
                max_items=MAX_ITEMS,
                examples=EXAMPLES,
                asked=asked,
                max_question=MAX_QUESTION,
                **page_context(),
            ),
            status,
        )

    def error_page(message: str, status: int, title: str = "Something went wrong") -> tuple[str, int]:
        return render_template("error.html", title=title, message=message, **page_context()), status

    def job_or_404(job_id: str) -> Job:
        job = runner.get(job_id)
        if job is None:
            raise _NotFound(f"no question {job_id!r} here (the server keeps recent questions only)")
        return job

    @app.get("/")
    def index() -> Any:
        return form_page()

    @app.post("/ask")
    def ask() -> Any:
        result = validate_form(request.form)
        if result.question is None:
            return form_page(result, 400)
        job = runner.submit(result.question)
        return redirect(url_for("results", job_id=job.id), 303)

    @app.post("/question")
    def question() -> Any:
        text = str(request.form.get("question", ""))
        answer = request.form.get("action") == "answer"
        try:
            frame, asked = read_question(text, {}, reader())
        except FieldError as exc:
            values = _prefill({}) | {"question": strip_control(text)[:MAX_QUESTION]}
            return form_page(FormResult(values, {"question": exc.message}), 400)
        errors = check_frame(frame)
        if answer and not errors:
            job = runner.submit(Question(frame, asked=asked))
            return redirect(url_for("results", job_id=job.id), 303)
        # Filled for review; a slot the web cannot ask with (no primary problem) is marked.
        return form_page(FormResult(form_values(frame), errors), 400 if answer else 200, asked)

    @app.get("/results/<job_id>")
    def results(job_id: str) -> Any:
        job = job_or_404(job_id)
        if job.state == "failed":
            message = job.error or "the question failed"
            return error_page(message, _ERROR_STATUS[job.error_kind], "The question could not be answered")
        if job.state != "done":
            return render_template("progress.html", job=job, **page_context())
        result = job.result
        if result is None:  # asked through the API: the worker sent its document only
            return redirect(url_for("api_job", job_id=job.id), 303)
        doc = job.document()
        again = form_values(job.question.frame) | {
            "source": job.question.source,
            "ranker": job.question.ranker,
            "randomized_only": "on" if job.question.randomized_only else "",
        }
        answers = shown_answers(result, job.question)
        records = {x["pmid"]: x for x in doc["results"]}
        cards = {
            a.pmid: card_evidence(records.get(a.pmid, {}), a.title, _abstract(job, a.pmid)) for a in answers
        }
        return render_template(
            "results.html",
            job=job,
            result=result,
            frame=job.question.frame,
            answers=answers,
            cards=cards,
            bottom_line=bottom_line_view(doc),
            design_filter=doc.get("design_filter"),
            explanations=job.explanations,
            again=again,
            unfiltered=again | {"randomized_only": ""},
            **page_context(),
        )

    @app.post("/api/ask")
    def api_ask() -> Any:
        if not request.is_json:
            raise FieldError("send the frame as JSON (Content-Type: application/json)")
        data = _parse_json(request.get_data(cache=False))
        question = validate_json(data, reader)
        job = runner.submit(question, page=False)
        wait = request.args.get("wait", "1") not in ("0", "false", "no")
        if wait and waiters.acquire(blocking=False):
            try:
                wait = runner.wait(job, api_wait)
            finally:
                waiters.release()
        else:
            wait = False
        if not wait:
            url = url_for("api_job", job_id=job.id)
            return jsonify({"job": job.id, "state": job.state, "url": url}), 202, {"Location": url}
        return job_response(job)

    @app.get("/api/jobs/<job_id>")
    def api_job(job_id: str) -> Any:
        job = job_or_404(job_id)
        if job.state in ("queued", "running"):
            return jsonify(
                {"job": job.id, "state": job.state, "step": job.step, "done": job.done, "total": job.total}
            )
        return job_response(job)

    def job_response(job: Job) -> Any:
        if job.state == "failed":
            return jsonify({"error": job.error, "field": None}), _ERROR_STATUS[job.error_kind]
        doc = job.document()
        if job.question.asked is not None:  # how the words were read, beside the answer
            doc = doc | {
                "understood_as": job.question.asked.understood_as,
                "asked": job.question.asked.to_dict(),
            }
        return jsonify(doc)

    @app.get("/api/status")
    def api_status() -> Any:
        return jsonify(
            {
                "status": runner.status,
                "warmed_frames": runner.warmed_frames,
                "workers": max(runner.workers, 1),
                "workers_ready": runner.workers_ready,
            }
        )

    # --- errors: a page (or JSON under /api/) with the message, never a traceback ------------------

    def wants_json() -> bool:
        return request.path.startswith(API_PREFIX)

    @app.errorhandler(FieldError)
    def field_error(exc: FieldError) -> Any:
        if wants_json():
            return jsonify({"error": exc.message, "field": exc.field}), 400
        return error_page(exc.message, 400, "Bad request")

    def reader() -> QuestionReader:
        """The question reader; a server that cannot load it (no concept index, a broken cue
        table) says so as a 503 naming the problem, not as an internal error."""
        try:
            return readers.get()
        except EbmError as exc:
            raise _ReaderUnavailable(f"questions in words cannot be read on this server: {exc}") from None

    @app.errorhandler(_ReaderUnavailable)
    def reader_unavailable(exc: _ReaderUnavailable) -> Any:
        if wants_json():
            return jsonify({"error": str(exc), "field": "question"}), 503
        return error_page(str(exc), 503, "Questions in words are not available")

    @app.errorhandler(Busy)
    def busy(exc: Busy) -> Any:
        if wants_json():
            return jsonify({"error": str(exc), "field": None}), 503, {"Retry-After": "5"}
        return error_page(str(exc), 503, "Busy")

    @app.errorhandler(_NotFound)
    def not_found(exc: _NotFound) -> Any:
        if wants_json():
            return jsonify({"error": str(exc), "field": None}), 404
        return error_page(str(exc), 404, "Not found")

    @app.errorhandler(SecurityError)
    def foreign_host(exc: SecurityError) -> Any:
        # No page here: URLs cannot be built for a Host this server does not answer to.
        message = "this server answers only to its own address (e.g. http://127.0.0.1:PORT/)"
        return Response(message + "\n", 400, mimetype="text/plain")

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Any:
        code = exc.code or 500
        message = _HTTP_MESSAGES.get(code) or exc.description or exc.name
        if wants_json():
            return jsonify({"error": message, "field": None}), code
        return error_page(message, code, exc.name)

    @app.errorhandler(Exception)
    def internal_error(exc: Exception) -> Any:
        log.exception("unhandled error on %s %s", request.method, request.path)
        message = "internal error; the server log has the details"
        if wants_json():
            return jsonify({"error": message, "field": None}), 500
        return error_page(message, 500)

    @app.after_request
    def security_headers(response: Response) -> Response:
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        return response

    app.jinja_env.filters["num"] = _num
    app.jinja_env.filters["ranker_formula"] = _ranker_formula
    app.jinja_env.globals["RANKER_LABELS"] = RANKER_LABELS
    return app


# What each ranker of ``ebm.scoring.rankers`` is, in words, for the form's choices and the results page.
RANKER_LABELS = {r.name: r.label for r in REGISTRY.values()}


def _ranker_formula(description: str) -> str:
    """A ranker's description (``Answer.ranker_description``) without the server's directories:
    the weights file is named by its file name only."""
    return re.sub(r"weights: ([^()]+)\)", lambda m: f"weights: {Path(m.group(1)).name})", description)


class _NotFound(InputError):
    pass


class _ReaderUnavailable(DataError):
    pass


def too_large(limit: int) -> str:
    """The 413 message (also waitress's, ``ebm.web.server``, for a body over ``limit`` bytes)."""
    return f"the request is too large (at most {limit // 1024} KiB)"


# A failed question's HTTP status by the kind of error (see ``Job.error_kind``).
_ERROR_STATUS = {"input": 400, "service": 502, "data": 503, "internal": 500}

_HTTP_MESSAGES = {
    404: "no such page",
    405: "this address does not take that kind of request",
    413: too_large(MAX_REQUEST),
}


def _num(x: float, digits: int = 2) -> str:
    """Points as the CLI prints them: signed where it matters, short."""
    if x == 0:
        return "0"
    if abs(x) < 0.001:
        return f"{x:.1e}"
    return f"{x:.{digits}f}"


MAX_JSON_DEPTH = 32  # a frame nests 3 deep; a body nested deeper is refused before parsing


def _parse_json(body: bytes) -> Any:
    """The request body as JSON; ``FieldError`` (400) for anything else, including bodies nested
    so deep that a parser would exhaust the stack (``[[[[...`` 5,000 levels)."""
    depth = _nesting(body)
    if depth > MAX_JSON_DEPTH:
        raise FieldError(f"the request body nests {depth} levels deep (at most {MAX_JSON_DEPTH})")
    try:
        return json.loads(body)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise FieldError("the request body is not valid JSON") from None


_BRACKETS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _nesting(body: bytes) -> int:
    """The deepest ``[``/``{`` nesting of a JSON text (brackets inside strings do not count)."""
    depth = deepest = 0
    for m in _BRACKETS.finditer(body):
        token = m.group()
        if token in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in (b"]", b"}"):
            depth -= 1
    return deepest


def _abstract(job: Job, pmid: str) -> str | None:
    """The abstract of an answer shown (its annotation travels with the explanation)."""
    x = job.explanations.get(pmid)
    return x.annotation.citation.abstract_text if x is not None else None


def _preload(readers: Readers) -> None:
    try:
        readers.get()
    except Exception:  # each question in words will report its own error
        log.exception("loading the question reader failed")


def _prefill(args: Any) -> dict[str, str]:
    """Form values from query arguments (an example, or "ask again"); unknown ones ignored."""
    example = args.get("example")
    if example in EXAMPLES:
        return form_values(EXAMPLES[example])
    values = {name: strip_control(str(args.get(name, ""))[: MAX_TEXT * MAX_ITEMS]) for name in FORM_FIELDS}
    values["source"] = values["source"] if values["source"] in SOURCES else "local"
    values["top"] = values["top"] or str(DEFAULT_TOP)
    return values
