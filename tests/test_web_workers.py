"""``ebm serve`` as a user runs it, with PubMed hanging: the real command on 127.0.0.1, two
worker processes, the local E-utilities replay server accepting connections and never
answering. Pages, ``/api/status`` and questions on the local store stay unaffected; PubMed
questions end at their deadline with a 502 naming it; waitress's own 413 is JSON on the API;
stopping the server stops its workers.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from ebm.web.app import MAX_REQUEST
from tests.eutils_server import EutilsServer, Fault, eutils_server_fixture  # noqa: F401 - the fixture
from tests.web_helpers import start_serve

ANGINA = {"task": "therapy", "problem": "unstable angina", "intervention": "diltiazem"}
LEG_CRAMPS = {
    "frame": {"task": "therapy", "problem": "leg cramps", "intervention": "quinine"},
    "source": "pubmed",
}
DEADLINE = 6  # seconds, the question deadline given to the server


def _call(url: str, body: object | None = None, timeout: float = 120) -> tuple[int, dict, float]:
    """(status, JSON document, seconds) of a GET, or a POST of ``body`` as JSON."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} if data is not None else {}
    started = time.monotonic()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data, headers), timeout=timeout) as r:
            status, raw = r.status, r.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    took = time.monotonic() - started
    return status, json.loads(raw) if raw.startswith(b"{") else {"text": raw.decode()}, took


def _page(url: str) -> float:
    started = time.monotonic()
    with urllib.request.urlopen(url, timeout=30) as r:
        assert r.status == 200
        r.read()
    return time.monotonic() - started


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(p) for p in (task / "children").read_text().split()]
    return out


@pytest.fixture
def server(concept_index: Path, eutils_server: EutilsServer, tmp_path: Path) -> Iterator[tuple[str, int]]:
    eutils_server.inject(*[Fault("stall", seconds=600.0, utility="esearch.fcgi")] * 50)
    env = {
        "EBM_HOME": str(concept_index.parent),
        "EBM_EUTILS_URL": eutils_server.url,
        "EBM_EUTILS_CACHE": "off",
    }
    proc, url, log = start_serve(
        ["--port", "0", "--workers", "2", "--deadline", str(DEADLINE)],
        env,
        ready=lambda status: status["workers_ready"] >= 2,
        within=240,
        waiting="workers not ready",
    )
    try:
        yield url, proc.pid
    finally:
        workers = _children(proc.pid) if proc.poll() is None else []
        proc.terminate()
        proc.wait(30)
        end = time.monotonic() + 15
        while any(Path(f"/proc/{w}").exists() for w in workers) and time.monotonic() < end:
            time.sleep(0.2)
        # SIGTERM stops the server like Ctrl-C: no orphaned worker process lives on.
        assert not [w for w in workers if Path(f"/proc/{w}").exists()], "".join(log)[-2000:]


def test_hanging_pubmed_leaves_pages_and_local_questions_unaffected(
    server: tuple[str, int], eutils_server: EutilsServer
) -> None:
    url, pid = server
    assert len([c for c in _children(pid)]) >= 2  # the worker processes
    # One PubMed question hangs in one worker...
    status, doc, _ = _call(url + "api/ask?wait=0", LEG_CRAMPS)
    assert status == 202
    hanging = url + doc["url"].lstrip("/")
    end = time.monotonic() + 30
    while not eutils_server.requests("esearch.fcgi"):
        assert time.monotonic() < end
        time.sleep(0.05)
    # ... while a local question is answered by the other one.
    status, doc, took = _call(url + "api/ask", ANGINA)
    assert status == 200, doc
    assert doc["results"] and doc["results"][0]["pmid"].isdigit()
    assert took < DEADLINE, took  # did not wait for the hanging question
    assert _call(hanging)[1]["state"] == "running"

    # Four more PubMed calls, waiting for their answers: both workers hang, the rest queue.
    answers: list[tuple[int, dict, float]] = []
    callers = [
        threading.Thread(target=lambda: answers.append(_call(url + "api/ask", LEG_CRAMPS))) for _ in range(4)
    ]
    for c in callers:
        c.start()
    time.sleep(0.5)
    pages = [_page(url) for _ in range(10)] + [_page(url + "api/status") for _ in range(10)]
    pages += [_page(url + "?example=fever") for _ in range(10)]
    assert statistics.median(pages) < 0.1 and max(pages) < 1.0, pages
    for c in callers:
        c.join(120)
    # Each PubMed question ended at its deadline (one search each: the ladder stopped), 502.
    assert [a[0] for a in answers] == [502] * 4, answers
    for _, doc, took in answers:
        assert re.search(
            r"esearch term=.* no complete answer within the question's deadline of 6 s", doc["error"]
        )
        assert took < 4 * DEADLINE + 15  # at most three rounds behind two workers, plus slack
    status, doc, _ = _call(hanging)
    assert status == 502 and "deadline of 6 s" in doc["error"]
    assert len(eutils_server.requests("esearch.fcgi")) == 5


def test_oversized_body_is_json_on_the_api(server: tuple[str, int]) -> None:
    """waitress refuses the body before the application sees it; on the API its 413 is JSON."""
    url, _ = server
    big = {"task": "therapy", "problem": "fever", "question": "x" * (MAX_REQUEST + 10)}
    status, doc, _ = _call(url + "api/ask", big)
    assert status == 413
    assert doc == {"error": "the request is too large (at most 64 KiB)", "field": None}
    status, doc, _ = _call(url + "api/ask", "[" * 5000 + "]" * 5000)  # a JSON string of brackets
    assert status == 400 and doc["field"] is None
    req = urllib.request.Request(
        url + "api/ask", ("[" * 5000 + "]" * 5000).encode(), {"Content-Type": "application/json"}
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(req, timeout=30)
    assert caught.value.code == 400
    assert json.loads(caught.value.read())["error"] == "the request body nests 5000 levels deep (at most 32)"


def test_a_worker_that_dies_fails_its_question_and_is_replaced(
    concept_index: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import signal

    from ebm.ask import AskConfig
    from ebm.frame import frame_from_dict
    from ebm.web.forms import Question
    from ebm.web.jobs import Runner

    monkeypatch.setenv("EBM_HOME", str(concept_index.parent))
    runner = Runner(AskConfig(cache_path=tmp_path / "a.sqlite"), warm=False, workers=1).start()
    try:
        job = runner.submit(Question(frame_from_dict(ANGINA)))
        end = time.monotonic() + 60
        while job.state != "running" or runner.workers_ready < 1:
            assert time.monotonic() < end
            time.sleep(0.01)
        (slot,) = runner._slots
        os.kill(slot.process.pid, signal.SIGKILL)  # mid-question (still loading its models)
        assert runner.wait(job, 30)
        assert job.state == "failed" and job.error_kind == "internal"
        assert job.error == "the worker answering it stopped (exit code -9); see the server log"
        # A new worker took its place and answers the next question.
        again = runner.submit(Question(frame_from_dict(ANGINA)))
        assert runner.wait(again, 180)
        assert again.state == "done", again.error
        assert again.document()["results"][0]["pmid"].isdigit()
        assert runner._slots[0].process.pid != slot.process.pid
    finally:
        runner.stop()
